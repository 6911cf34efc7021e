"""Reads shared by pages, the API and commands: the unit an annotator sees, videos, the export."""

from __future__ import annotations

import hashlib
import hmac
import json

from django.conf import settings
from django.db.models import Count, F, Q, QuerySet

from annotator.core import handles
from annotator.media.models import Video, VideoGroup, VideoGroupMember
from annotator.media.selectors import member_label, ordered_members
from annotator.media.urls import media_url, media_urls  # noqa: F401 (media_url: imported from here by studies)
from annotator.projects.models import Project
from annotator.qa.models import Autosave, QAPair, QueueItem, Revision, Skip, Submission, Verdict, WorkUnit

VERIFYING_ACTIONS = (Revision.Action.KEEP, Revision.Action.MODIFY, Revision.Action.ADD)


def pseudonym(user_id: int) -> str:
    """A stable pseudonymous annotator id: ``ann-`` + 12 hex of HMAC-SHA256(k, user id), where
    k = SHA-256("annotator-pseudonym:" + PSEUDONYM_KEY).

    Exports carry these instead of usernames; the same person gets the same id in every export
    of a deployment, and nobody without the key can map it back. The key is PSEUDONYM_KEY, never
    SECRET_KEY, so rotating the secret key renames nobody. (Before it had its own key, k was
    derived the same way from SECRET_KEY: setting PSEUDONYM_KEY to that old SECRET_KEY keeps the
    ids of earlier exports.)
    """
    key = hashlib.sha256(("annotator-pseudonym:" + settings.PSEUDONYM_KEY).encode()).digest()
    return "ann-" + hmac.new(key, str(user_id).encode(), hashlib.sha256).hexdigest()[:12]


# The QA pairs a pass decides on, as (column, value): a first pass the drafts, a double-check the
# verified items, an overlap pass every machine draft (shown as drafted: overlap is blind to the
# first pass). Used by the ORM (``pairs_for_pass``) and by the claim's SQL (``unit_payload``).
PASS_FILTER = {
    QueueItem.Kind.FIRST_PASS: ("status", QAPair.Status.DRAFT),
    QueueItem.Kind.DOUBLE_CHECK: ("status", QAPair.Status.VERIFIED),
    QueueItem.Kind.OVERLAP: ("origin", QAPair.Origin.MACHINE),
    # Issue 20: a qualification unit is a copy with its pairs back to their drafts; rework goes over
    # the verified pairs of a unit sent back, as a double-check does.
    QueueItem.Kind.QUALIFICATION: ("status", QAPair.Status.DRAFT),
    QueueItem.Kind.REWORK: ("status", QAPair.Status.VERIFIED),
}

# Parts other apps add to the unit payload (issue 20: a rework unit's review comments), one
# provider per payload key: ``provider(item, user) -> value | None``; None adds nothing. Registered
# by the app that owns the data (``register_payload_part``), so this module imports none of them.
PAYLOAD_PARTS: dict = {}


def register_payload_part(key: str):
    """Decorator: add ``provider(item, user)``'s value to every unit payload under ``key`` (when not
    None). Raises ValueError for a key the payload already has or another provider took."""

    def decorate(provider):
        if key in _PAYLOAD_KEYS or (key in PAYLOAD_PARTS and PAYLOAD_PARTS[key] is not provider):
            raise ValueError(f"the unit payload already has {key!r}")
        PAYLOAD_PARTS[key] = provider
        return provider

    return decorate


def pairs_for_pass(unit: WorkUnit, kind: str) -> QuerySet[QAPair]:
    """The QA pairs a pass over ``unit`` decides on (see ``PASS_FILTER``)."""
    column, value = PASS_FILTER[kind]
    return unit.qa_pairs.filter(**{column: value})


# What a blind (overlap) pass is shown of a machine QA pair: the content, answer interval and version
# of its last revision before the first one by a person (a model's changes before anyone looked at it,
# e.g. replaced options, are kept; the first pass's keep, modify or delete is not). Issue 19: the claim
# used to show the current version and interval answers.
DRAFTED_KEYS = ("question", "answer", "options", "answer_index", "answer_start_s", "answer_end_s")


