"""The one way an extension point keeps its registry (issue 23, "one registry style"): a dict from
name to extension, in the extensions' ``position`` order, then by name, whatever order their modules
were imported in. Drafting pipelines, export formats and agreement scopes use it; each extension's
module calls its point's ``register``, which checks what it must and then ``add``s. An extension
point's package finds its modules with ``import_modules``, without a list."""

from __future__ import annotations

import importlib
import pkgutil


def add(registry: dict, name: str, extension) -> None:
    """Put ``extension`` (anything with a ``position``, a number) in ``registry`` under ``name``,
    replacing one of that name, and keep the dict ordered by (position, name)."""
    registry[name] = extension
    ordered = sorted(registry.items(), key=lambda item: (item[1].position, item[0]))
    registry.clear()
    registry.update(ordered)


def import_modules(package: str, path) -> None:
    """Import every module of package ``package`` (its ``__name__``; ``path``: its ``__path__``) whose
    name does not start with "_": each extension module registers itself on import."""
    for module in pkgutil.iter_modules(path):
        if not module.name.startswith("_"):
            importlib.import_module(f"{package}.{module.name}")
