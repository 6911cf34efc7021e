"""Scoring a model's answers, and the results' intervals. Pure Python: no Django.

- ``extract_choice``: the option a free-text multiple-choice answer names (a letter, or the
  option's exact text), scored exactly against the truth (EgoExoBench and VUDG score multiple
  choice by accuracy, seed 001 Sec. 4, seed 004 Sec. 3.4); an answer naming no option is wrong.
- ``wilson``: a proportion's 95% Wilson score interval (statsmodels ``proportion_confint``).
- ``mean_interval``: a mean's 95% Student-t interval from n, mean and standard deviation (scipy).
- ``breakdown``: per dimension (QA type, illumination, source, provenance) and value, the MCQ
  accuracy, the judge's mean score and its accuracy (share judged correct), and for interval items
  (temporal localisation, X-LeBench seed 002 App. C.1) recall@1 and recall@5 at tIoU 0.3 and the
  mean tIoU of the first interval, each with its interval.
  The provenance split puts answers kept as the machine drafted them against those people modified
  or added: EgoNight's check that the judge does not favour machine-styled answers (seed 000
  App. A.5.1 reports 26.73% against 27.87%).
"""

from __future__ import annotations

import math
import re
import string
from collections.abc import Iterable
from dataclasses import dataclass

from scipy import stats
from statsmodels.stats.proportion import proportion_confint

from annotator.scoring.localisation import RECALL_KS, TIOU_THRESHOLD

LETTERS = string.ascii_uppercase
CONFIDENCE = 0.95

# ------------------------------------------------------------------------------ multiple choice

_PUNCT = re.compile(r"[\s\"'`*_.,;:!?()\[\]{}<>]+")
# "Answer: B", "the answer is (B)", "Option B", "correct choice: B." (the letter must be upper case:
# "the answer is a cup" names no option).
_KEYWORD = re.compile(
    r"\b(?:answer|option|choice)\b(?:\s+(?:is|would\s+be|should\s+be))?\s*[:\-]?\s*\**\(?([A-Z])\b(?![\w'])",
    re.IGNORECASE,
)
# A leading letter marked as one: "B", "B)", "B.", "B:", "(B)", "[B]", "**B**", "B) cup".
_LEADING = re.compile(r"^\s*[\*\[\(]*([A-Z])(?:[\)\]\.:\*]|\s*$|\s+[-–—]\s)")
_PAREN = re.compile(r"\(([A-Z])\)")
# A letter closing the answer: "I think it is B."
_TRAILING = re.compile(r"(?<![\w'])([A-Z])[\)\]\.!\*]*\s*$")


def letter(i: int) -> str:
    """The letter of option ``i`` (0 -> A). Raises ValueError past Z."""
    if not 0 <= i < len(LETTERS):
        raise ValueError(f"at most {len(LETTERS)} options are lettered")
    return LETTERS[i]


def _norm(text: str) -> str:
    return _PUNCT.sub(" ", text.casefold()).strip()


def _found(letters: Iterable[str], n_options: int) -> set[int]:
    """The distinct in-range option indices named by ``letters``."""
    return {LETTERS.index(x) for x in letters if x in LETTERS and LETTERS.index(x) < n_options}


