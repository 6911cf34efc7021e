"""The API's request parser: JSON only, and nesting too deep for Python's parser is a 400."""

from rest_framework import parsers
from rest_framework.exceptions import ParseError


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser (strict: no NaN or Infinity). ``json`` raises RecursionError, not
    ValueError, on a body like ``[[[[...`` nested thousands deep, which DRF would let through as a
    500."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - nested too deep") from None
