"""The jobs outbox (``annotator.jobs``): rows before messages, delivery counting, the reconciler."""

import subprocess
from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone

from annotator import jobs
from annotator.adapters import ffmpeg
from annotator.core.models import Job
from annotator.media.models import Video
from annotator.media.tasks import transcode_video
from tests.workers.conftest import processes_matching


def _video(project, **fields):
    return Video.objects.create(project=project, sha256="a" * 64, filename="poison.mp4", status="processing", **fields)


def test_a_job_row_is_written_in_the_callers_transaction_and_dropped_with_it(project):
    with pytest.raises(RuntimeError):
        with transaction.atomic():
            jobs.enqueue("media.transcode", 1)
            assert Job.objects.filter(key="media.transcode:1").exists()
            raise RuntimeError("the service failed")
    assert not Job.objects.filter(key="media.transcode:1").exists()


def test_queueing_work_already_queued_adds_nothing_and_finished_work_is_queued_again(project):
    first = jobs.enqueue("studies.score", 7)
    assert jobs.enqueue("studies.score", 7) is None  # five answers while it waits: still one job
    Job.objects.filter(pk=first).update(status="done", deliveries=1)
    again = jobs.enqueue("studies.score", 7)
    job = Job.objects.get()
    assert (again, job.status, job.deliveries) == (first, "queued", 0)


def test_a_poison_input_that_killed_every_delivery_fails_alone_with_its_reason(project):
    video = _video(project)
    job_id = jobs.enqueue("media.transcode", video.pk)
    # Three deliveries each died inside the task (the row stayed running); the fourth gives up.
    Job.objects.filter(pk=job_id).update(status="running", deliveries=3)

    assert transcode_video(job_id) == "failed"

    job, video = Job.objects.get(pk=job_id), Video.objects.get(pk=video.pk)
    assert (job.status, job.deliveries) == ("failed", 4)
    assert job.error.startswith("gave up after 3 deliveries: a worker died or ran out of time on it each time")
    assert (video.status, video.error) == ("failed", job.error)


def test_a_redelivered_message_of_a_finished_job_does_nothing(project):
    job_id = jobs.enqueue("media.transcode", 12345)
    Job.objects.filter(pk=job_id).update(status="done", deliveries=1, result="ready")
    assert transcode_video(job_id) == "skipped: done, failed or gone"
    assert Job.objects.get(pk=job_id).deliveries == 1


def test_the_reconciler_sends_rows_never_sent_and_leaves_fresh_ones(project, settings):
    settings.JOBS_RESEND_AFTER_S = 60
    never = jobs.enqueue("studies.score", 1)
    fresh = jobs.enqueue("studies.score", 2)
    Job.objects.filter(pk=never).update(sent_at=None, sends=0)
    Job.objects.filter(pk=fresh).update(sent_at=timezone.now(), sends=1)

    report = jobs.reconcile()

    assert (report.resent, report.unsent) == (1, 0)
    assert Job.objects.get(pk=never).sends == 1 and Job.objects.get(pk=fresh).sends == 1


def test_the_reconciler_backs_off_between_sends(project, settings):
    settings.JOBS_RESEND_AFTER_S = 60
    job_id = jobs.enqueue("studies.score", 1)
    # Sent 3 times already, last 3 minutes ago: the next send waits 60 x 2^2 = 240 s.
    Job.objects.filter(pk=job_id).update(
        sends=3, sent_at=timezone.now() - timedelta(seconds=180), due_at=timezone.now() - timedelta(hours=1)
    )
    assert jobs.reconcile().resent == 0
    Job.objects.filter(pk=job_id).update(sent_at=timezone.now() - timedelta(seconds=250))
    assert jobs.reconcile().resent == 1


def test_a_running_job_past_its_time_limit_is_sent_again_then_failed_on_its_last_delivery(project, settings):
    settings.JOBS_STALE_SLACK_S = 0
    video = _video(project)
    job_id = jobs.enqueue("media.transcode", video.pk)
    limit = jobs.REGISTRY["media.transcode"].time_limit_s
    long_ago = timezone.now() - timedelta(seconds=limit + 5)
    Job.objects.filter(pk=job_id).update(status="running", deliveries=1, started_at=long_ago)

    report = jobs.reconcile()
    assert (report.stale_running, report.resent, report.failed) == (1, 1, 0)
    assert Job.objects.get(pk=job_id).status == "queued"

    Job.objects.filter(pk=job_id).update(status="running", deliveries=3, started_at=long_ago)
    with django_capture_on_commit():
        report = jobs.reconcile()
    assert report.failed == 1
    job, video = Job.objects.get(pk=job_id), Video.objects.get(pk=video.pk)
    assert job.status == "failed" and job.error.startswith("gave up after 3 deliveries: the worker never finished it")
    assert video.status == "failed"


