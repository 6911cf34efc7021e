"""The README is a front door and docs/ holds the rest (issue 23): the README is under 200 lines, every
relative link in README.md and docs/*.md resolves (the file, and the #anchor as GitHub makes it from a
heading), nothing outside the repository is linked, every ``manage.py COMMAND`` the pages name is a
command ``manage.py help`` lists, and every repository path they name in backticks exists.

No subprocess and no database: the pages are read as text, the commands come from Django's
``get_commands()``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.core.management import get_commands

REPO = Path(__file__).resolve().parents[1]
README_MAX_LINES = 200

FENCE = re.compile(r"^ {0,3}(```|~~~).*?^ {0,3}\1[^\n]*$", re.MULTILINE | re.DOTALL)
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$", re.MULTILINE)
HTML_HREF = re.compile(r"<a\s[^>]*href=\"([^\"]+)\"", re.IGNORECASE)
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:|^//|^www\.")
# A web address in prose, which GitHub turns into a link by itself.
BARE_URL = re.compile(r"\b(?:https?://|www\.)[^\s<>()\]]+")
HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$", re.MULTILINE)
COMMAND = re.compile(r"manage\.py\s+([a-z][a-z0-9_]*(?:\|[a-z][a-z0-9_]*)*)")
# A path of the repository named in backticks: a top-level folder of the tree, then a path without
# placeholders (<app>, {id}, NAME, ...) or globs.
REPO_PATH = re.compile(r"^(?:annotator|api|workers|static|templates|tests|bench|scripts|demo|docs|\.ci)/[a-z0-9_./-]*$")


def pages() -> list[Path]:
    """README.md and every Markdown page of docs/, in a fixed order."""
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def _prose(text: str) -> str:
    """The text with fenced code blocks and code spans blanked (a link inside code is not a link)."""
    text = FENCE.sub("", text)
    return CODE_SPAN.sub("", text)


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a heading's text: the rendered text (links, images, code and emphasis
    marks removed), lower case, every character but letters, digits, ``_``, ``-`` and spaces dropped,
    spaces made hyphens (as github-slugger does)."""
    text = re.sub(r"!\[[^\]]*\]\([^)]*\)", "", heading)
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = text.replace("`", "")
    text = re.sub(r"\*\*|\*|(?<!\w)__|__(?!\w)", "", text)
    text = re.sub(r"<[^>]+>", "", text)
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every anchor of a Markdown page: its headings' slugs, a repeated slug numbered -1, -2, ... as
    GitHub numbers them (headings inside fenced code are not headings)."""
    seen: dict[str, int] = {}
    found = set()
    for match in HEADING.finditer(FENCE.sub("", path.read_text())):
        slug = github_slug(match.group(2))
        if slug in seen:
            seen[slug] += 1
            slug = f"{slug}-{seen[slug]}"
        else:
            seen[slug] = 0
        found.add(slug)
    return found


def link_problems(path: Path, root: Path = REPO) -> list[str]:
    """Every link of the page ``path`` that does not resolve inside ``root``, as ``"TARGET: why"``:
    a link with a scheme (``https:``, ``mailto:``), a bare web address (GitHub links it), a link to an
    absolute path, a file that is missing or outside the repository, an anchor no heading of its page
    makes. Links inside code are not links."""
    text = _prose(path.read_text())
    targets = [m.group(1) for m in INLINE_LINK.finditer(text)]
    targets += REFERENCE.findall(text) + HTML_HREF.findall(text)
    targets += BARE_URL.findall(INLINE_LINK.sub("", REFERENCE.sub("", HTML_HREF.sub("", text))))
    problems = []
    for target in targets:
        if SCHEME.match(target) or target.startswith("/"):
            problems.append(f"{target}: outside the repository")
            continue
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.is_relative_to(root.resolve()):
            problems.append(f"{target}: outside the repository")
        elif not dest.exists():
            problems.append(f"{target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
            problems.append(f"{target}: no heading makes #{anchor} in {dest.relative_to(root.resolve())}")
    return problems


def commands_named(path: Path) -> set[str]:
    """Every command a page names as ``manage.py COMMAND`` (``python manage.py X``, ``.venv/bin/python
    manage.py X``, ``manage.py a|b|c``), code blocks included."""
    named = set()
    for match in COMMAND.finditer(path.read_text()):
        named.update(match.group(1).split("|"))
    return named


def paths_named(path: Path) -> set[str]:
    """Every repository path the page names in a code span (outside code blocks), e.g. ``annotator/qa/queue.py``."""
    text = path.read_text()
    spans = {m.group(2).strip() for m in CODE_SPAN.finditer(FENCE.sub("", text))}
    return {s for s in spans if REPO_PATH.match(s)}


def test_the_readme_is_under_200_lines():
    lines = (REPO / "README.md").read_text().splitlines()
    assert len(lines) < README_MAX_LINES, f"README.md has {len(lines)} lines"


def test_docs_holds_the_pages_the_readme_promises():
    names = {p.name for p in pages()}
    for page in (
        "architecture.md",
        "annotator.md",
        "researcher.md",
        "cli.md",
        "api.md",
        "exports.md",
        "configuration.md",
        "operations.md",
        "benchmarks.md",
        "security.md",
        "extending.md",
        "decisions.md",
        "team.md",
    ):
        assert page in names, page


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_link_resolves_inside_the_repository(page):
    assert link_problems(page) == []


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_command_named_is_a_manage_py_command(page):
    known = set(get_commands())
    assert sorted(commands_named(page) - known) == []


@pytest.mark.parametrize("page", pages(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_repository_path_named_exists(page):
    missing = sorted(p for p in paths_named(page) if not (REPO / p).exists())
    assert missing == []


def test_the_checks_catch_a_broken_link_anchor_outside_link_and_unknown_command(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text(
        "# A page\n\n## Set up (Debian 12, as root)\n\n## The `draft` command\n\n## The `draft` command\n"
    )
    page = tmp_path / "README.md"
    page.write_text(
        "# Front\n\n## Its own heading\n\n"
        "[ok](docs/a.md) [ok](docs/a.md#set-up-debian-12-as-root) [ok](docs/a.md#the-draft-command-1) "
        "[ok](#its-own-heading)\n"
        "[gone](docs/b.md) [bad anchor](docs/a.md#setup) [up](../outside.md) [web](https://example.org/) "
        "[self](#nothing-here) see www.example.org\n"
        "`[in code](docs/none.md)`\n\n```\n[in a block](docs/none.md)\n```\n"
        "Run `python manage.py ingest` and `manage.py no_such_command`; `manage.py study_items|bogus_alias`.\n"
    )
    assert link_problems(page, root=tmp_path) == [
        "docs/b.md: no such file",
        "docs/a.md#setup: no heading makes #setup in docs/a.md",
        "../outside.md: outside the repository",
        "https://example.org/: outside the repository",
        "#nothing-here: no heading makes #nothing-here in README.md",
        "www.example.org: outside the repository",
    ]
    assert sorted(commands_named(page) - set(get_commands())) == ["bogus_alias", "no_such_command"]
