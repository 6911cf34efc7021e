"""Reads shared by pages, the API and commands: the unit an annotator sees, videos, the export."""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Iterator
from datetime import timezone as dt_timezone

from django.conf import settings
from django.contrib.postgres.aggregates import ArrayAgg
from django.core.files.storage import default_storage
from django.db.models import Count, Prefetch, Q, QuerySet

from annotator.media.models import Video, VideoGroupMember
from annotator.projects.models import Project
from annotator.qa.models import Autosave, QAPair, QueueItem, Revision, Verdict, WorkUnit

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


def media_url(name: str) -> str | None:
    """The URL a page uses for a stored file: on local disk, the access-checked range-serving view
    (``media.views.serve_media``, at ``/files/NAME``); on S3, the bucket's (signed) URL."""
    if not name:
        return None
    if settings.STORAGE_BACKEND == "local":
        from django.urls import reverse

        return reverse("media", args=[name])
    return default_storage.url(name)


# The QA pairs a pass decides on, as (column, value): a first pass the drafts, a double-check the
# verified items, an overlap pass every machine draft (shown as drafted: overlap is blind to the
# first pass). Used by the ORM (``pairs_for_pass``) and by the claim's SQL (``unit_payload``).
PASS_FILTER = {
    QueueItem.Kind.FIRST_PASS: ("status", QAPair.Status.DRAFT),
    QueueItem.Kind.DOUBLE_CHECK: ("status", QAPair.Status.VERIFIED),
    QueueItem.Kind.OVERLAP: ("origin", QAPair.Origin.MACHINE),
}


def pairs_for_pass(unit: WorkUnit, kind: str) -> QuerySet[QAPair]:
    """The QA pairs a pass over ``unit`` decides on (see ``PASS_FILTER``)."""
    column, value = PASS_FILTER[kind]
    return unit.qa_pairs.filter(**{column: value})


def _video_out(video: Video, role: str, offset_s: float = 0.0) -> dict:
    return {
        "id": video.pk, "role": role, "filename": video.filename, "duration_s": video.duration_s, "fps": video.fps,
        "width": video.width, "height": video.height, "illumination": video.illumination or None,
        "difficulty": video.difficulty or None, "offset_s": offset_s,
        "url": media_url(video.rendition.name), "poster_url": media_url(video.poster.name),
    }


def unit_videos(unit: WorkUnit) -> list[dict]:
    """The unit's videos in display order: the video alone (role ``single``), or for a day-night
    pair the day video then the night one with its offset (night time = day time + ``offset_s``)."""
    if unit.group_id is None:
        return [_video_out(unit.video, "single")]
    members = {m.role: m for m in VideoGroupMember.objects.filter(group_id=unit.group_id).select_related("video")}
    day, night = members["day"], members["night"]
    return [_video_out(day.video, "day", day.offset_s), _video_out(night.video, "night", night.offset_s)]


# Everything of a unit a claim shows, in one round trip and without the ORM's compile step: this is
# read on every claim. One row per QA pair of the pass (or one row of NULLs when there is none).
_PAYLOAD_SQL = """
SELECT u.id, u.start_s, u.end_s, u.group_id,
       v.id, v.filename, v.duration_s, v.fps, v.width, v.height, v.illumination, v.difficulty, v.rendition, v.poster,
       q.id, q.origin, q.question, q.answer, q.options, q.answer_index, q.clip_start_s, q.clip_end_s, q.version,
       q.flag_reason, q.flag_source, t.slug, t.name,
       d.question, d.answer, d.options, d.answer_index
FROM qa_workunit u
JOIN media_video v ON v.id = u.video_id
LEFT JOIN qa_qapair q ON q.unit_id = u.id AND q.{column} = %(value)s
LEFT JOIN qa_qatype t ON t.id = q.qa_type_id
LEFT JOIN drafts_draft d ON d.id = q.draft_id
WHERE u.id = %(unit)s
ORDER BY q.id"""


def _json(value):
    return json.loads(value) if isinstance(value, str) else value


