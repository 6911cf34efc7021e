"""Serving, timing and answering trials: the current trial, marking it shown, answers (idempotent
by key), stage moves and the study's exclusion rules."""

from __future__ import annotations

import statistics
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Exists, OuterRef, Q, Subquery
from django.utils import timezone

from annotator.errors import Conflict, Invalid
from annotator.studies import exposures
from annotator.studies.kinds import ScoreRow, kind_module
from annotator.studies.models import Item, Participant, Trial
from annotator.studies.selectors import elapsed_ms, limit_ms
from annotator.studies.services.scoring import queue_scoring

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


def start(participant: Participant):
    """Leave the instructions: on to the practice items, or straight to the trials if there are none.
    Returns the first open trial when it read it (``current_trial``'s ``first``), else ``_UNREAD``."""
    if participant.stage != Participant.Stage.INSTRUCTIONS:
        return _UNREAD
    first = _first_open(participant)  # practice trials come first: one open means a practice
    participant.stage = Participant.Stage.PRACTICE if first is not None and first.practice else Participant.Stage.TRIALS
    participant.save(update_fields=["stage"])
    return first


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
