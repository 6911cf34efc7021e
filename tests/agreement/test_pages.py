"""The agreement pages: the dashboard (empty, measured, "Compute now"), sending items to the
consensus round from it, and recording a consensus on an item's page, where a refused form keeps
what was typed."""

from __future__ import annotations

import pytest
from django.test import Client

from annotator.agreement import services
from annotator.agreement.models import ConsensusItem, ConsensusRating
from annotator.core.models import Job
from annotator.projects.services import ensure_member
from annotator.qa.selectors import pseudonym

R = 50


@pytest.fixture
def reviewer(project):
    user = ensure_member("rev", role="reviewer", project=project, password="pw-rev-123")[0]
    client = Client()
    client.force_login(user)
    return client


def _table(html: str, id_: str) -> str:
    """The HTML of the table with id ``id_``."""
    start = html.index(f'id="{id_}"')
    return html[start : html.index("</table>", start)]


def _messages(res) -> list[str]:
    return [str(m) for m in res.context["messages"]]


def test_the_empty_dashboard_says_what_produces_agreement(project, reviewer):
    res = reviewer.get(f"/projects/{project.slug}/agreement/")
    assert res.status_code == 200
    text = res.content.decode()
    assert "Nothing measured yet" in text
    for source in ("Overlap passes", "Study answers", "Rating sets"):
        assert source in text
    assert res.context["data"] == {"project": {"slug": project.slug, "name": project.name}, "scopes": []}


def test_the_dashboard_shows_the_measured_scope_its_charts_and_the_disputed_items(project, two_raters, reviewer):
    services.compute(project, "verification", trigger="api", n_resamples=R)
    res = reviewer.get(f"/projects/{project.slug}/agreement/")
    text = res.content.decode()
    assert res.status_code == 200
    for canvas in ('id="bars-0-0"', 'id="raters-0-0"', 'id="confusion-0-0"', 'id="trend-0"', 'id="bars-0-1"'):
        assert canvas in text
    assert 'id="agreement-data" type="application/json"' in text and "<script>" not in text
    top = res.context["data"]["scopes"][0]["subsets"][0]["top"]
    table = _table(text, "top-0-0")  # all pairs: the six disputed ones
    assert table.count('class="history-link"') == 6 and f'href="{top[0]["link"]}"' in table
    assert table.count('name="items"') == 6  # a checkbox per disputed pair
    assert "Method and library versions" in text and "krippendorff" in text
    assert "Kendall&#x27;s W (nominal)</strong>: Kendall&#x27;s W ranks the items" in text  # not measured, and why
    assert "Last computed" in text and "Computing…" not in text


def test_compute_now_queues_the_scope_and_says_so(project, two_raters, reviewer):
    res = reviewer.post(f"/projects/{project.slug}/agreement/", {"scope": "verification"}, follow=True)
    assert res.redirect_chain == [(f"/projects/{project.slug}/agreement/#scope-verification", 302)]
    assert _messages(res) == [
        (
            "Queued 1 computation of scope verification; the dashboard shows the result once a "
            "worker has computed it (reload the page)."
        )
    ]
    assert Job.objects.get(task="agreement.compute").args[1] == "button"
    res = reviewer.post(f"/projects/{project.slug}/agreement/", {}, follow=True)
    assert _messages(res) == ["A computation of every scope with judgments is queued already."]
    res = reviewer.post(f"/projects/{project.slug}/agreement/", {"scope": "study:gone"}, follow=True)
    assert _messages(res)[0].startswith("no agreement scope 'study:gone'")
    assert Job.objects.filter(task="agreement.compute").count() == 1  # (the overlap checks of the submits are jobs too)


def test_a_running_computation_shows_computing(project, two_raters, reviewer):
    from django.utils import timezone

    from annotator.agreement.models import Scope

    services.compute(project, "verification", trigger="api", n_resamples=R)
    Scope.objects.filter(project=project, key="verification").update(computing_since=timezone.now())
    assert "Computing…" in reviewer.get(f"/projects/{project.slug}/agreement/").content.decode()


def test_checked_items_go_to_the_consensus_round_and_a_bad_threshold_sends_nothing(project, two_raters, reviewer):
    services.compute(project, "verification", trigger="api", n_resamples=R)
    url = f"/projects/{project.slug}/agreement/consensus/"
    res = reviewer.post(url, {"scope": "verification", "subset": "", "threshold": "lots"}, follow=True)
    assert _messages(res) == [
        ("Nothing was sent to the consensus round: the threshold is a disagreement from 0 to 1, like 0.5")
    ]
    res = reviewer.post(url, {"scope": "verification", "subset": ""}, follow=True)
    assert _messages(res) == [
        ("Nothing was sent to the consensus round: check at least one item, or give a disagreement threshold")
    ]
    assert not ConsensusItem.objects.exists()
    top = services.latest(project, "verification")[0].details[""]["top"]
    res = reviewer.post(
        url, {"scope": "verification", "subset": "", "items": [top[0]["item"], top[1]["item"]]}, follow=True
    )
    assert res.redirect_chain == [(url, 302)] and _messages(res) == ["Sent 2 items to the consensus round."]
    assert sorted(ConsensusItem.objects.values_list("item", flat=True)) == sorted([top[0]["item"], top[1]["item"]])
    rows = res.content.decode().split('id="consensus-queue"')[1]
    assert rows.count('data-status="open"') == 2
    # The dashboard now links those two to their consensus page instead of a checkbox.
    table = _table(reviewer.get(f"/projects/{project.slug}/agreement/").content.decode(), "top-0-0")
    assert table.count('name="items"') == 4 and table.count(">in the round</a>") == 2


