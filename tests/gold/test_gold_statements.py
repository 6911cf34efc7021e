"""A gold unit must cost about what a real one does, or its timing tells it apart (issue 20, section
2; finding 7 of the second security review): statements of a gold claim and of a gold submit against
a real one's, in one project, one person, alternating. Timing itself is measured by bench/queue.py
(gold and real claims of the same runs)."""

from django.db import connection
from django.test.utils import CaptureQueriesContext

from annotator.gold import services
from annotator.gold.claims import premake
from annotator.gold.models import Result
from annotator.qa.queue import claim_next
from annotator.qa.services import Decision, skip_unit, submit_unit
from tests.gold.conftest import known_of, seed_for

# Statements a gold unit may cost beyond a real one: none for the claim (the copy was made ahead by
# ``claims.premake``, a worker's, while the person held their last unit); the submit scores it (one
# read, one write); a skip costs the same (the miss is written by the one statement that finds
# nothing for a real unit).
GOLD_CLAIM_EXTRA = 0
GOLD_SUBMIT_EXTRA = 2
GOLD_SKIP_EXTRA = 0


def _decisions(item) -> list[Decision]:
    pairs = list(item.unit.qa_pairs.filter(status="draft").order_by("id"))
    if item.unit.purpose != "gold":
        return [Decision(p.pk, "keep", version=p.version) for p in pairs]
    known = known_of(item.unit_id)
    return [
        Decision(
            p.pk,
            known[p.pk].action,
            reason=known[p.pk].reason,
            answer=f"{p.answer} (mine)" if known[p.pk].action == "modify" else None,
            version=p.version,
        )
        for p in pairs
    ]


def test_a_gold_claim_and_submit_cost_at_most_a_few_statements_more_than_a_real_one(
    real_nudges, project, make_verified, make_unit, annotator
):
    """``real_nudges``: the claim's ``gold.premake_for`` message is what production sends (here never,
    as this test's transaction never commits), not premake run in line, which would count in the
    claim; premake runs below, as the worker would."""
    make_verified(3)
    services.make_sources(project, "gold", 3)
    for _ in range(4):
        make_unit()
    services.set_policy(project, gold_rate=0.5, seed=seed_for(project, annotator, [False, True] * 3))
    costs = {"real": [], "gold": []}
    skips = {}
    for n in range(6):
        with CaptureQueriesContext(connection) as claim:
            item = claim_next(project, annotator)
        premake()  # the worker's, while the person holds the unit: the next claim's gold copy, made ahead
        if n >= 4:  # the last real and gold units are skipped
            with CaptureQueriesContext(connection) as skip:
                skip_unit(item.unit_id, annotator, "cannot tell")
            skips[item.unit.purpose] = len(skip)
            continue
        decisions = _decisions(item)
        with CaptureQueriesContext(connection) as submit:
            submit_unit(
                item.unit_id, annotator, idempotency_key=f"s{n}", time_spent_ms=900, additions=[], decisions=decisions
            )
        costs[item.unit.purpose].append((len(claim), len(submit)))
    assert Result.objects.filter(user=annotator, agreed=4, decisions=4).count() == 2  # scored, all agreed
    assert Result.objects.filter(user=annotator, agreed=0, decisions=4).count() == 1  # the skip, a miss
    (real_claim, real_submit), (gold_claim, gold_submit) = max(costs["real"]), max(costs["gold"])
    assert len(costs["real"]) == len(costs["gold"]) == 2
    assert gold_claim - real_claim <= GOLD_CLAIM_EXTRA, costs
    assert gold_submit - real_submit <= GOLD_SUBMIT_EXTRA, costs
    assert skips["gold"] - skips["real"] <= GOLD_SKIP_EXTRA, skips