def unit_payload(item: QueueItem, user) -> dict:
    """What an annotator sees of the unit they hold: its videos, range, the QA pairs of this pass,
    and their own autosaved work (if any). The project's QA types and guidelines are not repeated
    here: pages and scripts read them once from ``/api/projects/{slug}/qa-types/``.

    Never includes who else worked on the unit; an overlap pass shows the machine drafts as drafted,
    not what the first pass made of them. Times in seconds, lease times ISO 8601. This is served on
    every claim, so it costs one query, plus one for a day-night pair's videos and one when the
    claim found an autosave.
    """
    from django.db import connection

    blind = item.kind == QueueItem.Kind.OVERLAP
    column, value = PASS_FILTER[item.kind]
    with connection.cursor() as cursor:
        cursor.execute(_PAYLOAD_SQL.format(column=column), {"value": value, "unit": item.unit_id})
        rows = cursor.fetchall()
    (unit_id, start_s, end_s, group_id, video_id, filename, duration_s, fps, width, height, illumination, difficulty,
     rendition, poster) = rows[0][:14]
    if group_id is None:
        videos = [_video_out(Video(pk=video_id, filename=filename, duration_s=duration_s, fps=fps, width=width, height=height,
                                   illumination=illumination, difficulty=difficulty, rendition=rendition, poster=poster),
                             "single")]
    else:
        videos = unit_videos(WorkUnit(pk=unit_id, group_id=group_id))
    qa_pairs = []
    for row in rows:
        (qa_id, origin, question, answer, options, answer_index, clip_start_s, clip_end_s, version, flag_reason,
         flag_source, type_slug, type_name, d_question, d_answer, d_options, d_answer_index) = row[14:]
        if qa_id is None:
            continue
        if blind and d_question is not None:
            question, answer, options, answer_index = d_question, d_answer, d_options, d_answer_index
        qa_pairs.append({
            "id": qa_id, "qa_type": type_slug, "qa_type_name": type_name, "origin": origin, "question": question,
            "answer": answer, "options": _json(options), "answer_index": answer_index,
            "clip": {"start_s": clip_start_s, "end_s": clip_end_s}, "version": version,
            "flag": {"reason": flag_reason, "source": flag_source} if flag_reason else None,
        })
    saved = Autosave.objects.filter(item=item, user=user).first() if getattr(item, "has_autosave", True) else None
    paired = group_id is not None
    return {
        "id": unit_id,
        "project": item.project.slug,
        "start_s": start_s,
        "end_s": end_s,
        "paired": paired,
        "queue": {"item_id": item.pk, "kind": item.kind,
                  "lease_expires_at": item.lease_expires_at.isoformat() if item.lease_expires_at else None,
                  "heartbeat_s": settings.QUEUE_HEARTBEAT_SECONDS},
        "video": videos[0],
        "videos": videos,
        "qa_pairs": qa_pairs,
        "delete_reasons": [
            {"value": v, "label": label, "available": paired or v != QAPair.DeleteReason.INCONSISTENT}
            for v, label in QAPair.DeleteReason.choices
        ],
        "autosave": {"state": saved.state, "client_saved_at_ms": saved.client_saved_at_ms} if saved else None,
    }


def project_videos(project: Project) -> QuerySet[Video]:
    return Video.objects.filter(project=project).order_by("id")


def queue_counts(projects: list[Project]) -> dict[int, dict[str, int]]:
    """Open and done queue items per project id, for all ``projects`` in one grouped query
    (projects with no items get zeros)."""
    counts = {p.pk: {"open": 0, "done": 0} for p in projects}
    for row in (QueueItem.objects.filter(project__in=projects).values("project")
                .annotate(open=Count("id", filter=Q(status=QueueItem.Status.OPEN)),
                          done=Count("id", filter=Q(status=QueueItem.Status.DONE)))):
        counts[row["project"]] = {"open": row["open"], "done": row["done"]}
    return counts