@pytest.fixture
def sent(project, two_raters, admin_user):
    services.compute(project, "verification", trigger="api", n_resamples=R)
    return services.send_to_consensus(project, "verification", threshold=1.0, user=admin_user)[0]


def test_a_refused_consensus_keeps_what_was_typed_then_both_rounds_show(project, sent, reviewer, annotator, annotator2):
    url = f"/projects/{project.slug}/agreement/consensus/{sent.pk}/"
    page = reviewer.get(url).content.decode()
    first = {a["rater"]: a["value"] for a in sent.answers}
    order = [a["rater"] for a in sent.answers]
    for i, rater in enumerate(order):  # prefilled with round 1
        assert f'name="revised-{i}" value="{first[rater]}"' in page
    typed = {"revised-0": "keep", "revised-1": "keep", "consensus": "", "note": "talked it over"}
    res = reviewer.post(url, typed)
    text = res.content.decode()
    assert res.status_code == 400
    assert "Nothing was recorded: record the consensus value" in text
    assert 'name="revised-1" value="keep"' in text and "talked it over</textarea>" in text
    assert ConsensusItem.objects.get(pk=sent.pk).status == "open" and not ConsensusRating.objects.exists()

    res = reviewer.post(url, {**typed, "consensus": "keep"}, follow=True)
    assert res.redirect_chain == [(url, 302)]
    ci = ConsensusItem.objects.get(pk=sent.pk)
    assert (ci.status, ci.consensus, ci.note, ci.reviewer.username) == ("done", "keep", "talked it over", "rev")
    assert dict(ci.ratings.values_list("rater", "value")) == {
        pseudonym(annotator.pk): "keep",
        pseudonym(annotator2.pk): "keep",
    }
    text = res.content.decode()
    assert 'id="consensus-form"' not in text and "<strong>keep</strong>" in text
    changed = [r for r in res.context["rows"] if r["changed"]]
    assert [(r["first"], r["revised"]) for r in changed] == [(v, "keep") for v in first.values() if v != "keep"]
    res = reviewer.post(url, {**typed, "consensus": "delete"})
    assert res.status_code == 409 and ConsensusItem.objects.get(pk=sent.pk).consensus == "keep"


def test_numbers_are_checked_on_numeric_items(project, reviewer, admin_user):
    rows = [
        {"item": f"i{i}", "rater": r, "value": v}
        for i, vals in enumerate([(1, 5), (2, 2), (3, 3)])
        for r, v in zip("xy", vals)
    ]
    services.import_ratings(project, "scores", "ordinal", rows)
    services.compute(project, "ratings:scores", trigger="api", n_resamples=R)
    ci = services.send_to_consensus(project, "ratings:scores", items=["i0"], user=admin_user)[0]
    url = f"/projects/{project.slug}/agreement/consensus/{ci.pk}/"
    res = reviewer.post(url, {"revised-0": "three", "revised-1": "3", "consensus": "3.5", "note": ""})
    assert res.status_code == 400
    assert "Nothing was recorded: the answer of x: &#x27;three&#x27; is not a number" in res.content.decode()
    assert 'name="revised-0" value="three"' in res.content.decode()
    reviewer.post(url, {"revised-0": "3", "revised-1": "", "consensus": "3.5", "note": ""})
    ci.refresh_from_db()
    assert ci.consensus == 3.5 and dict(ci.ratings.values_list("rater", "value")) == {"x": 3, "y": None}


def test_the_queue_lists_open_items_first(project, sent, reviewer, admin_user):
    others = ConsensusItem.objects.exclude(pk=sent.pk).order_by("id")
    services.record_consensus(others[0].pk, project, admin_user, consensus="keep", revised={})
    res = reviewer.get(f"/projects/{project.slug}/agreement/consensus/")
    statuses = [r["ci"].status for r in res.context["rows"]]
    assert statuses == ["open"] * 5 + ["done"] and res.context["open"] == 5


def test_a_free_text_consensus_is_typed_in_text_areas(project, two_raters, reviewer):
    ci = services.send_to_consensus(project, "verification", subset="answers", threshold=0.01)[0]
    page = reviewer.get(f"/projects/{project.slug}/agreement/consensus/{ci.pk}/").content.decode()
    assert '<textarea rows="3" name="consensus"' in page and 'inputmode="decimal"' not in page
    agreed = "Both mean the same answer, 1, 2"  # digits and commas: a text, not a number or a list
    res = reviewer.post(
        f"/projects/{project.slug}/agreement/consensus/{ci.pk}/",
        {"consensus": agreed, "revised-0": agreed, "revised-1": ""},
    )
    assert res.status_code == 302
    ci.refresh_from_db()
    assert ci.consensus == agreed and ci.level == "text"
    values = list(ConsensusRating.objects.filter(consensus_item=ci).values_list("value", flat=True))
    assert len(values) == 2 and set(values) == {None, agreed}  # an emptied answer is no answer
