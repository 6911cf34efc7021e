"""Multi-stage drafting pipelines (issue 10). Each module of this package but ``base`` (and names
starting with "_") defines one pipeline and registers it and its stages (``base.register``,
``inference.engine.register``); importing this package loads them all, found without a list.
``annotator.drafts.runs`` runs them. A new pipeline is one module here: docs/extending.md."""

import importlib
import pkgutil

from annotator.drafts.pipelines.base import (  # noqa: F401
    PIPELINES,
    JobContext,
    PipelineDef,
    Result,
    register,
    stage_names,
)

for _module in pkgutil.iter_modules(__path__):
    if _module.name != "base" and not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")
