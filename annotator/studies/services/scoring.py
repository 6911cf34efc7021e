"""Scoring answered trials (queued, batched, behind a barrier), importing model predictions, and
models taking a study as participants."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db import transaction
from django.utils import timezone

from annotator import jobs
from annotator.errors import Invalid
from annotator.studies.kinds import ScoreRow, kind_module
from annotator.studies.models import Item, Participant, Prediction, Study, Trial

# ------------------------------------------------------------------------------ scoring

SCORE_BATCH = 10000
SCORING_LOCK = 0x5353  # "SS": advisory-lock namespace of a study's scoring (key: the study's id)


def queue_scoring(study_id: int) -> None:
    """Have the study's rows written in the caller's transaction scored: the ``studies.score`` job
    (its row now, its message on commit), unless one is queued already, which then scores them.
    Call inside the transaction that writes the rows.

    Answers come many at a time, and ``jobs.enqueue`` on a queued job locks its row until commit,
    so every answer of a study waited for the one before it. Here a queued job is only read, under
    a shared advisory lock (``SCORING_LOCK``, the study), which answers never wait for among
    themselves:

    1. take the shared lock (held until the caller's transaction ends);
    2. read, in a fresh snapshot, whether the job is queued: if so, stop;
    3. else queue it (``jobs.enqueue``: a job running, done or failed is queued again).

    1 and 2 are one statement, the database function ``studies_scoring_queued`` (migration 0008),
    whose read takes its own snapshot after the lock is granted (a VOLATILE function's queries do,
    in READ COMMITTED), as ``jobs.is_queued`` did in a statement of its own.

    A delivery of the job claims its row (queued -> running), then waits for the exclusive lock
    (``scoring_barrier``) before reading anything. A transaction that saw the job queued in 2 took
    the shared lock before the claim was committed, so the delivery's barrier waits for its
    commit, and the delivery scores its rows. Without a transaction the shared lock would end with
    its statement: ``jobs.enqueue`` is called then."""
    from django.db import connection

    if not connection.in_atomic_block:
        jobs.enqueue("studies.score", study_id)
        return
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT studies_scoring_queued(%s, %s, %s)",
            [SCORING_LOCK, study_id, jobs.job_key("studies.score", study_id)],
        )
        queued = cursor.fetchone()[0]
    if not queued:
        jobs.enqueue("studies.score", study_id)


def scoring_barrier(study_id: int) -> None:
    """Wait until every transaction that relied on the study's queued scoring job has committed or
    rolled back (``queue_scoring``: they hold the shared lock), by taking and releasing the
    exclusive lock; a session lock, so it works in or out of a transaction. New takers of the
    shared lock queue behind it (PostgreSQL grants locks in order), so this does not starve."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s, %s)", [SCORING_LOCK, study_id])
        cursor.execute("SELECT pg_advisory_unlock(%s, %s)", [SCORING_LOCK, study_id])


def score_pending(study_id: int, *, batch_size: int = SCORE_BATCH) -> int:
    """Score every answered trial and every prediction of the study not scored yet; returns how
    many rows this call scored. Safe to run many at once (a worker per answer, a command):

    1. In a transaction, claim up to ``batch_size`` unscored rows with ``SELECT ... FOR UPDATE OF
       <row> SKIP LOCKED``: rows another scorer holds are skipped, not waited for, and a row that
       another scorer scored and committed since this statement's snapshot is re-checked by
       PostgreSQL and no longer matches ``scored_at IS NULL``.
    2. Score the claimed rows with the kind's vectorised ``score`` and write them in the same
       transaction, by one ``UPDATE ... FROM jsonb_each(<batch's scores by id>)`` (Django's
       ``bulk_update`` builds a ``CASE`` over every id for each row: 0.7 s per 2,000 rows,
       ``bench/scoring.py``), which releases the claim on commit.
       Items' truth and payload are read once per call (they do not change once built).
    3. Repeat until no unclaimed, unscored row is left.

    So no row is scored twice and the counts of concurrent calls add up to the rows there were.
    First of all, ``scoring_barrier``: rows of transactions that counted on a queued scoring job
    (``queue_scoring``) are committed before anything is read, so this call scores them.
    """
    from django.db import connection

    scoring_barrier(study_id)
    study = Study.objects.filter(pk=study_id).first()
    if study is None:
        return 0
    module = kind_module(study.kind)
    items: dict[int, tuple] = {}
    n = 0
    for model, answer_field, filters in (
        (Trial, "response", {"participant__study_id": study_id, "answered_at__isnull": False}),
        (Prediction, "predicted", {"study_id": study_id}),
    ):
        timed = model is Trial  # predictions have no time limit
        fields = ("pk", "item_id", answer_field) + (("timed_out",) if timed else ())
        # The batch's scores travel as one JSON object {id: scores}: one json.dumps, no per-row quoting.
        update = (
            f"UPDATE {connection.ops.quote_name(model._meta.db_table)} AS t SET scores = s.value, scored_at = %s "
            "FROM jsonb_each(%s::jsonb) AS s WHERE t.id = s.key::bigint"
        )
        while True:
            with transaction.atomic():
                rows = list(
                    model.objects.select_for_update(skip_locked=True, of=("self",))
                    .filter(scored_at__isnull=True, **filters)
                    .order_by("pk")
                    .values_list(*fields)[:batch_size]
                )
                if not rows:
                    break
                missing = {r[1] for r in rows} - items.keys()
                if missing:
                    items.update(
                        (pk, (truth, payload))
                        for pk, truth, payload in Item.objects.filter(pk__in=missing).values_list(
                            "pk", "truth", "payload"
                        )
                    )
                scores = module.score([ScoreRow(*items[r[1]], r[2], timed and r[3]) for r in rows])
                with connection.cursor() as cursor:
                    cursor.execute(update, [timezone.now(), json.dumps({r[0]: s for r, s in zip(rows, scores)})])
                n += len(rows)
    return n


