"""A project's gold policy: read it, with the defaults for what it does not set, and set it."""

from __future__ import annotations

import math

from django.db import transaction

from annotator.errors import Invalid
from annotator.gold.models import (
    GOLD_RATE_MAX,
    TRIES_MAX,
    WINDOW_MAX,
    Policy,
)
from annotator.projects.models import Project

# ------------------------------------------------------------------------------------ the policy


def policy_of(project: Project) -> Policy:
    """The project's policy, or an unsaved one with the defaults when it has none."""
    return Policy.objects.filter(project=project).first() or Policy(project=project)


def set_policy(
    project: Project,
    *,
    gold_rate: float | None = None,
    threshold: float | None = None,
    tries: int | None = None,
    window: int | None = None,
    qualification_required: bool | None = None,
    seed: int | None = None,
) -> Policy:
    """Change the project's policy (fields left None stay). Raises Invalid, naming each field out of
    bounds (nothing saved): ``gold_rate`` 0 to 0.5, ``threshold`` 0 to 1, ``tries`` 1 to 20,
    ``window`` (K gold units) 1 to 200, ``seed`` a 32-bit integer."""
    errors = {}
    checks = (
        ("gold_rate", gold_rate, 0, GOLD_RATE_MAX),
        ("threshold", threshold, 0, 1),
        ("tries", tries, 1, TRIES_MAX),
        ("window", window, 1, WINDOW_MAX),
        ("seed", seed, -(2**31), 2**31 - 1),
    )
    for name, value, low, high in checks:
        if value is None:
            continue
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or math.isnan(value)
            or not low <= value <= high
        ):
            errors[name] = f"{name} must be a number from {low} to {high}"
        elif name in ("tries", "window", "seed") and value != int(value):
            errors[name] = f"{name} must be a whole number"
    if errors:
        raise Invalid("the policy has errors; nothing was saved", errors=errors)
    with transaction.atomic():
        policy, _ = Policy.objects.select_for_update().get_or_create(project=project)
        for name, value in (
            ("gold_rate", gold_rate),
            ("threshold", threshold),
            ("tries", tries),
            ("window", window),
            ("qualification_required", qualification_required),
            ("seed", seed),
        ):
            if value is not None:
                setattr(policy, name, int(value) if name in ("tries", "window", "seed") else value)
        policy.save()
    return policy
