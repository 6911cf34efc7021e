"""Answers as flat records, the benchmark report's input (issue 18, part 4 "Splits").

One record is one scored answer: who gave it, what it answered, the split fields of what it answered,
and its metric values. ``Answers`` holds them column-wise (lists and numpy arrays: 200,000 records
are a few lists, not 200,000 dicts):

- ``respondent``: ``"human"`` (a person's trial), or a model's column name (a model participant's
  ``Participant.model``, an imported ``studies.Prediction.model``, an evaluation's model, with its
  ablation in words when it has one: ``gpt-4o (text only (no frames))``);
- ``key``: the pairing key, ``"qa:<QA pair id>"`` when the answer is about a QA pair (a study item
  built from one, or an evaluation's prediction), else ``"item:<study item id>"``; people and models
  with the same key answered the same question, so ``report --study X --evaluation 5`` pairs the
  evaluation's model with the study's people on the study's QA pairs;
- ``source``: ``"study:<name>"`` or ``"evaluation:<id>"``;
- ``fields``: split field -> one value per record (None where the record has none), ``FIELDS``;
- ``metrics``: metric -> float array (NaN where the record has no value of it).

Sources and what enters (``read``):

1. Study trials: a person's (``kind=person``, not excluded, item role ``scored``, not practice,
   scored) as ``"human"``; a model participant's (``kind=model``, scored items, scored) as its
   ``model``. Imported study predictions (scored, scored items) as their ``model``. Metrics: the keys
   of ``scores`` (``studies.kinds.<kind>.METRICS``).
2. Evaluation predictions with status ``done`` (an evaluation run on a study's items, ``evaluate
   --study``, stores its answers as a model participant's trials: those are read, once); ``accuracy`` (``correct`` of multiple-choice and
   interval items, 1/0), and for judged open items ``judge_accuracy`` (judged correct, 1/0) and the
   judge's scores: ``judge_score`` (EgoNight, 0-5) or, for the VUDG rubric, ``judge_score_10``
   (accuracy + relevance, 0-10), ``judge_accuracy_score`` and ``judge_relevance_score`` (0-5 each).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from django.db.models import Count

from annotator.evaluation.models import Evaluation, Rubric
from annotator.evaluation.models import Prediction as EvalPrediction
from annotator.evaluation.study_items import column
from annotator.media.models import VideoGroup, VideoGroupMember
from annotator.scoring.report import HUMAN, Records
from annotator.studies.models import Item, Participant, Study, Trial
from annotator.studies.models import Prediction as StudyPrediction


@dataclass(frozen=True)
class Field:
    """A split field: its ``name`` (``--by``), the header in words, and where it comes from."""

    name: str
    words: str
    about: str


# Every field a report splits by (``--by``). ``subtask`` is another name of ``qa_type``. The help
# texts reach people (report pages, ``report --help``), so they name no paper; the sources are
# in the docstrings: the Likert groups VUDG Sec. 4.5, clip lengths EGO-FLIGHT Sec. 3.2 (seed 003),
# life-log lengths X-LeBench Sec. 3.1 (seed 002).
FIELDS: dict[str, Field] = {
    f.name: f
    for f in (
        Field("qa_type", "QA type", "the QA type's slug (a study item's subtask)"),
        Field("condition", "Condition", "a study condition, as 'number. label'"),
        Field("time_limit", "Time limit (s)", "a study condition's time limit per trial, seconds (None: none)"),
        Field("group", "Likert group", "real, random_matched or filtered: the Likert study's control groups"),
        Field("criterion", "Likert criterion", "the criterion a Likert condition rates"),
        Field("illumination", "Illumination", "day, night or other, of the video"),
        Field("difficulty", "Difficulty", "easy, medium or hard, of the video"),
        Field("source", "Source", "real or synthetic, of the video"),
        Field("provenance", "Provenance", "machine kept, machine modified or human added, of the QA pair"),
        Field("domain", "Domain", "the manifest's domain of the video"),
        Field("scenario", "Scenario", "the manifest's scenario of the video"),
        Field("clip_length", "Clip length", "short (< 10 s), medium (10-25 s) or long (> 25 s)"),
        Field("log_length", "Life-log length", "short (up to 6 parts), medium (7-12) or long (13 or more)"),
    )
}
ALIASES = {"subtask": "qa_type"}


def field_name(name: str) -> str:
    """The canonical name of split field ``name`` (``subtask`` -> ``qa_type``). Raises KeyError for
    an unknown field."""
    name = ALIASES.get(name, name)
    if name not in FIELDS:
        raise KeyError(name)
    return name


def clip_length_class(seconds: float | None) -> str | None:
    """EGO-FLIGHT's clip-length classes (seed 003 Sec. 3.2: short 5-10 s, medium 10-25 s, long over 25 s)."""
    if seconds is None:
        return None
    return "short" if seconds < 10 else "medium" if seconds <= 25 else "long"


