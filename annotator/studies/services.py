"""Writes of the study engine, the same for every kind: create a study, enrol, serve, time and
answer trials, score, import model predictions, apply exclusion rules.

The kind-specific parts (building items, the participant's payload, validating and scoring a
response) are in ``annotator.studies.kinds.<kind>``; this module calls them.
"""

from __future__ import annotations

import json
import random
import statistics
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.db.models import Count, Exists, OuterRef, Q, Subquery
from django.utils import timezone

from annotator import jobs
from annotator.errors import Conflict, Forbidden, Invalid
from annotator.projects.models import Project
from annotator.studies import exposures, selectors
from annotator.studies.kinds import KINDS, BuildReport, ScoreRow, collecting_files, kind_module
from annotator.studies.models import Condition, Item, Participant, Prediction, Study, Trial
from annotator.studies.selectors import elapsed_ms, limit_ms

# Options every kind accepts (the rest go to the kind's ``build`` through ``Study.settings``).
STUDY_FIELDS = (
    "questions_per_participant",
    "conditions_per_participant",
    "practice_items",
    "raters_per_item",
    "independent",
    "instructions",
    "exclusion",
)
EXCLUSION_RULES = ("min_median_rt_s", "min_practice_score", "max_attention_failures")


def presets() -> dict[str, tuple[str, dict]]:
    """Every preset name -> (kind, its options), over all kinds."""
    return {name: (kind, opts) for kind in KINDS for name, opts in kind_module(kind).PRESETS.items()}


def create_study(
    project: Project,
    name: str,
    kind: str,
    *,
    preset: str = "",
    seed: int = 0,
    options: dict | None = None,
    background: bool = False,
    progress: Callable[[str], None] = lambda _: None,
) -> tuple[Study, BuildReport | None]:
    """Create study ``name`` of ``kind`` and build its conditions and items from the project's data.

    ``options`` override the preset's (``kinds.<kind>.PRESETS[preset]``), which override the kind's
    ``DEFAULTS``: the engine's fields (``STUDY_FIELDS``) go on the study, everything else
    (``per_type``, ``time_limits``...) is passed to the kind's ``build`` and kept in
    ``Study.settings``. Raises Invalid for an unknown kind or preset, an existing name or a bad
    exclusion rule, before anything is written.

    In the foreground (the command) the build runs here, in one transaction with the study's row:
    if it fails nothing is kept, files included; it raises Invalid for a bad option or a build with
    no items, MediaError if ffmpeg cannot read a video. With ``background`` (the API: a build may
    take minutes of ffmpeg) the study is saved as ``building`` and a ``studies.build`` job builds it
    (``build_study``); the report is None then.
    """
    if kind not in KINDS:
        raise Invalid(f"unknown study kind {kind!r}; choose one of {', '.join(KINDS)}", errors={"kind": "unknown"})
    module = kind_module(kind)
    if preset and preset not in module.PRESETS:
        known = ", ".join(module.PRESETS) or "none"
        raise Invalid(
            f"unknown preset {preset!r} for {kind} studies; choose one of {known}", errors={"preset": "unknown"}
        )
    merged = {
        **getattr(module, "DEFAULTS", {}),
        **(module.PRESETS.get(preset) or {}),
        **{k: v for k, v in (options or {}).items() if v is not None},
    }
    fields = {k: merged.pop(k) for k in STUDY_FIELDS if k in merged}
    exclusion = fields.get("exclusion") or {}
    if not isinstance(exclusion, dict) or set(exclusion) - set(EXCLUSION_RULES):
        raise Invalid(f"exclusion rules are {', '.join(EXCLUSION_RULES)}", errors={"exclusion": "unknown rule"})
    fields["exclusion"] = {k: v for k, v in exclusion.items() if v is not None}
    if background:
        with transaction.atomic():
            study = _new_study(project, name, kind, preset, seed, merged, fields, Study.Status.BUILDING)
            jobs.enqueue("studies.build", study.pk)
        return study, None
    with transaction.atomic():
        study = _new_study(project, name, kind, preset, seed, merged, fields, Study.Status.READY)
        report = _build(study, progress)
    return study, report


def _new_study(project, name, kind, preset, seed, options, fields, status) -> Study:
    taken = Invalid(f"a study named {name!r} already exists in {project.slug}", errors={"name": "taken"})
    if Study.objects.filter(project=project, name=name).exists():
        raise taken
    try:
        with transaction.atomic():  # a savepoint: two creations racing for one name, one wins
            return Study.objects.create(
                project=project,
                name=name,
                kind=kind,
                preset=preset,
                seed=seed,
                status=status,
                settings=_jsonable(options),
                **fields,
            )
    except IntegrityError:
        raise taken from None


