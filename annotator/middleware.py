"""Refuse, with 400, a NUL character in a request's path, query string or form fields.

PostgreSQL text cannot hold NUL (U+0000), so a ``%00`` that reaches a query or a row makes the
database driver raise and Django answer 500. Serializers refuse it in JSON bodies under /api/; this
catches it before any page or view sees it. Under /api/ the answer has the API's error shape.
"""

from __future__ import annotations

from django.http import HttpResponseBadRequest, JsonResponse

FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
MESSAGE = "the request contains a NUL character, which cannot be stored"


def _nul_in(query_dict) -> str | None:
    """The name of the first field of ``query_dict`` whose name or a value holds a NUL, or None."""
    for key, values in query_dict.lists():
        if "\x00" in key or any("\x00" in v for v in values if isinstance(v, str)):
            return key.replace("\x00", "\\u0000")
    return None


class RejectNulMiddleware:
    """Answers 400 before the view when the path, a query parameter or (for a form POST outside
    /api/, which Django's CSRF middleware reads anyway) a form field contains NUL."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        field = "path" if "\x00" in request.path else _nul_in(request.GET)
        # Not under /api/: its serializers refuse NUL themselves, and reading an upload's form here
        # would parse it before the view sets its upload handlers (api.media streams videos to disk).
        if (
            field is None
            and request.method == "POST"
            and request.content_type in FORM_TYPES
            and not request.path.startswith("/api/")
        ):
            field = _nul_in(request.POST)
        if field is None:
            return self.get_response(request)
        if request.path.startswith("/api/"):
            return JsonResponse(
                {"detail": MESSAGE, "errors": {field: "must not contain NUL (\\u0000) characters"}}, status=400
            )
        return HttpResponseBadRequest(f"{MESSAGE} ({field})", content_type="text/plain; charset=utf-8")
