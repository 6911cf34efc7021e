"""Admin pages at 1366x768 (issue 21, "Results and admin pages"): the home page offers "Take part" only to
those who may take part; the agreement page's buttons are named by their visible text; a unit's history names its set's kind; the 403 and 404 pages carry the site's
header, the reason in words and a link home. axe-core finds no serious or critical violation on them.
One admin context and one annotator context serve every assertion."""

import re

import pytest
from playwright.sync_api import expect

from annotator.agreement.models import RatingSet
from annotator.media.models import VideoGroup
from annotator.studies.models import Condition, Item, Study
from tests.ui import axe
from tests.ui.conftest import log_in

VIEWPORT = {"width": 1366, "height": 768}


def _no_sideways_scroll(page) -> bool:
    return page.evaluate("() => document.documentElement.scrollWidth <= document.documentElement.clientWidth")


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_home_unit_history_and_error_pages_for_admins_and_annotators(
    live_server, browser, project, admin_user, annotator, make_unit
):
    study = Study.objects.create(project=project, name="mc-demo", kind="mcq", questions_per_participant=4)
    condition = Condition.objects.create(study=study, number=1, label="all")
    Item.objects.create(
        condition=condition,
        index=0,
        key="q0",
        truth=0,
        payload={"question": "Which?", "options": ["a", "b"], "media": []},
    )
    RatingSet.objects.create(project=project, name="sheets", level="nominal")  # a scope of the agreement page
    unit = make_unit(1)
    unit.group = VideoGroup.objects.create(project=project, kind=VideoGroup.Kind.EGO_EXO, name="kitchen-set")
    unit.save(update_fields=["group"])

    context, page = log_in(browser, live_server.url, "boss", "pw-boss-123")
    page.set_viewport_size(VIEWPORT)
    page.goto(f"{live_server.url}/")
    assert page.locator(".task-group h3").all_text_contents() == [
        "Verify",
        "Studies",
        "Models",
        "Results",
        "Export",
        "Team",
    ]
    study_line = page.locator(".study-line")
    expect(study_line).to_contain_text("mc-demo")
    assert study_line.locator("a").all_inner_texts() == ["Results"]  # an admin may not take part
    assert axe.violations(page) == [] and _no_sideways_scroll(page)

    page.goto(f"{live_server.url}/projects/proj/agreement/")  # its "Compute now" buttons' names
    expect(page.locator("[data-scope='ratings:sheets'] button")).to_have_attribute(
        "aria-label", "Compute now: ratings:sheets"
    )
    assert axe.violations(page) == []

    page.goto(f"{live_server.url}/projects/proj/units/{unit.pk}/")
    expect(page.locator("#unit-set")).to_have_text("ego-exo set kitchen-set")
    assert axe.violations(page) == []

    for path, status, title, reason in (
        ("/projects/nowhere/progress/", 404, "Page not found", "No such project."),
        (
            "/no/such/page/",
            404,
            "Page not found",
            "There is nothing at this address: the link may be mistyped or old, or what it showed was removed.",
        ),
        (
            f"/projects/proj/units/{unit.pk + 1000}/",
            404,
            "Page not found",
            "There is nothing at this address: the link may be mistyped or old, or what it showed was removed.",
        ),
    ):
        assert page.goto(live_server.url + path).status == status
        expect(page.locator("header.topbar .brand")).to_have_text("Video QA")
        expect(page.locator("#error-title")).to_have_text(title)
        expect(page.locator("#error-reason")).to_have_text(reason)
        expect(page.locator("#error-home")).to_have_attribute("href", "/")
    assert axe.violations(page) == []
    context.close()

    context, page = log_in(browser, live_server.url, "ann", "pw-ann-123")
    page.set_viewport_size(VIEWPORT)
    assert page.locator(".study-line a").all_inner_texts() == ["Take part"]
    assert page.goto(f"{live_server.url}/projects/proj/progress/").status == 403
    expect(page.locator("header.topbar .who")).to_have_text("ann")
    expect(page.locator("#error-title")).to_have_text("You may not open this page")
    expect(page.locator("#error-reason")).to_have_text("Your role in this project does not allow this.")
    page.locator("#error-home").click()
    page.wait_for_url(re.compile(r"/$"))
    assert axe.violations(page) == []
    context.close()