def verified_qa(project: Project, *, qa_type: str | None = None, provenance: str | None = None,
                source: str | None = None, illumination: str | None = None) -> QuerySet[QAPair]:
    """Verified QA pairs of a project (never deleted or undecided ones), with what the export needs
    joined or aggregated in the same query: annotator ids and the count of verifying revisions."""
    qs = QAPair.objects.filter(project=project, status=QAPair.Status.VERIFIED)
    if qa_type:
        qs = qs.filter(qa_type__slug=qa_type)
    if provenance:
        qs = qs.filter(provenance=provenance)
    if source:
        qs = qs.filter(video__source=source)
    if illumination:
        qs = qs.filter(video__illumination=illumination)
    human = Q(revisions__actor_user__isnull=False, revisions__action__in=VERIFYING_ACTIONS)
    return (
        qs.select_related("project", "qa_type", "video", "draft__job__run", "unit__group")
        .prefetch_related(Prefetch("unit__group__members", queryset=VideoGroupMember.objects.select_related("video")))
        .annotate(
            annotator_ids=ArrayAgg("revisions__actor_user_id", filter=human, distinct=True, default=[]),
            n_verifications=Count("revisions", filter=human),
        )
        .order_by("id")
    )


def _export_video(v: Video) -> dict:
    return {"id": v.pk, "sha256": v.sha256, "filename": v.filename, "duration_s": v.duration_s, "fps": v.fps,
            "illumination": v.illumination or None, "source": v.source, "metadata": v.metadata()}


def export_record(p: QAPair) -> dict:
    """One export line (README, "Export schema"). Times in seconds, ``verified_at`` ISO 8601 UTC."""
    v = p.video
    pair = None
    if p.unit.group_id is not None:
        night = next(m for m in p.unit.group.members.all() if m.role == VideoGroupMember.Role.NIGHT)
        pair = {"kind": p.unit.group.kind, "name": p.unit.group.name, "night_video": _export_video(night.video),
                "offset_s": night.offset_s}
    draft = None
    if p.draft_id is not None:
        run = p.draft.job.run
        draft = {"question": p.draft.question, "answer": p.draft.answer, "pipeline": run.pipeline,
                 "model": run.model or None}
    return {
        "id": p.pk,
        "project": p.project.slug,
        "qa_type": p.qa_type.slug,
        "paired": pair is not None,
        "question": p.question,
        "answer": p.answer,
        "options": p.options,
        "answer_index": p.answer_index,
        "video": _export_video(v),
        "pair": pair,
        "clip": {"start_s": p.clip_start_s, "end_s": p.clip_end_s},
        "provenance": p.provenance,
        "draft": draft,
        "annotators": sorted(pseudonym(uid) for uid in p.annotator_ids),
        "verifications": p.n_verifications,
        "verified_at": p.verified_at.astimezone(dt_timezone.utc).isoformat().replace("+00:00", "Z") if p.verified_at else None,
    }


def export_lines(queryset: QuerySet[QAPair], chunk_size: int = 2000) -> Iterator[str]:
    """Yield one JSON line (with ``\\n``) per QA pair, reading the database in chunks of
    ``chunk_size`` rows through a server-side cursor, so memory stays flat for any size."""
    for pair in queryset.iterator(chunk_size=chunk_size):
        yield json.dumps(export_record(pair), ensure_ascii=False) + "\n"


