"""REST endpoints of inter-annotator agreement: the dashboard's data (JSON, or every stored report
row as CSV), computing now, rating sets brought from outside, and the consensus round.

For the people who run a project (admins, reviewers, researchers); annotators see no agreement data
(403) and non-members get 404. Admins and researchers bring rating sets. The data is the page's
(``annotator.agreement.dashboard``); the writes are ``annotator.agreement.services``.
"""

import codecs
import itertools
import json
import math
from collections.abc import Iterator

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from annotator import access
from annotator.agreement import dashboard, scopes, services
from annotator.agreement.models import LEVELS, ConsensusItem, RatingSet
from annotator.agreement.services import ratings as rating_sets
from annotator.core.validators import LABEL_MAX, TEXT_MAX, StorableJSONField
from annotator.errors import Invalid, NotFound
from api.exceptions import INVALID_DETAIL, flatten
from api.studies import FormatIsTheExports
from api.views import project_for

SCOPE_MAX = 200
SUBSET_MAX = 300
CONSENSUS_ITEMS_MAX = 10_000
RATERS_MAX = 1000
OVERSEERS_ONLY = OpenApiResponse(description="Only the project's admins, reviewers and researchers see agreement data.")
NO_SCOPE = OpenApiResponse(description="No such project, or no such scope in it.")


# ------------------------------------------------------------------------------ the dashboard's data


class PointOut(serializers.Serializer):
    y = serializers.FloatField(allow_null=True, help_text="The value (null: not measured).")
    yMin = serializers.FloatField(allow_null=True, help_text="95% interval, low (the value itself when none).")
    yMax = serializers.FloatField(allow_null=True, help_text="95% interval, high (the value itself when none).")
    n_items = serializers.IntegerField()
    n_raters = serializers.IntegerField()


class BarSeriesOut(serializers.Serializer):
    round = serializers.ChoiceField(choices=["first", "consensus"])
    label = serializers.CharField()
    points = PointOut(many=True, help_text="One per category.")


class BarsOut(serializers.Serializer):
    categories = serializers.ListField(child=serializers.CharField(), help_text="Metric names (with their level).")
    series = BarSeriesOut(
        many=True, help_text="The first round and, where items were reconciled, after the consensus round."
    )
    low = serializers.FloatField(help_text="The value axis' low end.")
    high = serializers.FloatField(help_text="The value axis' high end.")


class ReportOut(serializers.Serializer):
    metric = serializers.CharField()
    label = serializers.CharField(help_text="The metric in words.")
    level = serializers.CharField(
        allow_blank=True, help_text="nominal, ordinal, interval or ratio ('' for semantic agreement)."
    )
    round = serializers.ChoiceField(choices=["first", "consensus"])
    value = serializers.FloatField(allow_null=True)
    ci = serializers.ListField(
        child=serializers.FloatField(allow_null=True),
        min_length=2,
        max_length=2,
        help_text="95% percentile-bootstrap interval over items [low, high] (nulls: none).",
    )
    n_items = serializers.IntegerField()
    n_raters = serializers.IntegerField()
    method = serializers.CharField(allow_blank=True, help_text="Library, level, weights and interval used.")


class RatersOut(serializers.Serializer):
    raters = serializers.ListField(child=serializers.CharField(), help_text="Rater names (pseudonyms for people).")
    agreement = serializers.ListField(
        child=serializers.ListField(child=serializers.FloatField(allow_null=True)),
        help_text="n x n percent agreement of each pair on the items both rated (null: no shared item; diagonal 1).",
    )
    shared = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField()),
        help_text="n x n items both rated (diagonal: the rater's items).",
    )


class ConfusionOut(serializers.Serializer):
    categories = serializers.ListField(child=serializers.JSONField())
    counts = serializers.ListField(
        child=serializers.ListField(child=serializers.IntegerField()),
        help_text="Coincidence counts: per item and ordered pair of raters, one at "
        "(first rater's value, second rater's value).",
    )


class AnswerOut(serializers.Serializer):
    rater = serializers.CharField()
    value = serializers.JSONField(allow_null=True, help_text="A decision, choice, score, text or order.")


# Plain text, not an enum: drf-spectacular would name it after "status" and collide with the studies' status.
STATUS_HELP = "open, or done (reconciled)."


class SentOut(serializers.Serializer):
    id = serializers.IntegerField()
    status = serializers.CharField(help_text=STATUS_HELP)


