"""The participant export for approving panel payments (issue 19): GET
/api/studies/{id}/participants/?format=csv|jsonl and ``study_participants NAME --csv``, with every
status (completed, excluded, returned, timed_out, in_progress), codes, times and guarded cells."""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import pytest
from django.core.management import call_command
from django.utils import timezone

from annotator.studies import links
from annotator.studies.models import Participant, Study
from tests.studies.conftest import api_as, people, verified  # noqa: F401 (a fixture)
from tests.studies.test_link_participants import answer_all, browser, enter, form, panel, through_screening  # noqa: F401

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def everyone(panel):
    """Five link participants, one per status, in this order of starting."""
    study, token = panel
    Study.objects.filter(pk=study.pk).update(raters_per_item=None)
    done = browser()
    enter(done, token, pid="done-person")
    through_screening(done, token)
    answer_all(done, study)
    Study.objects.filter(pk=study.pk).update(exclusion={"min_median_rt_s": 1.0})  # 5 ms answers are too fast
    fast = browser()
    enter(fast, token, pid="+cmd-calc")
    through_screening(fast, token)
    answer_all(fast, study)
    returned = browser()
    enter(returned, token, pid="returned-person")
    returned.get(f"/s/{token}/")
    form(returned, f"/s/{token}/consent/", {"decision": "decline"})
    enter(browser(), token, pid="idle-person")
    enter(browser(), token, pid="busy-person")
    Participant.objects.filter(pseudonym=links.pseudonym_of("idle-person")).update(
        last_active_at=timezone.now() - timedelta(minutes=90)
    )
    assert links.release_idle() == 1
    return study


def test_the_api_exports_each_participant_with_their_status_code_and_times(everyone, project):
    study = everyone
    (researcher,) = people(project, 1, role="researcher", prefix="r")
    res = api_as(researcher).get(f"/api/studies/{study.pk}/participants/?format=jsonl")
    assert res.status_code == 200 and res["Content-Type"].startswith("application/jsonl")
    rows = [json.loads(line) for line in b"".join(res.streaming_content).decode().splitlines()]
    assert [(r["external_id"], r["status"], r["answered"]) for r in rows] == [
        ("done-person", "completed", 2),
        ("+cmd-calc", "excluded", 2),
        ("returned-person", "returned", 0),
        ("idle-person", "timed_out", 0),
        ("busy-person", "in_progress", 0),
    ]
    by = {r["external_id"]: r for r in rows}
    stored = {p.external_id: p for p in Participant.objects.filter(study=study)}
    for ext, row in by.items():
        assert row["completion_code"] == stored[ext].completion_code
        assert row["participant"] == "anon-" + stored[ext].pseudonym[:12]
        assert (row["panel_study_id"], row["panel_session_id"]) == ("st-1", "se-1")
    assert by["done-person"]["finished"] is not None and by["busy-person"]["finished"] is None
    assert by["+cmd-calc"]["exclusion_reasons"] == ["median response time 0.01 s is under 1 s"]
    assert by["done-person"]["exclusion_reasons"] == [] and by["done-person"]["attention_failures"] == 0
    assert 0 <= by["done-person"]["active_time_s"] < 30
    assert by["returned-person"]["completion_code"].startswith("RET-")


def test_the_csv_guards_cells_and_the_command_writes_the_same(everyone, project):
    study = everyone
    (researcher,) = people(project, 1, role="researcher", prefix="r")
    res = api_as(researcher).get(f"/api/studies/{study.pk}/participants/?format=csv")
    text = b"".join(res.streaming_content).decode()
    table = list(csv.DictReader(io.StringIO(text)))
    assert [r["status"] for r in table] == ["completed", "excluded", "returned", "timed_out", "in_progress"]
    assert table[1]["external_id"] == "'+cmd-calc"  # not a formula in a spreadsheet
    out = io.StringIO()
    call_command("study_participants", study.name, "--csv", stdout=out)
    assert out.getvalue() == text


def test_only_admins_and_researchers_export_participants_and_a_bad_format_is_a_400(everyone, project, annotator):
    study = everyone
    (reviewer,) = people(project, 1, role="reviewer", prefix="v")
    for user in (annotator, reviewer):
        assert api_as(user).get(f"/api/studies/{study.pk}/participants/").status_code == 403
    (admin,) = people(project, 1, role="admin", prefix="a")
    res = api_as(admin).get(f"/api/studies/{study.pk}/participants/?format=xlsx")
    assert (res.status_code, res.json()["errors"]) == (400, {"format": "jsonl or csv"})
