"""The demo's onboarding and gold checks (issue 20, sections 1 and 2), run by ``demo_setup`` on every
``make demo``: each step is done once and reused on a rerun.

1. The policy: qualification required at 80% of decisions, 3 tries, gold at 5% of claims, paused
   below 80% over the last 10 gold units. The demo's existing annotators (``annotator1``,
   ``annotator2``) count as qualified: they worked before the gate (``services.exempt``).
2. From the units verified so far: a qualification set (``DEMO_QUALIFICATION`` units), a tutorial
   example with an explanation per QA pair and the tutorial's Markdown, and a gold set (the rest, up
   to ``DEMO_GOLD``).
3. A new annotator, ``trainee1`` (password ``willow-beacon-27``), qualifies through the real queue:
   the first try keeps every QA pair (below the threshold when a pair should go), the second decides
   as known and passes.
4. ``trainee1`` then verifies real units (keeping every pair) until the queue has served them a gold
   copy, at most ``DEMO_GOLD_CLAIMS`` claims; the policy's seed is chosen so that it does within them.
"""

from __future__ import annotations

from annotator.errors import Forbidden
from annotator.gold import rules, services
from annotator.gold.claims import draw_secret, premake
from annotator.gold.models import Attempt, Copy, Known, Result, Source, Standing
from annotator.projects.models import Membership
from annotator.projects.services import ensure_member
from annotator.qa.models import QAPair, QueueItem
from annotator.qa.queue import claim_next
from annotator.qa.selectors import pairs_for_pass
from annotator.qa.services import Decision, submit_unit

DEMO_TRAINEE = ("trainee1", "willow-beacon-27")
DEMO_EXEMPT = ("annotator1", "annotator2")
DEMO_QUALIFICATION = 2
DEMO_GOLD = 3
DEMO_GOLD_CLAIMS = 4
DEMO_TUTORIAL = """# How to verify a unit

Each unit is a clip with questions a model drafted about it. For every QA pair decide:

- **Keep** (`V`) when the question is clear and the answer is right for this clip.
- **Modify** (`E`) when it can be fixed: edit the question or the answer, then keep your edit.
- **Delete** (`X`, then a reason) when it cannot be fixed: *meaningless*, *vague*, *duplicate*,
  *inconsistent across day and night* (paired clips only) or *wrong and unfixable*.

Add (`N`) a QA pair the model missed. The examples below show verified units and the decision
expected on each of their pairs.

Before the real queue opens, you verify a few qualification units whose decisions are known: the
queue opens once at least 80% of your decisions agree with them.
"""


def run_demo(project, stdout) -> dict:
    """Script onboarding and gold on ``project`` (see the module's docstring) and print what it did.
    Returns ``{"qualification_units", "gold_units", "example_units", "trainee", "attempts":
    [{"number", "score", "passed"}], "gold_served", "gold_accuracy"}`` (unit ids of the sources)."""
    policy = services.set_policy(
        project, qualification_required=True, threshold=0.8, tries=3, gold_rate=0.05, window=10
    )
    exempt = list(
        Membership.objects.filter(project=project, user__username__in=DEMO_EXEMPT).values_list("user_id", flat=True)
    )
    if n := services.exempt(project, exempt):
        stdout.write(f"gold: {n} existing annotators count as qualified (they worked before the gate)")
    _sets(project, stdout)
    trainee, _ = ensure_member(DEMO_TRAINEE[0], role="annotator", project=project, password=DEMO_TRAINEE[1])
    attempts = _qualify(project, trainee, stdout)
    served = _gold(project, trainee, stdout, policy)
    accuracy = rules.accuracy(*_totals(project, trainee))
    if accuracy["n"]:
        stdout.write(
            f"gold: {trainee.username}'s gold accuracy {accuracy['value']:.2f} (95% CI "
            f"{accuracy['ci'][0]:.2f}-{accuracy['ci'][1]:.2f}, n={accuracy['n']} decisions)"
        )
    roles = {
        role: list(
            Source.objects.filter(project=project, role=role, active=True)
            .order_by("position")
            .values_list("unit_id", flat=True)
        )
        for role in Source.Role.values
    }
    return {
        "qualification_units": roles["qualification"],
        "gold_units": roles["gold"],
        "example_units": roles["example"],
        "trainee": trainee.username,
        "attempts": attempts,
        "gold_served": served,
        "gold_accuracy": accuracy,
    }


def _sets(project, stdout) -> None:
    """The qualification set, the tutorial (Markdown, one example with explanations) and the gold set,
    each made once from the units verified so far."""
    have = {role: Source.objects.filter(project=project, role=role).exists() for role in Source.Role.values}
    if not have[Source.Role.QUALIFICATION]:
        made = services.make_sources(project, Source.Role.QUALIFICATION, DEMO_QUALIFICATION)
        stdout.write(
            f"gold: qualification set of {len(made)} verified units ({', '.join(str(s.unit_id) for s in made)}), "
            f"{sum(s.known.count() for s in made)} known decisions"
        )
    if not services.policy_of(project).tutorial:
        services.set_tutorial(project, DEMO_TUTORIAL)
    if not have[Source.Role.EXAMPLE]:
        candidates = list(services.verified_units(project).order_by("id").values_list("id", flat=True)[:1])
        if candidates:
            source = services.add_example(project, candidates[0])
            for k in Known.objects.filter(source=source):
                services.set_explanation(project, k.pk, _explanation(k))
            stdout.write(f"gold: tutorial example from unit {source.unit_id}, with an explanation per QA pair")
    if not have[Source.Role.GOLD]:
        left = services.verified_units(project).count()
        if left:
            made = services.make_sources(project, Source.Role.GOLD, min(DEMO_GOLD, left))
            stdout.write(f"gold: gold set of {len(made)} verified units ({', '.join(str(s.unit_id) for s in made)})")
        else:
            stdout.write("gold: no verified unit left for a gold set")


