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
from django.db.models import Count, Q, QuerySet

from annotator.media.models import Video
from annotator.projects.models import Project
from annotator.qa.models import QAPair, QAType, Revision, WorkUnit

VERIFYING_ACTIONS = (Revision.Action.KEEP, Revision.Action.MODIFY, Revision.Action.ADD)


def pseudonym(user_id: int) -> str:
    """A stable pseudonymous annotator id: ``ann-`` + 12 hex of HMAC-SHA256(SECRET_KEY, user id).

    Exports carry these instead of usernames; the same person gets the same id in every export
    of a deployment, and nobody without the secret key can map it back.
    """
    key = hashlib.sha256(("annotator-pseudonym:" + settings.SECRET_KEY).encode()).digest()
    return "ann-" + hmac.new(key, str(user_id).encode(), hashlib.sha256).hexdigest()[:12]


def media_url(name: str) -> str | None:
    return default_storage.url(name) if name else None


def unit_payload(unit: WorkUnit) -> dict:
    """What an annotator sees of a unit: the video, its range, and its draft QA pairs.

    Never includes who else worked on it. Times in seconds.
    """
    video = unit.video
    pairs = (
        unit.qa_pairs.filter(status=QAPair.Status.DRAFT).select_related("qa_type").order_by("id")
    )
    types = QAType.objects.filter(project_id=unit.project_id).order_by("slug")
    return {
        "id": unit.pk,
        "project": unit.project.slug,
        "start_s": unit.start_s,
        "end_s": unit.end_s,
        "lease_expires_at": unit.lease_expires_at.isoformat() if unit.lease_expires_at else None,
        "video": {
            "id": video.pk, "filename": video.filename, "duration_s": video.duration_s, "fps": video.fps,
            "width": video.width, "height": video.height, "illumination": video.illumination or None,
            "url": media_url(video.rendition.name), "poster_url": media_url(video.poster.name),
        },
        "qa_pairs": [
            {
                "id": p.pk, "qa_type": p.qa_type.slug, "qa_type_name": p.qa_type.name, "origin": p.origin,
                "question": p.question, "answer": p.answer, "options": p.options, "answer_index": p.answer_index,
                "clip": {"start_s": p.clip_start_s, "end_s": p.clip_end_s}, "version": p.version,
            }
            for p in pairs
        ],
        "qa_types": [{"slug": t.slug, "name": t.name} for t in types],
        "delete_reasons": [{"value": v, "label": label} for v, label in QAPair.DeleteReason.choices],
    }


def project_videos(project: Project) -> QuerySet[Video]:
    return Video.objects.filter(project=project).order_by("id")


def queue_counts(project: Project) -> dict[str, int]:
    """Open and done units of a project (one aggregate query)."""
    return WorkUnit.objects.filter(project=project).aggregate(
        open=Count("id", filter=Q(status=WorkUnit.Status.OPEN)),
        done=Count("id", filter=Q(status=WorkUnit.Status.DONE)),
    )


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
        qs.select_related("project", "qa_type", "video", "draft__job__run")
        .annotate(
            annotator_ids=ArrayAgg("revisions__actor_user_id", filter=human, distinct=True, default=[]),
            n_verifications=Count("revisions", filter=human),
        )
        .order_by("id")
    )


def export_record(p: QAPair) -> dict:
    """One export line (README, "Export schema"). Times in seconds, ``verified_at`` ISO 8601 UTC."""
    v = p.video
    draft = None
    if p.draft_id is not None:
        run = p.draft.job.run
        draft = {"question": p.draft.question, "answer": p.draft.answer, "pipeline": run.pipeline,
                 "model": run.model or None}
    return {
        "id": p.pk,
        "project": p.project.slug,
        "qa_type": p.qa_type.slug,
        "paired": p.qa_type.paired,
        "question": p.question,
        "answer": p.answer,
        "options": p.options,
        "answer_index": p.answer_index,
        "video": {
            "id": v.pk, "sha256": v.sha256, "filename": v.filename, "duration_s": v.duration_s, "fps": v.fps,
            "illumination": v.illumination or None, "source": v.source, "metadata": v.metadata(),
        },
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
