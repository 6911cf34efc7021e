"""The ``consensus`` field of every export row (issue 20, section 4): what became of a QA pair on
which the blind passes (first pass and overlap) disagreed.

``{"status", "decision", "keep", "modify", "delete"}``: ``status`` is ``""`` (never sent to the
consensus round: one pass, or all passes agreed), ``"open"`` (waiting for a reviewer) or
``"reconciled"``; ``decision`` the reviewer's agreed keep, modify or delete (``""`` until
reconciled); ``keep``, ``modify`` and ``delete`` how many blind passes decided so when the pair
was sent (0 when it never was). Counts rather than a list of who decided what: no value is ever
null or an empty list, so readers infer the declared type (who decided what is in the agreement
export's ratings, under the same pseudonyms).
"""

from __future__ import annotations

from django.db import connection

from annotator.agreement import scopes
from annotator.qa.exports.schema import RowPart, register_part

DEFAULT = {"status": "", "decision": "", "keep": 0, "modify": 0, "delete": 0}

_SQL = """
SELECT c.item, c.status, c.consensus::text, c.answers::text
FROM agreement_consensusitem c JOIN agreement_scope s ON s.id = c.scope_id
WHERE s.project_id = %s AND s.key = %s AND c.subset = ''
  AND (CASE WHEN c.item ~ '^[0-9]{1,18}$' THEN c.item::bigint END) BETWEEN %s AND %s"""


def _arrow_type():
    import pyarrow as pa

    return pa.struct(
        [
            ("status", pa.string()),
            ("decision", pa.string()),
            ("keep", pa.int64()),
            ("modify", pa.int64()),
            ("delete", pa.int64()),
        ]
    )


def fetch(project_id: int, first_qa_id: int, last_qa_id: int) -> dict[int, dict]:
    """The consensus field of the QA pairs ``first_qa_id`` to ``last_qa_id`` that went to the round
    (one query): ``{qa id: {"status", "decision", "keep", "modify", "delete"}}``."""
    import orjson

    out = {}
    with connection.cursor() as cursor:
        cursor.execute(_SQL, [project_id, scopes.VERIFICATION, first_qa_id, last_qa_id])
        for item, status, consensus, answers in cursor.fetchall():
            consensus = orjson.loads(consensus) if consensus else None
            values = [a.get("value") for a in orjson.loads(answers or "[]") if isinstance(a, dict)]
            out[int(item)] = {
                "status": "reconciled" if status == "done" else "open",
                "decision": consensus if isinstance(consensus, str) and status == "done" else "",
                **{d: values.count(d) for d in ("keep", "modify", "delete")},
            }
    return out


PART = register_part(RowPart("consensus", _arrow_type, DEFAULT, fetch))
