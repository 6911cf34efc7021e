"""Bench fills through the schema (issue 22, section 6): an ``INSERT ... SELECT`` whose column list
comes from the model, not from the bench, so that a column added later is filled with the model's
own default, and one with no default stops the fill with its name instead of failing far away (as
``qa_qapair.videos`` once broke ``bench/queue.py`` unseen).
"""

from __future__ import annotations

from django.db import connection
from django.db.models import NOT_PROVIDED


def insert_select(cursor, model, values: dict[str, str], source: str, params: dict | None = None) -> int:
    """``INSERT INTO <model's table> (<columns>) SELECT <expressions> FROM <source>`` on ``cursor``.

    ``values`` maps column names to SQL expressions over ``source`` (named ``%(name)s`` parameters
    from ``params``; a literal ``%`` is ``%%``). Every other concrete column of the model gets, in
    this order: nothing (the database's own default, ``db_default``), ``now()`` (``auto_now`` and
    ``auto_now_add``), the model's ``default`` (a parameter; "" for a text field that may be blank),
    NULL for a nullable column; an
    auto-incrementing id is left to the database. Returns how many rows were inserted. Raises
    ValueError, naming the table and column, for a column with none of these that ``values`` does
    not give."""
    params = dict(params or {})
    columns, expressions = [], []
    for field in model._meta.concrete_fields:
        column = field.column
        if column in values:
            columns.append(column)
            expressions.append(values[column])
        elif field.primary_key and field.get_internal_type() in ("AutoField", "BigAutoField", "SmallAutoField"):
            continue
        elif getattr(field, "db_default", NOT_PROVIDED) is not NOT_PROVIDED:
            continue
        elif getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
            columns.append(column)
            expressions.append("now()")
        elif field.has_default() or (field.blank and field.empty_strings_allowed and not field.null):
            name = f"_default_{column}"
            params[name] = field.get_db_prep_save(field.get_default(), connection)
            columns.append(column)
            expressions.append(f"%({name})s")
        elif field.null:
            continue
        else:
            raise ValueError(f"bench fill: {model._meta.db_table}.{column} has no default; give it a value")
    unknown = set(values) - {f.column for f in model._meta.concrete_fields}
    if unknown:
        raise ValueError(f"bench fill: {model._meta.db_table} has no column {', '.join(sorted(unknown))}")
    cursor.execute(
        f"INSERT INTO {model._meta.db_table} ({', '.join(columns)}) SELECT {', '.join(expressions)} FROM {source}",
        params,
    )
    return cursor.rowcount