class TopItemOut(serializers.Serializer):
    item = serializers.CharField()
    label = serializers.CharField(allow_blank=True)
    link = serializers.CharField(allow_blank=True, help_text="The item's history page ('' if none).")
    disagreement = serializers.FloatField(help_text="0 (all agree) to 1.")
    answers = AnswerOut(many=True)
    consensus = SentOut(allow_null=True, help_text="Its consensus-round item, if it was sent to one.")


class SkippedOut(serializers.Serializer):
    what = serializers.CharField(help_text="The metric (and level), or 'Every metric'.")
    reason = serializers.CharField(help_text="Why it was not measured, in plain words.")


class SubsetOut(serializers.Serializer):
    subset = serializers.CharField(allow_blank=True, help_text="'' for the whole scope, else e.g. qa_type=counting.")
    title = serializers.CharField()
    kind = serializers.ChoiceField(choices=["ratings", "texts", "orderings"])
    kind_words = serializers.CharField()
    level = serializers.CharField(allow_blank=True)
    reports = ReportOut(many=True)
    bars = BarsOut()
    raters = RatersOut(allow_null=True)
    confusion = ConfusionOut(allow_null=True, help_text="Nominal and ordinal judgments only.")
    top = TopItemOut(many=True, help_text="At most 20 items, most disagreement first.")
    can_reconcile = serializers.BooleanField(
        help_text="Its items can go to a consensus round (judgments and free-text answers, not orders)."
    )
    skipped = SkippedOut(many=True)


class TrendPointOut(PointOut):
    x = serializers.IntegerField(help_text="When it was computed, in ms since the epoch.")
    t = serializers.DateTimeField(help_text="When it was computed.")


class TrendSeriesOut(serializers.Serializer):
    metric = serializers.CharField()
    level = serializers.CharField(allow_blank=True)
    round = serializers.ChoiceField(choices=["first", "consensus"])
    label = serializers.CharField()
    points = TrendPointOut(many=True)


class TrendSubsetOut(serializers.Serializer):
    subset = serializers.CharField(allow_blank=True)
    title = serializers.CharField()
    series = TrendSeriesOut(many=True)


class TrendOut(serializers.Serializer):
    subsets = TrendSubsetOut(many=True, help_text=f"Over the scope's latest {dashboard.TREND_MAX} computations.")


class ComputationOut(serializers.Serializer):
    id = serializers.IntegerField()
    trigger = serializers.CharField(help_text="schedule, button, api, command or consensus.")
    seed = serializers.IntegerField(help_text="The bootstrap's seed.")
    n_resamples = serializers.IntegerField(help_text="The bootstrap's resamples.")
    seconds = serializers.FloatField()
    fingerprint = serializers.CharField(allow_blank=True, help_text="SHA-256 of every input read.")
    library_versions = serializers.DictField(child=serializers.CharField())
    computed_at = serializers.DateTimeField()


class CountsOut(serializers.Serializer):
    open = serializers.IntegerField()
    done = serializers.IntegerField()


class ScopeOut(serializers.Serializer):
    key = serializers.CharField(help_text="verification, study:<name> or ratings:<name>.")
    title = serializers.CharField()
    computed_at = serializers.DateTimeField(allow_null=True)
    computing_since = serializers.DateTimeField(allow_null=True, help_text="Set while a computation runs.")
    last_error = serializers.CharField(allow_blank=True)
    new_responses = serializers.BooleanField(
        help_text="Judgments changed since the last computation (or never computed)."
    )
    computation = ComputationOut(allow_null=True)
    consensus = CountsOut(help_text="Items in the consensus round, open and reconciled.")
    subsets = SubsetOut(many=True)
    trend = TrendOut()


class ProjectRefOut(serializers.Serializer):
    slug = serializers.CharField()
    name = serializers.CharField(allow_blank=True)


class DashboardOut(serializers.Serializer):
    project = ProjectRefOut()
    scopes = ScopeOut(many=True)


class DashboardQuery(serializers.Serializer):
    format = serializers.ChoiceField(
        choices=["json", "csv"],
        required=False,
        default="json",
        help_text="json (the dashboard's data) or csv (every stored report row).",
    )
    scope = serializers.CharField(
        max_length=SCOPE_MAX, required=False, help_text="Only this scope: verification, study:<name> or ratings:<name>."
    )


def _query(params) -> dict:
    data = DashboardQuery(data={k: params[k] for k in DashboardQuery().fields if k in params})
    if not data.is_valid():
        raise Invalid("the query has errors", errors=flatten(data.errors))
    return data.validated_data


