"""The move of ModelServer and ModelCall from drafts to inference (issue 18) keeps every row.

The test database is put back at the migration state of the main branch before the move (drafts
0004, evaluation 0004, no inference app), rows are written through the historical models of that
state (a server, an answered call, a cache hit of it, an evaluation naming the server), the
migrations are applied forward, and the rows are read back through the new models, with their
ids, fields and links, from the renamed tables."""

from __future__ import annotations

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from annotator.evaluation.models import Evaluation
from annotator.inference.models import ModelCall, ModelServer

BEFORE = [("drafts", "0004_key_env_rule"), ("evaluation", "0004_study_items_and_ablations"), ("inference", None)]


def _tables() -> set[str]:
    with connection.cursor() as cursor:
        return set(connection.introspection.table_names(cursor))


@pytest.mark.django_db(transaction=True)
def test_the_move_to_inference_keeps_every_server_and_call_row():
    executor = MigrationExecutor(connection)
    latest = executor.loader.graph.leaf_nodes()
    executor.migrate(BEFORE)
    try:
        _check_rows_survive(executor, latest)
    finally:  # leave the test database at the latest state whatever happened
        MigrationExecutor(connection).migrate(latest)


def _check_rows_survive(executor: MigrationExecutor, latest) -> None:
    assert {"drafts_modelserver", "drafts_modelcall"} <= _tables()
    assert not {"inference_modelserver", "inference_modelcall"} & _tables()
    old = executor.loader.project_state(BEFORE[:2]).apps  # ("inference", None) is no node
    project = old.get_model("projects", "Project").objects.create(slug="moved", name="Moved")
    server = old.get_model("drafts", "ModelServer").objects.create(
        project=project,
        name="local",
        base_url="http://127.0.0.1:9/v1",
        model="m-7b",
        key_env="LOCAL_API_KEY",
        concurrency=3,
        price_prompt_per_mtok=0.5,
        price_completion_per_mtok=1.5,
        timeout_s=30.0,
    )
    Call = old.get_model("drafts", "ModelCall")
    answered = Call.objects.create(
        project=project,
        server=server,
        stage="caption",
        prompt_version="v2",
        attempt=1,
        model="m-7b",
        request={"text": "describe"},
        raw_output='{"caption": "a"}',
        output={"caption": "a"},
        cache_key="k" * 64,
        cost_usd=0.25,
        prompt_tokens=100,
        completion_tokens=20,
        latency_ms=812,
    )
    hit = Call.objects.create(
        project=project,
        server=server,
        stage="caption",
        prompt_version="v2",
        attempt=0,
        model="m-7b",
        request={"text": "describe"},
        output={"caption": "a"},
        cache_key="k" * 64,
        cached_from=answered,
        cost_usd=0.0,
        latency_ms=0,
    )
    evaluation = old.get_model("evaluation", "Evaluation").objects.create(
        project=project,
        server=server,
        judge_server=server,
        model="m-7b",
        judge_model="m-7b",
        endpoint={},
        judge_endpoint={},
        prompt_version="p1",
    )

    executor = MigrationExecutor(connection)
    executor.migrate(latest)

    tables = _tables()
    assert {"inference_modelserver", "inference_modelcall"} <= tables
    assert not {"drafts_modelserver", "drafts_modelcall"} & tables
    got = ModelServer.objects.get(pk=server.pk)
    assert (
        got.project_id,
        got.name,
        got.base_url,
        got.model,
        got.key_env,
        got.concurrency,
        got.price_prompt_per_mtok,
        got.price_completion_per_mtok,
        got.timeout_s,
    ) == (project.pk, "local", "http://127.0.0.1:9/v1", "m-7b", "LOCAL_API_KEY", 3, 0.5, 1.5, 30.0)
    calls = list(
        ModelCall.objects.filter(project_id=project.pk).values_list(
            "id", "server_id", "stage", "attempt", "output", "cached_from_id", "cost_usd", "prompt_tokens", "latency_ms"
        )
    )
    assert calls == [
        (answered.pk, server.pk, "caption", 1, {"caption": "a"}, None, 0.25, 100, 812),
        (hit.pk, server.pk, "caption", 0, {"caption": "a"}, answered.pk, 0.0, None, 0),
    ]
    moved = Evaluation.objects.get(pk=evaluation.pk)
    assert (moved.server, moved.judge_server) == (got, got)
    # New rows go on from the old ids (the identity sequences came along with the tables).
    nxt = ModelCall.objects.create(project_id=project.pk, attempt=1, model="m", request={})
    assert nxt.pk > hit.pk
    # The foreign key from evaluations still holds: deleting the server nulls them (SET NULL in Django),
    # and the database refuses a reference to a server that does not exist.
    with pytest.raises(Exception, match="foreign key"):
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE evaluation_evaluation SET server_id = %s WHERE id = %s", [got.pk + 1000, evaluation.pk]
            )
