"""A cheaper end for a transactional test (``transaction=True``, ``live_server``, ``worker``): the same
empty tables as Django's flush, without TRUNCATE of all 73 tables (a new file for each table and index,
about 0.25 s) and without the post_migrate signal that makes the content types and permissions again
(about 0.1 s). Measured on this machine, idle: 0.35 s a test before, about 0.02 s after.

What is left after a test is what Django's flush leaves (every table of a model empty, the content
types and permissions there), with two differences no test can see through the ORM: sequences go on
(as with flush's ``reset_sequences=False``) and the content type and permission rows keep their ids.

How: one query finds the tables of Django's models that hold rows. The tables with triggers of their
own (qa_revision and exposure_exposure refuse DELETE, the studies counters act on it) are emptied with
TRUNCATE, together with every table whose foreign keys point at them (PostgreSQL wants them in the same
statement); the other tables that hold rows with DELETE, in one transaction (Django's foreign keys are
checked at commit, when every row is gone). The content type and permission tables are kept; when their
row counts differ from the ones Django's flush and post_migrate left at the first transactional test of
the session, Django's own flush runs instead.
"""

from __future__ import annotations

from django.db import connections, transaction
from django.test import TransactionTestCase

# Made again by post_migrate after Django's flush: kept instead.
KEPT = ("django_content_type", "auth_permission")

_ORIGINAL = TransactionTestCase._fixture_teardown
_kept_counts: dict[str, tuple[int, ...]] = {}


def _kept(cursor) -> tuple[int, ...]:
    cursor.execute(" UNION ALL ".join(f"(SELECT count(*) FROM {t})" for t in KEPT))
    return tuple(row[0] for row in cursor.fetchall())


def empty_tables(alias: str = "default") -> list[str]:
    """Empty every table of Django's models in database ``alias`` but the content types and permissions
    (see the module's docstring). Returns the names of the tables that held rows, sorted."""
    connection = connections[alias]
    qn = connection.ops.quote_name
    tables = sorted(
        set(connection.introspection.django_table_names(only_existing=True, include_views=False)) - set(KEPT)
    )
    with transaction.atomic(using=alias, savepoint=False), connection.cursor() as cursor:
        cursor.execute(" UNION ALL ".join(f"SELECT %s WHERE EXISTS (SELECT 1 FROM {qn(t)})" for t in tables), tables)
        full = sorted(row[0] for row in cursor.fetchall())
        if not full:
            return []
        # Tables that hold rows and have triggers of their own, then every table referring to them.
        cursor.execute(
            """
            WITH RECURSIVE refs(rel) AS (
                SELECT DISTINCT tgrelid FROM pg_trigger WHERE NOT tgisinternal AND tgrelid = ANY(%s::regclass[])
                UNION
                SELECT c.conrelid FROM pg_constraint c JOIN refs ON c.confrelid = refs.rel WHERE c.contype = 'f'
            ) SELECT c.relname FROM refs JOIN pg_class c ON c.oid = refs.rel""",
            [[qn(t) for t in full]],
        )
        truncated = sorted(row[0] for row in cursor.fetchall())
        if truncated:
            cursor.execute(f"TRUNCATE {', '.join(qn(t) for t in truncated)}")
        for table in full:
            if table not in truncated:
                cursor.execute(f"DELETE FROM {qn(table)}")
    return full


def _django_flush(self) -> None:
    """Django's own end (flush, then post_migrate); notes the content type and permission counts it leaves."""
    _ORIGINAL(self)
    for alias in self._databases_names(include_mirrors=False):
        with connections[alias].cursor() as cursor:
            _kept_counts[alias] = _kept(cursor)


def _fixture_teardown(self) -> None:
    """TransactionTestCase's end, done by ``empty_tables`` (Django's flush the first time and whenever
    the content types or permissions changed)."""
    if self.available_apps is not None or self.serialized_rollback:
        return _ORIGINAL(self)
    aliases = list(self._databases_names(include_mirrors=False))
    if any(alias not in _kept_counts for alias in aliases):
        return _django_flush(self)
    for alias in aliases:
        empty_tables(alias)
        with connections[alias].cursor() as cursor:
            if _kept(cursor) != _kept_counts[alias]:
                return _django_flush(self)


def install() -> None:
    """Put ``_fixture_teardown`` in place of TransactionTestCase's (tests/conftest.py does, once)."""
    TransactionTestCase._fixture_teardown = _fixture_teardown
