"""Rating sets: ratings imported from elsewhere (or a model judge's), checked and stored."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator

from django.db import connection, transaction

from annotator.agreement.models import (
    LEVELS,
    ConsensusItem,
    Rating,
    RatingSet,
)
from annotator.errors import Conflict, Invalid
from annotator.projects.models import Project

RATINGS_MAX = 200_000


# ------------------------------------------------------------------------------ rating sets

TEXT_MAX = 4000


def _check_value(value, level: str, where: str):
    if value is None:
        return None
    if level == "text":  # a free-text answer (open answers, proposed answers): semantic agreement
        if not isinstance(value, str) or not value.strip() or len(value) > TEXT_MAX:
            raise Invalid(f"{where}: an answer is a text of 1 to {TEXT_MAX:,} characters")
        return value.strip()
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise Invalid(f"{where}: a value is a number, a text or null")
    if isinstance(value, float) and not math.isfinite(value):
        raise Invalid(f"{where}: a value must be a finite number")
    if isinstance(value, str):
        if level != "nominal":
            raise Invalid(f"{where}: {level} ratings must be numbers, not {value[:40]!r}")
        if not value.strip() or len(value) > 200:
            raise Invalid(f"{where}: a category is a text of 1 to 200 characters")
    return value


def _check_label(value, field: str, where: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 200:
        raise Invalid(f"{where}: {field} must be a text of 1 to 200 characters")
    if "\x00" in value or not _storable(value):
        raise Invalid(f"{where}: {field} must not contain NUL characters or lone surrogates")
    return value


def _storable(text: str) -> bool:
    """Whether PostgreSQL can hold ``text``: UTF-8 encodable (no lone surrogate)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def check_ratings(ratings: Iterable[dict], level: str) -> Iterator[tuple[str, str, object]]:
    """The (item, rater, value) of each rating of ``ratings`` (any iterable, read once, as it
    arrives), checked one by one with plain checks: item and rater texts of 1 to 200 characters, the
    value by the level (``_check_value``), no rater twice on an item, at most RATINGS_MAX ratings
    (refused at rating RATINGS_MAX + 1, before reading further). Null values (missing ratings) are
    checked and counted but not yielded. Raises Invalid naming the first bad rating by its 1-based
    position ("rating 7: ..."), or the limit."""
    # One text per (item, rater): NUL is refused above, so "item\0rater" is unambiguous and about half
    # the memory of a tuple (200,000 of them: ~20 MB).
    seen: set[str] = set()
    limit = RATINGS_MAX
    for n, r in enumerate(ratings, 1):
        if n > limit:
            raise Invalid(too_many(limit))
        where = f"rating {n}"
        if not isinstance(r, dict):
            raise Invalid(f"{where}: each rating is an object with item, rater and value")
        item = _check_label(r.get("item"), "item", where)
        rater = _check_label(r.get("rater"), "rater", where)
        value = _check_value(r.get("value"), level, where)
        key = f"{item}\x00{rater}"
        if key in seen:
            raise Invalid(f"{where}: rater {rater!r} already rated item {item!r}")
        seen.add(key)
        if value is not None:
            yield item, rater, value


def too_many(limit: int) -> str:
    """The refusal of a rating set over ``limit`` ratings, in plain words."""
    return f"more than {limit:,} ratings: a rating set holds at most {limit:,}; send the rest as another set"


def import_ratings(
    project: Project,
    name: str,
    level: str,
    ratings: Iterable[dict],
    *,
    source: str = "external",
    description: str = "",
    replace: bool = False,
) -> RatingSet:
    """Store ``ratings`` (``{"item": str, "rater": str, "value": number|str|null}`` each, at most
    RATINGS_MAX; a list or any iterable, e.g. a request body being read) as rating set ``name`` of
    the project; null values are missing ratings and are not stored. ``replace``: an existing set of
    that name is replaced, else Conflict (raised before a rating is read). Raises Invalid (plain
    words, naming the first bad rating by its 1-based position, or the limit: ``check_ratings``).

    Steps, in one transaction (all or nothing: a bad rating at any position, or an error of the
    iterable itself, rolls back the set and every rating written before it):
    1. lock the set of that name if any (``SELECT ... FOR UPDATE``); Conflict, or delete it (and its
       consensus round) when replacing; create the new set;
    2. read the ratings one at a time, check each (``check_ratings``) and write it through one
       ``COPY ... FROM STDIN`` (psycopg sends it in batches as it fills), so neither the ratings nor
       model instances are held in memory: 200,000 ratings take a few seconds, not the ORM's ~30 s.
    The stored count is ``rs.ratings.count()``."""
    if level not in dict(LEVELS):
        raise Invalid(f"level must be one of {', '.join(dict(LEVELS))}")
    if source not in RatingSet.Source.values:
        raise Invalid("source must be external or judge")
    with transaction.atomic():
        existing = RatingSet.objects.select_for_update().filter(project=project, name=name).first()
        if existing is not None:
            if not replace:
                raise Conflict(f"a rating set named {name!r} exists; replace it or choose another name")
            existing.delete()
            # The old set's consensus round was about other ratings: it goes with them.
            ConsensusItem.objects.filter(scope__project=project, scope__key=f"ratings:{name}").delete()
        rs = RatingSet.objects.create(project=project, name=name, level=level, source=source, description=description)
        table = connection.ops.quote_name(Rating._meta.db_table)
        with (
            connection.cursor() as cursor,
            cursor.cursor.copy(f"COPY {table} (rating_set_id, item, rater, value) FROM STDIN") as copy,
        ):
            for item, rater, value in check_ratings(ratings, level):
                # The value column is jsonb: its text form, as Django's JSONField writes it (json.dumps).
                copy.write_row((rs.pk, item, rater, json.dumps(value)))
    return rs
