"""No shared disk (issue 22, section 1): two Celery workers in subprocesses (one on
``media``, one on the other queues) and the web process (this test's, through Django's client), each
with a media root and a scratch folder of its own, against moto's S3 server. A video ingested by a
third process is transcoded, gets HLS and thumbnails, and plays through the web, and a fourth
process's ``export_qa --with-media`` cuts a verified pair's clip from the bucket, with every file in
the bucket and nothing left on any process's disk.

The same set-up then drafts with frames (the llm pipeline's job on a worker, against a model server
on loopback) and builds, in a fifth process, an ordering study's frames and a multiple-choice
study's clips, and an ordering study made through the API, which the media worker builds once a
sixth process (the reconciler, as beat runs it) sends its job: every frame and clip is in the bucket,
and no process's disk keeps anything."""

import base64
import json
import os
import time
from pathlib import Path

import pytest
import requests
from django.utils import timezone

from annotator.drafts.models import Draft
from annotator.inference.models import ModelServer
from annotator.media.models import Video
from annotator.qa.models import QAPair, QAType, Revision, WorkUnit
from annotator.studies.kinds._qa import clip_names
from annotator.studies.models import Element, Item, Study
from tests.conftest import make_video, wait_for
from tests.s3_server import KEYS
from tests.workers.conftest import run_manage, worker_process


def _files(folder: str) -> list[Path]:
    """The files under ``folder`` as a subprocess sees it (tests/settings.py adds ``-gwN`` under xdist)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    root = Path(f"{folder}-{worker}" if worker else folder)
    return [path for path in root.rglob("*") if path.is_file()] if root.exists() else []


_GOOD = json.dumps(
    {"qa_pairs": [{"question": "How many cards?", "answer": "two"}, {"question": "Day?", "answer": "day"}]}
)


def _manage(broker_url: str, env: dict, *args: str) -> str:
    """``manage.py ARGS`` in a process of its own (``env``: its storage and folders); its output,
    the test failing with it when the command fails."""
    done = run_manage(broker_url, *args, timeout=300, **env)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout + done.stderr


def _keys(s3_client, bucket: str) -> set[str]:
    """Every key in the bucket."""
    return {
        item["Key"]
        for page in s3_client.get_paginator("list_objects_v2").paginate(Bucket=bucket)
        for item in page.get("Contents", [])
    }


def _verified_pair(unit: WorkUnit, qa_type: QAType, **fields) -> QAPair:
    """A QA pair of ``unit``, added by a person and verified."""
    return QAPair.objects.create(
        project=unit.project,
        unit=unit,
        video=unit.video,
        qa_type=qa_type,
        origin="human",
        status="verified",
        provenance="human_added",
        verified_at=timezone.now(),
        **fields,
    )


def _frame_names(item: Item) -> list[str]:
    """The storage names of an ordering item's frame images."""
    return list(Element.objects.filter(pk__in=item.truth).values_list("image", flat=True))


