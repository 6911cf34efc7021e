"""Nothing a participant's browser receives reveals the truth (issue 7, B; issue 8, Integrity): ordering.

Before the fix, frame URLs carried the time (``/files/frames/<sha16>/224/00129.375.jpg``) and
element ids ascended with time, and scripted participants who sorted by either scored tau-b 1.000
on every trial. Here scripted participants take a real study (frames cut by ffmpeg as
``study_create`` cuts them) through the API, sort every trial by every id-like field the payload
gives its elements (the handle, the URL, and an ``id`` if there were one), and do no better than
chance.
"""

import re
import statistics

from annotator.scoring.ordering import score
from annotator.studies.models import Element, Trial
from annotator.studies.services import score_pending
from tests.studies.conftest import api_as, people

ELEMENT_KEYS = {"handle", "kind", "url", "text", "pinned_position"}
TRIAL_KEYS = {"trial_id", "kind", "practice", "number", "of", "time_limit_ms", "elapsed_ms", "shown", "content"}
CONTENT_KEYS = {"annotation", "elements"}
CONTENT_URL = re.compile(r"^/files/frames/[0-9a-f]{64}\.jpg$")
NOT_IDS = {"kind", "text", "pinned_position"}

# The bound on a cheat's mean tau-b. For a uniformly random order of m >= 2 free elements, Kendall's
# tau-b has mean 0 and variance 2(2m+5) / (9m(m-1)), at most 1 (m = 2, the hinted conditions, where
# it is +1 or -1). Shown orders are independent uniform draws (one recorded seed per item), and
# handles (an HMAC per trial and element) and content hashes are independent of time, so a sort by
# them is a random order: over N >= 60 trials the mean has a standard deviation of at most
# 1/sqrt(60) = 0.13, and 0.5 is more than 3.8 of them (under 1 in 5,000 to exceed it by luck). A
# field that carries the order gives 1.000 on every trial, hence a mean of 1.0, far outside.
CHANCE_BOUND = 0.5


def _sorted_by(elements: list[dict], field: str) -> list[int]:
    """A cheat's answer: the free elements sorted by ``field`` (numbers as numbers), pinned hints
    left where they are; returned as positions in the payload."""

    def key(i):
        value = elements[i][field]
        return (0, value, "") if isinstance(value, (int, float)) else (1, 0, str(value))

    free = sorted((i for i, e in enumerate(elements) if not e["pinned_position"]), key=key)
    out = []
    for pos in range(1, len(elements) + 1):
        pinned = [i for i, e in enumerate(elements) if e["pinned_position"] == pos]
        out.append(pinned[0] if pinned else free.pop(0))
    return out


def _take_part_sorting_by_handle(client, experiment_id: int, seen: list) -> None:
    """Take the whole experiment as the page does (report shown, then answer), answering every
    trial sorted by handle; keep every payload in ``seen``."""
    state = client.post(f"/api/studies/{experiment_id}/enroll/").json()
    while state["trial"] is not None:
        trial = state["trial"]
        seen.append(trial)
        assert client.post(f"/api/trials/{trial['trial_id']}/shown/").status_code == 200
        elements = trial["content"]["elements"]
        order = [elements[i]["handle"] for i in _sorted_by(elements, "handle")]
        res = client.post(
            f"/api/trials/{trial['trial_id']}/answer/",
            {"response": order, "client_rt_ms": 1.0, "idempotency_key": f"k{trial['trial_id']}"},
            format="json",
        )
        assert res.status_code == 200, res.content
        state = res.json()
        if state.get("next") == "current":  # after practice feedback the next trial is asked for
            state = client.get(f"/api/studies/{experiment_id}/current/").json()


def test_participants_sorting_by_any_id_in_the_payload_do_no_better_than_chance(build, project):
    experiment = build(200.0, questions_per_participant=20, conditions_per_participant=3)
    video = experiment.video
    payloads: list[dict] = []
    for person in people(project, 6):
        _take_part_sorting_by_handle(api_as(person), experiment.pk, payloads)

    trials = {t.pk: t for t in Trial.objects.filter(participant__study=experiment).select_related("item")}
    scored = [p for p in payloads if not p["practice"]]
    # Six people, three conditions each, never one clip twice: 98 scored trials over at least 60 items.
    assert len(scored) >= 60 and len({trials[p["trial_id"]].item_id for p in scored}) >= 60, len(scored)

    # What the browser got: only these keys; images named by content; no file name, hash or time of the video.
    frames = {e.pk: e for e in Element.objects.filter(kind="frame")}
    for p in payloads:
        assert set(p) == TRIAL_KEYS and set(p["content"]) == CONTENT_KEYS
        elements = p["content"]["elements"]
        assert all(set(e) == ELEMENT_KEYS and CONTENT_URL.match(e["url"]) for e in elements), elements
        text = str(p)
        assert video.filename not in text and video.sha256[:16] not in text and "source" not in text
        item = trials[p["trial_id"]].item
        assert all(
            e["handle"] not in (str(eid), f"{frames[eid].t_s:09.3f}") for e, eid in zip(elements, item.payload["shown"])
        )

    # Every id-like field, sorted by: no better than chance.
    fields = sorted(
        {
            k
            for p in scored
            for e in p["content"]["elements"]
            for k, v in e.items()
            if k not in NOT_IDS and isinstance(v, (str, int)) and not isinstance(v, bool)
        }
    )
    assert fields == ["handle", "url"]
    for field in fields:
        taus = []
        for p in scored:
            item = trials[p["trial_id"]].item
            shown = item.payload["shown"]
            answer = [shown[i] for i in _sorted_by(p["content"]["elements"], field)]  # payload order is the shown order
            taus.append(score(answer, item.truth, item.payload["hints"]).kendall_tau_b)
        mean = statistics.fmean(taus)
        assert abs(mean) < CHANCE_BOUND, (field, mean, len(taus))

    # The server scored the handle-sorted answers the same way.
    assert score_pending(experiment.pk) == len(payloads)
    served = [t.scores["kendall_tau_b"] for t in Trial.objects.filter(participant__study=experiment, practice=False)]
    assert len(served) == len(scored) and abs(statistics.fmean(served)) < CHANCE_BOUND
