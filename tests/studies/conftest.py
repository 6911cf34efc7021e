"""Studies built as ``study_create`` builds them, from a real video stored as a ready rendition
(made by ffmpeg here, so no transcode worker is needed), and participants who answer through the
API as the page does: report the trial shown, then answer."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest
from django.core.files.storage import default_storage
from rest_framework.test import APIClient

from annotator.media.models import Video
from annotator.projects.services import ensure_member, token_for
from annotator.studies.services import create_study


@pytest.fixture(autouse=True)
def _jobs_unsent(jobs_unsent_without_a_worker):
    """Here, jobs are written but not sent unless the test starts a worker (``tests/conftest.py``):
    beat's ``release_idle_schedule`` queued ``studies.release_idle``, and the session's worker thread
    freed the idle place before the test's own ``release_idle`` could (``test_link_quotas``, seen
    once it kept its database connection between tasks and ran them sooner)."""


def stored_video(project, path: Path, *, seconds: float, name: str) -> Video:
    """A ready, real video of ``seconds`` (ffmpeg's counting test pattern, 160x120 at 10 fps),
    stored as its own rendition."""
    subprocess.run(
        [
            "ffmpeg",
            "-v",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            f"testsrc=size=160x120:rate=10:duration={seconds}",
            "-c:v",
            "libx264",
            "-pix_fmt",
            "yuv420p",
            "-g",
            "10",
            str(path),
        ],
        check=True,
    )
    data = path.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    with path.open("rb") as fh:
        rendition = default_storage.save(f"renditions/{sha[:16]}/{name}", fh)
    return Video.objects.create(
        project=project,
        sha256=sha,
        filename=name,
        status=Video.Status.READY,
        duration_s=seconds,
        fps=10.0,
        width=160,
        height=120,
        rendition=rendition,
    )


@pytest.fixture
def build(project, tmp_path):
    """Factory: an EGO-FLIGHT ordering study over one stored video of ``seconds``; returns it."""

    def make(seconds: float = 100.0, *, name: str = "pilot", frame_size: int = 32, **settings):
        video = stored_video(project, tmp_path / f"{name}.mp4", seconds=seconds, name=f"{name}-source.mp4")
        study, _ = create_study(
            project,
            name,
            "ordering",
            preset="ego-flight",
            seed=7,
            options={"frame_size": frame_size, "practice_items": 1},
        )
        for key, value in settings.items():
            setattr(study, key, value)
        study.save()
        study.video = video
        return study

    return make


def api_as(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token_for(user)}")
    return client


def people(project, n: int, role: str = "annotator", prefix: str = "p"):
    return [
        ensure_member(f"{prefix}{i}", role=role, project=project, password=f"pw-{prefix}{i}-123")[0] for i in range(n)
    ]


@pytest.fixture
def verified(project, make_unit, tmp_path):
    """Factory: ``n`` work units whose videos are real stored renditions (ffmpeg test pattern of
    ``seconds``), each with two open-ended drafts and one 4-way multiple-choice draft, verified in a
    real first pass (claim, then submit keeping every pair, but the first ``delete_open`` open-ended
    pairs of each unit, deleted as vague) by the annotator ``builder``, who is returned with the
    units."""
    from annotator.qa.queue import claim_next
    from annotator.qa.services import Decision, submit_unit

    def make(n: int = 2, *, seconds: float = 6.0, delete_open: int = 0):
        builder = ensure_member("builder", role="annotator", project=project, password="pw-builder-123")[0]
        units = []
        for i in range(n):
            unit = make_unit(2, duration_s=seconds)
            real = stored_video(project, tmp_path / f"u{i}.mp4", seconds=seconds, name=f"unit{i}.mp4")
            Video.objects.filter(pk=unit.video_id).update(rendition=real.rendition.name)
            real.delete()
            units.append(unit)
        while (item := claim_next(project, builder)) is not None:
            pairs = list(item.unit.qa_pairs.order_by("id"))
            gone = {p.pk for p in pairs if p.options is None}
            gone = set(sorted(gone)[:delete_open])
            submit_unit(
                item.unit_id,
                builder,
                idempotency_key=f"b{item.pk}",
                time_spent_ms=None,
                additions=[],
                decisions=[
                    Decision(p.pk, "delete", reason="vague", version=p.version)
                    if p.pk in gone
                    else Decision(p.pk, "keep", version=p.version)
                    for p in pairs
                ],
            )
        return builder, units

    return make
