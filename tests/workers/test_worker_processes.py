"""Jobs survive what kills workers and brokers: real Celery workers in subprocesses, a real Redis
that is stopped and started, real ffmpeg on a real video."""

import os
import signal
from pathlib import Path

import pytest
from django.conf import settings

from annotator.core.models import Job
from annotator.media.models import Video
from tests.conftest import make_video, wait_for
from tests.workers.conftest import processes_matching, run_manage, worker_process


def _work_dirs(video_id: int) -> list[Path]:
    return list(Path(settings.MEDIA_WORK_DIR).glob(f"transcode-{video_id}-*"))


def _transcoding(video_id: int) -> str:
    """What the command line of the video's ffmpeg holds: its work folder, under this test's
    MEDIA_WORK_DIR (another test run's video may have the same id)."""
    return str(Path(settings.MEDIA_WORK_DIR) / f"transcode-{video_id}-")


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_transcode_leaves_no_ffmpeg_and_the_redelivery_makes_the_video_ready(own_redis, tmp_path):
    long_video = make_video(tmp_path / "long.mp4", seconds=40, size="1280x720")
    with worker_process(own_redis.url, tmp_path / "worker.log"):
        done = run_manage(own_redis.url, "ingest", str(long_video), "--project", "killed")
        assert done.returncode == 0, done.stdout + done.stderr
        video = Video.objects.get(project__slug="killed")

        # ffmpeg writes the rendition in the video's work folder; its parent is the pool process.
        running = wait_for(lambda: processes_matching(_transcoding(video.pk)), timeout=60, what="ffmpeg starting")
        ffmpeg_pid, pool_pid, _ = running[0]
        assert _work_dirs(video.pk)
        os.kill(pool_pid, signal.SIGKILL)

        wait_for(
            lambda: not any(pid == ffmpeg_pid for pid, _, _ in processes_matching(_transcoding(video.pk))),
            timeout=10,
            what="the orphaned ffmpeg dying",
        )
        wait_for(
            lambda: Video.objects.get(pk=video.pk).status == Video.Status.READY,
            timeout=180,
            what="the redelivered transcode",
        )
        # The row is marked done just after the service's own update.
        wait_for(
            lambda: Job.objects.get(key=f"media.transcode:{video.pk}").status == Job.Status.DONE,
            timeout=30,
            what="the job finishing",
        )

    job = Job.objects.get(key=f"media.transcode:{video.pk}")
    assert (job.status, job.deliveries) == ("done", 2)
    assert processes_matching(_transcoding(video.pk)) == []
    assert _work_dirs(video.pk) == []  # the killed run's folder was removed by the redelivery


@pytest.mark.django_db(transaction=True)
def test_a_video_ingested_while_the_broker_is_down_is_made_ready_by_the_reconciler(own_redis, tmp_path, short_video):
    fast = {"JOBS_RECONCILE_EVERY_S": "1", "JOBS_RESEND_AFTER_S": "1"}
    with worker_process(own_redis.url, tmp_path / "worker.log", beat=True, **fast):
        own_redis.stop()
        done = run_manage(own_redis.url, "ingest", str(short_video), "--project", "brokerless")
        assert done.returncode == 0, done.stdout + done.stderr
        video = Video.objects.get(project__slug="brokerless")
        job = Job.objects.get(key=f"media.transcode:{video.pk}")
        # The row exists though no message could be sent.
        assert (video.status, job.status, job.sent_at, job.sends) == ("processing", "queued", None, 0)

        own_redis.start()
        wait_for(
            lambda: Video.objects.get(pk=video.pk).status == Video.Status.READY,
            timeout=120,
            what="the reconciler's resend",
        )
        wait_for(lambda: Job.objects.get(pk=job.pk).status == Job.Status.DONE, timeout=30, what="the job finishing")

    job.refresh_from_db()
    assert (job.status, job.deliveries) == ("done", 1)
    assert job.sends >= 1


@pytest.mark.django_db(transaction=True)
def test_a_long_transcode_on_the_media_queue_does_not_delay_a_score(own_redis, tmp_path, two_hour_video, make_unit):
    """Split queues (issue 22): one worker on ``media`` busy with a 2-hour transcode, one on
    ``scores``; a scoring job queued once the transcode runs is done while it still runs. With one
    queue for all, it would wait behind the transcode (or, here, never be taken)."""
    unit = make_unit()
    # One subprocess (on the workers' broker) ingests, waits for the transcode to run, then queues
    # the scoring job: a manage.py start is slow on a busy machine.
    script = (
        f"import time; from annotator import jobs; from annotator.core.models import Job; "
        f"from django.core.management import call_command; "
        f"call_command('ingest', {str(two_hour_video)!r}, '--project', 'queues'); "
        f"deadline = time.monotonic() + 120\n"
        f"while not Job.objects.filter(key__startswith='media.transcode:', status='running').exists() "
        f"and time.monotonic() < deadline: time.sleep(0.1)\n"
        f"jobs.enqueue('agreement.overlap_consensus', {unit.pk})"
    )
    with (
        worker_process(own_redis.url, tmp_path / "media.log", queues="media"),
        worker_process(own_redis.url, tmp_path / "scores.log", queues="scores"),
    ):
        done = run_manage(own_redis.url, "shell", "-c", script, timeout=300)
        assert done.returncode == 0, done.stdout + done.stderr
        video = Video.objects.get(project__slug="queues")
        assert Job.objects.get(key=f"media.transcode:{video.pk}").status == Job.Status.RUNNING
        wait_for(
            lambda: Job.objects.filter(key=f"agreement.overlap_consensus:{unit.pk}", status=Job.Status.DONE).exists(),
            timeout=90,
            what="the scoring job, done while the transcode runs",
        )
        assert Video.objects.get(pk=video.pk).status == Video.Status.PROCESSING
        assert Job.objects.get(key=f"media.transcode:{video.pk}").status == Job.Status.RUNNING
