"""Input bounds shared by the API's serializers and the pages, and a validator for text PostgreSQL can store.

PostgreSQL ``text`` and ``jsonb`` cannot hold a NUL character (U+0000), and a lone UTF-16
surrogate (U+D800..U+DFFF, which JSON's ``\\ud800`` escape can produce) cannot be encoded as
UTF-8; either reaching the database is a 500. DRF's ``CharField`` already refuses both; this module
does the same for free-form JSON (``JSONField``: every key and value, nested) and for query
parameters read without a ``CharField``.
"""

from __future__ import annotations

from rest_framework import serializers

# Integer bounds of the database columns (PostgreSQL integer and bigint).
INT_MAX = 2**31 - 1
BIGINT_MAX = 2**63 - 1
# Milliseconds since the epoch from a browser's clock (Date.now()); JavaScript's largest safe integer.
CLIENT_MS_MAX = 2**53 - 1
# A static sanity bound on a reported time spent (ms): one day. The service bounds it further by the
# lease's wall time.
TIME_SPENT_MS_MAX = 24 * 3600 * 1000
# Text fields: a QA pair's question or answer (``annotator.qa.services.MAX_TEXT``), markdown, labels.
TEXT_MAX = 4000
MARKDOWN_MAX = 50_000
LABEL_MAX = 200
FILTER_MAX = 100
# Lists: options of a multiple-choice question, decisions (one per QA pair of a unit) and additions.
OPTIONS_MAX = 26
DECISIONS_MAX = 500
ADDED_MAX = 100
# JSON nesting accepted in free-form state (the verify page's autosave nests 4 levels).
JSON_DEPTH_MAX = 32


def unstorable(text: str) -> str | None:
    """Why ``text`` cannot be stored in PostgreSQL, or None: a NUL character or a lone surrogate."""
    if "\x00" in text:
        return "must not contain NUL (\\u0000) characters"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "must be valid Unicode (no lone surrogate)"
    return None


def storable_json(value, path: str = "", depth: int = 0) -> None:
    """Walk a parsed JSON value (dicts, lists, strings, numbers) and raise ``ValidationError`` at the
    first key, string or number PostgreSQL or a reader cannot store (NUL, lone surrogates, integers
    beyond 2^53 - 1; DRF's JSONField already refuses infinite floats), or past ``JSON_DEPTH_MAX`` levels of nesting. The
    message names the path (``state.items[2].text``)."""
    if depth > JSON_DEPTH_MAX:
        raise serializers.ValidationError(f"{path or 'value'} nests deeper than {JSON_DEPTH_MAX} levels")
    if isinstance(value, str):
        if (why := unstorable(value)) is not None:
            raise serializers.ValidationError(f"{path or 'value'} {why}")
    elif isinstance(value, dict):
        for key, item in value.items():
            if (why := unstorable(str(key))) is not None:
                raise serializers.ValidationError(f"a key of {path or 'value'} {why}")
            storable_json(item, f"{path}.{key}" if path else str(key), depth + 1)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            storable_json(item, f"{path}[{i}]", depth + 1)
    elif isinstance(value, int) and not isinstance(value, bool) and abs(value) > CLIENT_MS_MAX:
        raise serializers.ValidationError(f"{path or 'value'} is larger than {CLIENT_MS_MAX} in magnitude")


class StorableJSONField(serializers.JSONField):
    """A ``JSONField`` whose keys and strings, at any depth, PostgreSQL can store (see ``storable_json``)."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.validators.append(storable_json)
