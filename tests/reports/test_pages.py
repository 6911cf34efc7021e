"""The report page and its downloads through Django's test client: overseers only, the table in words,
the downloads in every format, bad choices answered in words."""

import pytest

from annotator.projects.services import ensure_member

pytestmark = pytest.mark.django_db


def _login(client, project, name, role):
    client.force_login(ensure_member(name, role=role, project=project)[0])


def test_the_page_shows_the_table_in_words(client, world):
    project = world["study"].project
    _login(client, project, "res", "researcher")
    r = client.get(f"/projects/{project.slug}/report/", {"by": ["illumination", "qa_type"], "study": "timed"})
    assert r.status_code == 200
    html = r.content.decode()
    assert "<th>Illumination</th><th>QA type</th>" in html and "Report: Accuracy" in html
    assert 'id="report-data"' in html and "kendall_tau_b" not in html


def test_downloads_in_every_format(client, world):
    project = world["study"].project
    _login(client, project, "res", "researcher")
    for fmt, needle in (
        ("json", '"rows"'),
        ("csv", "table,metric,Illumination"),
        ("latex", "\\begin{tabular}"),
        ("md", "| Illumination |"),
    ):
        r = client.get(f"/projects/{project.slug}/report/report.{fmt}", {"by": "illumination"})
        assert r.status_code == 200 and needle in r.content.decode(), fmt
    assert client.get(f"/projects/{project.slug}/report/report.exe").status_code == 404
    bad = client.get(f"/projects/{project.slug}/report/report.csv", {"by": "colour"})
    assert bad.status_code == 400 and "unknown split field" in bad.content.decode()


def test_annotators_may_not_read_it(client, world):
    project = world["study"].project
    _login(client, project, "ann-x", "annotator")
    assert client.get(f"/projects/{project.slug}/report/").status_code in (403, 404)
