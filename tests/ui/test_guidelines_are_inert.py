"""Stored XSS: guidelines are written by project admins and read by every annotator (and by
superusers). HTML in them must reach the verify page inert: sanitized (no handler, no script in the
DOM) and, as a second wall, under a Content-Security-Policy that forbids inline script. The page
itself must work under that policy with no violation at all (its config comes by json_script).
The Django admin must work under it too."""

import pytest
from playwright.sync_api import expect

from annotator.qa.models import QAType
from tests.ui.conftest import log_in

ATTACK = (
    "**Be precise.**\n\n<img src=x onerror=\"document.title='owned-{who}';window.__owned='{who}'\">\n\n"
    "<script>document.title='scripted-{who}';window.__owned='{who}-script'</script>\n\n"
    "<a href=\"javascript:void(window.__owned='{who}-link')\">help</a>"
)


def _csp_messages(page) -> list[str]:
    messages: list[str] = []
    page.on("console", lambda m: messages.append(m.text) if "Content Security Policy" in m.text else None)
    return messages


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_html_in_guidelines_is_inert_on_the_verify_page(live_server, browser, make_unit, project, annotator):
    make_unit(n_open=1)
    project.guidelines = ATTACK.format(who="project")
    project.save(update_fields=["guidelines"])
    QAType.objects.filter(project=project, slug="scene_description").update(guidelines=ATTACK.format(who="type"))

    context, page = log_in(browser, live_server.url, "ann", "pw-ann-123")
    violations = _csp_messages(page)
    response = page.goto(f"{live_server.url}/projects/{project.slug}/verify/")
    assert "script-src 'self'" in response.headers["content-security-policy"]
    assert "style-src 'self'" in response.headers["content-security-policy"]
    # The verify page's modules read its json_script config and ran.
    expect(page.locator("#cards > li")).to_have_count(2)

    page.keyboard.press("g")
    dialog = page.locator("#guidelines")
    expect(dialog).to_be_visible()
    expect(dialog.locator("strong", has_text="Be precise.")).to_have_count(2)  # both guidelines, formatted
    images = dialog.locator("img")
    expect(images).to_have_count(2)
    page.wait_for_function("() => Array.from(document.querySelectorAll('#guidelines img')).every((i) => i.complete)")
    links = dialog.locator("a", has_text="help")
    links.first.click()

    assert page.evaluate("window.__owned === undefined") is True
    assert page.title() == f"Verify · {project.slug} · Video QA"
    assert [images.nth(i).get_attribute("onerror") for i in range(2)] == [None, None]
    assert dialog.locator("script").count() == 0
    assert [links.nth(i).get_attribute("href") for i in range(2)] == [None, None]
    # Nothing on the page needed the policy to step in: no blocked handler, script or style.
    assert violations == []
    context.close()


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_the_django_admin_works_under_the_policy(live_server, browser, make_unit, project):
    from annotator.projects.services import ensure_member

    make_unit(n_open=1)
    ensure_member("root", role="admin", project=project, password="pw-root-123", superuser=True)
    context = browser.new_context()
    page = context.new_page()
    violations = _csp_messages(page)
    page.goto(f"{live_server.url}/admin/")
    page.fill("#id_username", "root")
    page.fill("#id_password", "pw-root-123")
    page.keyboard.press("Enter")
    expect(page.get_by_role("link", name="Qa pairs")).to_be_visible()

    page.get_by_role("link", name="Qa pairs").click()
    expect(page.locator("#result_list tbody tr")).to_have_count(2)
    page.locator("#result_list tbody tr th a").first.click()
    expect(page.locator(".field-page a")).to_have_attribute(
        "href", f"/projects/{project.slug}/qa/{page.url.split('/')[-3]}/"
    )
    page.goto(f"{live_server.url}/admin/projects/project/{project.pk}/change/")  # a form with an inline and its JS
    expect(page.locator("input[name=_save]")).to_be_visible()
    rows = page.locator("#memberships-group tr.form-row:not(.empty-form)")
    expect(rows).to_have_count(2)  # root's membership and one extra
    page.locator("#memberships-group .add-row a").click()  # inlines.js adds a row
    expect(rows).to_have_count(3)
    assert violations == []
    context.close()