# ------------------------------------------------------------------------------ model predictions


def is_people_name(model: str) -> bool:
    """Whether ``model`` reads as the people's column of score tables and the report (``human``, any
    case, or ``human · ...``): a model so named would be counted as people."""
    name = str(model).strip().lower()
    return name == "human" or name.startswith("human · ")


@dataclass
class ImportReport:
    """``imported`` lines stored (new or replacing the model's earlier prediction for the item);
    ``errors`` as (line number, message) for lines skipped."""

    imported: int = 0
    errors: list[tuple[int, str]] = field(default_factory=list)


def import_predictions(study: Study, lines: Iterable[str]) -> ImportReport:
    """Store model predictions from JSONL lines of ``model``, ``item_id``, ``predicted`` (the kind's
    prediction shape: an option index, element ids in order, a score 1-5, a text). A bad line (not
    JSON, missing keys, an item of another study or a practice/attention item, a prediction the
    kind refuses) is reported with its 1-based number and skipped; the others are stored, unscored,
    in one transaction, and a scoring job is queued on commit."""
    module = kind_module(study.kind)
    report = ImportReport()
    items = {i.pk: i for i in Item.objects.filter(condition__study=study, role=Item.Role.SCORED)}
    rows: dict[tuple[str, int], object] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            try:
                data = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"not JSON: {exc}") from None
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            model, item_id = data.get("model"), data.get("item_id")
            if not isinstance(model, str) or not model.strip() or len(model) > 200:
                raise ValueError('"model" must be a non-empty string of at most 200 characters')
            if is_people_name(model):
                raise ValueError(f'"model" {model.strip()[:40]!r} is the name of the people\'s column in results')
            if isinstance(item_id, bool) or not isinstance(item_id, int) or item_id not in items:
                raise ValueError(f"item_id {item_id!r} is not a scored item of {study.name}")
            if "predicted" not in data:
                raise ValueError('"predicted" is missing')
            stored = module.validate_prediction(items[item_id], data["predicted"])
        except (ValueError, TypeError) as exc:
            report.errors.append((number, str(exc)))
            continue
        rows[(model.strip(), item_id)] = stored
    # INSERT ... ON CONFLICT in batches, in one transaction: a model's new prediction for an item
    # replaces its old one, unscored again.
    with transaction.atomic():
        Prediction.objects.bulk_create(
            [
                Prediction(study=study, model=model, item_id=item_id, predicted=predicted)
                for (model, item_id), predicted in rows.items()
            ],
            update_conflicts=True,
            unique_fields=["model", "item"],
            update_fields=["study", "predicted", "scores", "scored_at"],
            batch_size=2000,
        )
        if rows:
            queue_scoring(study.pk)
    report.imported = len(rows)
    return report


# ------------------------------------------------------------------------------ models as participants


def model_participant(study: Study, model: str) -> Participant:
    """The model participant named ``model`` (its column in results; at most 200 characters) of
    ``study``, made on first use. Raises Invalid for an empty or too long name."""
    name = (model or "").strip()
    if not name or len(name) > 200:
        raise Invalid("a model participant's name is 1 to 200 characters", errors={"model": "bad name"})
    if is_people_name(name):
        raise Invalid(
            f"a model cannot be called {name[:40]!r}: that is the people's column in results",
            errors={"model": "the people's name"},
        )
    participant, _ = Participant.objects.get_or_create(
        study=study,
        kind=Participant.Kind.MODEL,
        model=name,
        defaults={"stage": Participant.Stage.DONE, "finished_at": timezone.now()},
    )
    return participant


def record_model_answers(participant: Participant, answers: dict[int, object]) -> int:
    """Store a model participant's answers as its trials, scored like people's (issue 18): item id
    -> the kind's stored response (``kinds.<kind>.validate_prediction``'s form; None for an answer
    that could not be read, stored and scored as no answer). A trial per item, in condition and
    item order; a second call replaces the answers it names (unscored again). Items must be
    scored items of the participant's study (others are refused with Invalid, nothing written).
    Queues scoring on commit; returns the number of trials written."""
    if participant.kind != Participant.Kind.MODEL:
        raise Invalid("only a model participant's answers are recorded this way")
    items = dict(
        Item.objects.filter(
            condition__study_id=participant.study_id, role=Item.Role.SCORED, pk__in=list(answers)
        ).values_list("pk", "condition_id")
    )
    if set(answers) - set(items):
        raise Invalid(f"{len(set(answers) - set(items))} of these answers are not for scored items of the study")
    order = list(
        Item.objects.filter(condition__study_id=participant.study_id, role=Item.Role.SCORED)
        .order_by("condition__number", "index")
        .values_list("pk", flat=True)
    )
    position = {pk: i for i, pk in enumerate(order)}
    now = timezone.now()
    with transaction.atomic():
        participant.conditions.add(*set(items.values()))
        Trial.objects.bulk_create(
            [
                Trial(
                    participant=participant,
                    item_id=item_id,
                    position=position[item_id],
                    practice=False,
                    response=response,
                    timed_out=False,
                    answered_at=now,
                )
                for item_id, response in answers.items()
            ],
            update_conflicts=True,
            unique_fields=["participant", "item"],
            update_fields=["response", "answered_at", "scores", "scored_at"],
            batch_size=2000,
        )
        queue_scoring(participant.study_id)
    return len(answers)