class AgreementView(APIView):
    content_negotiation_class = FormatIsTheExports
    renderer_classes = [JSONRenderer]

    @extend_schema(
        parameters=[DashboardQuery],
        responses={
            (200, "application/json"): DashboardOut,
            (200, "text/csv"): OpenApiTypes.STR,
            403: OVERSEERS_ONLY,
            404: NO_SCOPE,
        },
        summary="The agreement dashboard's data: per scope its latest metrics with 95% intervals, the rater-by-rater "
        "and confusion matrices, the most disputed items and a trend; or, as CSV, every stored report row "
        "(scope, subset, metric, level, round, value, ci_low, ci_high, n_items, n_raters, method, fingerprint, "
        "computed_at) (admins, reviewers, researchers)",
    )
    def get(self, request, slug):
        project = project_for(request, slug, access.OVERSEE_ROLES)
        q = _query(request.query_params)
        key = q.get("scope")
        if key is not None and not scopes.exists(project, key):
            raise NotFound(f"no agreement scope {key!r} in this project (verification, study:<name> or ratings:<name>)")
        if q["format"] == "csv":
            return dashboard.csv_response(project, key)
        return Response(dashboard.dashboard_data(project, key))


class ComputeIn(serializers.Serializer):
    scope = serializers.CharField(
        max_length=SCOPE_MAX,
        required=False,
        allow_blank=True,
        help_text="The scope to compute; absent or empty: every scope with judgments.",
    )


class JobsOut(serializers.Serializer):
    jobs = serializers.ListField(
        child=serializers.IntegerField(), help_text="The queued jobs' ids (none for a scope already queued)."
    )


class ComputeView(APIView):
    @extend_schema(
        request=ComputeIn,
        responses={202: JobsOut, 403: OVERSEERS_ONLY, 404: NO_SCOPE},
        summary="Compute a scope's agreement now, or every scope's (a worker does it; the dashboard shows "
        "it when done)",
    )
    def post(self, request, slug):
        project = project_for(request, slug, access.OVERSEE_ROLES)
        data = ComputeIn(data=request.data)
        data.is_valid(raise_exception=True)
        return Response(
            {"jobs": services.request(project, data.validated_data.get("scope") or None, trigger="api")}, status=202
        )


# ------------------------------------------------------------------------------ rating sets

RATINGS_BODY_MAX = 32 * 1024 * 1024  # 200,000 ratings of about 160 bytes each
READ_CHUNK = 64 * 1024
SET_FIELDS = ("name", "level", "source", "description", "replace")


def _refuse_constant(name):
    raise ValueError(f"{name} is not valid JSON")


_STRICT = json.JSONDecoder(
    parse_constant=_refuse_constant
)  # one decoder: json.loads(..., parse_constant=) makes one a call


def _too_large() -> ParseError:
    return ParseError(f"the body is larger than {RATINGS_BODY_MAX // 2**20} MB; send the ratings in several sets")


class _Body:
    """A request body read in chunks of ``READ_CHUNK`` bytes, at most ``RATINGS_BODY_MAX`` in all
    (ParseError past it; a Content-Length over it is refused before reading)."""

    def __init__(self, stream, parser_context):
        request = (parser_context or {}).get("request")
        length = request.META.get("CONTENT_LENGTH") if request is not None else None
        if length and str(length).isdigit() and int(length) > RATINGS_BODY_MAX:
            raise _too_large()
        self.stream, self.read_bytes = stream, 0

    def read(self, size: int = READ_CHUNK) -> bytes:
        data = self.stream.read(size)
        self.read_bytes += len(data)
        if self.read_bytes > RATINGS_BODY_MAX:
            raise _too_large()
        return data


