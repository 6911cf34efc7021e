"""Study kinds: one module per kind of human study, each giving the same few things.

A kind module (``ordering``, ``mcq``, ``open_answer``, ``likert``) defines:

- ``METRICS``: tuple of metric names, the keys of a scored trial's or prediction's ``scores``.
- ``JUDGED`` (optional): metrics a judge adds to ``scores`` later (open answers: ``judge_accuracy``,
  ``judge_score``, from ``study_scores --judge-server``); ``metrics_of`` gives both.
- ``PRIMARY``: the metric that says whether an answer is right (1.0) for practice feedback,
  practice scores and attention checks (None for a kind with no right answer, e.g. open answers
  are never practice or attention items).
- ``PRESETS``: preset name -> dict of build options (the command's and API's defaults).
- ``DEFAULTS`` (optional): options applied before the preset's (multiple choice: independent
  evaluators).
- ``build(study, options, progress) -> BuildReport``: make the study's conditions and items from
  the project's data, in the caller's transaction (``services.create_study`` owns it). ``options``
  are the study's ``settings`` (``per_type``, ``time_limits``, kind-specific keys). Raises
  ``Invalid`` for options it cannot honour and ``MediaError`` when ffmpeg cannot read a frame.
- ``payload(trial) -> dict``: the kind's part of what the participant's page receives. Never the
  truth: no correctness, no order-bearing ids, no file names or times, no video the item does not
  show, no group of a control item.
- ``validate(trial, response) -> stored``: check a participant's ``response`` (the API's shape,
  documented in the module) against the trial's item and return the form stored in
  ``Trial.response``. Raises ``Invalid`` with the reason in plain words.
- ``validate_prediction(item, predicted) -> stored``: the same for an imported model prediction
  (researcher-side shape: element ids, an option index, a score, a text). Raises ValueError.
- ``score(rows) -> list[dict]``: the scores of many answers at once, vectorised (issue 8: 100,000
  trials in under 10 s). ``rows`` is a list of ``ScoreRow``; a timed-out or unanswered row (its
  ``response`` None or ``timed_out`` true) scores wrong.
- ``feedback(trial) -> dict``: what a practice trial shows after the answer (may hold the truth:
  practice items are never scored).
- ``export(item) -> dict``: the kind's fields of an item for researchers (``study_items``), truth
  included.

Each also names itself for people: ``TITLE`` (the pages' name of the kind), ``instructions(facts)
-> str`` (the Markdown a participant reads before the first item, unless the study has its own, made
from the study's ``studies.instructions.Facts``: practice or none, clips or none, time limits; plain
words, no paper named) and ``PLOTS`` (the dashboard's bar charts: metric, name, axis title with unit,
axis range).

Adding a fifth kind is one module here (found by its file name: ``KINDS``) and one page widget
(``static/js/studies/<kind>.js``, loaded by the study page by the kind's name).
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

_written: ContextVar[list[str] | None] = ContextVar("study_files_written", default=None)


def wrote(name: str) -> None:
    """Record that a build stored the file ``name`` (a frame, a clip): ``collecting_files`` lists it,
    so the engine can remove it if the build fails and its transaction rolls back."""
    written = _written.get()
    if written is not None:
        written.append(name)


@contextmanager
def collecting_files() -> Iterator[list[str]]:
    """The storage names of every file a build stores (``wrote``) inside the block, as a list."""
    written: list[str] = []
    token = _written.set(written)
    try:
        yield written
    finally:
        _written.reset(token)


@dataclass(frozen=True)
class ScoreRow:
    """One answer to score: the item's ``truth`` and ``payload`` (server-side JSON), the stored
    ``response`` (None if none was given) and whether it came after the time limit."""

    truth: Any
    payload: dict
    response: Any
    timed_out: bool = False


@dataclass
class BuildReport:
    """What a kind's ``build`` made: items per condition number (scored ones), practice and attention
    items, skipped sources with reasons (``{"reason": count}``), frames written (ordering) and the
    storage names of the files written (removed by the caller if the build fails)."""

    items: dict[int, int] = field(default_factory=dict)
    practice: int = 0
    attention: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    frames_written: int = 0
    files: list[str] = field(default_factory=list)
    # Items the exposure ledger will keep from people who take this study and something else of the
    # project, by what gives them away (``studies.exposures.overlaps_in_project``), set after the build.
    exposure: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.items.values())


# Every module of this package whose name does not start with "_" is a kind, named by its module
# (listed without importing: the kind modules import this one).
KINDS = tuple(sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")))


def kind_module(kind: str) -> ModuleType:
    """The module of study kind ``kind`` (one of ``KINDS``). Raises KeyError for an unknown kind."""
    if kind not in KINDS:
        raise KeyError(kind)
    return importlib.import_module(f"{__name__}.{kind}")


def metrics_of(kind: str) -> tuple[str, ...]:
    """Every metric a trial of ``kind`` may carry in its ``scores``: the kind's ``METRICS`` and its
    ``JUDGED`` (metrics a judge adds later, e.g. an open answer's ``judge_score``; optional)."""
    module = kind_module(kind)
    return tuple(module.METRICS) + tuple(getattr(module, "JUDGED", ()))


def kind_choices() -> list[tuple[str, str]]:
    """(kind, its ``TITLE``) for every kind: the choices of ``Study.kind``."""
    return [(kind, kind_module(kind).TITLE) for kind in KINDS]
