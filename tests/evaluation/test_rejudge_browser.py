"""The re-judge page in headless Chromium, with the app's Content-Security-Policy: Enter takes the
first answer, R and W mark the judge's label and the next answer loads each time, and when the
sample is done the page says so. Nothing is refused by the
CSP and nothing errs in the console."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from annotator.evaluation import rejudge
from annotator.evaluation.models import RejudgeItem
from annotator.projects.services import ensure_member
from tests.ui.conftest import browser, log_in  # noqa: F401 (the module-scoped browser fixture)


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_r_and_w_mark_the_judge_and_the_next_answer_loads(live_server, browser, project, judged_evaluation):  # noqa: F811
    e = judged_evaluation(["correct", "incorrect", "correct"])
    rejudge.create_sample(e, size=3, seed=21)
    order = list(RejudgeItem.objects.order_by("position").values_list("pk", "prediction__question", "judge_label"))
    ensure_member("judge-checker", role="reviewer", project=project, password="pw-checker-123")
    context, page = log_in(browser, live_server.url, "judge-checker", "pw-checker-123")
    problems: list[str] = []
    page.on("console", lambda m: problems.append(f"{m.type}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda exc: problems.append(f"pageerror: {exc}"))

    response = page.goto(f"{live_server.url}/projects/{project.slug}/evaluation/{e.pk}/rejudge/")
    assert "unsafe-inline" not in response.headers["content-security-policy"]
    expect(page.locator("#legend")).to_contain_text("R the judge's label is right")
    page.keyboard.press("Enter")  # take the first answer
    expect(page.locator("#rejudge-item")).to_have_attribute("data-item", str(order[0][0]))
    expect(page.locator("#question")).to_have_text(order[0][1])
    expect(page.locator("#judge-label")).to_have_text(order[0][2])
    expect(page.locator("#legend")).to_contain_text("W the judge's label is wrong")

    page.keyboard.press("r")
    expect(page.locator("#rejudge-item")).to_have_attribute("data-item", str(order[1][0]))
    expect(page.locator("#question")).to_have_text(order[1][1])
    page.keyboard.press("W")  # upper case works too
    expect(page.locator("#rejudge-item")).to_have_attribute("data-item", str(order[2][0]))
    page.keyboard.press("w")
    expect(page.locator("#all-done")).to_contain_text("1 of 3 right (33.33%)")

    verdicts = list(RejudgeItem.objects.order_by("position").values_list("verdict", "human_label", "judge_label"))
    assert [v for v, _, _ in verdicts] == ["right", "wrong", "wrong"]
    other = {"correct": "incorrect", "incorrect": "correct"}
    assert [h for _, h, _ in verdicts] == [verdicts[0][2], other[verdicts[1][2]], other[verdicts[2][2]]]
    assert problems == []
    context.close()
