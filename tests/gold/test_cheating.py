"""An annotator who tries to tell gold units from real ones (issue 20, section 2: "ids from the same
sequence, same payload shape, no flag in the page"). Gold copies are made when they are served, so
their row ids are the project's newest; the annotator must never see a row id. The annotator here
works through a queue with gold mixed in, keeps every byte the API and their pages send them, and
tries what a curious person would: read the ids, probe the API with row ids, read the video list,
provoke error messages that might name a row."""

import json
import re

import pytest
from django.db import connection
from django.test import Client
from rest_framework.test import APIClient

from annotator.core import handles
from annotator.gold import services
from annotator.gold.models import Copy, Source
from annotator.qa.models import QAPair, QueueItem, WorkUnit
from tests.conftest import row_id, uh
from tests.gold.conftest import seed_for

HANDLE = re.compile(handles.PATTERN)
ID_KEYS = {"id", "item_id", "unit_id", "qa_id", "video_id", "rework_item_id"}


def _ids(value, found: list) -> list:
    """Every value under an id-like key, anywhere in a JSON document."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k in ID_KEYS and not isinstance(v, (dict, list)):
                found.append(v)
            _ids(v, found)
    elif isinstance(value, list):
        for v in value:
            _ids(v, found)
    return found


@pytest.fixture
def distinct_ids():
    """Row ids from 1,937,000,001 on for units, queue items, QA pairs and videos, so that any of them
    in what the annotator received is found (small ids are also counts, versions and dates). The
    sequences are set back afterwards (the rows themselves are rolled back)."""
    tables = ["qa_workunit", "qa_queueitem", "qa_qapair", "media_video"]
    before = {}
    with connection.cursor() as cursor:
        for n, table in enumerate(tables):
            cursor.execute("SELECT pg_get_serial_sequence(%s, 'id')", [table])
            seq = cursor.fetchone()[0]
            cursor.execute(f"SELECT last_value, is_called FROM {seq}")
            before[seq] = cursor.fetchone()
            cursor.execute("SELECT setval(%s, %s, false)", [seq, 1_937_000_001 + n * 10_000])
    yield
    with connection.cursor() as cursor:
        for seq, (last, called) in before.items():
            cursor.execute("SELECT setval(%s, %s, %s)", [seq, last, called])


def test_an_annotator_who_keeps_everything_cannot_tell_gold_by_ids(
    project, distinct_ids, make_verified, make_unit, annotator
):
    make_verified(3)
    assert len(services.make_sources(project, Source.Role.GOLD, 3)) == 3
    pattern = [False, True, False, True, False]
    # and the sixth draw real: the fifth claim's premake_for makes no copy
    services.set_policy(project, gold_rate=0.5, seed=seed_for(project, annotator, [*pattern, False]))
    for _ in range(4):
        make_unit()
    api = APIClient()
    api.force_authenticate(annotator)
    received: list[bytes] = []
    served = []
    for n in range(len(pattern)):
        res = api.post(f"/api/projects/{project.slug}/queue/next/")
        assert res.status_code == 200, res.content
        received.append(res.content)
        payload = res.json()
        item = QueueItem.objects.get(leased_by=annotator, status="open")
        served.append((payload, item))
        # Probing by row id: the held unit by its row id is no unit at all (no heartbeat, no review state).
        assert api.post(f"/api/units/{item.unit_id}/heartbeat/").status_code == 404
        # A submit that names a QA pair twice gets an error naming it by handle, never by row id.
        first = payload["qa_pairs"][0]
        twice = api.post(
            f"/api/units/{payload['id']}/submit/",
            {
                "idempotency_key": f"bad-{n}",
                "decisions": [{"qa_id": first["id"], "action": "keep"}, {"qa_id": first["id"], "action": "keep"}],
            },
            format="json",
        )
        assert twice.status_code == 400
        received.append(twice.content)
        res = api.post(
            f"/api/units/{payload['id']}/submit/",
            {
                "idempotency_key": f"ok-{n}",
                "time_spent_ms": 900,
                "decisions": [
                    {"qa_id": q["id"], "action": "keep", "version": q["version"]} for q in payload["qa_pairs"]
                ],
            },
            format="json",
        )
        assert res.status_code == 200, res.content
        received.append(res.content)
        assert api.get(f"/api/units/{item.unit_id}/review/").status_code == 404
        review = api.get(f"/api/units/{payload['id']}/review/")
        assert review.status_code == 200
        received.append(review.content)
    gold = [WorkUnit.objects.get(pk=item.unit_id).purpose == "gold" for _, item in served]
    assert gold == pattern and Copy.objects.filter(user=annotator).count() == 2

    page = Client()
    page.force_login(annotator)
    my_work = page.get(f"/projects/{project.slug}/my-work/")
    assert my_work.status_code == 200
    # The lists that name every video by row id, file name and duration are not theirs to read.
    assert page.get(f"/projects/{project.slug}/videos/").status_code == 403
    assert api.get(f"/api/projects/{project.slug}/videos/").status_code == 403
    assert api.get(f"/api/projects/{project.slug}/groups/").status_code == 403

    # Every id they were sent is a handle: a string of 13 letters, whatever the unit's purpose.
    for body in received:
        for value in _ids(json.loads(body), []):
            assert isinstance(value, str) and HANDLE.fullmatch(value), (value, body[:300])
    # No row id of what they worked on, nor a file name, appears in anything they received.
    text = b"\n".join(received).decode() + my_work.content.decode()
    rows = {str(item.unit_id) for _, item in served} | {str(item.pk) for _, item in served}
    rows |= {
        str(p) for _, item in served for p in QAPair.objects.filter(unit_id=item.unit_id).values_list("pk", flat=True)
    }
    rows |= {str(item.unit.video_id) for _, item in served}
    assert all(int(r) > 1_937_000_000 for r in rows)
    assert not {r for r in rows if r in text}
    assert not any(f"clip{i}.mp4" in text for i in range(1, 20))
    # The payloads of gold and real units have the same shape, key by key.
    shapes = {json.dumps(_shape(p), sort_keys=True) for p, _ in served}
    assert len(shapes) == 1


def _shape(value):
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in value.items() if k not in ("autosave", "carried")}
    if isinstance(value, list):
        return [_shape(v) for v in value[:1]]
    return type(value).__name__


def test_a_handle_of_someone_elses_unit_is_refused_as_a_row_id_is(project, make_unit, annotator, annotator2):
    """Handles are not secrets that grant anything: the same access rules apply to them."""
    unit = make_unit()
    mine, theirs = APIClient(), APIClient()
    mine.force_authenticate(annotator)
    theirs.force_authenticate(annotator2)
    payload = mine.post(f"/api/projects/{project.slug}/queue/next/").json()
    assert payload["id"] == uh(unit)
    assert theirs.post(f"/api/units/{payload['id']}/heartbeat/").status_code == 409
    assert mine.post(f"/api/units/{payload['id']}/heartbeat/").status_code == 200


def test_row_ids_cannot_be_probed_and_the_pages_count_no_gold(project, make_verified, make_unit, annotator, annotator2):
    """The security review of the handles (issue 20): an annotator probed row ids where a refusal
    differed from a missing row (403 vs 404, or another 404 text), paged My work from any item's
    handle, and read the home page's queue counts, which moved at a real submit but not at a gold
    one. Each answered whether a gold copy had just been made."""
    make_verified(2)
    assert len(services.make_sources(project, Source.Role.GOLD, 2)) == 2
    services.set_policy(project, gold_rate=0.5, seed=seed_for(project, annotator, [True, False]))
    make_unit(), make_unit()
    api = APIClient()
    api.force_authenticate(annotator)
    pair = QAPair.objects.order_by("-id").first()
    unit_id = WorkUnit.objects.order_by("-id").first().pk
    for path in (f"/api/qa/{pair.pk}/", f"/api/units/{unit_id}/review/"):
        there, missing = api.get(path), api.get(path.replace(str(pair.pk if "/qa/" in path else unit_id), "999999999"))
        assert (there.status_code, there.json()) == (missing.status_code, missing.json()) and there.status_code == 404
    for method, path in (
        ("post", f"/api/qa/{pair.pk}/flag/"),
        ("post", f"/api/units/{unit_id}/review/"),
        ("patch", f"/api/qa/{pair.pk}/"),
    ):
        res = getattr(api, method)(path, {}, format="json")
        assert res.status_code == 404, (path, res.status_code)

    page = Client()
    page.force_login(annotator)
    assert "queue:" not in page.get("/").content.decode()  # the counts are for the people who run it
    gold = api.post(f"/api/projects/{project.slug}/queue/next/").json()  # claim 1 draws gold
    handle = gold["queue"]["item_id"]
    api.post(
        f"/api/units/{gold['id']}/submit/",
        {"idempotency_key": "g", "decisions": [{"qa_id": q["id"], "action": "keep"} for q in gold["qa_pairs"]]},
        format="json",
    )
    real = api.post(f"/api/projects/{project.slug}/queue/next/").json()
    assert WorkUnit.objects.get(pk=row_id("unit", real["id"])).purpose == "real"
    # My work pages from the person's own done passes only, by submit time: the held real item's
    # handle (older than the gold copy) is no page, with the same words as any string.
    for cursor in (real["queue"]["item_id"], "a" * 13):
        res = page.get(f"/projects/{project.slug}/my-work/?before={cursor}")
        assert res.status_code == 400 and b"not a page of this list" in res.content
    assert page.get(f"/projects/{project.slug}/my-work/?before={handle}").status_code == 200
