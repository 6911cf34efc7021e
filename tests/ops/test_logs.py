"""Structured logs: every line of a web request is JSON carrying the request's id, which the response
returns; a Celery worker's lines are JSON carrying the task's id and the request id that queued it."""

import io
import json
import logging
import logging.config
import re
import subprocess

import pytest
from django.core.exceptions import ImproperlyConfigured

from annotator.logging import logging_config
from tests.conftest import REPO, make_video, wait_for
from tests.workers.conftest import own_redis, run_manage, worker_process  # noqa: F401 (fixture)

RID = "6f1c2b9e4d7a4c0e9b3a5d8f1e2c3b4a"
HEX32 = re.compile(r"^[0-9a-f]{32}$")


@pytest.fixture
def log_lines(settings):
    """Apply ``logging_config("INFO", fmt)`` (what settings.py does with LOG_LEVEL and LOG_FORMAT) with the
    console handler writing into a buffer; returns a function giving the lines written so far. The
    test settings' own logging comes back afterwards."""
    buffers = []

    def configure(fmt: str):
        logging.config.dictConfig(logging_config("INFO", fmt))
        buffer = io.StringIO()
        (handler,) = logging.getLogger().handlers
        handler.setStream(buffer)
        buffers.append(buffer)
        return lambda: buffer.getvalue().splitlines()

    yield configure
    logging.config.dictConfig(settings.LOGGING)


@pytest.mark.django_db
def test_a_request_s_log_lines_are_json_with_the_id_it_sent_and_the_response_returns_it(client, log_lines):
    lines = log_lines("json")

    response = client.get("/no-such-page/", HTTP_X_REQUEST_ID=RID)

    assert (response.status_code, response["X-Request-ID"]) == (404, RID)
    records = [json.loads(line) for line in lines()]
    assert [(r["level"], r["logger"], r["message"], r["request_id"], r["task_id"]) for r in records] == [
        ("WARNING", "django.request", "Not Found: /no-such-page/", RID, None)
    ]
    assert re.match(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+\+00:00$", records[0]["time"])


@pytest.mark.django_db
@pytest.mark.parametrize("sent", [None, "", "abc", "x" * 300, RID + "\nINFO forged line", "<script>alert(1)</script>"])
def test_a_request_without_a_sane_id_gets_a_new_one_on_its_response_and_its_lines(client, log_lines, sent):
    lines = log_lines("json")
    headers = {} if sent is None else {"HTTP_X_REQUEST_ID": sent}

    response = client.get("/no-such-page/", **headers)

    new_id = response["X-Request-ID"]
    assert HEX32.match(new_id) and new_id != sent
    assert [json.loads(line)["request_id"] for line in lines()] == [new_id]


@pytest.mark.django_db
def test_two_requests_get_two_ids(client, log_lines):
    lines = log_lines("json")

    first, second = client.get("/no-such-page/"), client.get("/no-such-page/")

    assert first["X-Request-ID"] != second["X-Request-ID"]
    assert [json.loads(line)["request_id"] for line in lines()] == [first["X-Request-ID"], second["X-Request-ID"]]


@pytest.mark.django_db
def test_text_lines_carry_the_request_id_too(client, log_lines):
    lines = log_lines("text")

    client.get("/no-such-page/", HTTP_X_REQUEST_ID=RID)

    (line,) = lines()
    assert line.split(" ", 2)[2] == f"WARNING django.request [request={RID}] Not Found: /no-such-page/"


def test_an_unknown_log_format_or_level_stops_the_process_at_start():
    with pytest.raises(ImproperlyConfigured, match="LOG_FORMAT must be 'json' or 'text', got 'xml'"):
        logging_config("INFO", "xml")
    with pytest.raises(ImproperlyConfigured, match="LOG_LEVEL must be one of"):
        logging_config("LOUD", "json")
    started = subprocess.run(
        [str(REPO / ".venv/bin/python"), "manage.py", "check"],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "LOG_FORMAT": "xml"},
    )
    assert started.returncode == 1
    assert "LOG_FORMAT must be 'json' or 'text', got 'xml'" in started.stderr


@pytest.mark.django_db(transaction=True)
def test_a_worker_logs_json_lines_with_the_task_id_and_the_request_id_that_queued_the_task(own_redis, tmp_path):  # noqa: F811
    video = make_video(tmp_path / "logged.mp4", seconds=1.0)
    log = tmp_path / "worker.log"
    # What the request-id middleware does for a web request, then a service queueing a job in it.
    queue_in_a_request = (
        "from pathlib import Path; from django_guid import set_guid; "
        "from annotator.projects.services import ensure_project; from annotator.media.services import ingest_file; "
        f"set_guid({RID!r}); print(ingest_file(ensure_project('logs'), Path({str(video)!r}), None).video_id)"
    )
    with worker_process(own_redis.url, log, LOG_FORMAT="json", LOG_LEVEL="INFO"):
        queued = run_manage(own_redis.url, "shell", "-c", queue_in_a_request)
        assert queued.returncode == 0, queued.stderr
        video_id = int(queued.stdout.split()[-1])
        wait_for(lambda: f"video {video_id} ready" in log.read_text(), timeout=60, what="the transcode's log line")

    records = [json.loads(line) for line in log.read_text().splitlines() if line.startswith("{")]
    # Every line the worker wrote through logging is JSON (the banner is printed, not logged).
    assert records and all(
        {"time", "level", "logger", "message", "request_id", "task_id", "task_name"} <= r.keys() for r in records
    )
    (received,) = [
        r for r in records if r["message"].startswith("Task media.transcode[") and r["message"].endswith("received")
    ]
    task_id = received["message"].split("[", 1)[1].split("]", 1)[0]
    (ready,) = [r for r in records if r["message"] == f"video {video_id} ready"]
    assert (ready["logger"], ready["request_id"], ready["task_id"], ready["task_name"]) == (
        "annotator.media.services",
        RID,
        task_id,
        "media.transcode",
    )
