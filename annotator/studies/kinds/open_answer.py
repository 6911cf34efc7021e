"""Open-ended answers without drafts (EgoNight, seed 000 App. A.2.1): extra annotators answer the
same questions as the benchmark without seeing the model's draft or anyone else's answer, so that
their agreement with the verified answer and with each other can be measured (the agreement
itself, e.g. semantic similarity, is the agreement issue's; this kind stores every answer and
scores it against the verified answer by string overlap).

Items come from verified QA pairs that make sense as open questions (no options, a text answer,
no time the clip does not show), ``per_type`` per QA type, drawn with the study's seed; one
condition per time limit (none by default). Item ``payload``: ``question`` and ``media`` (the
pair's clips). ``truth``: the verified answer. Response (API and predictions): the answer's text,
1 to ``TEXT_MAX`` characters after trimming.
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Callable

from annotator.errors import Invalid
from annotator.studies.kinds import BuildReport, ScoreRow, _qa

METRICS = ("exact_match", "token_f1")
# Added to a scored trial's ``scores`` by the judge that evaluations use (``study_scores --judge-server``,
# issue 18: one judge for people and models): 1.0/0.0 correct, and EgoNight's score (0-5) or VUDG's
# (accuracy + relevance 0-10, and each 0-5), as ``evaluation.judging.judgement_scores`` names them.
JUDGED = ("judge_accuracy", "judge_score", "judge_score_10", "judge_accuracy_score", "judge_relevance_score")

# What the pages call this kind (what a participant reads first is ``instructions``), and the
# dashboard's bar charts: (metric, name, axis title with its unit, axis min, axis max).
TITLE = "open answer"
PLOTS = (
    ("exact_match", "Exact match", "Exact match (share of answers, 0–1)", 0, 1),
    ("token_f1", "Token F1", "Token F1 with the verified answer (0–1)", 0, 1),
)
PRIMARY = None
PRESETS = {"egonight-open": {"per_type": 20, "raters_per_item": 3, "questions_per_participant": 30}}
TEXT_MAX = 4000


def instructions(f) -> str:
    """What a participant reads before the first item (Markdown), from the study's ``Facts``
    (``studies.instructions``): clips, keys, time limits."""
    from annotator.studies.instructions import time_limit_line

    about = "about a video clip" if f.clips else ""
    watch = "Watch the clip and write" if f.clips else "Write"
    text = (
        f"You will see a question{' ' + about if about else ''}. {watch} your answer in a few words or a sentence. "
        "Nobody else's answer is shown, and yours is not shown to anyone answering after you.\n\n"
        "- **Enter** answers; **Shift+Enter** starts a new line.\n"
    )
    return text + time_limit_line(f) + "- Every question counts: there is no practice.\n"


def build(study, options: dict, progress: Callable[[str], None]) -> BuildReport:
    """Conditions (one per ``time_limits`` entry; one without a limit by default) and items from the
    project's verified QA pairs that make sense as open questions (``open_questions``), ``per_type``
    per QA type; a pair whose question names a time its clip does not show is refused too
    (``_qa.render``). What was left out is counted in ``report.skipped``. No practice or attention
    items (an open answer has no instructed form that is not also a giveaway)."""
    from annotator.qa.models import QAPair
    from annotator.studies.models import Item

    conditions = _qa.time_limit_conditions(study, options.get("time_limits"))
    pool = _qa.qa_pool(study, QAPair.objects.filter(project=study.project, status=QAPair.Status.VERIFIED), options)
    report = BuildReport()
    pool = open_questions(pool, report, progress)
    sampled = _qa.sample_pairs(study, pool, options.get("per_type"))
    pairs, shown = _qa.render([p for ps in sampled.values() for p in ps], report, progress)
    for cond in conditions:
        for index, pair in enumerate(pairs):
            Item.objects.create(
                condition=cond,
                index=index,
                subtask=pair.qa_type.slug,
                key=f"qa:{pair.pk}",
                qa_pair=pair,
                footage_id=pair.video.derived_from_id or pair.video_id,
                payload={"question": pair.question, **shown[pair.pk]},
                truth=pair.answer,
            )
        report.items[cond.number] = len(pairs)
        progress(f"  condition {cond.number} ({cond.label}): {len(pairs)} items")
    return report


def open_questions(pool, report: BuildReport, progress: Callable[[str], None]):
    """``pool`` (a QAPair queryset) without the pairs that are no open question: those with options
    (a multiple-choice question such as "Which of these objects appears?" means nothing without
    them) and those of a QA type whose answer is a time interval (``QAType.answer_kind``), not words.
    Each group left out is counted in ``report.skipped`` and said through ``progress``."""
    from annotator.qa.models import QAType

    leave_out = {
        "QA pairs with options (multiple choice, no open question)": pool.filter(options__isnull=False),
        "QA pairs whose answer is a time interval": pool.filter(
            options__isnull=True, qa_type__answer_kind=QAType.AnswerKind.INTERVAL
        ),
    }
    for reason, pairs in leave_out.items():
        n = pairs.count()
        if n:
            report.skipped[reason] = report.skipped.get(reason, 0) + n
            progress(f"  left out {n} {reason}")
    return pool.filter(options__isnull=True).exclude(qa_type__answer_kind=QAType.AnswerKind.INTERVAL)


def payload(trial) -> dict:
    """``question`` and ``videos`` (``[{"label", "url"}]``). No draft, no answer, no one else's answer."""
    return {
        "question": trial.item.payload["question"],
        "videos": _qa.media_payload(trial.item),
        "video_layout": _qa.video_layout(trial.item),
    }


