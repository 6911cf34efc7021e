"""Study links and their anonymous participants (issue 19, section 1): the writes.

A researcher makes a link (``create_link``); a panel participant opens ``/s/<token>/`` with their
panel id (``PROLIFIC_PID`` or ``pid``), which creates or resumes their participant (``open_link``)
without an account. They accept or decline the consent (``consent``), pass the screening
(``screened``), take the practice and the trials through the same endpoints as accounts, and finish
(``finish``) with a completion code. A participant idle past ``Study.abandon_after_min`` is timed
out and their unanswered trials released (``release_idle``, a periodic job). Admins and researchers
preview a study as a participant (``preview_participant``): ``kind=preview``, which assignment never
counts.

The pages and the API call these; nothing here knows of HTTP.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import OuterRef, Q, Subquery
from django.utils import timezone

from annotator.errors import Conflict, Invalid, NotFound
from annotator.studies import services
from annotator.studies.models import Item, Participant, Study, StudyLink, Trial

# A panel id: printable ASCII without spaces or quotes, 1 to 128 characters (Prolific's are 24 hex
# digits; other panels use letters, digits and a few signs).
EXTERNAL_ID = re.compile(r"^[A-Za-z0-9_.@:+-]{1,128}$")
PANEL_FIELD = re.compile(r"^[A-Za-z0-9_.@:+-]{0,128}$")
MAX_PARTICIPANTS_BOUND = 100_000
MAX_EXPIRY_DAYS = 366
URL_MAX = 500


class StudyFull(Conflict):
    """No place is left: the link's or the study's limit is reached, or no item can be assigned
    under the raters-per-item cap."""


class LinkClosed(NotFound):
    """The link expired."""


# ------------------------------------------------------------------------------ tokens and ids


def token_hash(token: str) -> str:
    """The SHA-256 (hex) of a link's token, what ``StudyLink.token_hash`` stores. A lookup compares
    hashes, so the stored value leaks nothing and timing tells nothing of the token."""
    return hashlib.sha256(token.encode()).hexdigest()


def pseudonym_of(external_id: str) -> str:
    """The pseudonym of a panel id: HMAC-SHA256 (64 hex) of ``external_id`` under
    ``PSEUDONYM_KEY`` (with a purpose prefix, so it never equals an annotator's export pseudonym).
    The exposure ledger keys anonymous people as ``anon:<pseudonym>``."""
    key = hashlib.sha256(("study-link-pseudonym:" + settings.PSEUDONYM_KEY).encode()).digest()
    return hmac.new(key, external_id.encode(), hashlib.sha256).hexdigest()


def new_code() -> str:
    """A completion code: 10 characters of an unambiguous upper-case alphabet (~50 bits)."""
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    return "".join(secrets.choice(alphabet) for _ in range(10))


def _check_url(url: str, field: str) -> str:
    url = (url or "").strip()
    if not url:
        return ""
    parts = urlsplit(url)
    if len(url) > URL_MAX or parts.scheme not in ("http", "https") or not parts.netloc:
        raise Invalid(
            f"{field} must be an http(s) URL of at most {URL_MAX} characters", errors={field: "not an http(s) URL"}
        )
    return url


@dataclass
class NewLink:
    """A link just made: its row, its token (shown once; only its hash is stored) and its path."""

    link: StudyLink
    token: str

    @property
    def path(self) -> str:
        return f"/s/{self.token}/"


def create_link(
    study: Study,
    *,
    created_by=None,
    max_participants: int | None = None,
    expires_at: datetime | None = None,
    completion_url: str = "",
) -> NewLink:
    """Make a link to ``study``: a random token of 24 bytes (``secrets.token_urlsafe``, 32
    characters), stored as its hash. ``max_participants`` 1 to ``MAX_PARTICIPANTS_BOUND`` (None:
    the study's limits only); ``expires_at`` in the future, within ``MAX_EXPIRY_DAYS`` (None:
    never; a naive time is UTC); ``completion_url`` an http(s) URL (blank: the study's). Raises
    Invalid in plain words, writing nothing; Conflict for a study that is not built."""
    if max_participants is not None and (
        isinstance(max_participants, bool)
        or not isinstance(max_participants, int)
        or not 1 <= max_participants <= MAX_PARTICIPANTS_BOUND
    ):
        raise Invalid(
            f"max_participants must be a whole number from 1 to {MAX_PARTICIPANTS_BOUND}",
            errors={"max_participants": "out of range"},
        )
    if expires_at is not None:
        if timezone.is_naive(expires_at):
            expires_at = timezone.make_aware(expires_at, dt_timezone.utc)
        now = timezone.now()
        if expires_at <= now:
            raise Invalid("expires must be in the future", errors={"expires": "in the past"})
        if expires_at > now + timedelta(days=MAX_EXPIRY_DAYS):
            raise Invalid(f"expires must be within {MAX_EXPIRY_DAYS} days", errors={"expires": "too far"})
    completion_url = _check_url(completion_url, "completion_url")
    if study.status != Study.Status.READY:
        raise Conflict("this study is not built yet: a link can be made once its items are ready")
    test_clip()  # made once, here, so the screening page never waits for ffmpeg
    token = secrets.token_urlsafe(24)
    link = StudyLink.objects.create(
        study=study,
        token_hash=token_hash(token),
        max_participants=max_participants,
        expires_at=expires_at,
        completion_url=completion_url,
        created_by=created_by,
    )
    return NewLink(link, token)


def link_of(token: str, *, pseudonym: str | None = None) -> StudyLink:
    """The link of ``token``; NotFound (saying nothing more) for an unknown or malformed token,
    LinkClosed once it expired. With ``pseudonym`` (``pseudonym_of`` a panel id), the same
    statement reads the id of that person's participant in the link's study, if any:
    ``link.resuming`` is (pseudonym, id or None), which ``open_link`` then need not read."""
    if not isinstance(token, str) or not 20 <= len(token) <= 64:
        raise NotFound("no such link")
    rows = StudyLink.objects.select_related("study__project").filter(token_hash=token_hash(token))
    if pseudonym is not None:
        rows = rows.annotate(
            resumes=Subquery(
                Participant.objects.filter(study_id=OuterRef("study_id"), pseudonym=pseudonym)
                .order_by()
                .values("pk")[:1]
            )
        )
    link = rows.first()
    if link is None:
        raise NotFound("no such link")
    if pseudonym is not None:
        link.resuming = (pseudonym, link.resumes)
    if link.expires_at is not None and link.expires_at <= timezone.now():
        raise LinkClosed("this link is closed")
    return link


# ------------------------------------------------------------------------------ screening clip

TEST_CLIP = "screening/test-pattern-v1.mp4"
TEST_CLIP_SECONDS = 2.0


def test_clip() -> str:
    """The storage name of the screening's test clip, made by ffmpeg the first time
    (``adapters.ffmpeg.test_pattern_args``: 2 s of a synthetic test pattern, 320x180, H.264 in MP4,
    as study clips are encoded). It shows no footage, so it gives no item away. Raises MediaError
    if ffmpeg fails."""
    import tempfile
    from pathlib import Path

    from django.core.files import File
    from django.core.files.storage import default_storage

    from annotator.adapters import ffmpeg

    if default_storage.exists(TEST_CLIP):
        return TEST_CLIP
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "clip.mp4"
        ffmpeg.run(ffmpeg.test_pattern_args(path, seconds=TEST_CLIP_SECONDS), timeout_s=60, what="screening test clip")
        if default_storage.exists(TEST_CLIP):  # made meanwhile by another request
            return TEST_CLIP
        with path.open("rb") as fh:
            return default_storage.save(TEST_CLIP, File(fh))


# ------------------------------------------------------------------------------ entering


@dataclass(frozen=True)
class PanelIds:
    """What the panel put in the link's query: the participant's id and, for Prolific, the
    study and session ids."""

    external_id: str
    panel_study_id: str = ""
    panel_session_id: str = ""


def panel_ids(query) -> PanelIds | None:
    """The panel ids of a link's query (a mapping of str): ``PROLIFIC_PID`` (with ``STUDY_ID``
    and ``SESSION_ID``) or ``pid``; None when neither is given. Raises Invalid for an id that is
    not 1-128 letters, digits or ``_.@:+-``."""
    external = query.get("PROLIFIC_PID") or query.get("pid")
    if external is None:
        return None
    study_id, session_id = query.get("STUDY_ID", ""), query.get("SESSION_ID", "")
    if not EXTERNAL_ID.match(external):
        raise Invalid(
            "the participant id in this link is not valid (1-128 letters, digits or _.@:+-)",
            errors={"pid": "malformed"},
        )
    if not PANEL_FIELD.match(study_id) or not PANEL_FIELD.match(session_id):
        raise Invalid("the study or session id in this link is not valid", errors={"STUDY_ID": "malformed"})
    return PanelIds(external, study_id, session_id)


def taking(link: StudyLink) -> int:
    """Participants who entered through ``link`` and still hold or held a place (not returned,
    not timed out)."""
    return (
        Participant.objects.filter(link=link)
        .exclude(status__in=[Participant.Status.RETURNED, Participant.Status.TIMED_OUT])
        .count()
    )


def open_link(link: StudyLink, ids: PanelIds | None) -> tuple[Participant, bool]:
    """Create or resume the anonymous participant of ``ids`` in the link's study; returns
    (participant, created). Without ids (a plain shared link) a fresh id ``link-<random>`` is
    made: the browser's session is then the only way back.

    Steps (a participant who exists already is resumed at once, without the lock):
    1. The participant of this pseudonym in the study, if any, is resumed (from any link of the
       study and any browser), whatever its status; nothing else changes. (``link_of`` with the
       pseudonym read whether there is one with the link: then only a resumed one is read here.)
    2. Before the lock, what the assignment reads that no other entry changes
       (``services.prepare_assignment``: the person's exposure ledger, their open trials elsewhere,
       the study's conditions, attention and practice items).
    3. In one transaction: the participant is inserted with its pseudonym set (the exposure ledger
       keys it); then the study's row is locked (``services.lock_open_study``, which also refuses
       a study not built, Conflict), and under the lock the link's ``max_participants`` is checked
       (StudyFull) and the participant assigned (``services.assign``: one statement chooses the
       conditions by their counters, adds them and reads their items under the raters-per-item
       cap, one inserts the trials). If no scored item can be given, StudyFull is raised and the
       transaction rolled back, so a full study keeps no participant and serves no trial.
    The study lock serialises the reads of the counters and the writes that change them, so the
    cap and the link's maximum hold: each entry reads them after the one before it committed. The
    same panel id entering twice at once: the second's insert waits for the first's transaction
    (the unique (study, pseudonym) constraint), then breaks the constraint; its transaction is
    rolled back and it resumes the participant the first made.
    """
    study = link.study
    external = ids.external_id if ids else f"link-{secrets.token_urlsafe(12)}"
    pseudonym = pseudonym_of(external)
    now = timezone.now()
    # A person coming back (a reload, a second browser) resumes without waiting for the study's lock.
    known = getattr(link, "resuming", None)
    if known is not None and known[0] == pseudonym:
        existing = Participant.objects.filter(pk=known[1]).first() if known[1] is not None else None
    else:
        existing = Participant.objects.filter(study=study, pseudonym=pseudonym).first()
    if existing is not None:
        return existing, False
    participant = Participant(
        study=study,
        kind=Participant.Kind.PERSON,
        link=link,
        pseudonym=pseudonym,
        external_id=external,
        panel_study_id=ids.panel_study_id if ids else "",
        panel_session_id=ids.panel_session_id if ids else "",
        completion_code=new_code(),
        last_active_at=now,
    )
    prepared = services.prepare_assignment(participant)
    try:
        with transaction.atomic():
            # Inserted before the lock, in its transaction: the same panel id entering at the same
            # moment waits here (the unique pseudonym) for this transaction's end, not at the lock.
            participant.save(force_insert=True)
            services.lock_open_study(study)
            # Counted once the lock is held: every entry that holds it committed before, and this
            # one's own row is counted (so more than the maximum is too many).
            if link.max_participants is not None and taking(link) > link.max_participants:
                raise StudyFull("this study is full", errors={"study": "full"})
            trials = services.assign(participant, seen_footage=set(), prepared=prepared)
            if not any(not t.practice and t.item.role == Item.Role.SCORED for t in trials):
                raise StudyFull("this study is full", errors={"study": "full"})
    except IntegrityError:
        # The same panel id entered at the same moment and was made first: resume it.
        existing = Participant.objects.filter(study=study, pseudonym=pseudonym).first()
        if existing is not None:
            return existing, False
        raise Conflict("this participant entered at the same moment; open the link again") from None
    return participant, True


def require_taking(participant: Participant) -> None:
    """Raise Conflict, in plain words, unless the link participant may work on trials: still taking
    part (not returned or timed out), consented and screened. Every participant endpoint asks it,
    so no trial is shown or answered before consent (a decline keeps nothing of theirs)."""
    if participant.status != Participant.Status.IN_PROGRESS:
        raise Conflict("you have left this study")
    if participant.consented_at is None or participant.screened_at is None:
        raise Conflict("accept the consent and pass the screening first")


def touch(participant: Participant) -> None:
    """Record activity (``last_active_at``) of a link's participant, at most once a minute (a
    conditional update, so a busy page writes little)."""
    if participant.link_id is None and participant.pseudonym == "":
        return
    now = timezone.now()
    cutoff = now - timedelta(seconds=60)
    if participant.last_active_at is not None and participant.last_active_at >= cutoff:
        return  # as loaded with the request: recent enough, no statement at all
    if Participant.objects.filter(
        Q(last_active_at__isnull=True) | Q(last_active_at__lt=cutoff), pk=participant.pk
    ).update(last_active_at=now):
        participant.last_active_at = now


def _release(participant: Participant) -> int:
    """Delete the participant's unanswered trials (answered ones stay); returns how many."""
    deleted, _ = Trial.objects.filter(participant=participant, answered_at__isnull=True).delete()
    return deleted