class _JSONText:
    """The decoded text of a JSON body, read as needed, with a cursor; what was read past is dropped.

    ``value()`` decodes the next JSON value with the standard library's decoder (C speed, strict:
    no NaN or Infinity), reading more whenever the value may be cut at the end of what was read;
    each retry reads at least as much as is pending, so a long value costs a few passes, not one per
    chunk."""

    NUMBER_TAIL = frozenset("0123456789+-.eE")

    def __init__(self, body: _Body):
        self.body = body
        self.utf8 = codecs.getincrementaldecoder("utf-8-sig")()
        self.decoder = json.JSONDecoder(parse_constant=_refuse_constant)
        self.text, self.pos, self.dropped, self.eof = "", 0, 0, False

    def more(self, at_least: int = READ_CHUNK) -> bool:
        """Read on; False at the end of the body."""
        if self.eof:
            return False
        data = self.body.read(max(at_least, READ_CHUNK))
        try:
            text = self.utf8.decode(data, final=not data)
        except UnicodeDecodeError as exc:
            raise ParseError(f"JSON parse error - the body is not UTF-8 ({exc.reason})") from None
        self.eof = not data
        self.dropped += self.pos
        self.text, self.pos = self.text[self.pos :] + text, 0
        return True

    def peek(self) -> str:
        """The next character that is not white space ('' at the end), the cursor on it."""
        while True:
            self.pos = json.decoder.WHITESPACE.match(self.text, self.pos).end()
            if self.pos < len(self.text) or not self.more():
                return self.text[self.pos : self.pos + 1]

    def expect(self, chars: str) -> str:
        c = self.peek()
        if not c or c not in chars:
            where = f"at character {self.dropped + self.pos}" if c else "at the end of the body"
            raise ParseError(f"JSON parse error - expected {' or '.join(repr(x) for x in chars)} {where}")
        self.pos += 1
        return c

    def value(self):
        self.peek()
        while True:
            try:
                obj, end = self.decoder.raw_decode(self.text, self.pos)
            except json.JSONDecodeError as exc:
                if self.more(len(self.text) - self.pos):
                    continue
                raise ParseError(f"JSON parse error - {exc.msg} at character {self.dropped + exc.pos}") from None
            except RecursionError:
                raise ParseError("JSON parse error - nested too deep") from None
            except ValueError as exc:  # NaN or Infinity (_refuse_constant)
                raise ParseError(f"JSON parse error - {exc}") from None
            # A number that ends where the text read so far ends may go on in the next chunk: its
            # scan stops at most 2 characters short of it ("1e+" is 1 and "e+").
            if (
                not self.eof
                and type(obj) in (int, float)
                and len(self.text) - end <= 2
                and all(c in self.NUMBER_TAIL for c in self.text[end:])
                and self.more()
            ):
                continue
            self.pos = end
            return obj


class RatingsUpload:
    """A rating set's body as its parser gives it: ``fields``, the set's fields (name, level, source,
    description, replace) read before the ratings (None for JSON Lines: they are in the query
    string), ``empty`` (no rating at all), and ``rows``, an iterator that reads the ratings one at a
    time from the request as it is consumed (``rows_read`` so far), then the rest of the body."""

    def __init__(self, fields: dict | None, rows: Iterator, empty: bool):
        self.fields, self.rows, self.empty, self.rows_read = fields, self._counted(rows), empty, 0

    def _counted(self, rows):
        for row in rows:
            self.rows_read += 1
            yield row


class LargeJSONParser(BaseParser):
    """A rating set as one JSON object, ``{"name", "level", "source"?, "description"?, "replace"?,
    "ratings": [...]}``, of at most ``RATINGS_BODY_MAX`` bytes, read as it arrives: the fields before
    ``ratings`` are parsed here, the ratings one at a time as the view consumes ``RatingsUpload.rows``
    (so a body over the row limit is refused at rating RATINGS_MAX + 1, and no list of 200,000 dicts is
    held). The set's fields must come before ``ratings``; one after it is refused (400) once the ratings
    are read, and nothing is stored.

    DRF reads a body for its ``JSONParser`` (and subclasses) through ``request.body``, which refuses
    anything over ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (2.5 MB) for every endpoint; this parser is not a
    subclass, so it gets the request's stream and applies its own, larger bound. Otherwise as
    ``api.parsers.JSONParser``: strict (no NaN or Infinity), and nesting too deep is a 400."""

    media_type = "application/json"

    def parse(self, stream, media_type=None, parser_context=None):
        text = _JSONText(_Body(stream, parser_context))
        if text.peek() != "{":
            return text.value()  # not an object: the view refuses it (or a parse error here)
        text.expect("{")
        fields = {}
        if text.peek() == "}":
            text.expect("}")
            self._end(text)
            return RatingsUpload(fields, iter(()), True)
        while True:
            key = text.value()
            if not isinstance(key, str):
                raise ParseError(f"JSON parse error - expected a key at character {text.dropped + text.pos}")
            text.expect(":")
            if key == "ratings" and text.peek() == "[":
                text.expect("[")
                if text.peek() == "]":  # empty: read the rest now, so that every field's error is reported at once
                    text.expect("]")
                    fields["ratings"] = []
                    fields.update(self._rest(text, after_ratings=False))
                    return RatingsUpload(fields, iter(()), True)
                return RatingsUpload(fields, self._ratings(text, fields), False)
            fields[key] = text.value()
            if text.expect(",}") == "}":
                self._end(text)
                return RatingsUpload(fields, iter(()), "ratings" not in fields or fields["ratings"] == [])

    def _ratings(self, text: _JSONText, fields: dict):
        while True:
            yield text.value()
            if text.expect(",]") == "]":
                break
        late = self._rest(text, after_ratings=True)
        if late:
            names = ", ".join(sorted(late))
            raise Invalid(
                f"the set's fields go before its ratings; {names} came after them, so nothing was stored "
                f"(send {{{', '.join(repr(f) for f in SET_FIELDS)}, 'ratings'}} in that order)",
                errors={k: "must come before ratings" for k in sorted(late)},
            )

    def _rest(self, text: _JSONText, *, after_ratings: bool) -> dict:
        """The keys after the ratings up to the object's end; the body must end there."""
        rest = {}
        while text.expect(",}") == ",":
            key = text.value()
            if not isinstance(key, str):
                raise ParseError(f"JSON parse error - expected a key at character {text.dropped + text.pos}")
            text.expect(":")
            if key == "ratings":
                raise ParseError("JSON parse error - ratings given twice")
            rest[key] = text.value()
        self._end(text)
        return rest

    @staticmethod
    def _end(text: _JSONText):
        if text.peek():
            raise ParseError(f"JSON parse error - extra data at character {text.dropped + text.pos}")