def progress(project: Project) -> dict:
    """Progress of a project for its admins and researchers (SPEC part 3).

    Returns ``queue`` (open / leased-now / done items per pass kind), ``provenance`` (verified QA
    pairs per provenance and ``kept_share`` = kept / (kept + modified + added), EgoNight reports
    about 0.4), ``by_annotator`` and ``by_qa_type`` (passes done, items kept / modified / deleted /
    added, time in ms), and ``by_video`` (passes done and time spent per video, in ms, for paying
    per video as EgoNight did). Each part is one aggregate query.
    """
    from django.contrib.auth import get_user_model
    from django.db.models import Sum
    from django.utils import timezone

    now = timezone.now()
    queue = {
        row["kind"]: {"label": QueueItem.Kind(row["kind"]).label, "open": row["open"], "leased": row["leased"], "done": row["done"]}
        for row in QueueItem.objects.filter(project=project).values("kind").annotate(
            open=Count("id", filter=Q(status=QueueItem.Status.OPEN)),
            leased=Count("id", filter=Q(status=QueueItem.Status.OPEN, lease_expires_at__gt=now)),
            done=Count("id", filter=Q(status=QueueItem.Status.DONE)),
        )
    }
    prov = dict(QAPair.objects.filter(project=project, status=QAPair.Status.VERIFIED)
                .values_list("provenance").annotate(n=Count("id")))
    kept = prov.get(QAPair.Provenance.MACHINE_KEPT, 0)
    changed = prov.get(QAPair.Provenance.MACHINE_MODIFIED, 0) + prov.get(QAPair.Provenance.HUMAN_ADDED, 0)
    actions = {a: Count("id", filter=Q(action=a)) for a in ("keep", "modify", "delete", "add")}

    names = dict(get_user_model().objects.filter(memberships__project=project).values_list("id", "username"))
    people: dict[int, dict] = {}
    for row in (QueueItem.objects.filter(project=project, status=QueueItem.Status.DONE)
                .values("completed_by").annotate(passes=Count("id"), time_ms=Sum("time_spent_ms"))):
        people[row["completed_by"]] = {"passes": row["passes"], "time_ms": row["time_ms"] or 0}
    for row in Verdict.objects.filter(item__project=project).values("user").annotate(**actions):
        people.setdefault(row["user"], {"passes": 0, "time_ms": 0}).update({a: row[a] for a in actions})
    by_annotator = [
        {"user_id": uid, "username": names.get(uid, f"user {uid}"), "passes": v["passes"], "time_ms": v["time_ms"],
         "time_min": round(v["time_ms"] / 60000, 1),
         "s_per_pass": round(v["time_ms"] / v["passes"] / 1000, 1) if v["passes"] else None,
         **{a: v.get(a, 0) for a in actions}}
        for uid, v in sorted(people.items(), key=lambda kv: names.get(kv[0], ""))
    ]
    by_qa_type = [
        {"qa_type": row["qa_pair__qa_type__slug"], **{a: row[a] for a in actions}, "time_ms": row["time_ms"] or 0,
         "time_s": round((row["time_ms"] or 0) / 1000, 1)}
        for row in Verdict.objects.filter(item__project=project, qa_pair__isnull=False)
        .values("qa_pair__qa_type__slug").annotate(**actions, time_ms=Sum("time_spent_ms")).order_by("qa_pair__qa_type__slug")
    ]
    by_video = [
        {"video_id": row["unit__video"], "filename": row["unit__video__filename"], "passes": row["passes"],
         "time_ms": row["time_ms"] or 0, "time_min": round((row["time_ms"] or 0) / 60000, 1)}
        for row in QueueItem.objects.filter(project=project, status=QueueItem.Status.DONE)
        .values("unit__video", "unit__video__filename").annotate(passes=Count("id"), time_ms=Sum("time_spent_ms"))
        .order_by("unit__video__filename")
    ]
    return {
        "queue": queue,
        "provenance": {"machine_kept": kept, "machine_modified": prov.get(QAPair.Provenance.MACHINE_MODIFIED, 0),
                       "human_added": prov.get(QAPair.Provenance.HUMAN_ADDED, 0),
                       "kept_share": round(kept / (kept + changed), 4) if kept + changed else None,
                       "kept_percent": round(100 * kept / (kept + changed)) if kept + changed else None,
                       "changed_percent": 100 - round(100 * kept / (kept + changed)) if kept + changed else None},
        "by_annotator": by_annotator,
        "by_qa_type": by_qa_type,
        "by_video": by_video,
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
            changes["options"] = {"before": before.get("options"), "before_index": before.get("answer_index"),
                                  "after": r.after.get("options"), "after_index": r.after.get("answer_index")}
        rows.append({"id": r.pk, "action": r.action, "actor": r.actor_user.username if r.actor_user else r.actor_model,
                     "human": r.actor_user_id is not None, "version": r.version, "at": r.created_at,
                     "time_spent_ms": r.time_spent_ms,
                     "time_s": round(r.time_spent_ms / 1000, 1) if r.time_spent_ms is not None else None, "changes": changes,
                     "status": r.after.get("status"), "reason": r.after.get("delete_reason") or r.after.get("flag_reason", "")})
    first = revisions[0].after if revisions else pair.snapshot()
    return {
        "revisions": rows,
        "from_first": {key: word_diff(first.get(key, ""), getattr(pair, key)) for key in ("question", "answer")},
    }