def _locked(participant: Participant) -> Participant:
    """The participant's row, locked (its own row only: the study's row, which enrolments lock, is
    read with it but not locked, so a consent never waits for someone else's entry)."""
    return Participant.objects.select_for_update(of=("self",)).select_related("study").get(pk=participant.pk)


def delete_participant(participant: Participant) -> None:
    """Delete ``participant`` with their trials, inside the caller's transaction (required).

    Locks the participant's row first, then lets the cascade delete the trials and the row: the
    order an answer and ``release_idle`` take (the person, then their trials). Django's cascade
    alone deletes the trials first, the opposite order, so an answer arriving at that moment
    deadlocked with the delete (issue 19, "locks in one order")."""
    _locked(participant)
    participant.delete()


def lock_participants_of(sender, instance, **kwargs) -> None:
    """``pre_delete`` receiver for the user model: lock the user's participant rows, in id order,
    before the deletion's cascade removes their trials and then the rows. Django sends
    ``pre_delete`` inside the deletion's transaction and before any row is deleted, so an answer
    from one of the user's participants either finishes first or waits; without this, the cascade
    took the trials first, the order opposite to an answer's (issue 19, "locks in one order")."""
    list(
        Participant.objects.select_for_update(of=("self",))
        .filter(user_id=instance.pk)
        .order_by("pk")
        .values_list("pk", flat=True)
    )