def drafted_states(pairs) -> dict[int, tuple[dict, int]]:
    """For machine QA pairs ``pairs`` (with ``draft`` loaded), ``{pair id: (content, version)}`` as a
    blind pass sees them: ``content`` has ``DRAFTED_KEYS`` (interval in seconds). Read from the
    pair's revisions (one query): the last one before any revision by a person. A pair with no such
    revision (never the case for pairs the drafting service made) falls back to its machine draft,
    without an interval, at version 1. The claim's SQL (``unit_payload``) applies the same rule."""
    pairs = list(pairs)
    states: dict[int, tuple[dict, int]] = {}
    touched: set[int] = set()
    for pair_id, after, version, person in (
        Revision.objects.filter(qa_pair__in=pairs)
        .order_by("qa_pair_id", "id")
        .values_list("qa_pair_id", "after", "version", "actor_user_id")
    ):
        if person is not None:
            touched.add(pair_id)
        elif pair_id not in touched:
            states[pair_id] = ({k: after.get(k) for k in DRAFTED_KEYS}, version)
    for pair in pairs:
        if pair.pk not in states:
            source = pair.draft if pair.draft_id else pair
            states[pair.pk] = (
                {
                    "question": source.question,
                    "answer": source.answer,
                    "options": source.options,
                    "answer_index": source.answer_index,
                    "answer_start_s": None,
                    "answer_end_s": None,
                },
                1,
            )
    return states


def _video_out(video: Video, role: str, offset_s: float = 0.0, label: str | None = None) -> dict:
    return {
        "id": video.pk,
        "role": role,
        "label": label,
        "filename": video.filename,
        "duration_s": video.duration_s,
        "fps": video.fps,
        "width": video.width,
        "height": video.height,
        "illumination": video.illumination or None,
        "difficulty": video.difficulty or None,
        "offset_s": offset_s,
        **media_urls(video),  # url, poster_url, hls_url, thumbnails_vtt_url
    }


def unit_videos(unit: WorkUnit) -> list[dict]:
    """The unit's videos in display order: the video alone (role ``single``, no label), or every
    member of its group (``media.selectors.ordered_members``): the day video then the night one
    (night time = day time + ``offset_s``), or the ego video then exo 1..N (exo time = ego time +
    ``offset_s``, EgoExoBench seed 001 Sec. 3), each with the label players show ("ego", "exo 1")."""
    if unit.group_id is None:
        return [_video_out(unit.video, "single")]
    members = ordered_members(VideoGroupMember.objects.filter(group_id=unit.group_id).select_related("video"))
    return [_video_out(m.video, m.role, m.offset_s, member_label(m.role, m.position)) for m in members]


# Everything of a unit a claim shows, in one round trip and without the ORM's compile step: this is
# read on every claim. One row per QA pair of the pass (or one row of NULLs when there is none).
_PAYLOAD_SQL = """
SELECT u.id, u.start_s, u.end_s, u.group_id,
       v.id, v.filename, v.duration_s, v.fps, v.width, v.height, v.illumination, v.difficulty, v.rendition, v.poster,
       v.hls, v.thumbnails_vtt,
       q.id, q.origin, q.question, q.answer, q.options, q.answer_index, q.clip_start_s, q.clip_end_s, q.version,
       q.flag_reason, q.flag_source, t.slug, t.name,
       d.question, d.answer, d.options, d.answer_index,
       t.answer_kind, q.answer_start_s, q.answer_end_s, q.videos, m.after, m.version
FROM qa_workunit u
JOIN media_video v ON v.id = u.video_id
LEFT JOIN qa_qapair q ON q.unit_id = u.id AND q.{column} = %(value)s
LEFT JOIN qa_qatype t ON t.id = q.qa_type_id
LEFT JOIN drafts_draft d ON d.id = q.draft_id
LEFT JOIN LATERAL (
    SELECT r.after, r.version FROM qa_revision r
    WHERE %(blind)s AND r.qa_pair_id = q.id
      AND NOT EXISTS (SELECT 1 FROM qa_revision h
                      WHERE h.qa_pair_id = q.id AND h.actor_user_id IS NOT NULL AND h.id <= r.id)
    ORDER BY r.id DESC LIMIT 1) m ON TRUE
WHERE u.id = %(unit)s
ORDER BY q.id"""


def _json(value):
    return json.loads(value) if isinstance(value, str) else value


