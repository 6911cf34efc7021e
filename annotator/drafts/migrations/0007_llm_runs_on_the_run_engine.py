"""``llm`` is an ordinary pipeline now (issue 18 part 7): its videos are worked by the run's one job
``drafts.run`` on the run engine, with the server of its one stage ``llm`` in ``DraftRun.servers``,
instead of one ``drafts.llm`` job per video against the global ``LLM_BASE_URL``/``LLM_MODEL``
settings, which are gone.

Every row is kept:

- each llm run with no ``servers`` gets ``{"llm": snapshot}``: the model server's snapshot it
  stored in its parameters when it was started with ``--server``; else the endpoint it used
  (``params.base_url`` and the run's model) as a server named ``""``, whose key is read from the
  variable ``LLM_API_KEY`` when that variable is set here (it was the global key), else none;
- for each llm run with a video job still waiting (its ``drafts.llm`` job row queued or running),
  one ``drafts.run`` job row is queued for the run (the reconciler sends it) and the old job rows
  are closed as done, their ``result`` naming the job that took their work.

Draft jobs, drafts and model calls are not touched. Backwards: nothing to undo (the rows stay).
"""

import importlib
import os

from django.db import migrations

# The same hand-over as drafts.0006 did for the templates task (a module name that starts with a digit).
HANDOVER = importlib.import_module("annotator.drafts.migrations.0006_templates_runs_on_the_run_engine")

SNAPSHOT_KEYS = (
    "server",
    "server_id",
    "base_url",
    "model",
    "key_env",
    "concurrency",
    "timeout_s",
    "price_prompt_per_mtok",
    "price_completion_per_mtok",
)


def snapshot_of(run) -> dict:
    params = run.params or {}
    if params.get("server"):
        return {k: params[k] for k in SNAPSHOT_KEYS if k in params}
    key_env = "LLM_API_KEY" if os.environ.get("LLM_API_KEY", "not-needed") not in ("", "not-needed") else ""
    return {"server": "", "base_url": params.get("base_url", ""), "model": run.model, "key_env": key_env}


def hand_over(apps, schema_editor):
    DraftRun = apps.get_model("drafts", "DraftRun")
    for run in DraftRun.objects.filter(pipeline="llm").iterator():
        if not run.servers:
            run.servers = {"llm": snapshot_of(run)}
            run.save(update_fields=["servers"])
    HANDOVER.hand_over_task(apps, "drafts.llm")


class Migration(migrations.Migration):
    dependencies = [("core", "0002_adopt_stranded_work"), ("drafts", "0006_templates_runs_on_the_run_engine")]

    operations = [migrations.RunPython(hand_over, migrations.RunPython.noop)]
