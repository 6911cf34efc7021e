"""Multi-stage drafting pipelines (issue 10). Each module of this package but ``base`` (and names
starting with "_") defines one pipeline and registers it and its stages (``base.register``,
``inference.engine.register``); importing this package loads them all, found without a list.
``annotator.drafts.runs`` runs them. A new pipeline is one module here: docs/extending.md."""

from annotator.core import registry
from annotator.drafts.pipelines.base import (  # noqa: F401
    PIPELINES,
    JobContext,
    PipelineDef,
    Result,
    register,
    stage_names,
)

registry.import_modules(__name__, __path__)