@pytest.mark.django_db(transaction=True)
def test_a_video_ingested_transcoded_and_played_across_processes_touches_no_shared_disk(
    own_redis, s3, s3_endpoint, project, admin_user, client, model_server, tmp_path, jobs_unsent_without_a_worker
):
    s3_client, bucket = s3
    own = {
        name: {"MEDIA_ROOT": str(tmp_path / name / "media"), "MEDIA_WORK_DIR": str(tmp_path / name / "work")}
        for name in ("media-worker", "other-worker", "ingest", "export", "draft", "study", "reconciler")
    }
    common = {
        **KEYS,
        "STORAGE_BACKEND": "s3",
        "AWS_STORAGE_BUCKET_NAME": bucket,
        "AWS_S3_ENDPOINT_URL": s3_endpoint,
        "MEDIA_HLS_MIN_DURATION_S": "1",
    }  # a 12 s video stands in for a long one: HLS too
    (tmp_path / "source").mkdir()
    source = make_video(tmp_path / "source" / "clip.mp4", seconds=12.0)

    with (
        worker_process(own_redis.url, tmp_path / "media.log", queues="media", **common, **own["media-worker"]),
        worker_process(
            own_redis.url, tmp_path / "other.log", queues="models,scores,default", **common, **own["other-worker"]
        ),
    ):
        _manage(own_redis.url, {**common, **own["ingest"]}, "ingest", str(source), "--project", project.slug)
        video = Video.objects.get(project=project)
        wait_for(
            lambda: Video.objects.get(pk=video.pk).status != Video.Status.PROCESSING,
            timeout=240,
            what="the transcode on the media worker",
        )

        video.refresh_from_db()
        assert video.status == Video.Status.READY, video.error
        names = {
            video.original.name,
            video.rendition.name,
            video.poster.name,
            video.hls.name,
            video.thumbnails_vtt.name,
        }
        assert "" not in names
        stored = _keys(s3_client, bucket)
        assert names <= stored
        hls_folder = video.hls.name.rsplit("/", 1)[0] + "/"
        assert any(key.startswith(hls_folder) and key.endswith(".m4s") for key in stored)
        assert any(
            key.endswith(".jpg") and key.startswith(video.thumbnails_vtt.name.rsplit("/", 1)[0]) for key in stored
        )

        # Playback through the web: the MP4 and a segment by presigned redirect, the playlist served here.
        client.force_login(admin_user)
        mp4 = client.get(f"/files/{video.rendition.name}")
        assert mp4.status_code == 302 and mp4["Location"].startswith(f"{s3_endpoint}/{bucket}/")
        fetched = requests.get(mp4["Location"], timeout=30)
        assert fetched.status_code == 200
        assert fetched.content == s3_client.get_object(Bucket=bucket, Key=video.rendition.name)["Body"].read()
        master = client.get(f"/files/{video.hls.name}")
        assert master.status_code == 200 and master.content.startswith(b"#EXTM3U")
        segment = sorted(key for key in stored if key.startswith(hls_folder) and key.endswith(".m4s"))[0]
        redirected = client.get(f"/files/{segment}")
        assert redirected.status_code == 302
        assert requests.get(redirected["Location"], timeout=30).status_code == 200

        # An export with media, by another process: the verified pair's clip cut from the bucket's file.
        qa_type = QAType.objects.create(project=project, slug="scene_description", name="Scene description")
        unit = WorkUnit.objects.create(project=project, video=video, start_s=0.0, end_s=12.0)
        pair = _verified_pair(
            unit, qa_type, question="What happens?", answer="A test card.", clip_start_s=1.0, clip_end_s=3.0
        )
        Revision.objects.create(qa_pair=pair, actor_user=admin_user, action="add", after=pair.snapshot())
        out = tmp_path / "exported" / "qa.jsonl"
        _manage(
            own_redis.url,
            {**common, **own["export"]},
            "export_qa",
            "--project",
            project.slug,
            "--out",
            str(out),
            "--with-media",
            str(out.parent / "clips"),
        )
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert [row["media_path"] for row in rows] == [f"clips/{video.sha256[:16]}_1000-3000.mp4"]
        assert (out.parent / rows[0]["media_path"]).stat().st_size > 0
        assert sorted(path.name for path in (out.parent / "clips").iterdir()) == [f"{video.sha256[:16]}_1000-3000.mp4"]

        # Drafting with frames: the llm pipeline's job, on the other worker, samples frames from the
        # bucket's rendition in its own scratch folder and sends them to the model server.
        ModelServer.objects.create(project=project, name="fake", base_url=model_server.base_url, model="fake-vlm")
        model_server.replies = [_GOOD]
        drafted = _manage(
            own_redis.url,
            {**common, **own["draft"]},
            "draft",
            "--project",
            project.slug,
            "--pipeline",
            "llm",
            "--qa-type",
            "counting",
            "--server",
            "fake",
        )
        assert "1/1 videos done (0 failed), 2 drafts" in drafted, drafted
        (request,) = model_server.requests
        images = [p for p in request["messages"][1]["content"] if p["type"] == "image_url"]
        assert images and all(
            base64.b64decode(i["image_url"]["url"].split(",", 1)[1])[:3] == b"\xff\xd8\xff" for i in images
        )
        assert sorted(Draft.objects.values_list("answer", flat=True)) == ["day", "two"]

        # Study builds by another process: an ordering study's frames and a multiple-choice study's
        # clips, cut from the bucket's rendition and stored in the bucket.
        ordering = _manage(
            own_redis.url,
            {**common, **own["study"]},
            "study_create",
            "--project",
            project.slug,
            "--kind",
            "ordering",
            "--name",
            "frames-from-s3",
            "--frame-size",
            "32",
            "--practice-items",
            "0",
        )
        frames = {n for i in Item.objects.filter(condition__study__name="frames-from-s3") for n in _frame_names(i)}
        assert frames, ordering
        _verified_pair(
            unit,
            qa_type,
            question="What is shown?",
            answer="A test card.",
            options=["A test card.", "A street.", "A kitchen.", "A forest."],
            answer_index=0,
            clip_start_s=2.0,
            clip_end_s=5.0,
        )
        mcq = _manage(
            own_redis.url,
            {**common, **own["study"]},
            "study_create",
            "--project",
            project.slug,
            "--kind",
            "mcq",
            "--name",
            "clips-from-s3",
            "--practice-items",
            "0",
            "--attention-items",
            "0",
        )
        clips = {n for i in Item.objects.filter(condition__study__name="clips-from-s3") for n in clip_names(i.payload)}
        assert clips, mcq
        stored = _keys(s3_client, bucket)
        assert frames <= stored and clips <= stored

        # A study made through the API, as the studies page makes it: the web (this process) answers 202
        # and writes the job without sending it (jobs_unsent_without_a_worker: this process's broker is
        # not the workers'); the reconciler sends it, and the media worker builds the frames from the
        # bucket's rendition into the bucket.
        made = client.post(
            f"/api/projects/{project.slug}/studies/",
            {"name": "api-frames", "kind": "ordering", "practice_items": 0},
            content_type="application/json",
        )
        assert made.status_code == 202, made.content
        time.sleep(0.6)  # older than the reconciler's JOBS_RESEND_AFTER_S below
        _manage(own_redis.url, {**common, **own["reconciler"], "JOBS_RESEND_AFTER_S": "0.5"}, "jobs", "--reconcile")
        built = wait_for(
            lambda: Study.objects.filter(name="api-frames").exclude(status="building").first(),
            timeout=180,
            what="the media worker's build of the API's study",
        )
        assert built.status == "ready", built.build_error
        api_frames = {n for i in Item.objects.filter(condition__study=built) for n in _frame_names(i)}
        assert api_frames and api_frames <= _keys(s3_client, bucket)

    # Nothing on any process's own disk: no media root written, every scratch folder emptied.
    for name, folders in own.items():
        assert _files(folders["MEDIA_ROOT"]) == [], name
        assert _files(folders["MEDIA_WORK_DIR"]) == [], name
