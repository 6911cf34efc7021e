"""Security review of issue 18 (helper h_sec): the benchmark report's bounds and columns, and the
names model answers carry. Each test was seen failing before its fix."""

from __future__ import annotations

import pytest

from tests.reports.conftest import world  # noqa: F401  (the report's small world: a fixture)
from tests.reports.test_api import _client

pytestmark = pytest.mark.django_db


def _all_row(body: dict) -> dict:
    return body["rows"][-1]["cells"]


def test_a_source_named_twice_is_read_once(world):
    """?study=timed&study=timed read the study twice: every answer counted twice (human n 8 -> 16,
    the interval narrower than the data allow) and, 50 times over, 50 times the memory and time."""
    project = world["study"].project
    url = f"/api/projects/{project.slug}/report/"
    client = _client(project, "res", "researcher")
    once = client.get(url, {"study": "timed"}).json()
    twice = client.get(url, {"study": ["timed"] * 50})
    assert twice.status_code == 200, twice.content
    assert _all_row(twice.json()) == _all_row(once)
    assert _all_row(once)["human"]["n"] == 8
    assert twice.json()["studies"] == ["timed"]
    ev = world["evaluation"].pk
    alone = client.get(url, {"evaluation": ev}).json()
    thrice = client.get(url, {"evaluation": [ev, f"0{ev}", ev]}).json()
    assert _all_row(thrice) == _all_row(alone) and _all_row(alone)["ev"]["n"] == 4
    assert thrice["evaluations"] == [ev]