def consent(participant: Participant, accepted: bool) -> Participant:
    """The participant accepts the consent (``consented_at`` now, once) or declines it: then they
    are ``returned``, their unanswered trials released, and their code is a "returned" code.
    Conflict for a participant who already left (returned or timed out) or finished."""
    with transaction.atomic():
        p = _locked(participant)
        if p.status != Participant.Status.IN_PROGRESS or p.stage == Participant.Stage.DONE:
            raise Conflict("you have already left or finished this study")
        now = timezone.now()
        if accepted:
            if p.consented_at is None:
                p.consented_at = now
        else:
            _release(p)
            p.status, p.stage, p.finished_at = Participant.Status.RETURNED, Participant.Stage.DONE, now
            p.completion_code = "RET-" + new_code()
        p.last_active_at = now
        p.save()
    return p


def screened(participant: Participant, *, width: int, height: int, played: bool, codec: bool) -> Participant:
    """Record the screening: the page measured a window of ``width`` x ``height`` px (at least the
    study's minimum), found a codec for the study's videos (``codec``) and played the test clip to
    its end (``played``). Raises Invalid, in plain words, naming what failed; nothing is written
    then. Needs the consent first (Conflict)."""
    problems = {}
    study = participant.study
    for name, value in (("width", width), ("height", height)):
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= 100_000:
            raise Invalid(f"{name} must be a whole number of pixels", errors={name: "not a number"})
    if width < study.min_viewport_width or height < study.min_viewport_height:
        problems["viewport"] = (
            f"your window is {width} x {height} pixels; this study needs at least "
            f"{study.min_viewport_width} x {study.min_viewport_height}"
        )
    if codec is not True:
        problems["codec"] = "your browser cannot play this study's videos (H.264 in MP4)"
    if played is not True:
        problems["played"] = "the test video did not play to its end"
    if problems:
        raise Invalid("; ".join(problems.values()), errors=problems)
    with transaction.atomic():
        p = _locked(participant)
        if p.consented_at is None:
            raise Conflict("accept the consent first")
        if p.screened_at is None:
            p.screened_at = timezone.now()
            p.save(update_fields=["screened_at"])
    return p