def log_length_class(parts: int | None) -> str | None:
    """X-LeBench's life-log classes by their number of parts (seed 002 Sec. 3.1: 4, 9 and 15 chunks
    make the short, medium and long logs): up to 6 short, up to 12 medium, else long."""
    if not parts:
        return None
    return "short" if parts <= 6 else "medium" if parts <= 12 else "long"


@dataclass
class Answers:
    """Records column-wise (see the module docstring)."""

    respondent: list = field(default_factory=list)
    key: list = field(default_factory=list)
    source: list = field(default_factory=list)
    fields: dict[str, list] = field(default_factory=lambda: {name: [] for name in FIELDS})
    metric_rows: list[dict] = field(default_factory=list)
    _metrics: dict[str, np.ndarray] | None = None

    def __len__(self) -> int:
        return len(self.respondent)

    def add(self, respondent: str, key: str, source: str, values: dict, scores: dict | None) -> None:
        self.respondent.append(respondent)
        self.key.append(key)
        self.source.append(source)
        for name, values_of in self.fields.items():
            values_of.append(values.get(name))
        self.metric_rows.append(scores or {})
        self._metrics = None

    @property
    def metrics(self) -> dict[str, np.ndarray]:
        """metric -> float array (NaN where a record has none), over the metrics any record has."""
        if self._metrics is None:
            names = []
            for row in self.metric_rows:
                for k in row:
                    if k not in names:
                        names.append(k)
            self._metrics = {}
            for name in names:
                self._metrics[name] = np.fromiter(
                    (_num(row.get(name)) for row in self.metric_rows), dtype=float, count=len(self.metric_rows)
                )
        return self._metrics

    def records(self, metric: str) -> Records:
        """The ``scoring.report.Records`` of one metric (all NaN if no record has it)."""
        values = self.metrics.get(metric)
        if values is None:
            values = np.full(len(self), np.nan)
        return Records(respondent=self.respondent, key=self.key, fields=self.fields, values=values)


def model_name(name: str) -> str:
    """A model's column name as the report shows it: ``name``, or ``name (model)`` when it reads as a
    people's column (``human``, or ``human · 60 s``-style, ``selectors._human_split``), so a model
    so named is never merged into the people's column."""
    name = str(name)
    if name == HUMAN or name.startswith(f"{HUMAN} · "):
        return f"{name} (model)"
    return name


def _num(x) -> float:
    if isinstance(x, bool):
        return float(x)
    if isinstance(x, (int, float)):
        return float(x)
    return float("nan")


def _log_parts(project_id: int) -> dict[int, int]:
    """Life-log group id -> its number of parts, for the project."""
    return dict(
        VideoGroupMember.objects.filter(group__project_id=project_id, group__kind=VideoGroup.Kind.LIFE_LOG)
        .values_list("group_id")
        .annotate(n=Count("id"))
    )


_VIDEO = ("illumination", "difficulty", "source", "domain", "scenario")


def _video_fields(prefix: str) -> list[str]:
    return [f"{prefix}__{name}" for name in _VIDEO]