class JSONLinesParser(BaseParser):
    """A rating set's ratings as JSON Lines: one rating object a line (blank lines are skipped), of
    at most ``RATINGS_BODY_MAX`` bytes, read a line at a time as the view consumes
    ``RatingsUpload.rows``; the set's fields are in the query string. Strict JSON (no NaN or
    Infinity); a line that is not JSON is a 400 naming the line."""

    media_type = "application/x-ndjson"

    def parse(self, stream, media_type=None, parser_context=None):
        body = _Body(stream, parser_context)
        lines = self._lines(body)
        first = next(lines, None)
        return RatingsUpload(None, itertools.chain([first] if first else [], lines), first is None)

    @staticmethod
    def _lines(body: _Body):
        parts, number = [], 0  # parts: the bytes of a line not yet ended
        while True:
            data = body.read()
            if data and b"\n" not in data:
                parts.append(data)
                continue
            lines = (b"".join(parts) + data).split(b"\n")
            parts = [lines.pop()] if data else []
            for line in lines:
                number += 1
                if not line.strip():
                    continue
                try:
                    yield _STRICT.decode(line.decode("utf-8-sig" if number == 1 else "utf-8"))
                except RecursionError:
                    raise ParseError(f"JSON parse error - line {number}: nested too deep") from None
                except UnicodeDecodeError as exc:
                    raise ParseError(f"JSON parse error - line {number}: not UTF-8 ({exc.reason})") from None
                except ValueError as exc:
                    raise ParseError(f"JSON parse error - line {number}: {exc}") from None
            if not data:
                return


class JSONLParser(JSONLinesParser):
    media_type = "application/jsonl"


class RatingIn(serializers.Serializer):
    item = serializers.CharField(max_length=LABEL_MAX)
    rater = serializers.CharField(max_length=LABEL_MAX)
    value = StorableJSONField(
        required=False,
        allow_null=True,
        help_text="A number, a category's text (nominal only, 1-200 characters), or null: missing.",
    )


class RatingSetIn(serializers.Serializer):
    """The set's fields: in the JSON body before ``ratings``, or the query string of a JSON Lines body."""

    name = serializers.SlugField(max_length=100)
    level = serializers.ChoiceField(choices=LEVELS, help_text="The level of measurement of the values.")
    source = serializers.ChoiceField(
        choices=RatingSet.Source.choices,
        default=RatingSet.Source.EXTERNAL,
        help_text="external (evaluations done elsewhere) or judge (a model judge, rater "
        "'judge', against people re-judging).",
    )
    description = serializers.CharField(max_length=TEXT_MAX, required=False, allow_blank=True, default="")
    replace = serializers.BooleanField(required=False, default=False, help_text="Replace a set of that name.")


class RatingsIn(RatingSetIn):
    """The JSON body (for the schema; the view reads it a rating at a time, checked as ``RatingIn``)."""

    ratings = RatingIn(
        many=True,
        max_length=rating_sets.RATINGS_MAX,
        allow_empty=False,
        help_text=f"At most {rating_sets.RATINGS_MAX:,} ratings, one per item and rater, after the set's fields.",
    )


