"""The project's JavaScript is ES modules that import what they share (issue 23): no script of ours
shares state through ``window`` globals, each page loads its script as a module, and every file
parses as a module. Vendored libraries (static/vendor: hls.js, Chart.js, SortableJS) keep their
own globals."""

import re
import subprocess

from tests.conftest import REPO

OURS = sorted((REPO / "static" / "js").rglob("*.js"))


def test_no_script_of_ours_puts_anything_on_window_or_wraps_itself_in_a_classic_closure():
    offenders = []
    for path in OURS:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"\bwindow\.[A-Za-z_$][\w$]*\s*=[^=]", line) or re.fullmatch(r"\s*\(function \(\) \{", line):
                offenders.append(f"{path.relative_to(REPO)}:{n}: {line.strip()}")
    assert OURS and offenders == []


def test_every_page_loads_our_scripts_as_modules():
    classic = [
        f"{path.relative_to(REPO)}: {tag}"
        for path in (REPO / "templates").rglob("*.html")
        for tag in re.findall(r"<script\b[^>]*\bsrc=\"\{% static 'js/[^>]*>", path.read_text())
        if 'type="module"' not in tag
    ]
    assert classic == []


def test_every_script_of_ours_parses_as_a_module():
    """With Node.js, which `make test` installs (Debian's npm)."""
    failed = {}
    for path in OURS:
        done = subprocess.run(
            ["node", "--input-type=module", "--check"], input=path.read_text(), capture_output=True, text=True
        )
        if done.returncode:
            failed[str(path.relative_to(REPO))] = done.stderr.strip().splitlines()[:3]
    assert failed == {}
