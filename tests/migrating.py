"""Tests of data migrations: put the test database back at an older migration state, write rows
through that state's historical models, then migrate forward and read them through today's."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.apps.registry import Apps
from django.db import connection
from django.db.migrations.executor import MigrationExecutor


@contextmanager
def at_state(before: list[tuple[str, str | None]]) -> Iterator[Apps]:
    """Migrate the test database to ``before`` (``[(app, migration name or None)]``) and yield the
    historical apps of that state; on leaving, whatever happened, migrate it to the latest state
    (so the rows written inside have gone through every later migration). Needs a transactional
    test (``django_db(transaction=True)``)."""
    executor = MigrationExecutor(connection)
    latest = executor.loader.graph.leaf_nodes()
    executor.migrate(before)
    try:
        yield executor.loader.project_state([b for b in before if b[1] is not None]).apps
    finally:
        MigrationExecutor(connection).migrate(latest)