def extract_choice(text: str, options: list[str]) -> int | None:
    """The index of the option a model's free-text answer names, or None. The rules, in order:

    1. the whole answer is a letter (any case, with brackets or punctuation): "b", "(B).";
    2. letters after "answer", "option" or "choice": "Answer: B.", "The answer is (C)";
    3. else letters marked as options anywhere: leading ("B) cup", "B. cup", "**B**"), in brackets
       ("I would say (D), the shoe") or closing the answer ("I think it is B.");
    4. the answer is an option's text exactly (case and punctuation aside): "Cup.";
    5. the text of exactly one option appears in the answer as whole words: "It is a cup".

    Rules 2 and 3 decide as soon as they find a letter: one letter is the answer, two different
    ones make the answer ambiguous (None: "(A) or (B)", "Option A or option C"). Upper-case
    letters only in rules 2 and 3, so "a cup" is not option A; letters past the options
    are ignored. Returns None when no rule names one option (scored as wrong).
    """
    n = len(options)
    if not text or not n:
        return None
    body = text.strip()
    bare = _PUNCT.sub("", body)
    if len(bare) == 1 and bare.upper() in LETTERS[:n]:
        return LETTERS.index(bare.upper())
    named = _found((m.group(1) for m in _KEYWORD.finditer(body) if m.group(1).isupper()), n)
    if not named:  # no "answer: X": letters marked as options anywhere
        named = _found(
            [*(m.group(1) for m in _LEADING.finditer(body)), *_PAREN.findall(body), *_TRAILING.findall(body)], n
        )
    if len(named) > 1:  # "(A) or (B)": ambiguous, whatever the text says
        return None
    if named:
        return named.pop()
    said = _norm(body)
    texts = [_norm(str(o)) for o in options]
    exact = [i for i, t in enumerate(texts) if t and t == said]
    if len(exact) == 1:
        return exact[0]
    padded = f" {said} "
    inside = [i for i, t in enumerate(texts) if t and f" {t} " in padded]
    # An option inside a longer one that also appears ("cup" in "cup holder") is not named itself.
    inside = [i for i in inside if not any(j != i and f" {texts[i]} " in f" {texts[j]} " for j in inside)]
    return inside[0] if len(inside) == 1 else None


# ------------------------------------------------------------------------------ intervals