# One field of each kind, reused for every rating that is not plainly valid, so that the API's
# messages stay DRF's ("Ensure this field has no more than 200 characters.") without a serializer
# per rating; the plain cases are checked inline (the 200,000-rating body took 10 s through RatingIn).
_LABEL = serializers.CharField(max_length=LABEL_MAX)
_VALUE = StorableJSONField(required=False, allow_null=True)
_SAFE_INT = 2**53 - 1


def _label(raw, path: str) -> str:
    if type(raw) is str and 0 < len(raw) <= LABEL_MAX and raw.isascii() and raw.isprintable() and raw.strip() == raw:
        return raw
    if raw is None:
        raise Invalid(INVALID_DETAIL, errors={path: "This field is required."})
    try:
        return _LABEL.run_validation(raw)
    except serializers.ValidationError as exc:
        raise Invalid(INVALID_DETAIL, errors={path: " ".join(str(m) for m in exc.detail)}) from None


def _rating(n: int, raw) -> dict:
    """Rating ``n`` (1-based) of a body, checked as ``RatingIn`` would (same messages, path
    ``ratings[n-1].field``); the service's own checks come after."""
    path = f"ratings[{n - 1}]"
    if not isinstance(raw, dict):
        raise Invalid(
            INVALID_DETAIL, errors={path: f"Invalid data. Expected a dictionary, but got {type(raw).__name__}."}
        )
    if "item" in raw and raw["item"] is None or "rater" in raw and raw["rater"] is None:
        field = "item" if raw.get("item", "") is None else "rater"
        raise Invalid(INVALID_DETAIL, errors={f"{path}.{field}": "This field may not be null."})
    out = {"item": _label(raw.get("item"), f"{path}.item"), "rater": _label(raw.get("rater"), f"{path}.rater")}
    if "value" in raw:
        value = raw["value"]
        t = type(value)
        plain = (
            value is None
            or (t is int and -_SAFE_INT <= value <= _SAFE_INT)
            or (t is float and math.isfinite(value))
            or (t is str and value.isascii() and "\x00" not in value)
        )
        if not plain:
            try:
                value = _VALUE.run_validation(value)
            except serializers.ValidationError as exc:
                raise Invalid(INVALID_DETAIL, errors={f"{path}.value": " ".join(str(m) for m in exc.detail)}) from None
        out["value"] = value
    return out


def _too_many() -> Invalid:
    limit = rating_sets.RATINGS_MAX
    return Invalid(
        services.too_many(limit), errors={"ratings": f"Ensure this field has no more than {limit} elements."}
    )


def _checked(upload: RatingsUpload):
    """The upload's ratings checked one by one (``_rating``), refused at RATINGS_MAX + 1."""
    for n, raw in enumerate(upload.rows, 1):
        if n > rating_sets.RATINGS_MAX:
            raise _too_many()
        yield _rating(n, raw)


def _outranking(upload: RatingsUpload, exc: Invalid) -> Exception:
    """The error to answer when rating ``upload.rows_read`` was refused with ``exc``: the body is read
    on (at most to rating RATINGS_MAX + 1, nothing checked or stored), and a parse error further on,
    or too many ratings, answers instead, as when the whole body was parsed and counted first (DRF's
    list checks); else ``exc``."""
    if upload.rows_read > rating_sets.RATINGS_MAX:  # the limit itself: read no further
        return exc
    for _ in upload.rows:  # a ParseError further on propagates
        if upload.rows_read > rating_sets.RATINGS_MAX:
            return _too_many()
    return exc


class RatingsOut(serializers.Serializer):
    name = serializers.CharField()
    ratings = serializers.IntegerField(help_text="Ratings stored (null values are missing ratings, not stored).")


