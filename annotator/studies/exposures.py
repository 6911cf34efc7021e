"""Studies and the exposure ledger (issue 19, ``annotator.exposure``): what a served trial shows is
recorded, and an item is kept from a person whose ledger gives its truth away.

Each kind says what a trial of an item shows (``kinds.<kind>.shows``) and what its truth rests on
(``kinds.<kind>.needs``). Assignment (``refusal_at_enrolment``) refuses an item whose truth
follows from what the person was shown anywhere in the project (queues, other studies), or whose
clips or answers would give away a trial they still have to answer elsewhere. Serving
(``refusal_at_serve``) asks again just before a trial is first served, since the person may have
been shown more since enrolment; a refused trial is withdrawn unserved (``withdraw``).
"""

from __future__ import annotations

from django.db import connection

from annotator.exposure import ledger
from annotator.exposure.models import Exposure, Refusal
from annotator.studies.kinds import kind_module
from annotator.studies.models import Condition, Item, Participant, Trial


def person_of(participant: Participant) -> str:
    """The ledger's name of a person participant: their account, or their pseudonymised panel id."""
    if participant.user_id is not None:
        return ledger.person_key(user_id=participant.user_id)
    return ledger.person_key(pseudonym=getattr(participant, "pseudonym", "") or "")


def _same_person(participant: Participant) -> dict:
    """Trial filter for every participant that is this person (any study)."""
    if participant.user_id is not None:
        return {"participant__user_id": participant.user_id}
    return {"participant__pseudonym": participant.pseudonym}


def shows(item: Item) -> list[ledger.Shown]:
    return kind_module(item.condition.study.kind).shows(item)


def needs(item: Item) -> ledger.Needs:
    return kind_module(item.condition.study.kind).needs(item)


class Screen:
    """One person's screen at enrolment or serve: their ledger, and what their open trials in other
    studies rest on (``served_only``: only trials already in front of them).

    One statement reads both: the ledger's rows (``ledger.Ledger.rows``) and, after them, the items
    of the open trials elsewhere (a row with a null kind and the item's id as its video), then one
    more loads those items when there are any (a person with nothing open elsewhere, the common
    case, costs one statement)."""

    def __init__(self, participant: Participant, *, served_only: bool = False):
        study = participant.study
        self.person = person_of(participant)
        self.project_id = study.project_id
        open_trials = Trial.objects.filter(
            **_same_person(participant), answered_at__isnull=True, participant__study__project_id=study.project_id
        )
        if participant.pk is not None:  # an unsaved participant (``services.prepare_assignment``) has none
            open_trials = open_trials.exclude(participant=participant)
        if served_only:
            open_trials = open_trials.filter(served_at__isnull=False)
        rows_sql, rows_params = ledger.Ledger.rows(self.person, self.project_id).query.sql_with_params()
        open_sql, open_params = open_trials.order_by().values("item_id").query.sql_with_params()
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT * FROM ({rows_sql}) AS shown UNION ALL "
                f"SELECT NULL, pending.item_id, NULL, NULL, NULL FROM ({open_sql}) AS pending",
                (*rows_params, *open_params),
            )
            rows = cursor.fetchall()
        self.ledger = ledger.Ledger.from_rows(r for r in rows if r[0] is not None)
        open_items = {r[1] for r in rows if r[0] is None}
        items = Item.objects.filter(pk__in=open_items).select_related("condition__study") if open_items else ()
        self.pending = ledger.Pending.of(needs(i) for i in items)
        # Nothing open elsewhere: no showing can give an open trial away (``Pending.refusal`` would
        # answer None after a query for the shown videos' roots).
        self.nothing_pending = not (self.pending.order_of or self.pending.answers or self.pending.open_answers)
        self.study = study
        self._conditions: dict[int, Condition] | None = None

    def refusal(self, item: Item) -> str | None:
        """Why ``item`` must not be served to this person, or None."""
        self.attach(item)
        return self.ledger.refusal(needs(item)) or (None if self.nothing_pending else self.pending.refusal(shows(item)))

    def load_conditions(self) -> None:
        """Load the study's conditions (one query, once), with the study attached to each."""
        if self._conditions is None:
            self.use_conditions(Condition.objects.filter(study_id=self.study.pk).order_by())

    def use_conditions(self, conditions) -> None:
        """Take the study's conditions as the caller read them (``services.assign``, under the
        study's lock), with the study attached to each, instead of reading them again; conditions
        already loaded are kept."""
        loaded = self._conditions or {}
        self._conditions = {**{c.pk: c for c in conditions}, **loaded}
        for c in self._conditions.values():
            if c.study_id == self.study.pk:
                c.study = self.study

    def attach(self, item: Item) -> None:
        """Give an item of the participant's study its condition and study from this screen when
        they are not loaded (``needs`` and ``shows`` ask ``item.condition.study.kind``): one query
        for the study's conditions per screen instead of two per item screened. An item of another
        study is left as it is."""
        if not Item._meta.get_field("condition").is_cached(item):
            self.load_conditions()
            condition = self._conditions.get(item.condition_id)
            if condition is not None:
                item.condition = condition
        elif item.condition.study_id == self.study.pk and not Condition._meta.get_field("study").is_cached(
            item.condition
        ):
            item.condition.study = self.study


