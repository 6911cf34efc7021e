"""Gold fixtures: verified units (each verified by a person through the queue: keep, modify, delete
with a reason, keep), and helpers to answer a copy right or wrong against its known decisions."""

from __future__ import annotations

import pytest

from annotator.gold.models import Copy, Known
from annotator.projects.services import ensure_member
from annotator.qa.models import QAPair
from annotator.qa.queue import claim_next
from annotator.qa.services import Decision, skip_unit, submit_unit


@pytest.fixture
def verifier(project):
    return ensure_member("verifier", role="reviewer", project=project)[0]


def decide_as_verified(pair: QAPair, i: int) -> Decision:
    """The decisions of the verifier on a ``make_unit`` unit's pairs: keep, modify, delete (vague),
    keep (the multiple-choice pair)."""
    if i == 1:
        return Decision(pair.pk, "modify", answer=f"{pair.answer} (fixed)", version=pair.version)
    if i == 2:
        return Decision(pair.pk, "delete", reason="vague", version=pair.version)
    return Decision(pair.pk, "keep", version=pair.version)


@pytest.fixture
def make_verified(project, make_unit, verifier):
    """Factory: ``n`` real units, each claimed and verified by ``verifier`` (4 QA pairs: keep, modify,
    delete as vague, keep); returns them. The project's double-check share is set to 0 first."""
    project.double_check_share = 0
    project.save()
    counter = iter(range(10**6))

    def make(n: int = 1):
        units = [make_unit() for _ in range(n)]
        for unit in units:
            item = claim_next(project, verifier)
            assert item.unit_id == unit.pk, "the verifier gets the units in order"
            pairs = list(unit.qa_pairs.order_by("id"))
            submit_unit(
                unit.pk,
                verifier,
                idempotency_key=f"verify-{next(counter)}",
                time_spent_ms=1000,
                additions=[],
                decisions=[decide_as_verified(p, i) for i, p in enumerate(pairs)],
            )
        return units

    return make


def known_of(unit_id: int) -> dict[int, Known]:
    """The known decision of each QA pair of a copy unit, by copy QA pair id."""
    copy = Copy.objects.get(unit_id=unit_id)
    known = Known.objects.in_bulk(list(copy.pairs.values()))
    return {int(pair_id): known[k] for pair_id, k in copy.pairs.items()}


def answer(item, user, *, right: int | None = None, key: str) -> dict:
    """Submit the person's pass over a copy: the first ``right`` QA pairs (all when None) decided as
    known, the rest with a wrong action (keep where the known is not keep, else delete as vague)."""
    known = known_of(item.unit_id)
    pairs = list(item.unit.qa_pairs.filter(status="draft").order_by("id"))
    decisions = []
    for i, pair in enumerate(pairs):
        k = known[pair.pk]
        if right is None or i < right:
            if k.action == "modify":
                decisions.append(Decision(pair.pk, "modify", answer=pair.answer + " (mine)", version=pair.version))
            else:
                decisions.append(Decision(pair.pk, k.action, reason=k.reason, version=pair.version))
        elif k.action != "keep":
            decisions.append(Decision(pair.pk, "keep", version=pair.version))
        else:
            decisions.append(Decision(pair.pk, "delete", reason="vague", version=pair.version))
    return submit_unit(item.unit_id, user, idempotency_key=key, time_spent_ms=500, additions=[], decisions=decisions)


def seed_for(project, user, pattern: list[bool], *others: tuple) -> int:
    """A policy seed under which the person's claims 1, 2, ... draw gold exactly as ``pattern`` says
    (at the policy's rate, set to 0.5 by the caller), and each ``(other_user, other_pattern)`` of
    ``others`` as theirs says: the draws depend on the ids, which earlier tests move on."""
    from annotator.gold.claims import draw_secret
    from annotator.gold.rules import draws_gold

    wanted = [(user, pattern), *others]
    for seed in range(100_000):
        if all(
            draws_gold(seed, project.pk, person.pk, n, 0.5, draw_secret()) == want
            for person, draws in wanted
            for n, want in enumerate(draws, start=1)
        ):
            return seed
    raise AssertionError("no seed draws this pattern")


def first_claim_skipped(project, person, *, submit: bool = False):
    """Claim the person's first unit and skip it (``submit``: submit it, keeping every pair). A first
    claim is always real: no claim before it sent ``gold.premake_for`` (issue 20, M2 and M4: the
    claim makes no copy itself). Taking it sends the message, which makes the copy their second
    claim may draw. Returns the item."""
    item = claim_next(project, person)
    assert item is not None and item.unit.purpose == "real"
    if submit:
        submit_unit(
            item.unit_id,
            person,
            idempotency_key=f"first-{item.pk}",
            time_spent_ms=500,
            additions=[],
            decisions=[Decision(p.pk, "keep", version=p.version) for p in item.unit.qa_pairs.order_by("id")],
        )
    else:
        skip_unit(item.unit_id, person, "not now")
    return item