def finish(participant: Participant) -> Participant:
    """The participant leaves the debrief: their trials must all be answered (Conflict before).
    Returns them; their code is kept as made."""
    p = Participant.objects.get(pk=participant.pk)
    if p.status != Participant.Status.IN_PROGRESS or p.stage != Participant.Stage.DONE:
        raise Conflict("finish your questions first")
    if p.finished_at is None:  # pragma: no cover - the stage moves to done with its time
        Participant.objects.filter(pk=p.pk, finished_at__isnull=True).update(finished_at=timezone.now())
    return p


def completion_url(participant: Participant) -> str:
    """Where the participant goes with their code: the link's completion URL, else the study's,
    with ``cc=<code>`` added to its query (Prolific's form), or ``{code}`` in it replaced; "" for
    none."""
    base = (participant.link.completion_url if participant.link_id else "") or participant.study.completion_url
    if not base:
        return ""
    if "{code}" in base:
        return base.replace("{code}", participant.completion_code)
    parts = urlsplit(base)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "cc"]
    query.append(("cc", participant.completion_code))
    return urlunsplit(parts._replace(query=urlencode(query)))


# ------------------------------------------------------------------------------ quotas


def is_full(study: Study) -> bool:
    """Whether no new participant could be given a scored item: the study has none, or every one
    already has ``raters_per_item`` people's trials. (Who has seen what footage, or the keys a
    person may not get twice, may still leave a particular person with none: ``open_link`` and
    ``services.enroll`` decide that exactly.) People are counted by ``Item.raters``."""
    items = Item.objects.filter(condition__study=study, role=Item.Role.SCORED)
    if study.raters_per_item:
        items = items.filter(raters__lt=study.raters_per_item)
    return not items.exists()