def note_refusals(participant: Participant, refused: list[tuple[int, str]], when: str) -> None:
    """Store refusals (item id, reason) of ``participant`` for the study's counts."""
    if refused:
        person = person_of(participant)
        Refusal.objects.bulk_create(
            [
                Refusal(
                    person=person,
                    project_id=participant.study.project_id,
                    study_id=participant.study_id,
                    item_id=item_id,
                    reason=reason,
                    when=when,
                )
                for item_id, reason in refused
            ]
        )


def refusal_at_serve(participant: Participant, trial: Trial) -> str | None:
    """Why ``trial`` (not served yet) must be withdrawn: its truth follows from what the person was
    shown since enrolment, or it would give away a trial they have open in front of them."""
    return Screen(participant, served_only=True).refusal(trial.item)


def withdraw(participant: Participant, trial: Trial, reason: str) -> bool:
    """Withdraw unserved ``trial`` (its row is deleted: nothing was shown or answered) and record the
    refusal; False when it was served meanwhile (nothing done)."""
    deleted, _ = Trial.objects.filter(pk=trial.pk, served_at__isnull=True, answered_at__isnull=True).delete()
    if deleted:
        note_refusals(participant, [(trial.item_id, reason)], Refusal.When.SERVE)
    return bool(deleted)


def serve(participant: Participant, trial: Trial, now) -> bool:
    """Stamp ``trial`` served at ``now`` if it was not served yet, and then append what it shows to
    the person's ledger: both or neither, in one statement (``ledger.record``'s guard, no
    transaction). Returns whether this call stamped it (False: served meanwhile by a request
    racing this one, which recorded it)."""
    table = Trial._meta.db_table
    stamp = (
        f'UPDATE "{table}" SET served_at = %(guard_now)s WHERE id = %(guard_trial)s AND served_at IS NULL RETURNING id'
    )
    served, _ = ledger.record(
        person_of(participant),
        participant.study.project_id,
        shows(trial.item),
        source=Exposure.Source.STUDY,
        ref=f"trial:{trial.pk}",
        guard=(stamp, {"guard_now": now, "guard_trial": trial.pk}),
    )
    return served


def record_revealed(participant: Participant, trial: Trial) -> int:
    """Append what a practice trial's feedback shows (its truth: ``kinds.<kind>.reveals``) to the
    person's ledger, once the trial is answered (the feedback comes with the answer's reply)."""
    return ledger.record(
        person_of(participant),
        participant.study.project_id,
        kind_module(trial.item.condition.study.kind).reveals(trial.item),
        source=Exposure.Source.STUDY,
        ref=f"trial:{trial.pk}",
    )


def refusal_counts(study) -> dict[str, int]:
    """Items the ledger kept from this study's participants, by reason (enrolment and serve)."""
    from django.db.models import Count

    return dict(
        Refusal.objects.filter(project_id=study.project_id, study_id=study.pk)
        .values_list("reason")
        .annotate(n=Count("id"))
        .order_by("reason")
    )


def overlaps_in_project(study) -> dict[str, int]:
    """What the exposure ledger will keep from people who take ``study`` and something else of its
    project, counted at build (issue 19): ``{"<reason> by <source>": items}`` for this study's
    scored items whose truth another study's trials or the verification units would give away
    (the units' annotators never get them), and ``{"of study <name>, given away by this one": items}``
    for other studies' items this study's trials would give away. Nothing is refused here: the
    ledger refuses per person, at enrolment and serve."""
    from annotator.studies.models import Study

    mine = list(Item.objects.filter(condition__study=study).select_related("condition__study"))
    scored = [i for i in mine if i.role == Item.Role.SCORED]
    out: dict[str, int] = {}

    def count(label: str, source: ledger.Ledger, items) -> None:
        n = sum(1 for i in items if source.refusal(needs(i)))
        if n:
            out[label] = n

    count(
        "on footage or answers of verification units", ledger.Ledger.from_shown(_units_show(study.project_id)), scored
    )
    mine_show = ledger.Ledger.from_shown(s for i in mine for s in shows(i))
    for other in (
        Study.objects.filter(project_id=study.project_id, status=Study.Status.READY)
        .exclude(pk=study.pk)
        .order_by("name")
    ):
        theirs = list(Item.objects.filter(condition__study=other).select_related("condition__study"))
        count(
            f"given away by study {other.name}", ledger.Ledger.from_shown(s for i in theirs for s in shows(i)), scored
        )
        count(
            f"of study {other.name}, given away by this one",
            mine_show,
            [i for i in theirs if i.role == Item.Role.SCORED],
        )
    return out


def _units_show(project_id: int) -> list[ledger.Shown]:
    """What the project's verification units show their annotators: every unit's video (and its
    group's) whole, and every QA pair's answer (``qa.queue.record_exposure``)."""
    from annotator.media.models import VideoGroupMember
    from annotator.qa.models import QAPair, WorkUnit

    units = WorkUnit.objects.filter(project_id=project_id)
    videos = set(units.values_list("video_id", flat=True))
    videos |= set(VideoGroupMember.objects.filter(group__units__in=units).values_list("video_id", flat=True))
    return [ledger.Shown(ledger.FOOTAGE, v) for v in sorted(videos)] + [
        ledger.Shown(ledger.ANSWER, qa_pair_id=p)
        for p in QAPair.objects.filter(project_id=project_id).exclude(unit=None).values_list("id", flat=True)
    ]