def _explanation(known: Known) -> str:
    if known.action == "keep":
        return "The question is clear and the answer matches the clip: keep it."
    if known.action == "modify":
        return "The question is worth asking but the answer was off: fix it and keep the fix."
    reason = dict(QAPair.DeleteReason.choices).get(known.reason, known.reason)
    return f"Delete it as {reason}: no edit makes it a good question about this clip."


def _decide(item: QueueItem, right: bool) -> list[Decision]:
    """Decisions on a copy's pairs: as known (``right``), or keep every pair."""
    copy = Copy.objects.get(unit_id=item.unit_id)
    known = Known.objects.in_bulk(list(copy.pairs.values()))
    out = []
    for pair in item.unit.qa_pairs.filter(status="draft").order_by("id"):
        k = known[copy.pairs[str(pair.pk)]]
        if not right or k.action == "keep":
            out.append(Decision(pair.pk, "keep", version=pair.version))
        elif k.action == "modify":
            out.append(Decision(pair.pk, "modify", answer=f"{pair.answer} (checked)", version=pair.version))
        else:
            out.append(Decision(pair.pk, "delete", reason=k.reason, version=pair.version))
    return out


def _qualify(project, trainee, stdout) -> list[dict]:
    """The trainee's tries, through the real queue: the first keeps everything, the next decide as
    known. Stops once they passed, or when the queue serves them no qualification unit."""
    for _ in range(20):  # every unit of at most two tries
        if Standing.objects.filter(project=project, user=trainee, qualified_at__isnull=False).exists():
            break
        try:
            item = claim_next(project, trainee)
        except Forbidden as refused:  # no qualification set (nothing was verified yet), or out of tries
            stdout.write(f"gold: {trainee.username} cannot qualify: {refused}")
            break
        if item is None or item.kind != QueueItem.Kind.QUALIFICATION:
            break
        first_try = Copy.objects.get(unit_id=item.unit_id).attempt.number == 1
        submit_unit(
            item.unit_id,
            trainee,
            idempotency_key=f"demo-qualification-{item.pk}",
            additions=[],
            time_spent_ms=None,
            decisions=_decide(item, right=not first_try),
        )
        attempt = Attempt.objects.get(pk=Copy.objects.get(unit_id=item.unit_id).attempt_id)
        if attempt.finished_at is not None:
            stdout.write(
                f"gold: {trainee.username}'s qualification try {attempt.number}: {attempt.agreed} of "
                f"{attempt.decisions} decisions agree ({attempt.score:.0%}, threshold {attempt.threshold:.0%}): "
                + ("passed, the real queue is open to them" if attempt.passed else "failed")
            )
    return list(
        Attempt.objects.filter(project=project, user=trainee).order_by("number").values("number", "score", "passed")
    )


def _gold(project, trainee, stdout, policy) -> int:
    """The trainee verifies real units until one gold copy was served to them (at most
    ``DEMO_GOLD_CLAIMS`` claims; the seed is chosen so that one of them draws gold)."""
    standing = Standing.objects.filter(project=project, user=trainee, qualified_at__isnull=False).first()
    if standing is None or Copy.objects.filter(user=trainee, source__role=Source.Role.GOLD).exists():
        return _served(trainee)
    claims = range(standing.claims + 1, standing.claims + 1 + DEMO_GOLD_CLAIMS)
    # The first claim here never draws gold: no claim before it made a copy ahead (gold.claims).
    seed = next(
        s
        for s in range(100_000)
        if any(rules.draws_gold(s, project.pk, trainee.pk, n, policy.gold_rate, draw_secret()) for n in claims[1:])
    )
    services.set_policy(project, seed=seed)
    for _ in claims:
        item = claim_next(project, trainee)
        if item is None:
            break
        # What the claim's gold.premake_for message asks a worker to do, done here at once so that
        # every run of the demo is the same: the next claim's copy, if it draws gold.
        premake(project_id=project.pk, user_id=trainee.pk)
        gold = Copy.objects.filter(unit_id=item.unit_id, source__role=Source.Role.GOLD).exists()
        pairs = list(pairs_for_pass(item.unit, item.kind).order_by("id"))
        submit_unit(
            item.unit_id,
            trainee,
            idempotency_key=f"demo-gold-{item.pk}",
            additions=[],
            time_spent_ms=None,
            decisions=_decide(item, right=True) if gold else [Decision(p.pk, "keep", version=p.version) for p in pairs],
        )
        stdout.write(
            f"gold: {trainee.username} verified unit {item.unit_id}"
            + (" (a gold unit, made ahead after the claim before; nothing in the page told it apart)" if gold else "")
        )
        if gold:
            break
    return _served(trainee)


def _served(trainee) -> int:
    """How many gold copies were served to ``trainee`` (claimed): the premake after the gold claim
    may have made the next one ahead, which waits unserved."""
    return (
        Copy.objects.filter(user=trainee, source__role=Source.Role.GOLD, unit__queue_items__claimed_at__isnull=False)
        .distinct()
        .count()
    )


def _totals(project, user) -> tuple[int, int]:
    rows = Result.objects.filter(project=project, user=user, role=Source.Role.GOLD).values_list("agreed", "decisions")
    return sum(a for a, _ in rows), sum(d for _, d in rows)
