"""Fixtures of the pipeline tests: a real clip ingested by the real worker, with its night pair,
and helpers to run the ``draft`` command and answer each stage on the loopback server."""

import json
import re
from io import StringIO

import pytest
from django.core.management import call_command

from annotator.media.models import Video
from tests.fake_model_server import user_text


@pytest.fixture
def day_night_pair(worker, real_video, tmp_path):
    """bikes.mp4 (10 s of real footage) ingested as a day video of project ``pipe``, and its
    synthetic night version (``derive_night --levels easy``), paired. Returns (day, night)."""
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(
        json.dumps(
            {
                "file": "bikes.mp4",
                "illumination": "day",
                "domain": "street",
                "annotations": {
                    "objects": ["bicycle", "person"],
                    "description": "People ride bicycles past a building.",
                },
            }
        )
        + "\n"
    )
    call_command(
        "ingest", str(real_video), "--project", "pipe", "--manifest", str(manifest), "--wait", stdout=StringIO()
    )
    call_command("derive_night", "--project", "pipe", "--levels", "easy", stdout=StringIO(), stderr=StringIO())
    return Video.objects.get(filename="bikes.mp4"), Video.objects.get(filename="bikes-night-easy.mp4")


def run_draft(*args) -> tuple[int, str, str]:
    """Run ``manage.py draft`` with ``args``; returns (exit code, stdout, stderr)."""
    out, err = StringIO(), StringIO()
    try:
        call_command("draft", *args, stdout=out, stderr=err)
        code = 0
    except SystemExit as exc:
        code = exc.code
    return code, out.getvalue(), err.getvalue()


def numbered(body: dict) -> list[str]:
    """The numbered lines ("1. ...") of a request's text: the questions or items it lists."""
    return re.findall(r"^\d+\. (.*)$", user_text(body), flags=re.MULTILINE)