def _build(study: Study, progress: Callable[[str], None]) -> BuildReport:
    """Run the kind's build on ``study`` in the caller's transaction; Invalid if it made no items.
    If it raises, the files it stored (frames, clips) are removed: the caller's transaction is
    about to roll back the rows that name them. Files stored before, and reused, are kept."""
    with collecting_files() as written:
        try:
            report = kind_module(study.kind).build(study, dict(study.settings), progress)
            if report.total == 0:
                reasons = (
                    "; ".join(f"{n} {r}" for r, n in report.skipped.items()) or "the project has no data of this kind"
                )
                raise Invalid(f"no items could be built for this {study.kind} study ({reasons})")
        except BaseException:
            for stored in written:
                default_storage.delete(stored)
            raise
    study.status = Study.Status.READY
    if report.skipped:  # what the build left out, and why (kept for the API's builds, which print no report)
        study.sampling["skipped"] = dict(report.skipped)
    report.exposure = exposures.overlaps_in_project(study)
    study.sampling["exposure"] = report.exposure
    study.save()  # the kind records what it sampled in study.sampling
    return report


def build_study(study_id: int) -> str:
    """Build a study saved as ``building`` (the ``studies.build`` job): its items in one transaction,
    then ``ready``. A build that cannot succeed (Invalid: no items, a bad option; MediaError: a video
    ffmpeg cannot read) marks the study ``failed`` with the reason in ``build_error`` and keeps
    nothing else; other errors propagate so the job is retried. Idempotent: a study that is not
    ``building`` (built, failed, or deleted) is left alone."""
    from annotator.adapters.ffmpeg import MediaError

    with transaction.atomic():
        study = Study.objects.select_for_update().filter(pk=study_id, status=Study.Status.BUILDING).first()
        if study is None:
            return "nothing to build"
        try:
            with transaction.atomic():
                report = _build(study, lambda _: None)
        except (Invalid, MediaError) as exc:
            Study.objects.filter(pk=study.pk).update(status=Study.Status.FAILED, build_error=str(exc))
            return f"failed: {exc}"
    return f"built {report.total} items"


def mark_build_failed(study_id: int, *, reason: str) -> None:
    """The ``studies.build`` job gave up (its worker died on every delivery): the study is ``failed``
    with the reason, not left ``building`` for ever."""
    Study.objects.filter(pk=study_id, status=Study.Status.BUILDING).update(
        status=Study.Status.FAILED, build_error=reason
    )


def _jsonable(options: dict) -> dict:
    return json.loads(json.dumps(options, default=str))


# ------------------------------------------------------------------------------ who takes part

NOT_A_PARTICIPANT = (
    "You cannot take part in this study: your role ({role}) lets you see or export its answers, "
    "so your answers would not be a fair human baseline. Take part with an annotator account."
)
NOT_INDEPENDENT = (
    "You cannot take part in this study: it asks for independent evaluators (EgoExoBench App. A.5), "
    "and you {what} {n} of its QA pairs."
)


def require_participant_role(user, project: Project) -> None:
    """Only annotators take part (issue 7, B): anyone who can export a study's truth (superusers,
    and the project's admins, reviewers and researchers) is refused with Forbidden, in plain words.
    Non-members are the caller's concern (they get 404 before this)."""
    from annotator.access import role_in
    from annotator.projects.models import Role

    role = role_in(user, project)
    if user.is_superuser:
        raise Forbidden(NOT_A_PARTICIPANT.format(role="superuser"))
    if role != Role.ANNOTATOR:
        raise Forbidden(NOT_A_PARTICIPANT.format(role=role or "none"))