def unit_payload(item: QueueItem, user) -> dict:
    """What an annotator sees of the unit they hold: its videos, range, the QA pairs of this pass,
    their own autosaved work (if any) and, on a first pass or double-check, the work of an earlier
    holder whose lease lapsed (``carried``, labelled with their username; see ``_autosaves_for``).
    The project's QA types and guidelines are not repeated
    here: pages and scripts read them once from ``/api/projects/{slug}/qa-types/``.

    Never includes who else completed a pass of the unit; an overlap pass shows each machine QA pair
    as it was before any person touched it (content, answer interval and version: ``drafted_states``),
    not what the first pass made of it. Times in seconds, lease times ISO 8601. This is served on
    every claim, so it costs one query, plus one for a group's videos (a day-night pair, an ego-exo
    set: every member in display order with its ``label`` and ``offset_s``), one for the labelled
    videos of its QA pairs (``with_labelled_videos``) when there are any, and one when the claim
    found an autosave.
    """
    from django.db import connection

    blind = item.kind == QueueItem.Kind.OVERLAP
    column, value = PASS_FILTER[item.kind]
    with connection.cursor() as cursor:
        cursor.execute(_PAYLOAD_SQL.format(column=column), {"value": value, "unit": item.unit_id, "blind": blind})
        rows = cursor.fetchall()
    (
        unit_id,
        start_s,
        end_s,
        group_id,
        video_id,
        filename,
        duration_s,
        fps,
        width,
        height,
        illumination,
        difficulty,
        rendition,
        poster,
        hls,
        thumbnails_vtt,
    ) = rows[0][:16]
    if group_id is None:
        videos = [
            _video_out(
                Video(
                    pk=video_id,
                    filename=filename,
                    duration_s=duration_s,
                    fps=fps,
                    width=width,
                    height=height,
                    illumination=illumination,
                    difficulty=difficulty,
                    rendition=rendition,
                    poster=poster,
                    hls=hls,
                    thumbnails_vtt=thumbnails_vtt,
                ),
                "single",
            )
        ]
    else:
        videos = unit_videos(WorkUnit(pk=unit_id, group_id=group_id))
    qa_pairs = []
    for row in rows:
        (
            qa_id,
            origin,
            question,
            answer,
            options,
            answer_index,
            clip_start_s,
            clip_end_s,
            version,
            flag_reason,
            flag_source,
            type_slug,
            type_name,
            d_question,
            d_answer,
            d_options,
            d_answer_index,
            answer_kind,
            answer_start_s,
            answer_end_s,
            labelled,
            drafted,
            drafted_version,
        ) = row[16:]
        if qa_id is None:
            continue
        if blind and drafted is not None:  # the pair before any person touched it (``drafted_states``)
            drafted = _json(drafted)
            question, answer, options, answer_index, answer_start_s, answer_end_s = (
                drafted.get(k) for k in DRAFTED_KEYS
            )
            version = drafted_version
        elif blind:  # no revision before a person's: the machine draft, no interval (as drafted_states)
            if d_question is not None:
                question, answer, options, answer_index = d_question, d_answer, d_options, d_answer_index
            answer_start_s = answer_end_s = None
            version = 1
        qa_pairs.append(
            {
                "id": qa_id,
                "qa_type": type_slug,
                "qa_type_name": type_name,
                "origin": origin,
                "question": question,
                "answer": answer,
                "options": _json(options),
                "answer_index": answer_index,
                "clip": {"start_s": clip_start_s, "end_s": clip_end_s},
                "version": version,
                "flag": {"reason": flag_reason, "source": flag_source} if flag_reason else None,
                "answer_kind": answer_kind,
                "answer_start_s": answer_start_s,
                "answer_end_s": answer_end_s,
                "videos": _json(labelled) or [],
            }
        )
    with_labelled_videos(qa_pairs)
    own, carried = _autosaves_for(item, user) if getattr(item, "has_autosave", True) else (None, None)
    paired = any(v["role"] == VideoGroupMember.Role.NIGHT for v in videos)  # a day-night pair, not an ego-exo set
    life_log = (
        _life_log_payload(group_id, videos) if any(v["role"] == VideoGroupMember.Role.PART for v in videos) else None
    )
    payload = {
        "id": unit_id,
        "project": item.project.slug,
        "start_s": start_s,
        "end_s": end_s,
        "paired": paired,
        "queue": {
            "item_id": item.pk,
            "kind": item.kind,
            "lease_expires_at": item.lease_expires_at.isoformat() if item.lease_expires_at else None,
            "heartbeat_s": settings.QUEUE_HEARTBEAT_SECONDS,
        },
        "video": videos[0],
        "videos": videos,
        "life_log": life_log,
        "qa_pairs": qa_pairs,
        "delete_reasons": [
            {"value": v, "label": label, "available": paired or v != QAPair.DeleteReason.INCONSISTENT}
            for v, label in QAPair.DeleteReason.choices
        ],
        "autosave": {
            "state": own.state,
            "client_saved_at_ms": own.client_saved_at_ms,
            "time_spent_ms": own.time_spent_ms,
        }
        if own
        else None,
        "carried": {
            "state": carried.state,
            "client_saved_at_ms": carried.client_saved_at_ms,
            "username": carried.user.username,
            "saved_at": carried.updated_at.isoformat(),
            "time_spent_ms": carried.time_spent_ms,
        }
        if carried
        else None,
    }
    with_handles(payload)
    for key, provider in PAYLOAD_PARTS.items():
        if (part := provider(item, user)) is not None:
            payload[key] = part
    return payload