def _text(value, exc) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > TEXT_MAX:
        message = f"the answer must be a text of 1 to {TEXT_MAX} characters"
        raise exc(message, errors={"response": message}) if exc is Invalid else exc(message)
    return value.strip()


def validate(trial, response) -> str:
    """``response``: the answer's text. Returns it trimmed. Raises Invalid if empty or too long."""
    return _text(response, Invalid)


def validate_prediction(item, predicted) -> str:
    """A model's answer text. Raises ValueError if empty or too long."""
    return _text(predicted, ValueError)


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = str.maketrans("", "", string.punctuation)


def normalise(text: str) -> list[str]:
    """Tokens of an answer as SQuAD scores them (Rajpurkar et al. 2016, the official evaluation
    script): lower case, punctuation and the articles a/an/the removed, split on white space."""
    return _ARTICLES.sub(" ", text.lower().translate(_PUNCT)).split()


def token_f1(answer: str, truth: str) -> float:
    """SQuAD token F1 of ``answer`` against ``truth``: harmonic mean of token precision and recall
    over the multiset of normalised tokens; 1.0 when both are empty, 0.0 when one is."""
    a, t = normalise(answer), normalise(truth)
    if not a or not t:
        return float(a == t)
    common = sum((Counter(a) & Counter(t)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(a), common / len(t)
    return 2 * precision * recall / (precision + recall)


def score(rows: list[ScoreRow]) -> list[dict]:
    """``exact_match`` (normalised tokens equal) and ``token_f1`` against the verified answer; a
    timed-out or missing answer scores 0 on both. Each answer is normalised once and each distinct
    truth once (an item's truth is shared by all its trials): 100,000 answers take about a second
    (``bench/scoring.py``); token F1 has no array form worth its cost, as normalising dominates.
    Equal to ``token_f1`` row by row."""

    def f1(answer: list[str], truth: list[str], truth_counts: Counter) -> float:
        if not answer or not truth:
            return float(answer == truth)
        common = sum(min(n, truth_counts[w]) for w, n in Counter(answer).items() if w in truth_counts)
        if common == 0:
            return 0.0
        precision, recall = common / len(answer), common / len(truth)
        return 2 * precision * recall / (precision + recall)

    truths: dict[str, tuple[list[str], Counter]] = {}
    out = []
    for r in rows:
        if r.response is None or r.timed_out:
            out.append({"exact_match": 0.0, "token_f1": 0.0})
            continue
        truth = truths.get(r.truth)
        if truth is None:
            tokens = normalise(r.truth)
            truth = truths[r.truth] = (tokens, Counter(tokens))
        answer = normalise(r.response)
        out.append({"exact_match": float(answer == truth[0]), "token_f1": f1(answer, *truth)})
    return out


def feedback(trial) -> dict:
    """Open answers have no practice items; nothing to show."""
    return {}


def export(item) -> dict:
    """Researcher fields: ``question``, ``answer`` (verified), ``qa_pair_id``, ``media``."""
    return {
        "question": item.payload["question"],
        "answer": item.truth,
        "qa_pair_id": item.qa_pair_id,
        "media": _qa.clip_names(item.payload),
    }


def shows(item) -> list:
    """What a trial of ``item`` puts in front of the person (exposure ledger, issue 19): its clips
    and its QA pair's question."""
    from annotator.exposure.ledger import QUESTION, Shown

    return _qa.footage_shown(item.payload) + ([Shown(QUESTION, qa_pair_id=item.qa_pair_id)] if item.qa_pair_id else [])


def needs(item):
    """What the item's truth rests on: its QA pair's answer, given away also by seeing it among
    options."""
    from annotator.exposure.ledger import Needs

    return Needs(answer_of=item.qa_pair_id, options_give_away=True)


def reveals(item) -> list:
    """Open answers give no feedback: nothing is revealed."""
    return []
