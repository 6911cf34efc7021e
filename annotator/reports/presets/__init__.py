"""Report presets: one module per paper's table layout, each registering itself here (issue 18,
part 5). A preset names one or more tables, each with its split fields, its metrics and its order;
``report --preset NAME`` and ``?preset=NAME`` take their choices from ``PRESETS``.

Adding a preset is one module in this package calling ``register(Preset(...))``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from annotator.core import registry


@dataclass(frozen=True)
class Table:
    """One table of a preset: a ``title``, the split fields (``by``, rows), the ``metrics`` it reports
    (a table per metric present in the data, in this order; the first when none is), the rows' order
    per field (``order``: values first, in this order) and ``human_by``: fields whose value splits
    the human column ("human · 60 s": EgoExoBench's people at 1 and 3 minutes beside the models)."""

    title: str
    by: tuple[str, ...]
    metrics: tuple[str, ...]
    order: dict = field(default_factory=dict)
    human_by: tuple[str, ...] = ()


@dataclass(frozen=True)
class Preset:
    """A paper's table layout: ``name`` (the choice), ``title``, the ``source`` (paper and table) and
    its ``tables``."""

    name: str
    title: str
    source: str
    tables: tuple[Table, ...]


PRESETS: dict[str, Preset] = {}


def register(preset: Preset) -> Preset:
    """Add ``preset`` to ``PRESETS`` (a module calls this once, at import). Raises ValueError for a
    name taken by another preset."""
    if preset.name in PRESETS and PRESETS[preset.name] is not preset:
        raise ValueError(f"report preset {preset.name!r} is registered twice")
    PRESETS[preset.name] = preset
    return preset


def choices() -> list[str]:
    """Every preset's name, sorted."""
    return sorted(PRESETS)


registry.import_modules(__name__, __path__)