def _trials(study, condition, rows):
    """One scored trial per (person, scores) row, each of its own item; returns nothing."""
    from datetime import timedelta

    from django.utils import timezone

    from annotator.studies.models import Participant, Trial

    now = timezone.now()
    for index, (person, scores) in enumerate(rows):
        item = Item.objects.create(
            condition=condition, index=index, subtask="order", key=f"{study.name}:{index}", payload={}
        )
        participant, _ = Participant.objects.get_or_create(study=study, user=person, defaults={"stage": "done"})
        shown = now - timedelta(seconds=30)
        Trial.objects.create(
            participant=participant,
            item=item,
            position=index,
            response={},
            client_rt_ms=2000.0,
            served_at=shown,
            shown_at=shown,
            answered_at=shown + timedelta(seconds=2),
            scores=scores,
            scored_at=now,
        )


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_results_intervals_stay_in_the_metrics_range_with_headers_in_words_and_no_sideways_scroll(
    live_server, browser, project
):
    """The walkthrough's intervals: tau-b 1, -1, 1, -1 gave [-1.84, 1.84] (Student's t: 0 ± 3.18 x 0.577)
    and Likert 1 and 4 gave [-16.56, 21.56] (2.5 ± 12.71 x 1.5); both are clipped to the metric's range."""
    from annotator.projects.services import ensure_member

    people = [ensure_member(f"p{i}", role="annotator", project=project)[0] for i in range(4)]
    ensure_member("res", role="researcher", project=project, password="pw-res-123")
    ordering = Study.objects.create(project=project, name="order", kind="ordering", questions_per_participant=1)
    full = {
        "pairwise_accuracy": 0.5,
        "mean_abs_distance": 1.25,
        "lcs_ratio": 0.5,
        "edit_distance": 2.0,
        "exact_match": 0.0,
        "position_accuracy": 0.25,
    }
    _trials(
        ordering,
        Condition.objects.create(study=ordering, number=1, label="four frames, no hint"),
        [(person, {**full, "kendall_tau_b": tau}) for person, tau in zip(people, (1.0, -1.0, 1.0, -1.0))],
    )
    likert = Study.objects.create(project=project, name="rate", kind="likert", questions_per_participant=2)
    _trials(
        likert,
        Condition.objects.create(study=likert, number=1, label="relevance", variables={"criterion": "relevance"}),
        [(people[0], {"score": 1.0}), (people[1], {"score": 4.0})],
    )

    context, page = log_in(browser, live_server.url, "res", "pw-res-123")
    page.set_viewport_size(VIEWPORT)
    page.goto(f"{live_server.url}/projects/proj/studies/order/results/")
    headers = page.locator("#score-table thead th").all_text_contents()
    assert headers == [
        "Condition",
        "Subtask",
        "Group",
        "Respondent",
        "Kendall's tau-b",
        "Pairwise accuracy",
        "Mean absolute distance (positions)",
        "Longest-common-subsequence ratio",
        "Edit distance (elements)",
        "Exact match",
        "Per-position accuracy",
    ]
    tau = page.locator("#score-table tbody tr").first.locator("td").nth(4)
    expect(tau).to_have_text("0.000 [-1.00, 1.00] n=4")
    page.wait_for_function("() => Chart.getChart(document.getElementById('bars-kendall_tau_b'))")
    bars = page.evaluate("() => Chart.getChart(document.getElementById('bars-kendall_tau_b')).data.datasets[0].data")
    assert [(p["yMin"], p["yMax"]) for p in bars] == [(-1.0, 1.0)] * len(bars)
    assert _no_sideways_scroll(page)
    assert axe.violations(page) == []

    page.goto(f"{live_server.url}/projects/proj/studies/rate/results/")
    expect(page.locator("#score-table tbody tr").first.locator("td").nth(4)).to_have_text("2.500 [1.00, 5.00] n=2")
    assert _no_sideways_scroll(page)
    context.close()