def require_independent(study: Study, user) -> None:
    """An independent study (``Study.independent``) refuses, with Forbidden, anyone who took part in
    building any of its QA pairs (EgoExoBench App. A.5: "evaluators who did not participate in the
    construction of the dataset"): who wrote a revision of one (added, kept, modified or deleted it
    in a first pass or a double-check), gave a verdict on one in an overlap pass, or held or
    completed a queue item of a unit that has one (and so saw its draft)."""
    from annotator.qa.models import QueueItem, Revision, Verdict

    if not study.independent:
        return
    pairs = Item.objects.filter(condition__study=study, qa_pair__isnull=False).values("qa_pair_id")
    revised = Revision.objects.filter(qa_pair__in=pairs, actor_user=user).values("qa_pair_id").distinct().count()
    if revised:
        raise Forbidden(NOT_INDEPENDENT.format(what="drafted, verified or double-checked", n=revised))
    judged = Verdict.objects.filter(qa_pair__in=pairs, user=user).values("qa_pair_id").distinct().count()
    if judged:
        raise Forbidden(NOT_INDEPENDENT.format(what="verified", n=judged))
    units = Item.objects.filter(condition__study=study, qa_pair__isnull=False).values("qa_pair__unit_id")
    held = (
        QueueItem.objects.filter(Q(leased_by=user) | Q(completed_by=user), unit_id__in=units)
        .values("unit_id")
        .distinct()
        .count()
    )
    if held:
        raise Forbidden(NOT_INDEPENDENT.format(what="held the work units of", n=held))


def enroll(study: Study, user) -> Participant:
    """Make account ``user`` a participant (once; a second call returns the same one) and assign
    their items (``assign``). Raises Forbidden for anyone but an annotator
    (``require_participant_role``) and for an independent study the person helped build
    (``require_independent``); Conflict for a study that is not built. Serialised per study (a row
    lock), so concurrent enrolments respect the rater cap.
    """
    require_participant_role(user, study.project)
    with transaction.atomic():
        lock_open_study(study)
        existing = Participant.objects.filter(study=study, user=user).first()
        if existing is not None:
            return existing
        require_independent(study, user)
        participant = Participant.objects.create(study=study, user=user)
        assign(participant, seen_footage=selectors.footage_seen_in_queues(user, study.project_id))
    return participant


def lock_open_study(study: Study) -> None:
    """Lock the study's row for an enrolment (call inside a transaction) and raise Conflict, in
    plain words, when its items are still being built or their build failed.

    The lock is ``FOR NO KEY UPDATE`` of the study's row alone: enrolments still exclude each other,
    but rows that only refer to the study (a participant, a link) are not held up by it, and the
    project's row is not locked (the model's default ordering joined it, and ``FOR UPDATE`` then
    locked it too, holding up every insert that refers to the project)."""
    study.status = (
        Study.objects.select_for_update(no_key=True, of=("self",))
        .filter(pk=study.pk)
        .order_by()
        .values_list("status", flat=True)
        .first()
    )
    if study.status != Study.Status.READY:
        raise Conflict(
            "this study is not open yet: its items are "
            + ("still being built" if study.status == Study.Status.BUILDING else "not built (the build failed)")
        )


@dataclass
class Prepared:
    """What an assignment reads that the study's lock does not guard, read before taking it
    (``prepare_assignment``): the person's exposure screen (``exposures.Screen``, with the study's
    conditions loaded), the study's attention and practice items, and its conditions that have a
    scored item, by number (all fixed once it is built; their ``people`` as read then is not used:
    ``assign`` reads the counter under the lock)."""

    screen: exposures.Screen
    attention: list[Item]
    practice: list[Item]
    conditions: list[Condition]


def prepare_assignment(participant: Participant) -> Prepared:
    """Read what ``assign`` needs that no other enrolment changes, so that the study's lock is held
    for the cap's read and the writes only. ``participant`` may be unsaved (a link's new
    participant: its pseudonym set). Two statements: the person's ledger with their open trials in
    the project's other studies (``exposures.Screen``; one more for those trials' items when there
    are any), and the attention and practice items with their conditions, together with the first
    scored item of each condition that has one, which brings that condition."""
    study = participant.study
    screen = exposures.Screen(participant)
    first_scored = (
        Item.objects.filter(condition__study=study, role=Item.Role.SCORED)
        .order_by("condition_id", "id")
        .distinct("condition_id")
        .values("id")
    )
    rows = list(
        Item.objects.filter(
            Q(role__in=[Item.Role.ATTENTION, Item.Role.PRACTICE], condition__study=study) | Q(pk__in=first_scored)
        )
        .select_related("condition")
        .order_by("condition__number", "index")
    )
    fixed = [i for i in rows if i.role != Item.Role.SCORED]
    conditions = list({i.condition_id: i.condition for i in rows if i.role == Item.Role.SCORED}.values())  # by number
    screen.use_conditions(conditions)
    for item in fixed:
        screen.attach(item)
    return Prepared(
        screen,
        [i for i in fixed if i.role == Item.Role.ATTENTION],
        [i for i in fixed if i.role == Item.Role.PRACTICE][: study.practice_items],
        conditions,
    )