def wilson(k: int, n: int, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """The Wilson score interval of ``k`` successes in ``n`` trials (statsmodels
    ``proportion_confint(method="wilson")``); None when n is 0."""
    if n <= 0:
        return None
    low, high = proportion_confint(k, n, alpha=1 - confidence, method="wilson")
    return float(low), float(high)


SCORE_RANGE = (0.0, 5.0)  # judge scores, VUDG accuracy and relevance are integers 0-5


def mean_interval(
    n: int,
    mean: float | None,
    sd: float | None,
    confidence: float = CONFIDENCE,
    within: tuple[float, float] | None = SCORE_RANGE,
) -> tuple[float, float] | None:
    """The Student-t interval of a mean from ``n`` values with sample standard deviation ``sd``
    (ddof 1): mean ± t(conf, n-1) x sd / sqrt(n) (scipy ``stats.t.interval``), clipped to
    ``within`` (the scale's range: a mean of 0-5 scores cannot leave 0-5, though with few values
    the t interval does). None when n < 2; (mean, mean) when every value is the same."""
    if n < 2 or mean is None or sd is None or not math.isfinite(sd):
        return None
    if sd == 0:
        return float(mean), float(mean)
    low, high = stats.t.interval(confidence, n - 1, loc=mean, scale=sd / math.sqrt(n))
    if within is not None:
        low, high = max(low, within[0]), min(high, within[1])
    return float(low), float(high)


def describe(values: list[float]) -> tuple[int, float | None, float | None]:
    """(n, mean, sample standard deviation with ddof 1) of ``values`` (None where undefined)."""
    n = len(values)
    if not n:
        return 0, None, None
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else None
    return n, mean, sd


# ------------------------------------------------------------------------------ the breakdown


@dataclass
class Scored:
    """One prediction as scoring sees it. ``status``: done, failed, cancelled, queued or running.
    ``correct``: MCQ exact (None for open); ``judge_pred``: "correct", "incorrect" or "" (not judged);
    scores are None when not given."""

    kind: str
    status: str
    correct: bool | None = None
    judge_pred: str = ""
    judge_score: float | None = None
    judge_accuracy: float | None = None
    judge_relevance: float | None = None
    qa_type: str = ""
    illumination: str = ""
    source: str = ""
    provenance: str = ""
    tious: list | None = None  # interval items: tIoU of each interval read from the answer, best first


def provenance_group(provenance: str) -> str:
    """``kept`` (machine, kept) or ``modified_or_added`` (machine, modified; human, added): EgoNight's
    two groups (seed 000 App. A.5.1); ``unknown`` when a pair has none."""
    if provenance == "machine_kept":
        return "kept"
    if provenance in ("machine_modified", "human_added"):
        return "modified_or_added"
    return "unknown"


DIMENSIONS = {
    "qa_type": lambda s: s.qa_type or "unknown",
    "illumination": lambda s: s.illumination or "unknown",
    "source": lambda s: s.source or "unknown",
    "provenance": lambda s: provenance_group(s.provenance),
}


def _proportion(k: int, n: int) -> dict:
    return {"n": n, "k": k, "value": k / n if n else None, "ci": wilson(k, n)}


def _mean(values: list[float], within: tuple[float, float] = SCORE_RANGE) -> dict:
    n, mean, sd = describe(values)
    return {"n": n, "value": mean, "sd": sd, "ci": mean_interval(n, mean, sd, within=within)}


def _interval_recall(rows: list[Scored], k: int) -> dict:
    """Recall@k at tIoU 0.3 (seed 002 App. C.1) over interval ``rows``, as a proportion with its
    Wilson interval: an item is found when one of its first k intervals reaches the threshold (an
    answer naming none is not found)."""
    found = sum(1 for r in rows if any(t >= TIOU_THRESHOLD for t in (r.tious or [])[:k]))
    return _proportion(found, len(rows))


def _tiou_mean(rows: list[Scored]) -> dict:
    values = [(r.tious or [0.0])[0] for r in rows]
    n, mean, sd = describe(values)
    return {"n": n, "value": mean, "sd": sd, "ci": mean_interval(n, mean, sd, within=(0.0, 1.0))}


def summarize(rows: list[Scored], score_max: float = SCORE_RANGE[1]) -> dict:
    """The scores of ``rows``::

        {"items": n, "done": n, "failed": n, "cancelled": n, "pending": n,
         "mcq": {"n", "k", "value", "ci"},                   # accuracy of done MCQ items (Wilson)
         "judge_accuracy": {"n", "k", "value", "ci"},        # share of judged open answers judged correct
         "judge_score": {"n", "value", "sd", "ci"},          # mean judge score (t interval)
         "judge_accuracy_score": {...}, "judge_relevance_score": {...},  # VUDG's two scores
         "interval_r1": {"n", "k", "value", "ci"}, "interval_r5": {...},   # recall@1, @5 at tIoU 0.3
         "interval_tiou": {"n", "value", "sd", "ci"}}       # mean tIoU of the first interval (0 if none)

    Failed and cancelled items are left out of every score (they are counted). ``ci`` is [low,
    high] or None when it cannot be had (no item, or fewer than 2 for a mean). The judge score's
    interval is clipped to [0, ``score_max``] (the evaluation's: 5 for EgoNight, 10 for VUDG's
    accuracy + relevance); VUDG's two scores to [0, 5].
    """
    done = [r for r in rows if r.status == "done"]
    mcq = [r for r in done if r.kind == "mcq"]
    judged = [r for r in done if r.kind == "open" and r.judge_pred]
    located = [r for r in done if r.kind == "interval"]
    return {
        "items": len(rows),
        "done": len(done),
        "failed": sum(r.status == "failed" for r in rows),
        "cancelled": sum(r.status == "cancelled" for r in rows),
        "pending": sum(r.status in ("queued", "running") for r in rows),
        "mcq": _proportion(sum(bool(r.correct) for r in mcq), len(mcq)),
        "judge_accuracy": _proportion(sum(r.judge_pred == "correct" for r in judged), len(judged)),
        "judge_score": _mean(
            [r.judge_score for r in judged if r.judge_score is not None], within=(0.0, float(score_max))
        ),
        "judge_accuracy_score": _mean([r.judge_accuracy for r in judged if r.judge_accuracy is not None]),
        "judge_relevance_score": _mean([r.judge_relevance for r in judged if r.judge_relevance is not None]),
        **{f"interval_r{k}": _interval_recall(located, k) for k in RECALL_KS},
        "interval_tiou": _tiou_mean(located),
    }


def breakdown(rows: list[Scored], score_max: float = SCORE_RANGE[1]) -> dict:
    """``{"all": summarize(rows), dimension: {value: summarize(...)}}`` for each of ``DIMENSIONS``,
    values sorted (``score_max``: the judge score's top, ``summarize``)."""
    out: dict = {"all": summarize(rows, score_max)}
    for dim, key in DIMENSIONS.items():
        groups: dict[str, list[Scored]] = {}
        for r in rows:
            groups.setdefault(key(r), []).append(r)
        out[dim] = {value: summarize(groups[value], score_max) for value in sorted(groups)}
    return out