def with_handles(payload: dict) -> None:
    """Put handles (``core.handles``) in place of the row ids of a unit payload, in place: the unit's,
    its queue item's, its QA pairs', its videos' (players', labelled ones', a life log's parts) and
    its life log's; and drop the videos' file names. A gold copy is made when it is served, so its
    ids are the project's newest while real units are served in id order: an annotator must not see
    them (issue 20, section 2). The API decodes what the page sends back (``api.views``)."""
    payload["id"] = handles.encode("unit", payload["id"])
    payload["queue"]["item_id"] = handles.encode("item", payload["queue"]["item_id"])
    seen: set[int] = set()
    for video in [*payload["videos"], payload["video"], *(payload["life_log"] or {}).get("parts", [])]:
        if id(video) not in seen:
            seen.add(id(video))
            video["id"] = handles.encode("video", video["id"])
            video.pop("filename", None)
    if payload["life_log"]:
        payload["life_log"]["id"] = handles.encode("group", payload["life_log"]["id"])
    pairs_with_handles(payload["qa_pairs"])


def pairs_with_handles(qa_pairs: list[dict]) -> None:
    """Handles in place of the ids of QA pairs in the payload's shape (``id`` and their labelled
    videos' ``video_id``), in place (see ``with_handles``)."""
    for pair in qa_pairs:
        pair["id"] = handles.encode("qa", pair["id"])
        for entry in pair.get("videos") or []:
            entry["video_id"] = handles.encode("video", entry["video_id"])


_PAYLOAD_KEYS = frozenset(
    {
        "id",
        "project",
        "start_s",
        "end_s",
        "paired",
        "queue",
        "video",
        "videos",
        "life_log",
        "qa_pairs",
        "delete_reasons",
        "autosave",
        "carried",
    }
)


def _life_log_payload(group_id: int, videos: list[dict]) -> dict:
    """A life-log unit's log (X-LeBench seed 002 Sec. 3), for playing it in virtual time
    (``static/js/virtual_player.js``: the ``parts`` are ``videos`` entries, each placed at virtual
    second ``offset_s`` after ``start``; the unit's range, clips and interval answers are virtual
    seconds)::

        {"id", "name", "start": ISO 8601 datetime, "span_s": end of the last part, "parts": [video...],
         "gaps": [{"start_s", "end_s", "duration_s"}]}

    One query (the group's name and start)."""
    from annotator.media.lifelogs import Part, gaps

    group = VideoGroup.objects.only("name", "params").get(pk=group_id)
    parts = [v for v in videos if v["role"] == VideoGroupMember.Role.PART]
    plain = [Part(i, v["id"], v["offset_s"], v["duration_s"] or 0.0) for i, v in enumerate(parts)]
    return {
        "id": group_id,
        "name": group.name,
        "start": group.params.get("start", ""),
        "span_s": plain[-1].end_s if plain else 0.0,
        "parts": parts,
        "gaps": [{"start_s": a, "end_s": b, "duration_s": b - a} for a, b in gaps(plain)],
    }


def with_labelled_videos(qa_pairs: list[dict]) -> None:
    """Give each labelled video of these QA pairs (``QAPair.videos``: items whose options are
    videos, EgoExoBench seed 001 Fig. 2) what a player needs: its ``fps``, ``duration_s`` and media
    URLs (``media_urls``), in place. One query for all of them, none when there are none."""
    ids = {v["video_id"] for p in qa_pairs for v in p["videos"]}
    if not ids:
        return
    found = {
        v.pk: v
        for v in Video.objects.filter(pk__in=ids).only(
            "id", "fps", "duration_s", "rendition", "poster", "hls", "thumbnails_vtt"
        )
    }
    for pair in qa_pairs:
        for entry in pair["videos"]:
            video = found.get(entry["video_id"])
            if video is not None:
                entry.update(fps=video.fps, duration_s=video.duration_s, **media_urls(video))


def _autosaves_for(item: QueueItem, user) -> tuple[Autosave | None, Autosave | None]:
    """The person's own autosave on ``item`` and the work carried over to them (one query).

    Carried over: the latest autosave (by server time, as clocks of two browsers do not compare) of
    someone else on the same item, i.e. an earlier holder whose lease lapsed and who did not finish.
    A first pass or double-check continues from it; a blind overlap pass never sees it (its point is
    an independent judgement), so it stays for the admins' unit history only.
    """
    own = carried = None
    for saved in Autosave.objects.filter(item=item).select_related("user").order_by("-updated_at", "-id"):
        if saved.user_id == user.pk:
            own = own or saved
        elif item.kind != QueueItem.Kind.OVERLAP:
            carried = carried or saved
    return own, carried


