"""lmms-eval hooks of a task written by the annotator's ``export_qa --format lmms-eval`` (README: Export
formats). This file is copied beside the task's YAML as ``utils.py``; the YAML names its functions with
``!function utils.<name>``.

- Paths in the task's JSONL (``media``) are relative to this folder, so the folder may be moved.
- Multiple-choice items are scored by the letter lmms-eval's own multiple-choice parser reads in the
  answer (``lmms_eval.tasks._task_utils.mcq_extract.extract_mcq_answer``, as its video tasks such as
  videomme and mlvu do: "I think it is A" reads as A), among the item's own letters. Open items are
  scored by normalised exact match, a floor: the source papers judge them with an LLM (EgoNight seed
  000 App. A.5).
- ``process_results`` reports ``accuracy`` and, for the same item, ``accuracy:type=<qa type>``,
  ``accuracy:condition=<day|night|...>`` and ``accuracy:type=<qa type>:condition=<...>`` (``metric_names``),
  so lmms-eval's table shows each QA type and condition (EgoNight Fig. 5(a) compares day and night per
  type); the export lists exactly the names its items produce in the YAML's ``metric_list``.
"""

import importlib.util
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
MC_PROMPT = "Answer with the option's letter from the given choices directly."
OPEN_PROMPT = (
    "Please carefully read the question, use the visual cues in the video to answer the question: "
    "{question}\nDo not include any other content. You need to answer the question in any case and not "
    "demand additional context information."
)

_extract = None


def extract_mcq_answer(response, choices):
    """The letter lmms-eval's multiple-choice parser reads in ``response`` among ``choices`` ("" if none).

    The parser is lmms-eval's own (``tasks/_task_utils/mcq_extract.py``), loaded from the installed
    lmms-eval by file path: importing the ``lmms_eval.tasks`` package would import all of its task
    machinery, which the parser does not need. Raises ImportError when lmms-eval is not installed."""
    global _extract
    if _extract is None:
        spec = importlib.util.find_spec("lmms_eval")
        if spec is None or not spec.submodule_search_locations:
            raise ImportError("lmms-eval is not installed: this task's scoring uses its multiple-choice parser")
        path = os.path.join(list(spec.submodule_search_locations)[0], "tasks", "_task_utils", "mcq_extract.py")
        module_spec = importlib.util.spec_from_file_location("_lmms_eval_mcq_extract", path)
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
        _extract = module.extract_mcq_answer
    return _extract(response, list(choices))


def doc_to_visual(doc):
    """The item's clip paths (absolute, under this folder), in order. Raises FileNotFoundError for an
    item without media or a clip that is not there (the export writes no task without media)."""
    paths = [os.path.join(HERE, p) for p in doc["media"]]
    if not paths:
        raise FileNotFoundError(f"QA {doc['qa_id']} has no media: export it with export_qa --with-media DIR")
    for path in paths:
        if not os.path.isfile(path):
            raise FileNotFoundError(f"QA {doc['qa_id']}: its clip {path} is not there")
    return paths


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    """The prompt: the question and its lettered options ("A. ...") with the letter instruction, or
    the open-answer prompt of EgoNight App. A.5."""
    if doc["options"]:
        lines = [doc["question"]] + [f"{LETTERS[i]}. {o}" for i, o in enumerate(doc["options"])]
        return "\n".join(lines) + "\n" + MC_PROMPT
    return OPEN_PROMPT.format(question=doc["question"])


def _norm(text):
    return re.sub(r"[^a-z0-9 ]", "", str(text).lower()).strip()


def metric_names(qa_type, condition):
    """The metrics an item of ``qa_type`` shown in ``condition`` ("" none) counts in: overall, its
    type, its condition and the two together."""
    names = ["accuracy", f"accuracy:type={qa_type}"]
    if condition:
        names += [f"accuracy:condition={condition}", f"accuracy:type={qa_type}:condition={condition}"]
    return names


def score(doc, prediction):
    """1.0 if ``prediction`` (the model's text) answers ``doc``, else 0.0 (see the module docstring)."""
    if doc["options"]:
        letters = LETTERS[: len(doc["options"])]
        return float(extract_mcq_answer(str(prediction or ""), letters) == doc["answer"])
    return float(_norm(prediction) == _norm(doc["answer"]))


def process_results(doc, results):
    """lmms-eval's per-item metrics: ``{name: 0.0 or 1.0}`` for each of ``metric_names``."""
    value = score(doc, results[0] if results else "")
    return {name: value for name in metric_names(doc["qa_type"], doc["condition"])}
