"""The drafting pipelines, by name, in ``position`` order: filled by ``drafts.pipelines.base.register``
when ``DraftsConfig.ready`` imports the package ``annotator.drafts.pipelines``. Apart so that the
models can read it (``DraftRun.pipeline``'s choices) without importing the pipelines, which import
the models."""

from __future__ import annotations

PIPELINES: dict = {}  # name -> drafts.pipelines.base.PipelineDef
