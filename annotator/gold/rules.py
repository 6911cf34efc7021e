"""The rules of gold checks and qualification, as pure functions (no Django; tested on their own).

- ``agrees``: a decision agrees with a known one when the action is the same and, for a delete, the
  reason too (the known decisions are keep, modify, or delete with a reason: issue 20, section 1).
- ``draws_gold``: whether a person's n-th claim serves a gold copy, at a rate, reproducibly.
- ``accuracy``: agreed / decided with its 95% Wilson score interval (Wilson 1927; statsmodels'
  ``proportion_confint(method="wilson")``).
- ``pause_accuracy``: the accuracy over the last K gold units when it is below the threshold (a pause
  is due), else None.
- ``pause_delay``: how many more claims a person is served once a pause is due, so that the pause
  does not say which unit was gold.
"""

from __future__ import annotations

import hashlib
import hmac
import random
from collections.abc import Sequence

MAX_PAUSE_DELAY = 2


def agrees(known: tuple[str, str], given: tuple[str, str]) -> bool:
    """Whether ``given`` (action, reason) agrees with ``known`` (action, reason): the same action and,
    for ``delete``, the same reason. A modify agrees with a modify whatever the new text."""
    if known[0] != given[0]:
        return False
    return known[0] != "delete" or known[1] == given[1]


def draws_gold(seed: int, project_id: int, user_id: int, n: int, rate: float, secret: bytes = b"") -> bool:
    """Whether claim number ``n`` (1, 2, ...) of person ``user_id`` in project ``project_id`` serves a
    gold copy, with probability ``rate`` (0 to 1). Drawn from ``random.Random`` seeded by an HMAC
    (SHA-256, key ``secret``: the deployment's, ``claims.draw_secret``) of all of them, so it is
    reproducible on the server, independent between people and claims, uniform over claims, and not
    predictable by someone who knows the ids, the seed and their claim count but not the secret."""
    if rate <= 0:
        return False
    digest = hmac.new(secret, f"gold:{seed}:{project_id}:{user_id}:{n}".encode(), hashlib.sha256).digest()
    return random.Random(digest).random() < rate


def accuracy(agreed: int, decided: int) -> dict:
    """``{"value": agreed / decided, "ci": [lo, hi], "n": decided}``, the interval being the 95% Wilson
    score interval (statsmodels ``proportion_confint(agreed, decided, alpha=0.05, method="wilson")``).
    With nothing decided: value and ci None, n 0. Raises ValueError when agreed > decided or either
    is negative."""
    if agreed < 0 or decided < 0 or agreed > decided:
        raise ValueError(f"agreed ({agreed}) must be between 0 and decided ({decided})")
    if decided == 0:
        return {"value": None, "ci": None, "n": 0}
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(agreed, decided, alpha=0.05, method="wilson")
    return {"value": agreed / decided, "ci": [float(lo), float(hi)], "n": decided}


def pause_accuracy(window: Sequence[tuple[int, int]], k: int, threshold: float) -> float | None:
    """Given a person's gold results, oldest first, as (agreed, decided) per gold unit, the accuracy
    (agreed / decided, pooled over decisions) over the last ``k`` units if it is below ``threshold``;
    None when there are fewer than ``k`` units (not enough to judge) or it is at or above."""
    if k < 1 or len(window) < k:
        return None
    last = window[-k:]
    decided = sum(d for _, d in last)
    if decided == 0:
        return None
    value = sum(a for a, _ in last) / decided
    return value if value < threshold else None


def pause_delay(project_id: int, user_id: int, n: int, secret: bytes = b"") -> int:
    """How many more claims (0 to ``MAX_PAUSE_DELAY``, uniformly) person ``user_id`` of project
    ``project_id`` is served after a pause falls due when their claim count is ``n``. A pause that
    held them from the very next claim would say the unit just submitted was gold (third security
    review of issue 20); after 0, 1 or 2 more units it names none of the last three. Drawn as
    ``draws_gold`` is (an HMAC keyed by ``secret``), so reproducible on the server and not
    predictable by the person."""
    digest = hmac.new(secret, f"pause:{project_id}:{user_id}:{n}".encode(), hashlib.sha256).digest()
    return random.Random(digest).randrange(MAX_PAUSE_DELAY + 1)