class RatingsView(APIView):
    parser_classes = [LargeJSONParser, JSONLinesParser, JSONLParser]

    @extend_schema(
        request={"application/json": RatingsIn, "application/x-ndjson": OpenApiTypes.STR},
        parameters=[
            OpenApiParameter(f, str, required=False, description=f"JSON Lines only: the set's {f}.") for f in SET_FIELDS
        ],
        responses={
            201: RatingsOut,
            400: OpenApiResponse(
                description="A bad rating (named by its position), level or name; more than "
                f"{rating_sets.RATINGS_MAX:,} ratings; a body over {RATINGS_BODY_MAX // 2**20} MB. "
                "Nothing is stored."
            ),
            403: OpenApiResponse(description="Only admins and researchers bring rating sets."),
            409: OpenApiResponse(description="A rating set of that name exists (send replace: true to replace it)."),
        },
        summary="Bring a set of ratings (item, rater, value) from elsewhere, or a model judge's scores against people "
        "re-judging them; its agreement is then a scope, ratings:<name> (admins and researchers; at most "
        f"{rating_sets.RATINGS_MAX:,} ratings in a body of at most {RATINGS_BODY_MAX // 2**20} MB: a JSON object "
        "with the set's fields before its ratings, or JSON Lines, one rating a line "
        "(Content-Type: application/x-ndjson), with the set's fields in the query string; read and stored "
        "a rating at a time, all or nothing)",
    )
    def post(self, request, slug):
        project = project_for(request, slug, access.RESEARCH_ROLES)
        upload = request.data
        if not isinstance(upload, RatingsUpload):  # an empty body ({}), or JSON that is not an object
            if not isinstance(upload, dict):
                raise Invalid(
                    INVALID_DETAIL,
                    errors={
                        "non_field_errors": f"Invalid data. Expected a dictionary, but got {type(upload).__name__}."
                    },
                )
            upload = RatingsUpload(upload, iter(()), True)
        jsonl = request.content_type.split(";")[0].strip().lower() in (
            JSONLinesParser.media_type,
            JSONLParser.media_type,
        )
        if jsonl:  # the set's fields are in the query string
            fields = {k: request.query_params[k] for k in SET_FIELDS if k in request.query_params}
        else:
            fields = upload.fields
        data = RatingSetIn(data=fields)
        errors = {} if data.is_valid() else flatten(data.errors)
        if upload.empty:
            errors["ratings"] = (
                "This list may not be empty." if jsonl or "ratings" in fields else "This field is required."
            )
        elif not jsonl and "ratings" in fields and not isinstance(fields["ratings"], list):
            errors["ratings"] = f'Expected a list of items but got type "{type(fields["ratings"]).__name__}".'
        if errors:
            raise Invalid(INVALID_DETAIL, errors=errors)
        v = data.validated_data
        try:
            rs = services.import_ratings(
                project,
                v["name"],
                v["level"],
                _checked(upload),
                source=v["source"],
                description=v["description"],
                replace=v["replace"],
            )
        except Invalid as exc:
            raise _outranking(upload, exc) from None
        return Response({"name": rs.name, "ratings": rs.ratings.count()}, status=201)


# ------------------------------------------------------------------------------ consensus round


class ConsensusItemOut(serializers.Serializer):
    id = serializers.IntegerField()
    scope = serializers.CharField()
    subset = serializers.CharField(allow_blank=True)
    item = serializers.CharField()
    label = serializers.CharField(allow_blank=True)
    link = serializers.CharField(allow_blank=True, help_text="The item's history page ('' if none).")
    level = serializers.CharField(allow_blank=True)
    disagreement = serializers.FloatField(help_text="0 (all agree) to 1, when it was sent.")
    status = serializers.CharField(help_text=STATUS_HELP)
    answers = AnswerOut(many=True, help_text="Every rater's round-1 answer.")
    revised = AnswerOut(many=True, help_text="Every rater's re-evaluated answer (once reconciled).")
    consensus = serializers.JSONField(allow_null=True, help_text="The agreed value (once reconciled).")
    note = serializers.CharField(allow_blank=True)
    sent_by = serializers.CharField(allow_null=True)
    sent_at = serializers.DateTimeField()
    reviewer = serializers.CharField(allow_null=True)
    decided_at = serializers.DateTimeField(allow_null=True)


def consensus_dict(ci: ConsensusItem) -> dict:
    """A consensus-round item as ``ConsensusItemOut`` (its ``ratings`` prefetched)."""
    return {
        "id": ci.pk,
        "scope": ci.scope.key,
        "subset": ci.subset,
        "item": ci.item,
        "label": ci.label,
        "link": ci.link,
        "level": ci.level,
        "disagreement": ci.disagreement,
        "status": ci.status,
        "answers": ci.answers,
        "revised": [{"rater": r.rater, "value": r.value} for r in sorted(ci.ratings.all(), key=lambda r: r.rater)],
        "consensus": ci.consensus,
        "note": ci.note,
        "sent_by": ci.sent_by.username if ci.sent_by else None,
        "sent_at": ci.sent_at,
        "reviewer": ci.reviewer.username if ci.reviewer else None,
        "decided_at": ci.decided_at,
    }


def _items(**filters):
    return (
        ConsensusItem.objects.filter(**filters)
        .select_related("scope", "sent_by", "reviewer")
        .prefetch_related("ratings")
    )