def kept_autosaves(qs: QuerySet[Autosave]) -> QuerySet[Autosave]:
    """Autosaves of people who lost their item: it was completed by someone else, or someone else
    holds it, or someone else took it and gave it back (a holder whose lease lapsed and nobody took
    it still holds it, so their in-progress work is not listed)."""
    return qs.filter(
        Q(item__status=QueueItem.Status.DONE) | Q(item__leased_by__isnull=True) | ~Q(item__leased_by=F("user"))
    )


def project_videos(project: Project) -> QuerySet[Video]:
    return Video.objects.filter(project=project).order_by("id")


# Progress counts only the benchmark's own units: gold, qualification and tutorial copies (issue 20)
# are checks and teaching, shown on the gold pages.
REAL = {"unit__purpose": WorkUnit.Purpose.REAL}


def queue_counts(projects: list[Project]) -> dict[int, dict[str, int]]:
    """Open and done queue items per project id, for all ``projects`` in one grouped query
    (projects with no items get zeros)."""
    counts = {p.pk: {"open": 0, "done": 0} for p in projects}
    for row in (
        QueueItem.objects.filter(project__in=projects, unit__purpose=WorkUnit.Purpose.REAL)
        .values("project")
        .annotate(
            open=Count("id", filter=Q(status=QueueItem.Status.OPEN)),
            done=Count("id", filter=Q(status=QueueItem.Status.DONE)),
        )
    ):
        counts[row["project"]] = {"open": row["open"], "done": row["done"]}
    return counts


