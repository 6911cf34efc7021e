"""The agreement scopes' registry and what a scope gives: ``Dataset`` objects (see the package).

A kind of scope is one module of ``annotator.agreement.scopes`` that registers a ``ScopeKind``:
its key ``prefix``, whether its keys name something (``named``: ``study:<name>``) or are the prefix
alone (``verification``), and three functions: ``discover(project)`` (key -> watermark for each of
its scopes with judgments), ``exists(project, name)`` and ``datasets(project, name)``."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from annotator.core import registry


@dataclass
class Dataset:
    """One subset of a scope's judgments, ready for ``annotator.scoring.agreement``.

    ``kind``: ``ratings`` (``triples`` of (item, rater, value), measured at each of ``levels``),
    ``texts`` (``texts[item]`` = [(rater, text)], semantic agreement) or ``orderings``
    (``orderings[item]`` = [(rater, [element ids])]). ``metrics`` restricts the metrics (None: all
    that apply). ``labels[item]`` = (what it is, in words; link to its history or '')."""

    subset: str
    kind: str
    levels: tuple[str, ...] = ("nominal",)
    triples: list[tuple[str, str, object]] = field(default_factory=list)
    texts: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    orderings: dict[str, list[tuple[str, list]]] = field(default_factory=dict)
    metrics: tuple[str, ...] | None = None
    labels: dict[str, tuple[str, str]] = field(default_factory=dict)

    def canonical(self) -> dict:
        """The inputs as plain sorted JSON (for the computation's fingerprint)."""
        return {
            "subset": self.subset,
            "kind": self.kind,
            "levels": list(self.levels),
            "triples": sorted([list(t) for t in self.triples], key=lambda t: (t[0], t[1])),
            "texts": {k: sorted(v) for k, v in sorted(self.texts.items())},
            "orderings": {k: sorted([[r, list(map(str, o))] for r, o in v]) for k, v in sorted(self.orderings.items())},
            "metrics": list(self.metrics) if self.metrics else None,
        }


@dataclass(frozen=True)
class ScopeKind:
    """A kind of agreement scope (see the module's docstring). ``discover(project) -> {key:
    watermark}``: its scopes of ``project`` that have judgments, each with a small JSON object that
    changes whenever its inputs may have; ``exists(project, name) -> bool``; ``datasets(project,
    name) -> [Dataset]``, whole scope first (``name`` is "" for an unnamed kind); ``position``: its
    place among the kinds (``discover`` lists their scopes in that order)."""

    prefix: str
    named: bool
    discover: Callable
    exists: Callable
    datasets: Callable
    position: int = 100


SCOPES: dict[str, ScopeKind] = {}


def register(kind: ScopeKind) -> ScopeKind:
    """Add ``kind`` to ``SCOPES``. Raises ValueError for a prefix with a colon or already taken."""
    if ":" in kind.prefix or not kind.prefix:
        raise ValueError(f"a scope prefix is a non-empty word without a colon: {kind.prefix!r}")
    if kind.prefix in SCOPES and SCOPES[kind.prefix] != kind:
        raise ValueError(f"two kinds of scope use the prefix {kind.prefix!r}")
    registry.add(SCOPES, kind.prefix, kind)
    return kind
