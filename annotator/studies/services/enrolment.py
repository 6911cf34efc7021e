"""Who takes part and what they get: the participant role and independence checks, enrolment,
the study lock, and the assignment of conditions and items (through the exposure ledger)."""

from __future__ import annotations

import random
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Q

from annotator.errors import Conflict, Forbidden
from annotator.projects.models import Project
from annotator.studies import exposures, selectors
from annotator.studies.models import Condition, Item, Participant, Study, Trial

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