def assign(
    participant: Participant, *, seen_footage: set[int] = frozenset(), prepared: Prepared | None = None
) -> list[Trial]:
    """Assign a new participant's items as trials (call inside the enrolment's transaction, with
    the study locked: ``lock_open_study``, and the participant saved); returns the trials,
    practice first. ``prepared`` (``prepare_assignment`` of this person, read before the lock)
    saves those reads under it.

    Assignment (EGO-FLIGHT Sec. 3.5): ``conditions_per_participant`` conditions, those with the
    fewest participants so far first (ties broken by a seeded draw), and ``questions_per_participant``
    scored items split evenly across them, the least-answered first; never two items with the same
    ``key`` (two versions of one clip or QA pair); never an item already given to
    ``raters_per_item`` people; never an item about footage in ``seen_footage`` (video ids the
    person could play in a verification queue, issue 7), nor one the exposure ledger refuses
    (``exposures.Screen``: its truth follows from what the person was shown anywhere in the project,
    or its clips or answer would give away a trial they have open elsewhere; counted as refusals).
    Then the study's attention items at seeded random places among the scored ones, and
    ``practice_items`` practice items first. Trial ids follow positions, so they carry nothing
    about the items. The draws are seeded by the study's seed and the participant's id.

    Under the lock, two statements (and one of the refusals, if any): ``_choose`` (the conditions
    by their participants so far, ``Condition.people``, the chosen ones added to the participant,
    and their items under the cap with their raters so far, ``Item.raters``), then the insert of
    the trials. Both counters are kept by the database in the statements that add or remove what
    they count (migration 0008), so these reads cost the same however many people took part; they
    are read under the study's lock, as the counts were.
    """
    study = participant.study
    prepared = prepared or prepare_assignment(participant)
    rng = random.Random(f"{study.seed}:{participant.user_id or f'p{participant.pk}'}")
    order = list(prepared.conditions)
    rng.shuffle(order)  # the ties' draw: then, under the lock, the fewest participants first (a stable order)
    chosen_ids, candidates = _choose(participant, study, order)
    screen = prepared.screen
    by_id = {c.pk: c for c in order}
    chosen = [by_id[pk] for pk in chosen_ids]
    per = [study.questions_per_participant // len(chosen)] * len(chosen) if chosen else []
    for i in range(study.questions_per_participant - sum(per) if chosen else 0):
        per[i] += 1
    by_condition: dict[int, list[Item]] = {c.pk: [] for c in chosen}
    for item in candidates:
        by_condition[item.condition_id].append(item)
    used_keys: set[str] = set()
    picked: list[Item] = []
    refused: list[tuple[int, str]] = []
    for cond, quota in zip(chosen, per):
        fresh = []
        for item in by_condition[cond.pk]:
            if len(fresh) == quota:
                break
            if (item.key and item.key in used_keys) or (item.footage_id and item.footage_id in seen_footage):
                continue
            reason = screen.refusal(item)
            if reason:
                refused.append((item.pk, reason))
                continue
            fresh.append(item)
            if item.key:
                used_keys.add(item.key)
        picked += fresh
    exposures.note_refusals(participant, refused, "enrolment")
    rng.shuffle(picked)
    for item in prepared.attention:
        picked.insert(rng.randint(0, len(picked)), item)
    return Trial.objects.bulk_create(
        [
            Trial(participant=participant, item=item, position=i, practice=True)
            for i, item in enumerate(prepared.practice)
        ]
        + [Trial(participant=participant, item=item, position=i, practice=False) for i, item in enumerate(picked)]
    )


def _choose(participant: Participant, study: Study, order: list[Condition]) -> tuple[list[int], list[Item]]:
    """Under the study's lock, one statement: of the conditions ``order`` names (those with a scored
    item, in the seeded draw's order), the ``conditions_per_participant`` with the fewest people
    (``Condition.people``; ties in ``order``'s order) are chosen and added to ``participant`` (the
    membership rows, whose trigger counts them), and their scored items under the cap
    (``Item.raters`` below ``raters_per_item``) are read, least-answered first (then by index).
    Returns (the chosen conditions' ids, fewest people first; those items). A statement's reads
    see what was committed when it began, so this runs once the lock is held."""
    if not order:
        return [], []
    through = Participant.conditions.through._meta
    link_column = through.get_field("participant").column
    condition_column = through.get_field("condition").column
    cap = 'AND i."raters" < %(cap)s' if study.raters_per_item else ""
    sql = f"""
        WITH chosen AS (
            SELECT c."id", row_number() OVER (ORDER BY c."people", o.rank) AS place
            FROM "{Condition._meta.db_table}" c
            JOIN unnest(%(order)s::bigint[]) WITH ORDINALITY AS o(id, rank) ON o.id = c."id"
            ORDER BY c."people", o.rank LIMIT %(k)s
        ), joined AS (
            INSERT INTO "{through.db_table}" ("{link_column}", "{condition_column}")
            SELECT %(participant)s, "id" FROM chosen ON CONFLICT DO NOTHING
        )
        SELECT chosen."id" AS chosen_condition, chosen.place AS chosen_place, i.*
        FROM chosen LEFT JOIN "{Item._meta.db_table}" i
            ON i."condition_id" = chosen."id" AND i."role" = %(scored)s {cap}
        ORDER BY i."raters", i."index"
    """
    rows = list(
        Item.objects.raw(
            sql,
            {
                "order": [c.pk for c in order],
                "k": study.conditions_per_participant,
                "participant": participant.pk,
                "scored": Item.Role.SCORED,
                "cap": study.raters_per_item,
            },
        )
    )
    places = {row.chosen_condition: row.chosen_place for row in rows}
    return sorted(places, key=places.get), [row for row in rows if row.pk is not None]


def start(participant: Participant):
    """Leave the instructions: on to the practice items, or straight to the trials if there are none.
    Returns the first open trial when it read it (``current_trial``'s ``first``), else ``_UNREAD``."""
    if participant.stage != Participant.Stage.INSTRUCTIONS:
        return _UNREAD
    first = _first_open(participant)  # practice trials come first: one open means a practice
    participant.stage = Participant.Stage.PRACTICE if first is not None and first.practice else Participant.Stage.TRIALS
    participant.save(update_fields=["stage"])
    return first


# ------------------------------------------------------------------------------ timing


def _latest_shown(trial: Trial):
    """The latest ``shown_at`` the server accepts for a trial: its first serving plus
    ``STUDY_SHOW_MAX_MS`` (None before it is served)."""
    if trial.served_at is None:
        return None
    return trial.served_at + timedelta(milliseconds=settings.STUDY_SHOW_MAX_MS)


def _expired(trial: Trial, now) -> bool:
    """Past its limit plus ``STUDY_TIME_GRACE_MS``, in server time since shown; a trial served but
    never reported shown counts from the latest ``shown_at`` it could have had (``_latest_shown``),
    so holding the report back never stops the clock."""
    limit = limit_ms(trial)
    if limit is None:
        return False
    spent = elapsed_ms(trial, now)
    if spent is None:
        latest = _latest_shown(trial)
        spent = None if latest is None else (now - latest).total_seconds() * 1000.0
    return spent is not None and spent > limit + settings.STUDY_TIME_GRACE_MS


_UNREAD = object()  # ``current_trial``'s ``first``: not read yet


def current_trial(participant: Participant, *, first=_UNREAD) -> Trial | None:
    """The trial the participant is on: the first unanswered practice trial, then the first
    unanswered scored one; None when all are answered. ``first``: that first unanswered trial
    (``_first_open``, or None for none) when the caller has just read it in its transaction (an
    answer's ``next_open``), so it is not read again.

    Steps: (1) a trial whose time limit (plus grace) has run out since it was shown is closed as
    timed out, unanswered, and the next one is considered (a person who closed the page and came
    back later moves on, with the trial scored wrong); (2) the server's ``served_at`` is stamped the
    first time a trial is served (a reload serves the same trial again and keeps the first time),
    and what it shows is appended to the person's exposure ledger; (3) before that, a trial whose
    truth the ledger now gives away (the person was shown more since enrolment) is withdrawn
    unserved and the next one is considered (``exposures``). The updates are conditional, so two
    requests racing write one value.
    """
    while True:
        trial, first = (_first_open(participant) if first is _UNREAD else first), _UNREAD
        if trial is None:
            with transaction.atomic():
                _finish_stage(participant)
            return None
        now = timezone.now()
        if _expired(trial, now):
            with transaction.atomic():
                locked = _lock(participant)  # the person's row before their trial's (``_lock``)
                closed = Trial.objects.filter(pk=trial.pk, answered_at__isnull=True).update(
                    answered_at=now, timed_out=True, response=None, client_rt_ms=None
                )
                if closed:
                    _after_answer(participant, locked)
            continue
        if trial.served_at is None:
            reason = exposures.refusal_at_serve(participant, trial)
            if reason:
                exposures.withdraw(participant, trial, reason)
                continue
            trial.served_at = now
            exposures.serve(participant, trial, now)  # the stamp and the ledger's rows together
        return trial


def _first_open(participant: Participant) -> Trial | None:
    """The first unanswered trial (practice first, then by position), with ``item.condition``
    loaded and ``of`` (the person's trials in its sequence, practice or main: the page's "3 of
    5"), without side effects. One statement."""
    sequence = (
        Trial.objects.filter(participant_id=OuterRef("participant_id"), practice=OuterRef("practice"))
        .order_by()
        .values("participant_id")
        .annotate(n=Count("id"))
        .values("n")
    )
    return (
        Trial.objects.filter(participant=participant, answered_at__isnull=True)
        .select_related("item__condition")
        .annotate(of=Subquery(sequence))
        .order_by("-practice", "position")
        .first()
    )


def mark_shown(participant: Participant, trial_id: int) -> Trial:
    """The page reports that trial ``trial_id`` is visible (every image decoded and in the viewport,
    or the first video playable): stamp the server's ``shown_at`` the first time, so the trial's
    server time and time limit start here. Later reports (a reload) keep the first time; returns
    the trial. A report later than ``STUDY_SHOW_MAX_MS`` after the content was first served is
    stamped at served + that allowance: the content was on the page since, and the clock is not the
    page's to hold back. Raises Conflict for a trial that is not the participant's current one."""
    current = current_trial(participant)
    if current is None or current.pk != trial_id:
        raise Conflict("this is not your current trial")
    if current.shown_at is None:
        now = timezone.now()
        latest = _latest_shown(current)
        stamp = now if latest is None else min(now, latest)
        # Conditional: two reports racing stamp one time, the first. Read back only when another
        # report stamped it first.
        if Trial.objects.filter(pk=current.pk, shown_at__isnull=True).update(shown_at=stamp):
            current.shown_at = stamp
        else:
            current.refresh_from_db(fields=["shown_at"])
    return current


ANSWER_FIELDS = ["response", "timed_out", "client_rt_ms", "answered_at", "idempotency_key"]


def answer_trial(
    participant: Participant,
    trial_id: int,
    response,
    client_rt_ms: float,
    idempotency_key: str,
    *,
    trial: Trial | None = None,
) -> Trial:
    """Record the participant's ``response`` (the kind's API shape; None: no answer, the time ran out)
    to their current trial. ``trial``: the trial ``trial_id`` as the caller loaded it in this
    request (with ``item.condition.study``), not read again.

    Refuses, writing nothing:
    - Conflict: a trial that is not theirs, is answered (unless the same idempotency key is sent
      again, which returns the stored trial unchanged), or is not the current one;
    - Invalid: a trial the page never reported shown; a ``client_rt_ms`` that is not positive or
      is longer than the server's time since ``shown_at`` plus ``STUDY_RT_SLACK_MS``; a response the
      kind's ``validate`` refuses; a None response before the trial's time limit (less the slack).
    An answer later than the limit plus ``STUDY_TIME_GRACE_MS`` is stored as timed out (scored
    wrong). On success: the answer with the server's time, the participant's next stage, their
    exclusion flags when the last trial is answered, a scoring job queued on commit, and for a
    practice trial the truth its feedback shows appended to the exposure ledger. The returned
    trial carries ``participant`` as the answer left them and ``next_open`` (the first trial still
    unanswered, or None: ``current_trial``'s ``first``).

    The answer is one conditional UPDATE, with the participant's row locked first (``_lock``: the
    person before their trials, the order ``links.release_idle`` takes them in): the trial still
    unanswered and no unanswered trial of the person before it (it is the current one). Of two
    answers racing, the second waits at the participant's row for the first's commit, then its
    update matches nothing; it reads the trial back and is told it is answered (or gets the stored
    trial back, with the same idempotency key; a trial the idle release deleted meanwhile is "not
    one of your trials"). A trial reported
    shown was the current one then, and stays so until answered (trials are never un-answered);
    the guard keeps the rule in one place all the same.
    """
    with transaction.atomic():
        if trial is None or trial.pk != trial_id or trial.participant_id != participant.pk:
            trial = (
                Trial.objects.select_related("item__condition__study")
                .filter(pk=trial_id, participant=participant)
                .first()
            )
        if trial is None:
            raise Conflict("not one of your trials")
        if trial.answered_at is not None:
            return _answered_again(trial, idempotency_key)
        if trial.shown_at is None:
            # Never shown: a later trial (not current), or the current one before its report.
            current = _first_open(participant)
            if current is None or current.pk != trial.pk:
                raise Conflict("this is not your current trial")
            raise Invalid(
                "the page has not reported this trial as shown yet", errors={"client_rt_ms": "trial not shown yet"}
            )
        if not isinstance(client_rt_ms, (int, float)) or not 0 < client_rt_ms < 24 * 3600 * 1000:
            raise Invalid(
                "client_rt_ms must be a positive number of milliseconds", errors={"client_rt_ms": "must be positive"}
            )
        now = timezone.now()
        spent = elapsed_ms(trial, now)
        if client_rt_ms > spent + settings.STUDY_RT_SLACK_MS:
            raise Invalid(
                f"client_rt_ms {client_rt_ms:.0f} is longer than the {spent:.0f} ms the server has seen "
                "since the trial was shown",
                errors={"client_rt_ms": "longer than the server's time"},
            )
        limit = limit_ms(trial)
        if response is None:
            if limit is None or spent + settings.STUDY_RT_SLACK_MS < limit:
                raise Invalid(
                    "give an answer: only a trial whose time has run out may be left unanswered",
                    errors={"response": "required"},
                )
            stored, timed_out = None, True
        else:
            stored = kind_module(trial.item.condition.study.kind).validate(trial, response)
            timed_out = limit is not None and spent > limit + settings.STUDY_TIME_GRACE_MS
        locked = _lock(participant)  # the person's row before their trial's (``_lock``)
        # Not ``current_trial``: that would close this trial as timed out if its time ran out, and a
        # late answer is to be stored (flagged, scored wrong), not refused.
        before = Trial.objects.filter(participant_id=OuterRef("participant_id"), answered_at__isnull=True).filter(
            Q(practice__gt=OuterRef("practice")) | Q(practice=OuterRef("practice"), position__lt=OuterRef("position"))
        )
        written = (
            Trial.objects.filter(pk=trial.pk, answered_at__isnull=True)
            .exclude(Exists(before))
            .update(
                response=stored,
                timed_out=timed_out,
                client_rt_ms=float(client_rt_ms),
                answered_at=now,
                idempotency_key=idempotency_key or "",
            )
        )
        if not written:
            try:
                trial.refresh_from_db(fields=ANSWER_FIELDS)
            except Trial.DoesNotExist:  # released meanwhile (the person timed out)
                raise Conflict("not one of your trials") from None
            if trial.answered_at is not None:
                return _answered_again(trial, idempotency_key)
            raise Conflict("this is not your current trial")
        trial.response, trial.timed_out, trial.client_rt_ms = stored, timed_out, float(client_rt_ms)
        trial.answered_at, trial.idempotency_key = now, idempotency_key or ""
        if trial.practice:  # its feedback shows the truth: the ledger keeps it from later items
            exposures.record_revealed(participant, trial)
        # The participant as the answer leaves them (stage, study loaded): the reply reads it.
        trial.participant, trial.next_open = _after_answer(participant, locked)
    return trial


def _answered_again(trial: Trial, idempotency_key: str) -> Trial:
    """An answer to an answered trial: the stored trial for the same idempotency key (a resend),
    else Conflict. The reply reads the participant afresh (``next_open`` unread)."""
    if idempotency_key and trial.idempotency_key == idempotency_key:
        trial.next_open = _UNREAD
        if Trial._meta.get_field("participant").is_cached(trial):
            trial.participant.refresh_from_db(fields=["stage", "finished_at", "excluded", "exclusion_reasons"])
        return trial
    raise Conflict("this trial is already answered" + (" (its time ran out)" if trial.timed_out else ""))


def _after_answer(participant: Participant, locked: Participant) -> tuple[Participant, Trial | None | object]:
    """After a trial closes (answered or timed out), in its transaction, with the participant's row
    ``locked`` (``_lock``) before the trial was written: the next stage, exclusion flags when all
    are done, and the scoring job (its row now, its message on commit). Returns the participant as
    written (``study`` loaded) and the first trial still open (``_finish_stage``)."""
    locked, first = _finish_stage(participant, locked)
    queue_scoring(participant.study_id)
    return locked, first


def _lock(participant: Participant) -> Participant:
    """The participant's row, locked (``FOR UPDATE`` of it alone; call inside a transaction), with
    ``study`` loaded: ``participant``'s when it has it (not read again), else read with the row.

    The lock order of a person's rows: their participant row first, then their trials' rows. Every
    transaction that writes both takes them so: an answer and a trial closed as timed out lock the
    participant before they update the trial, as ``links.release_idle`` and a declined consent do
    before they delete the unanswered trials. (An answer once updated its trial first: with the idle
    release between its two steps, each waited for the other and PostgreSQL aborted one,
    tests/studies/test_lock_order.py.)"""
    study_loaded = Participant._meta.get_field("study").is_cached(participant)
    rows = Participant.objects.select_for_update(of=("self",))
    locked = (rows if study_loaded else rows.select_related("study")).get(pk=participant.pk)
    if study_loaded:
        locked.study = participant.study
    return locked


def _finish_stage(
    participant: Participant, locked: Participant | None = None
) -> tuple[Participant, Trial | None | object]:
    """Move the participant to the stage their unanswered trials leave them in (practice, trials,
    done; exclusion flags when done). Locks the row (``_lock``) unless the caller passes it
    ``locked``; returns it, with ``study`` loaded, and the first unanswered trial (``_first_open``,
    read under the lock; ``_UNREAD`` while the person is still at the instructions): a practice
    trial open means the practice, another the trials, none done."""
    locked = locked if locked is not None else _lock(participant)
    if locked.stage == Participant.Stage.INSTRUCTIONS:
        return locked, _UNREAD
    first = _first_open(locked)
    stage = locked.stage
    if first is None or not first.practice:
        stage = Participant.Stage.TRIALS if first is not None else Participant.Stage.DONE
    if stage != locked.stage or (stage == Participant.Stage.DONE and locked.finished_at is None):
        locked.stage = stage
        fields = ["stage"]
        if stage == Participant.Stage.DONE and locked.finished_at is None:
            locked.finished_at = timezone.now()
            locked.excluded, locked.exclusion_reasons = exclusion_of(locked)
            fields += ["finished_at", "excluded", "exclusion_reasons"]
        locked.save(update_fields=fields)
    return locked, first


def exclusion_of(participant: Participant) -> tuple[bool, list[str]]:
    """Apply the study's exclusion rules (EGO-FLIGHT Sec. 3.5: "unreasonably little time or ...
    clear misunderstanding of the task") to a participant: ``min_median_rt_s`` (the median client
    response time of scored and attention trials, s), ``min_practice_score`` (practice trials whose
    kind's ``PRIMARY`` metric is 1; at most as many as the person was given, none asked of a person
    given no practice item), ``max_attention_failures`` (attention trials not right).
    Practice and attention trials are scored here, synchronously (a handful). Returns (excluded,
    reasons); the data are kept either way."""
    study = participant.study
    rules = study.exclusion or {}
    module = kind_module(study.kind)
    reasons = []
    trials = list(Trial.objects.filter(participant=participant).select_related("item"))
    rts = [t.client_rt_ms for t in trials if not t.practice and t.client_rt_ms is not None]
    limit = rules.get("min_median_rt_s")
    if limit is not None and rts and statistics.median(rts) / 1000 < float(limit):
        reasons.append(f"median response time {statistics.median(rts) / 1000:.2f} s is under {float(limit):g} s")

    def right(ts: list[Trial]) -> int:
        if not ts or module.PRIMARY is None:
            return 0
        scores = module.score([ScoreRow(t.item.truth, t.item.payload, t.response, t.timed_out) for t in ts])
        return sum(1 for s in scores if s.get(module.PRIMARY) == 1.0)

    need = rules.get("min_practice_score")
    practice = [t for t in trials if t.practice]
    if need is not None and practice:
        # A study built with fewer practice items than the rule asks (none left to draw, say) asks
        # for all of them, and a person given none is not excluded for it.
        need = min(int(need), len(practice))
        got = right(practice)
        if got < need:
            reasons.append(f"{got} practice items right, fewer than {need}")
    most = rules.get("max_attention_failures")
    if most is not None:
        checks = [t for t in trials if t.item.role == Item.Role.ATTENTION]
        failed = len(checks) - right(checks)
        if failed > int(most):
            reasons.append(f"{failed} attention checks failed, more than {int(most)}")
    return bool(reasons), reasons


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
