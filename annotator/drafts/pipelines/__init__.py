"""Multi-stage drafting pipelines (issue 10). Each module defines one pipeline and registers it
and its stages; ``annotator.drafts.runner`` runs them. Importing this package loads them all."""

from annotator.drafts.pipelines.base import PIPELINES, JobContext, PipelineDef, Result, register  # noqa: F401

# Each pipeline module registers itself on import.
for _name in ("templates", "llm", "egonight", "vudg", "egoexobench", "importer"):
    try:
        __import__(f"annotator.drafts.pipelines.{_name}")
    except ModuleNotFoundError as exc:  # a pipeline not built yet
        if exc.name != f"annotator.drafts.pipelines.{_name}":
            raise
