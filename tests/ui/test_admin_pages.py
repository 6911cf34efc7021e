"""Admin pages at 1366x768 (issue 21, "Results and admin pages"): the home page offers "Take part" only to
those who may take part; a unit's history names its set's kind; the 403 and 404 pages carry the site's
header, the reason in words and a link home. axe-core finds no serious or critical violation on them.
One admin context and one annotator context serve every assertion."""

import re

import pytest
from playwright.sync_api import expect

from annotator.media.models import VideoGroup
from annotator.studies.models import Condition, Item, Study
from tests.ui import axe
from tests.ui.conftest import log_in

VIEWPORT = {"width": 1366, "height": 768}


def _no_sideways_scroll(page) -> bool:
    return page.evaluate("() => document.documentElement.scrollWidth <= document.documentElement.clientWidth")


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_home_unit_history_and_error_pages_for_admins_and_annotators(live_server, browser, project, admin_user,
                                                                     annotator, make_unit):
    study = Study.objects.create(project=project, name="mc-demo", kind="mcq", questions_per_participant=4)
    condition = Condition.objects.create(study=study, number=1, label="all")
    Item.objects.create(condition=condition, index=0, key="q0", truth=0,
                        payload={"question": "Which?", "options": ["a", "b"], "media": []})
    unit = make_unit(1)
    unit.group = VideoGroup.objects.create(project=project, kind=VideoGroup.Kind.EGO_EXO, name="kitchen-set")
    unit.save(update_fields=["group"])

    context, page = log_in(browser, live_server.url, "boss", "pw-boss-123")
    page.set_viewport_size(VIEWPORT)
    page.goto(f"{live_server.url}/")
    assert page.locator(".task-group h3").all_text_contents() == ["Verify", "Studies", "Models", "Results", "Export", "Team"]
    study_line = page.locator(".study-line")
    expect(study_line).to_contain_text("mc-demo")
    assert study_line.locator("a").all_inner_texts() == ["Results"]       # an admin may not take part
    assert axe.violations(page) == [] and _no_sideways_scroll(page)

    page.goto(f"{live_server.url}/projects/proj/units/{unit.pk}/")
    expect(page.locator("#unit-set")).to_have_text("ego-exo set kitchen-set")
    assert axe.violations(page) == []

    for path, status, title, reason in (
            ("/projects/nowhere/progress/", 404, "Page not found", "No such project."),
            ("/no/such/page/", 404, "Page not found",
             "There is nothing at this address: the link may be mistyped or old, or what it showed was removed."),
            (f"/projects/proj/units/{unit.pk + 1000}/", 404, "Page not found",
             "There is nothing at this address: the link may be mistyped or old, or what it showed was removed.")):
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