def progress(project: Project) -> dict:
    """Progress of a project for its admins and researchers (SPEC part 3), over its real units (not
    gold, qualification or tutorial copies).

    Returns ``queue`` (open / leased-now / done items per pass kind), ``provenance`` (verified QA
    pairs per provenance and ``kept_share`` = kept / (kept + modified + added), EgoNight reports
    about 0.4), ``by_annotator`` and ``by_qa_type`` (passes done, items kept / modified / deleted /
    added, time in ms), and ``by_video`` (passes done and time spent per video, in ms, for paying
    per video as EgoNight did). Time includes ``unfinished_ms``: the time of autosaved work on items
    the person did not complete (a lease that lapsed and went to someone else stays credited).
    ``kept_work`` lists such work of people whose unit went to someone else, newest first (up to 200),
    for the unit histories. Each part is one aggregate query.
    """
    from django.contrib.auth import get_user_model
    from django.db.models import Sum
    from django.utils import timezone

    now = timezone.now()
    queue = {
        row["kind"]: {
            "label": QueueItem.Kind(row["kind"]).label,
            "open": row["open"],
            "leased": row["leased"],
            "done": row["done"],
        }
        for row in QueueItem.objects.filter(project=project, **REAL)
        .values("kind")
        .annotate(
            open=Count("id", filter=Q(status=QueueItem.Status.OPEN)),
            leased=Count("id", filter=Q(status=QueueItem.Status.OPEN, lease_expires_at__gt=now)),
            done=Count("id", filter=Q(status=QueueItem.Status.DONE)),
        )
    }
    prov = dict(
        QAPair.objects.filter(project=project, status=QAPair.Status.VERIFIED, **REAL)
        .values_list("provenance")
        .annotate(n=Count("id"))
    )
    kept = prov.get(QAPair.Provenance.MACHINE_KEPT, 0)
    changed = prov.get(QAPair.Provenance.MACHINE_MODIFIED, 0) + prov.get(QAPair.Provenance.HUMAN_ADDED, 0)
    actions = {a: Count("id", filter=Q(action=a)) for a in ("keep", "modify", "delete", "add")}

    names = dict(get_user_model().objects.filter(memberships__project=project).values_list("id", "username"))
    people: dict[int, dict] = {}
    for row in (
        QueueItem.objects.filter(project=project, status=QueueItem.Status.DONE, **REAL)
        .values("completed_by")
        .annotate(passes=Count("id"), time_ms=Sum("time_spent_ms"))
    ):
        people[row["completed_by"]] = {"passes": row["passes"], "time_ms": row["time_ms"] or 0}
    # Autosaves exist only on items their person did not complete (a submit deletes the submitter's):
    # the time of unfinished work, kept when a lease lapsed and someone else took the unit over.
    for row in (
        Autosave.objects.filter(item__project=project, item__unit__purpose=WorkUnit.Purpose.REAL)
        .values("user")
        .annotate(unfinished_ms=Sum("time_spent_ms"))
    ):
        person = people.setdefault(row["user"], {"passes": 0, "time_ms": 0})
        person["unfinished_ms"] = row["unfinished_ms"] or 0
        person["time_ms"] += person["unfinished_ms"]
    for row in (
        Verdict.objects.filter(item__project=project, item__unit__purpose=WorkUnit.Purpose.REAL)
        .values("user")
        .annotate(**actions)
    ):
        people.setdefault(row["user"], {"passes": 0, "time_ms": 0}).update({a: row[a] for a in actions})
    by_annotator = [
        {
            "user_id": uid,
            "username": names.get(uid, f"user {uid}"),
            "passes": v["passes"],
            "time_ms": v["time_ms"],
            "time_min": round(v["time_ms"] / 60000, 1),
            "unfinished_ms": v.get("unfinished_ms", 0),
            "unfinished_min": round(v.get("unfinished_ms", 0) / 60000, 1),
            "s_per_pass": round(v["time_ms"] / v["passes"] / 1000, 1) if v["passes"] else None,
            **{a: v.get(a, 0) for a in actions},
        }
        for uid, v in sorted(people.items(), key=lambda kv: names.get(kv[0], ""))
    ]
    by_qa_type = [
        {
            "qa_type": row["qa_pair__qa_type__slug"],
            **{a: row[a] for a in actions},
            "time_ms": row["time_ms"] or 0,
            "time_s": round((row["time_ms"] or 0) / 1000, 1),
        }
        for row in Verdict.objects.filter(
            item__project=project, qa_pair__isnull=False, item__unit__purpose=WorkUnit.Purpose.REAL
        )
        .values("qa_pair__qa_type__slug")
        .annotate(**actions, time_ms=Sum("time_spent_ms"))
        .order_by("qa_pair__qa_type__slug")
    ]
    videos: dict[int, dict] = {}
    for row in (
        QueueItem.objects.filter(project=project, status=QueueItem.Status.DONE, **REAL)
        .values("unit__video", "unit__video__filename")
        .annotate(passes=Count("id"), time_ms=Sum("time_spent_ms"))
    ):
        videos[row["unit__video"]] = {
            "video_id": row["unit__video"],
            "filename": row["unit__video__filename"],
            "passes": row["passes"],
            "time_ms": row["time_ms"] or 0,
            "unfinished_ms": 0,
        }
    for row in (
        Autosave.objects.filter(item__project=project, item__unit__purpose=WorkUnit.Purpose.REAL)
        .values("item__unit__video", "item__unit__video__filename")
        .annotate(unfinished_ms=Sum("time_spent_ms"))
    ):
        video = videos.setdefault(
            row["item__unit__video"],
            {
                "video_id": row["item__unit__video"],
                "filename": row["item__unit__video__filename"],
                "passes": 0,
                "time_ms": 0,
                "unfinished_ms": 0,
            },
        )
        video["unfinished_ms"] = row["unfinished_ms"] or 0
        video["time_ms"] += video["unfinished_ms"]
    by_video = [
        {**v, "time_min": round(v["time_ms"] / 60000, 1), "unfinished_min": round(v["unfinished_ms"] / 60000, 1)}
        for v in sorted(videos.values(), key=lambda v: v["filename"])
    ]
    kept_work = [
        {
            "unit_id": a.item.unit_id,
            "kind": a.item.kind,
            "kind_label": QueueItem.Kind(a.item.kind).label,
            "username": a.user.username,
            "saved_at": a.updated_at,
            "time_min": round(a.time_spent_ms / 60000, 1),
            "item_status": a.item.status,
        }
        for a in kept_autosaves(Autosave.objects.filter(item__project=project))
        .select_related("item", "user")
        .order_by("-updated_at")[:200]
    ]
    return {
        "queue": queue,
        "provenance": {
            "machine_kept": kept,
            "machine_modified": prov.get(QAPair.Provenance.MACHINE_MODIFIED, 0),
            "human_added": prov.get(QAPair.Provenance.HUMAN_ADDED, 0),
            "kept_share": round(kept / (kept + changed), 4) if kept + changed else None,
            "kept_percent": round(100 * kept / (kept + changed)) if kept + changed else None,
            "changed_percent": 100 - round(100 * kept / (kept + changed)) if kept + changed else None,
        },
        "by_annotator": by_annotator,
        "by_qa_type": by_qa_type,
        "by_video": by_video,
        "kept_work": kept_work,
    }