def django_capture_on_commit():
    """Run on_commit callbacks of the block at its end (the test's transaction never commits)."""
    from django.test import TestCase

    return TestCase.captureOnCommitCallbacks(execute=True)


def test_every_task_has_its_own_time_limit_and_there_is_no_global_one():
    from workers.celery import app

    jobs._load_tasks()
    assert app.conf.task_time_limit is None
    limits = {name: (app.tasks[name].time_limit, app.tasks[name].soft_time_limit) for name in jobs.REGISTRY}
    assert set(limits) == {
        "media.transcode",
        "media.derive_night",
        "drafts.run",
        "studies.score",
        "studies.build",
        "studies.release_idle",
        "agreement.compute",
        "agreement.overlap_consensus",
        "evaluation.run",
        "evaluation.judge_study",
        "qa.export",
        "review.settle_gold",
    }
    assert all(hard and soft and soft < hard for hard, soft in limits.values())
    assert app.tasks["core.reconcile_jobs"].time_limit == 300
    assert app.tasks["agreement.schedule"].time_limit == 300


def test_ffmpeg_over_its_timeout_is_killed_with_its_process_group(tmp_path):
    out = tmp_path / "endless.mp4"
    args = [
        "ffmpeg",
        "-v",
        "error",
        "-nostdin",
        "-y",
        "-re",
        "-f",
        "lavfi",
        "-i",
        "testsrc=size=64x64:rate=5",
        "-t",
        "600",
        str(out),
    ]
    with pytest.raises(ffmpeg.MediaError, match="ffmpeg took longer than 1 s"):
        ffmpeg.run(args, timeout_s=1, what="endless")
    assert processes_matching(str(out)) == []


def test_ffmpeg_timeouts_follow_the_duration_within_the_cap(settings):
    settings.FFMPEG_TIMEOUT_FACTOR, settings.FFMPEG_TIMEOUT_MAX_S = 6.0, 900
    assert [ffmpeg.timeout_for(d) for d in (None, 5, 100, 10_000)] == [60.0, 60.0, 600.0, 900.0]


def test_setpriv_guards_every_ffmpeg_run():
    assert subprocess.run(["setpriv", "--help"], capture_output=True).returncode == 0
    assert ffmpeg._guarded(["ffmpeg", "-version"])[:4] == [ffmpeg._SETPRIV, "--pdeathsig", "KILL", "--"]


def test_work_queued_before_job_rows_existed_is_adopted_and_then_sent_by_the_reconciler(project):
    import importlib

    from django.apps import apps

    adopt = importlib.import_module("annotator.core.migrations.0002_adopt_stranded_work").adopt
    stranded = _video(project)
    Video.objects.create(project=project, sha256="b" * 64, filename="fine.mp4", status="ready")

    adopt(apps, None)

    job = Job.objects.get()
    assert (job.key, job.args, job.status, job.sent_at) == (
        f"media.transcode:{stranded.pk}",
        [stranded.pk],
        "queued",
        None,
    )
    assert jobs.reconcile().resent == 1


def test_a_nudge_in_a_request_waits_for_the_response_and_outside_one_goes_at_commit(
    real_nudges, monkeypatch, django_capture_on_commit_callbacks, db
):
    from workers.celery import app

    sent = []
    monkeypatch.setattr(app, "send_task", lambda task, args, **options: sent.append((task, args)))
    jobs.request_started()
    try:
        with django_capture_on_commit_callbacks(execute=True):
            jobs.nudge("gold.premake_for", 1, 2)
        assert sent == []  # committed, but the response is not out yet
    finally:
        jobs.request_finished()
    assert sent == [("gold.premake_for", [1, 2])]

    with django_capture_on_commit_callbacks(execute=True):
        jobs.nudge("gold.premake_for", 3, 4)
        assert sent == [("gold.premake_for", [1, 2])]  # not before the commit
    assert sent[-1] == ("gold.premake_for", [3, 4])  # no request: at the commit