def _blank(x):
    return None if x in ("", None) else x


def read(studies: Iterable[Study] = (), evaluations: Iterable[Evaluation] = ()) -> Answers:
    """The records of the given studies' trials and predictions and the evaluations' done predictions
    (see the module docstring). Reads each source in one query, streamed in chunks."""
    answers = Answers()
    parts_cache: dict[int, dict[int, int]] = {}

    def parts(project_id):
        if project_id not in parts_cache:
            parts_cache[project_id] = _log_parts(project_id)
        return parts_cache[project_id]

    studies = list(studies)
    chosen = {s.pk for s in studies}
    for study in studies:
        _read_study(answers, study, parts(study.project_id))
    for evaluation in evaluations:
        study_id = getattr(evaluation, "study_id", None)
        if study_id is None:
            _read_evaluation(answers, evaluation, parts(evaluation.project_id))
        elif study_id not in chosen and getattr(evaluation, "participant_id", None):
            # A model run on a study's items: its answers are its model participant's trials (scored by the
            # study's scoring); when the study itself is in the report they are read with it already.
            _read_study(
                answers,
                Study.objects.get(pk=study_id),
                parts(evaluation.project_id),
                participant_id=evaluation.participant_id,
            )
    return answers


_ITEM = [
    "id",
    "qa_pair_id",
    "subtask",
    "group",
    "payload__clip",
    "condition__number",
    "condition__label",
    "condition__time_limit_s",
    "condition__variables",
    "qa_pair__qa_type__slug",
    "qa_pair__provenance",
    "qa_pair__clip_start_s",
    "qa_pair__clip_end_s",
    "qa_pair__unit__group_id",
    "qa_pair__unit__group__kind",
    *_video_fields("qa_pair__video"),
    *_video_fields("footage"),
]


def _item_fields(row: dict, parts: dict[int, int]) -> tuple[str, dict]:
    """(pairing key, split fields) of a study item from its ``_ITEM`` values."""
    variables = row["condition__variables"] or {}
    clip_s = None
    if row["qa_pair__clip_start_s"] is not None and row["qa_pair__clip_end_s"] is not None:
        clip_s = row["qa_pair__clip_end_s"] - row["qa_pair__clip_start_s"]
    elif isinstance(row["payload__clip"], dict):
        clip = row["payload__clip"]
        try:
            clip_s = float(clip["end_s"]) - float(clip["start_s"])
        except (KeyError, TypeError, ValueError):
            clip_s = None
    prefix = "qa_pair__video" if row["qa_pair_id"] else "footage"
    group_id = row["qa_pair__unit__group_id"]
    values = {name: _blank(row[f"{prefix}__{name}"]) for name in _VIDEO}
    values.update(
        {
            "qa_type": _blank(row["subtask"]) or _blank(row["qa_pair__qa_type__slug"]),
            "condition": f"{row['condition__number']}. {row['condition__label']}",
            "time_limit": row["condition__time_limit_s"],
            "group": _blank(row["group"]),
            "criterion": _blank(variables.get("criterion")),
            "provenance": _blank(row["qa_pair__provenance"]),
            "clip_length": _blank(variables.get("clip_length")) or clip_length_class(clip_s),
            "log_length": log_length_class(parts.get(group_id))
            if row["qa_pair__unit__group__kind"] == VideoGroup.Kind.LIFE_LOG
            else None,
        }
    )
    key = f"qa:{row['qa_pair_id']}" if row["qa_pair_id"] else f"item:{row['id']}"
    return key, values


