"""The files exports ship (annotator/qa/export_files, issue 23): the lmms-eval task's ``utils.py`` as a
module of its own. Its multiple-choice parser is lmms-eval 0.7.3's, read from ``.local/lmms-eval``
(``make lmms-eval``) by file path, without importing lmms-eval's task machinery (which needs torch)."""

import sys

import pytest

from annotator.qa.export_files import lmms_eval_utils as utils
from tests.conftest import REPO

LMMS_EVAL = REPO / ".local" / "lmms-eval"


@pytest.fixture
def lmms_eval(monkeypatch):
    if not (LMMS_EVAL / ".installed").is_file():
        pytest.fail(f"{LMMS_EVAL} is missing: run `make lmms-eval` (make test does)")
    monkeypatch.syspath_prepend(str(LMMS_EVAL))
    monkeypatch.setattr(utils, "_extract", None)
    # Other tests of the same run may have loaded torch (sentence-transformers): what matters is that
    # loading lmms-eval's parser did not load it, nor lmms-eval's task machinery.
    before = {m for m in ("torch", "lmms_eval.api") if m in sys.modules}
    yield
    assert {m for m in ("torch", "lmms_eval.api") if m in sys.modules} == before


MC = {
    "qa_id": 7,
    "qa_type": "object_recognition",
    "condition": "day",
    "question": "Which?",
    "options": ["pan", "cup", "lamp"],
    "answer": "B",
    "media": ["m/a.mp4"],
}
OPEN = {**MC, "options": [], "answer": "Someone cooks.", "condition": ""}


@pytest.mark.parametrize(
    ("prediction", "expected"),
    [
        ("B", 1.0),
        ("I think it is B", 1.0),
        ("The answer is (B).", 1.0),
        ("B. cup", 1.0),
        ("b", 0.0),
        ("I think it is A", 0.0),
        ("", 0.0),
        ("None of them", 0.0),
    ],
)
def test_multiple_choice_is_scored_by_lmms_evals_parser(lmms_eval, prediction, expected):
    assert utils.score(MC, prediction) == expected


def test_the_parser_is_lmms_evals_own_file(lmms_eval):
    assert utils.extract_mcq_answer("I think it is C", "ABC") == "C"
    assert utils._extract.__code__.co_filename == str(
        LMMS_EVAL / "lmms_eval" / "tasks" / "_task_utils" / "mcq_extract.py"
    )


def test_without_lmms_eval_the_parser_says_so(monkeypatch):
    monkeypatch.setattr(utils, "_extract", None)
    monkeypatch.setattr(utils.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(ImportError, match="lmms-eval is not installed"):
        utils.score(MC, "B")


def test_open_items_are_scored_by_normalised_exact_match():
    assert utils.score(OPEN, "someone cooks") == 1.0 and utils.score(OPEN, "Someone eats.") == 0.0


def test_results_count_in_the_type_the_condition_and_both():
    assert utils.metric_names("object_recognition", "night") == [
        "accuracy",
        "accuracy:type=object_recognition",
        "accuracy:condition=night",
        "accuracy:type=object_recognition:condition=night",
    ]
    assert utils.process_results(OPEN, ["Someone cooks."]) == {"accuracy": 1.0, "accuracy:type=object_recognition": 1.0}


def test_an_item_without_media_or_with_a_missing_clip_is_a_clear_error():
    with pytest.raises(FileNotFoundError, match="QA 7 has no media: export it with export_qa --with-media DIR"):
        utils.doc_to_visual({**MC, "media": []})
    with pytest.raises(FileNotFoundError, match="QA 7: its clip .*/m/a.mp4 is not there"):
        utils.doc_to_visual(MC)


def test_the_prompt_letters_the_options():
    assert utils.doc_to_text(MC) == "Which?\nA. pan\nB. cup\nC. lamp\n" + utils.MC_PROMPT
    assert utils.doc_to_text(OPEN).startswith("Please carefully read the question")