def word_diff(old: str, new: str) -> list[tuple[str, str]]:
    """Word-level diff of two texts as [(op, text)], op in ``=``, ``-``, ``+`` (difflib's matching)."""
    import difflib

    a, b = (old or "").split(), (new or "").split()
    out: list[tuple[str, str]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag == "equal":
            out.append(("=", " ".join(a[i1:i2])))
        else:
            if i2 > i1:
                out.append(("-", " ".join(a[i1:i2])))
            if j2 > j1:
                out.append(("+", " ".join(b[j1:j2])))
    return out


def _reason(r: Revision) -> str:
    """The history's reason column: a review's decision, comment and tags (issue 20), else the
    delete or flag reason."""
    review = r.after.get("review") if r.action == Revision.Action.REVIEW else None
    if isinstance(review, dict):  # e.g. "reject: the cup is a mug [wrong_answer]"
        text = str(review.get("decision") or "")
        if review.get("comment"):
            text += ": " + str(review["comment"])
        if review.get("tags"):
            text += " [" + ", ".join(map(str, review["tags"])) + "]"
        return text
    return r.after.get("delete_reason") or r.after.get("flag_reason", "")


def history(pair: QAPair) -> dict:
    """The lineage of a QA pair, from the machine draft (or the person who added it) to now: every
    revision with who (username or model), what, when, the version after it, the time spent (ms),
    and word diffs of question, answer and options against the revision before; plus the diff of the
    machine draft against the current text."""
    revisions = list(pair.revisions.select_related("actor_user").order_by("id"))
    rows = []
    for r in revisions:
        before = r.before or {}
        changes = {}
        for key in ("question", "answer"):
            if before.get(key) != r.after.get(key):
                changes[key] = word_diff(before.get(key, ""), r.after.get(key, ""))
        if before.get("options") != r.after.get("options") or before.get("answer_index") != r.after.get("answer_index"):
            changes["options"] = {
                "before": before.get("options"),
                "before_index": before.get("answer_index"),
                "after": r.after.get("options"),
                "after_index": r.after.get("answer_index"),
            }
        rows.append(
            {
                "id": r.pk,
                "action": r.action,
                "actor": r.actor_user.username if r.actor_user else r.actor_model,
                "human": r.actor_user_id is not None,
                "version": r.version,
                "at": r.created_at,
                "time_spent_ms": r.time_spent_ms,
                "time_s": round(r.time_spent_ms / 1000, 1) if r.time_spent_ms is not None else None,
                "changes": changes,
                "status": r.after.get("status"),
                "reason": _reason(r),
            }
        )
    first = revisions[0].after if revisions else pair.snapshot()
    return {
        "revisions": rows,
        "from_first": {key: word_diff(first.get(key, ""), getattr(pair, key)) for key in ("question", "answer")},
    }


def _text(value, limit: int = 300) -> str:
    """A client-supplied value as short display text (autosave state is the page's own JSON)."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "…"


def readable_state(state, pairs: dict[int, QAPair]) -> dict:
    """The verify page's autosave ``state`` in plain words for the unit history: one entry per
    item with what the person had decided (``{"items": [{"what", "details": [...], "time_s"}],
    "raw": None}``). State the page did not write (not our shape) comes back as ``raw`` JSON text,
    so nothing saved is ever hidden."""
    items = state.get("items") if isinstance(state, dict) else None
    if not isinstance(items, list):
        return {"items": [], "raw": _text(state, 20000)}
    out = []
    for entry in items:
        if not isinstance(entry, dict):
            out.append({"what": "unreadable entry", "details": [_text(entry)], "time_s": None})
            continue
        d = entry.get("decision") if isinstance(entry.get("decision"), dict) else {}
        ms = entry.get("ms")
        time_s = (
            round(ms / 1000, 1)
            if isinstance(ms, (int, float)) and not isinstance(ms, bool) and abs(ms) < 2**53
            else None
        )  # rows saved before the API bounded numbers may hold anything
        details = []
        if entry.get("kind") == "added":
            what = f"added a QA pair ({_text(d.get('qa_type', '?'), 60)})"
            details = [f"question: {_text(d.get('question', ''))}", f"answer: {_text(d.get('answer', ''))}"]
        else:
            qa_id = entry.get("qaId")
            pair = pairs.get(qa_id) if isinstance(qa_id, int) and not isinstance(qa_id, bool) else None
            label = f"QA {qa_id}" + (f" “{_text(pair.question, 80)}”" if pair else "")
            action = d.get("action")
            if action == "keep":
                what = f"{label}: keep"
            elif action == "delete":
                what = f"{label}: delete"
                details = [f"reason: {_text(d.get('reason') or 'not chosen yet')}"]
            elif action == "modify":
                what = f"{label}: modify"
                details = [
                    f"{k}: {_text(d.get(k))}"
                    for k in ("question", "answer", "options", "answer_index")
                    if d.get(k) is not None
                ]
            else:
                what = f"{label}: not decided yet"
        out.append({"what": what, "details": details, "time_s": time_s})
    return {"items": out, "raw": None}


def unit_history(unit: WorkUnit) -> dict:
    """Everything that happened to a unit, for its admins, reviewers and researchers: its passes
    (queue items: kind, holder, claim, lease, who completed it when, time in ms), submissions (who,
    when, counts), skips, and all autosaved work, each marked ``kept`` (its person lost the item:
    lapsed and taken over, the time stays credited to them) or in progress, with the state in plain
    words (``readable_state``). Also the unit's QA pairs, linking to their histories. Five queries."""
    items = list(unit.queue_items.select_related("leased_by", "completed_by", "exclude_user").order_by("id"))
    passes = [
        {
            "id": i.pk,
            "kind": i.kind,
            "kind_label": i.get_kind_display(),
            "seq": i.seq,
            "status": i.status,
            "holder": i.leased_by.username if i.leased_by else None,
            "claimed_at": i.claimed_at,
            "lease_expires_at": i.lease_expires_at,
            "completed_by": i.completed_by.username if i.completed_by else None,
            "completed_at": i.completed_at,
            "time_spent_ms": i.time_spent_ms,
            "time_s": round(i.time_spent_ms / 1000, 1) if i.time_spent_ms is not None else None,
            "exclude_user": i.exclude_user.username if i.exclude_user else None,
        }
        for i in items
    ]
    by_id = {i.pk: i for i in items}
    submissions = [
        {
            "item_id": sub.item_id,
            "kind": by_id[sub.item_id].get_kind_display(),
            "username": sub.user.username,
            "at": sub.created_at,
            "counts": sub.response.get("counts", {}),
        }
        for sub in Submission.objects.filter(item__unit=unit).select_related("user").order_by("id")
    ]
    skips = [
        {
            "item_id": sk.item_id,
            "kind": by_id[sk.item_id].get_kind_display(),
            "username": sk.user.username,
            "at": sk.created_at,
            "reason": sk.reason,
        }
        for sk in Skip.objects.filter(item__unit=unit).select_related("user").order_by("id")
    ]
    pairs = {p.pk: p for p in unit.qa_pairs.select_related("qa_type").order_by("id")}
    work = []
    for a in Autosave.objects.filter(item__unit=unit).select_related("user").order_by("-updated_at", "-id"):
        item = by_id[a.item_id]
        kept = item.status == QueueItem.Status.DONE or item.leased_by_id != a.user_id
        work.append(
            {
                "item_id": a.item_id,
                "kind": item.get_kind_display(),
                "username": a.user.username,
                "saved_at": a.updated_at,
                "time_spent_ms": a.time_spent_ms,
                "time_min": round(a.time_spent_ms / 60000, 1),
                "kept": kept,
                "carried": kept and item.kind != QueueItem.Kind.OVERLAP,
                "state": readable_state(a.state, pairs),
            }
        )
    return {
        "passes": passes,
        "submissions": submissions,
        "skips": skips,
        "work": work,
        "qa_pairs": list(pairs.values()),
    }


def units_held_blind(user, project: Project) -> list[int]:
    """The units of ``project`` on which ``user`` holds an open overlap pass (at most one: a person
    holds one open item per project). Their QA pairs are left out of the QA list until the person
    submits, as their status, provenance and text are the first pass's (SPEC part 5; issue 19)."""
    return list(
        QueueItem.objects.filter(
            project=project, kind=QueueItem.Kind.OVERLAP, status=QueueItem.Status.OPEN, leased_by=user
        ).values_list("unit_id", flat=True)
    )


def refuse_during_blind_pass(user, unit_id: int) -> None:
    """Raise PermissionDenied if ``user`` holds an open overlap pass on unit ``unit_id``: a blind
    pass must not see the first pass or other people's work (SPEC part 5), and admins and reviewers
    can both oversee and annotate. The unit's and its QA pairs' histories open once they submit."""
    from django.core.exceptions import PermissionDenied

    if QueueItem.objects.filter(
        unit_id=unit_id, kind=QueueItem.Kind.OVERLAP, status=QueueItem.Status.OPEN, leased_by=user
    ).exists():
        raise PermissionDenied("you are verifying this unit blind (an overlap pass); its history opens once you submit")
