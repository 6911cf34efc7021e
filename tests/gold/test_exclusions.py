"""Gold, qualification and tutorial copies are not part of the benchmark (issue 20): the export,
progress, the home page's queue counts, the QA list, the study item pools and the EgoExoBench
checks' drafts leave them out, once they are submitted (their pairs verified) as before."""

import json

import pytest
from django.core.management import call_command
from django.test import Client

from annotator.drafts.pipelines.egoexobench import EgoExoBenchChecks
from annotator.gold import services
from annotator.gold.models import Source
from annotator.qa.models import QAPair, QueueItem, WorkUnit
from annotator.qa.queue import claim_next
from annotator.qa.selectors import progress, queue_counts
from annotator.studies.kinds._qa import qa_pool
from tests.gold.conftest import answer


@pytest.fixture
def with_copies(project, make_verified, make_unit, annotator, admin_user):
    """Three verified real units (12 pairs: 6 verified by keep, 3 by modify, 3 deleted), then one gold
    copy and two qualification copies submitted by a new annotator, and one tutorial example."""
    real = make_verified(6)
    services.make_sources(project, Source.Role.QUALIFICATION, 2, unit_ids=[real[0].pk, real[1].pk])
    services.make_sources(project, Source.Role.GOLD, 1, unit_ids=[real[2].pk])
    services.add_example(project, real[3].pk, admin_user)
    services.set_policy(project, qualification_required=True, threshold=0.5, gold_rate=0.5)
    spare = make_unit()  # a gold copy is served only while a real unit is left for the person
    for key in ("q1", "q2"):
        answer(claim_next(project, annotator), annotator, key=key)
    # The gold copy premake makes when a draw says gold (the first claim after qualifying draws none).
    services.make_copy(
        Source.objects.get(project=project, role=Source.Role.GOLD), user=annotator, kind=QueueItem.Kind.FIRST_PASS
    )
    answer(claim_next(project, annotator), annotator, key="g")
    QueueItem.objects.filter(unit=spare).delete()  # and then leaves the queue, as if never there
    assert sorted(WorkUnit.objects.exclude(purpose="real").values_list("purpose", flat=True)) == [
        "example",
        "gold",
        "qualification",
        "qualification",
    ]
    return real


def test_the_export_holds_only_the_real_units_pairs(project, with_copies, tmp_path):
    out = tmp_path / "qa.jsonl"
    call_command("export_qa", "--project", project.slug, "--out", str(out))
    ids = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    real = set(QAPair.objects.filter(unit__purpose="real", status="verified").values_list("id", flat=True))
    assert len(ids) == 18 and set(ids) == real
    assert QAPair.objects.filter(status="verified").exclude(unit__purpose="real").count() == 9  # the copies' (3 units)


def test_progress_and_queue_counts_leave_copies_out(project, with_copies, annotator, verifier):
    p = progress(project)
    assert p["queue"] == {"first_pass": {"label": "first pass", "open": 0, "leased": 0, "done": 6}}
    assert (p["provenance"]["machine_kept"], p["provenance"]["machine_modified"]) == (12, 6)
    assert [a["username"] for a in p["by_annotator"]] == ["verifier"]
    assert sum(v["passes"] for v in p["by_video"]) == 6
    assert queue_counts([project]) == {project.pk: {"open": 0, "done": 6}}


def test_the_qa_list_shows_no_copy(project, with_copies, admin_user):
    client = Client()
    client.force_login(admin_user)
    page = client.get(f"/projects/{project.slug}/qa/?status=verified")
    assert page.status_code == 200
    shown = (
        set(page.context["page"].object_list.values_list("id", flat=True))
        if hasattr(page.context["page"].object_list, "values_list")
        else {p.pk for p in page.context["page"].object_list}
    )
    assert shown == set(QAPair.objects.filter(unit__purpose="real", status="verified").values_list("id", flat=True))


def test_study_pools_and_model_checks_take_no_copy(project, with_copies):
    class Study:
        pass

    study = Study()
    study.project = project
    pool = qa_pool(study, QAPair.objects.filter(project=project, status="verified"), {})
    assert pool.count() == 18 and not pool.exclude(unit__purpose="real").exists()

    class Run:
        params: dict = {}

    run = Run()
    run.project = project
    assert not EgoExoBenchChecks()._drafts(run).exclude(unit__purpose="real").exists()
    assert QAPair.objects.filter(status="draft", unit__purpose="example").count() == 4  # the example's drafts exist
