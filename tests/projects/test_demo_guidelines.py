"""The demo ships real guidelines (issue 21): the project's and its QA types', written only where an
admin wrote none, so a rerun changes nothing; the verify page shows them, or says where an admin
writes them when there are none."""

import pytest
from django.test import Client

from annotator.demo.guidelines import TYPES, seed_guidelines
from annotator.projects.models import Project
from annotator.qa.models import QAType
from annotator.qa.services import apply_preset

pytestmark = pytest.mark.django_db


def _page(user, slug="proj") -> str:
    client = Client()
    client.force_login(user)
    res = client.get(f"/projects/{slug}/verify/")
    assert res.status_code == 200
    return res.content.decode()


def test_without_guidelines_the_verify_page_says_where_an_admin_writes_them(project, annotator):
    html = _page(annotator)
    assert (
        'No guidelines yet.\n      A project admin writes them on the <a href="/projects/proj/qa-types/">QA types page</a>'
        in html
    )


def test_the_demo_guidelines_are_written_once_and_an_admins_text_is_kept(project, annotator):
    apply_preset(project, "egonight")
    QAType.objects.filter(project=project, slug="navigation").update(guidelines="The admin's own words.")
    written = seed_guidelines(project)
    assert written == 1 + 11  # the project and 11 of EgoNight's 12 types
    project.refresh_from_db()
    assert "**Keep (V)**" in project.guidelines and "**Delete (X)**" in project.guidelines
    by_slug = dict(QAType.objects.filter(project=project).values_list("slug", "guidelines"))
    assert by_slug["navigation"] == "The admin's own words."
    assert by_slug["spatial_reasoning"] == TYPES["spatial_reasoning"]
    assert seed_guidelines(project) == 0  # a rerun writes nothing
    html = _page(annotator)
    assert "<strong>Left and right are relative to the wearer</strong>" in html
    assert "<strong>Modify (E)</strong>" in html and 'id="no-guidelines"' not in html
    assert Project.objects.get(pk=project.pk).guidelines == project.guidelines