def release_idle(*, now: datetime | None = None) -> int:
    """Time out every link participant still in progress whose ``last_active_at`` is older than
    their study's ``abandon_after_min`` minutes: delete their unanswered trials (served or not;
    answered ones stay), mark them ``timed_out`` and done, so the raters-per-item cap frees their
    places. Each participant in its own transaction, re-checked under its row lock (a participant
    who answered meanwhile is left alone), which is taken before their trials' rows, as an answer
    takes them (``services._lock``). Returns how many were timed out."""
    now = now or timezone.now()
    n = 0
    candidates = (
        Participant.objects.filter(
            kind=Participant.Kind.PERSON,
            user__isnull=True,
            status=Participant.Status.IN_PROGRESS,
            last_active_at__isnull=False,
        )
        .exclude(stage=Participant.Stage.DONE)
        .select_related("study")
        .only("pk", "last_active_at", "study")
    )
    for p in candidates.iterator():
        cutoff = now - timedelta(minutes=p.study.abandon_after_min)
        if p.last_active_at >= cutoff:
            continue
        with transaction.atomic():
            locked = (
                Participant.objects.select_for_update()
                .filter(pk=p.pk, status=Participant.Status.IN_PROGRESS, last_active_at__lt=cutoff)
                .exclude(stage=Participant.Stage.DONE)
                .first()
            )
            if locked is None:
                continue
            _release(locked)
            locked.status, locked.stage = Participant.Status.TIMED_OUT, Participant.Stage.DONE
            locked.save(update_fields=["status", "stage"])
            n += 1
    return n


def enroll_account(study: Study, user) -> Participant:
    """``services.enroll`` for an account, refusing with StudyFull (and keeping no participant)
    when no scored item could be assigned: a full study shows its page, never "all your
    questions are answered" after none."""
    with transaction.atomic():
        before = Participant.objects.filter(study=study, user=user).first()
        participant = services.enroll(study, user)
        if (
            before is None
            and not Trial.objects.filter(participant=participant, practice=False, item__role=Item.Role.SCORED).exists()
        ):
            raise StudyFull("this study is full", errors={"study": "full"})
    return participant


# ------------------------------------------------------------------------------ preview


def preview_participant(study: Study, user, *, restart: bool = False) -> Participant:
    """The preview participant of ``user`` (an admin or researcher: the caller checks) in
    ``study``, made and assigned on first use (``services.assign``, which counts only ``person``
    participants, so it takes no place). ``restart`` deletes the old preview and its trials first.
    A full study gives a preview with no scored item, as it would a participant (StudyFull)."""
    with transaction.atomic():
        services.lock_open_study(study)
        existing = Participant.objects.filter(study=study, user=user).first()
        if existing is not None and existing.kind != Participant.Kind.PREVIEW:
            raise Conflict("you already take part in this study as a participant")
        if existing is not None and not restart:
            return existing
        if existing is not None:
            delete_participant(existing)
        try:
            with transaction.atomic():
                participant = Participant.objects.create(
                    study=study,
                    kind=Participant.Kind.PREVIEW,
                    user=user,
                    consented_at=timezone.now(),
                    screened_at=timezone.now(),
                )
                trials = services.assign(participant, seen_footage=set())
                if not any(not t.practice and t.item.role == Item.Role.SCORED for t in trials):
                    raise StudyFull("this study is full", errors={"study": "full"})
        except IntegrityError:  # pragma: no cover - serialised by the study lock
            raise Conflict("a preview was started at the same moment; reload") from None
    return participant
