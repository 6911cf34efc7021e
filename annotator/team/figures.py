"""Per-annotator figures (issue 20, section 5): a registry of named figures, one provider each.

A provider computes one figure for some annotators of a project over a period and returns
``{user_id: value}``; a person it has nothing for is left out (the report shows ``null``). Apps
that own the data register their figures here (``annotator.gold`` registers ``gold_accuracy``,
``annotator.review`` ``rework_rate``), so this module imports none of them: arrows point down
(issue 23).

    @figures.register("rework_rate")
    def rework_rate(project, user_ids, period) -> dict[int, float]: ...
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class Period:
    """A half-open time range ``[start, end)``; None on either side means unbounded."""

    start: datetime | None = None
    end: datetime | None = None


Provider = Callable[[Any, list[int], Period], dict[int, Any]]

REGISTRY: dict[str, Provider] = {}


def register(name: str) -> Callable[[Provider], Provider]:
    """Register ``provider`` as the figure ``name``. Raises ValueError if the name is taken."""

    def decorate(provider: Provider) -> Provider:
        if name in REGISTRY and REGISTRY[name] is not provider:
            raise ValueError(f"figure {name!r} is registered twice")
        REGISTRY[name] = provider
        return provider

    return decorate


def compute(
    project, user_ids: Iterable[int], period: Period, names: Iterable[str] | None = None
) -> dict[str, dict[int, Any]]:
    """Every registered figure (or those in ``names``) for ``user_ids``: ``{figure: {user_id: value}}``.
    Raises KeyError for a name nobody registered."""
    users = sorted(set(user_ids))
    return {name: REGISTRY[name](project, users, period) for name in (names or sorted(REGISTRY))}
