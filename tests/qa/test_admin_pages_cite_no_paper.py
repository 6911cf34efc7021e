"""No page cites papers (issue 21: "Remove paper references such as 'seed 001 Sec. 3' from what annotators
and participants read"; the admins' pages too: the evaluation page's "EgoNight, App. A.5.1", the
consensus round's "X-LeBench, App. D.3", the QA types page's "seed 000, Table 8"). References stay in
code comments, docstrings and docs. Every template is checked, without its template comments, and the
evaluation rubrics' words, which the evaluation page offers."""

import re
from pathlib import Path

from annotator.evaluation.models import Rubric
from tests.qa.test_no_paper_references import PAPER

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"


def test_no_template_cites_a_paper():
    found = {}
    for path in sorted(TEMPLATES.rglob("*.html")):
        text = re.sub(r"{#.*?#}|{% comment %}.*?{% endcomment %}", "", path.read_text(), flags=re.DOTALL)
        if hits := PAPER.findall(text):
            found[str(path.relative_to(TEMPLATES))] = hits
    assert found == {}


def test_the_rubrics_words_cite_no_paper():
    assert [words for _, words in Rubric.choices if PAPER.search(words)] == []