class SendIn(serializers.Serializer):
    scope = serializers.CharField(max_length=SCOPE_MAX)
    subset = serializers.CharField(max_length=SUBSET_MAX, required=False, allow_blank=True, default="")
    threshold = serializers.FloatField(
        min_value=0,
        max_value=1,
        required=False,
        help_text="Send every item whose disagreement is at least this (0 to 1).",
    )
    items = serializers.ListField(
        child=serializers.CharField(max_length=LABEL_MAX),
        min_length=1,
        max_length=CONSENSUS_ITEMS_MAX,
        required=False,
        help_text="Or send these items.",
    )

    def validate(self, attrs):
        if ("threshold" in attrs) == ("items" in attrs):
            raise serializers.ValidationError("give either a disagreement threshold (0 to 1) or a list of items")
        return attrs


CONSENSUS_PAGE_MAX = 500


class ConsensusQuery(serializers.Serializer):
    status = serializers.ChoiceField(
        choices=ConsensusItem.Status.values, required=False, help_text="open or done (default: both, open first)."
    )
    limit = serializers.IntegerField(
        min_value=1,
        max_value=CONSENSUS_PAGE_MAX,
        required=False,
        default=CONSENSUS_PAGE_MAX,
        help_text=f"At most {CONSENSUS_PAGE_MAX} items.",
    )
    offset = serializers.IntegerField(min_value=0, max_value=10**9, required=False, default=0)


class ConsensusListView(APIView):
    @extend_schema(
        parameters=[ConsensusQuery],
        responses={200: ConsensusItemOut(many=True), 403: OVERSEERS_ONLY},
        summary="The consensus round's items, open ones first, a page at a time (limit, offset) (admins, "
        "reviewers, researchers)",
    )
    def get(self, request, slug):
        project = project_for(request, slug, access.OVERSEE_ROLES)
        query = ConsensusQuery(data=request.query_params)
        query.is_valid(raise_exception=True)
        q = query.validated_data
        items = _items(scope__project=project, **({"status": q["status"]} if q.get("status") else {}))
        items = items.order_by("-status", "-disagreement", "id")  # "open" after "done"
        return Response([consensus_dict(ci) for ci in items[q["offset"] : q["offset"] + q["limit"]]])

    @extend_schema(
        request=SendIn,
        responses={201: ConsensusItemOut(many=True), 403: OVERSEERS_ONLY, 404: NO_SCOPE},
        summary="Send a scope's items to the consensus round: those whose disagreement reaches a threshold, "
        "or the ones listed (judgments and free-text answers, not orders; items sent before are "
        "left as they are); answers the new items",
    )
    def post(self, request, slug):
        project = project_for(request, slug, access.OVERSEE_ROLES)
        data = SendIn(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        sent = services.send_to_consensus(
            project,
            v["scope"],
            subset=v["subset"],
            threshold=v.get("threshold"),
            items=v.get("items"),
            user=request.user,
        )
        by_id = {ci.pk: ci for ci in _items(pk__in=[ci.pk for ci in sent])}
        return Response([consensus_dict(by_id[ci.pk]) for ci in sent], status=201)


class RecordIn(serializers.Serializer):
    consensus = StorableJSONField(help_text="The agreed value: a number, or a category's text for nominal items.")
    revised = serializers.DictField(
        child=StorableJSONField(allow_null=True),
        required=False,
        default=dict,
        help_text="Rater -> re-evaluated answer (null: no answer); raters not named keep their round-1 answer.",
    )
    note = serializers.CharField(max_length=TEXT_MAX, required=False, allow_blank=True, default="")

    def validate_revised(self, value):
        if len(value) > RATERS_MAX:
            raise serializers.ValidationError(f"at most {RATERS_MAX} raters")
        return value


class ConsensusRecordView(APIView):
    @extend_schema(
        request=RecordIn,
        responses={
            200: ConsensusItemOut,
            403: OVERSEERS_ONLY,
            409: OpenApiResponse(description="The item was reconciled already."),
        },
        summary="Record the consensus on an item of the consensus round: the agreed value and each rater's "
        "re-evaluated answer; agreement after the consensus round is computed again (admins, "
        "reviewers, researchers)",
    )
    def post(self, request, pk):
        ci = ConsensusItem.objects.select_related("scope__project").filter(pk=pk).first()
        if ci is None:
            raise NotFound("no such item in the consensus round")
        project = project_for(request, ci.scope.project.slug, access.OVERSEE_ROLES)
        data = RecordIn(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        services.record_consensus(
            ci.pk, project, request.user, consensus=v["consensus"], revised=v["revised"], note=v["note"]
        )
        return Response(consensus_dict(_items(pk=ci.pk).get()))