def _read_study(answers: Answers, study: Study, parts: dict[int, int], participant_id: int | None = None) -> None:
    """A study's people's and models' trials and imported predictions; with ``participant_id``, only
    that model participant's trials."""
    items = {
        row["id"]: _item_fields(row, parts)
        for row in Item.objects.filter(condition__study=study, role=Item.Role.SCORED).values(*_ITEM)
    }
    source = f"study:{study.name}"
    people = Trial.objects.filter(
        participant__study=study, participant__kind=Participant.Kind.PERSON, participant__excluded=False
    )
    models = Trial.objects.filter(participant__study=study, participant__kind=Participant.Kind.MODEL)
    if participant_id is not None:
        people, models = people.none(), models.filter(participant_id=participant_id)
    for qs, is_person in ((people, True), (models, False)):
        rows = (
            qs.filter(item__role=Item.Role.SCORED, practice=False, scored_at__isnull=False)
            .values_list("item_id", "participant__model", "scores")
            .order_by("id")
        )
        for item_id, model, scores in rows.iterator(chunk_size=5000):
            key, values = items[item_id]
            answers.add(HUMAN if is_person else model_name(model), key, source, values, scores)
    if participant_id is not None:
        return
    rows = (
        StudyPrediction.objects.filter(study=study, item__role=Item.Role.SCORED, scored_at__isnull=False)
        .values_list("item_id", "model", "scores")
        .order_by("id")
    )
    for item_id, model, scores in rows.iterator(chunk_size=5000):
        key, values = items[item_id]
        answers.add(model_name(model), key, source, values, scores)


def model_column(evaluation: Evaluation) -> str:
    """The report's column of an evaluation: its model, with its ablation in words when it has one
    (``gpt-4o (text only (no frames))``: ``evaluation.study_items.column``, the name its study answers
    carry too)."""
    return model_name(column(evaluation.model, getattr(evaluation, "ablation", "") or ""))


_PRED = [
    "qa_pair_id",
    "kind",
    "correct",
    "judge_pred",
    "judge_score",
    "judge_accuracy",
    "judge_relevance",
    "qa_type",
    "illumination",
    "source",
    "provenance",
    "clip_start_s",
    "clip_end_s",
    "video__difficulty",
    "video__domain",
    "video__scenario",
    "qa_pair__unit__group_id",
    "qa_pair__unit__group__kind",
]


def _read_evaluation(answers: Answers, evaluation: Evaluation, parts: dict[int, int]) -> None:
    column = model_column(evaluation)
    source = f"evaluation:{evaluation.pk}"
    vudg = evaluation.rubric == Rubric.VUDG
    rows = evaluation.predictions.filter(status=EvalPrediction.Status.DONE).values_list(*_PRED).order_by("id")
    for (
        qa_pair_id,
        kind,
        correct,
        judge_pred,
        judge_score,
        judge_acc,
        judge_rel,
        qa_type,
        illumination,
        source_v,
        provenance,
        start,
        end,
        difficulty,
        domain,
        scenario,
        group_id,
        group_kind,
    ) in rows.iterator(chunk_size=5000):
        scores: dict = {}
        if kind in (EvalPrediction.Kind.MCQ, EvalPrediction.Kind.INTERVAL) and correct is not None:
            scores["accuracy"] = 1.0 if correct else 0.0
        if kind == EvalPrediction.Kind.OPEN and judge_pred:
            scores["judge_accuracy"] = 1.0 if judge_pred == "correct" else 0.0
            if vudg:
                scores.update(
                    {
                        "judge_score_10": judge_score,
                        "judge_accuracy_score": judge_acc,
                        "judge_relevance_score": judge_rel,
                    }
                )
            else:
                scores["judge_score"] = judge_score
        values = {
            "qa_type": _blank(qa_type),
            "illumination": None if illumination in ("", "unknown") else illumination,
            "source": None if source_v in ("", "unknown") else source_v,
            "provenance": _blank(provenance),
            "difficulty": _blank(difficulty),
            "domain": _blank(domain),
            "scenario": _blank(scenario),
            "clip_length": clip_length_class(end - start) if kind != EvalPrediction.Kind.INTERVAL else None,
            "log_length": log_length_class(parts.get(group_id)) if group_kind == VideoGroup.Kind.LIFE_LOG else None,
        }
        key = f"qa:{qa_pair_id}" if qa_pair_id else f"prediction:{evaluation.pk}:{len(answers)}"
        answers.add(column, key, source, values, scores)
