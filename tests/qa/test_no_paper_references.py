"""What annotators and participants read carries no paper references (issue 21: "seed 001 Sec. 3" on the
verify page); they stay in code comments, docstrings and docs. Checked: the QA type descriptions the
project makes (the EgoNight preset, VUDG's pipeline, the demo's set and life-log types) and the
templates of the annotators' and participants' pages, without their template comments."""

import ast
import re
from pathlib import Path

import pytest

from annotator.drafts.pipelines import vudg
from annotator.qa import presets

REPO = Path(__file__).resolve().parents[2]
PAPER = re.compile(r"seed \d{3}|\b(?:Sec|App|Fig)\. ?[A-Z0-9]|\bTable \d")
# Pages an annotator or a study participant opens (admins' and researchers' pages may cite papers).
READ_BY_ANNOTATORS = [
    "templates/qa/verify.html",
    "templates/gold/tutorial.html",
    "templates/console/home.html",
    "templates/console/my_work.html",
    "templates/studies/take.html",
    "templates/403.html",
    "templates/404.html",
    *sorted(str(p.relative_to(REPO)) for p in (REPO / "templates/studies/link").glob("*.html")),
]


def _demo_descriptions() -> list[str]:
    """The ``"description"`` values written in annotator/demo/media.py (QA types of the demo)."""
    tree = ast.parse((REPO / "annotator/demo/media.py").read_text())
    return [
        v.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Dict)
        for k, v in zip(node.keys, node.values)
        if isinstance(k, ast.Constant) and k.value == "description" and isinstance(v, ast.Constant)
    ]


def test_the_pattern_finds_the_references_the_walkthrough_saw():
    assert PAPER.search("EgoExoBench (seed 001 Sec. 3): which candidate") and PAPER.search("(seed 004 Sec. 3.2 (1))")
    assert PAPER.search("X-LeBench (App. C.1)") and not PAPER.search("Select the section. Apply.")


def test_qa_type_descriptions_name_no_paper():
    descriptions = (
        [t.description for t in presets.EGONIGHT] + [d for _, _, d in vudg.QA_TYPES.values()] + _demo_descriptions()
    )
    assert len(_demo_descriptions()) == 2
    assert [d for d in descriptions if PAPER.search(d)] == []


@pytest.mark.parametrize("path", READ_BY_ANNOTATORS)
def test_annotator_and_participant_pages_name_no_paper(path):
    text = re.sub(r"{#.*?#}|{% comment %}.*?{% endcomment %}", "", (REPO / path).read_text(), flags=re.S)
    assert PAPER.findall(text) == []


def test_report_split_fields_name_no_paper():
    """The report fields' help texts reach researchers on the report pages and in ``report --help``
    (issue 21: they cited VUDG, EGO-FLIGHT and X-LeBench sections)."""
    from annotator.reports.records import FIELDS

    assert len(FIELDS) == 13
    assert [f.name for f in FIELDS.values() if PAPER.search(f.about) or PAPER.search(f.words)] == []
