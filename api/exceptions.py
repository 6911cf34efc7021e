"""One place where errors become HTTP answers under ``/api/``.

``handler`` is DRF's ``EXCEPTION_HANDLER``: the domain errors of ``annotator.errors`` map to 400,
403, 404 and 409; Django's Http404 and PermissionDenied and DRF's own errors keep DRF's status
codes. Every error body has one shape, the ``Error`` component of the OpenAPI schema
(``api.schema``): ``{"detail": str, "errors": {path: message}, "conflicts": [...]}`` (conflicts only
when there are any). A serializer's nested errors are flattened to the paths the services use
(``decisions[1].reason``), so pages show both kinds the same way. ``not_found`` and
``server_error`` answer JSON for ``/api/`` paths that no view handled (a bad path integer, say) and
HTML elsewhere.
"""

from __future__ import annotations

import re

from django.http import JsonResponse, UnreadablePostError
from django.shortcuts import render
from django.views import defaults
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import exception_handler

from annotator import errors
from annotator.errors import status_of

INVALID_DETAIL = "the request has errors; nothing was saved"


def flatten(detail, path: str = "") -> dict[str, str]:
    """DRF's nested validation errors as ``{path: message}``: ``{"decisions": [{}, {"reason": ["x"]}]}``
    becomes ``{"decisions[1].reason": "x"}``; a ListField's ``{index: errors}`` likewise; several
    messages on one path are joined with a space; errors not about a field go under
    ``non_field_errors`` (or their parent's path)."""
    out: dict[str, str] = {}
    if isinstance(detail, dict):
        for key, value in detail.items():
            if key == "non_field_errors":
                sub = path or "non_field_errors"
            elif isinstance(key, int) or (isinstance(key, str) and key.isdigit()):
                sub = f"{path}[{key}]"
            else:
                sub = f"{path}.{key}" if path else str(key)
            out.update(flatten(value, sub))
    elif isinstance(detail, list):
        messages = [str(d) for d in detail if not isinstance(d, (dict, list))]
        if messages:
            out[path or "non_field_errors"] = " ".join(messages)
        for i, d in enumerate(detail):
            if isinstance(d, (dict, list)) and d:
                out.update(flatten(d, f"{path}[{i}]"))
    else:
        out[path or "non_field_errors"] = str(detail)
    return out


def body_cut_off(exc: UnreadablePostError) -> tuple[int, str]:
    """The answer to a request body that could not be read to its end: 408 when it stalled (no byte
    for REQUEST_BODY_TIMEOUT_S seconds: ``gunicorn.conf.py`` sets that timeout on the socket, issue
    19), else 400 (the client closed the connection or reset it)."""
    from django.conf import settings

    if isinstance(exc.__cause__, TimeoutError):
        return 408, (
            f"the upload stalled: nothing arrived for {settings.REQUEST_BODY_TIMEOUT_S:g} s "
            "(REQUEST_BODY_TIMEOUT_S), so it was cut off; nothing was saved"
        )
    return 400, "the request body was cut off before its end; nothing was saved"


def handler(exc, context):
    """DRF exception handler: domain errors by ``STATUS``; a body cut off by ``body_cut_off``; DRF's
    and Django's errors with DRF's status codes and headers; every body in the ``Error`` shape. None
    (a 500) for anything else."""
    if isinstance(exc, errors.DomainError):
        return Response(exc.as_body(), status=status_of(exc))
    if isinstance(exc, UnreadablePostError):
        code, detail = body_cut_off(exc)
        return Response({"detail": detail, "errors": {}}, status=code, headers={"Connection": "close"})
    response = exception_handler(exc, context)
    if response is None:
        return None
    if isinstance(exc, ValidationError):
        response.data = {"detail": INVALID_DETAIL, "errors": flatten(response.data)}
    else:
        detail = response.data.get("detail", "") if isinstance(response.data, dict) else response.data
        response.data = {"detail": str(detail), "errors": {}}
    return response


def _is_api(request) -> bool:
    return request.path.startswith("/api/")


# Django's own Http404 texts name a model class ("No WorkUnit matches the given query."), not words a
# reader knows; the page says it in its own words instead.
DJANGO_NOT_FOUND = re.compile(r"^No \w+ matches the given query\.?$")


def _sentence(text: str) -> str:
    text = text.strip()
    return text[:1].upper() + text[1:] + ("" if text.endswith((".", "!", "?")) else ".")


def not_found_reason(exception) -> str:
    """The reason a 404 page gives, in words: the Http404's own message when the code gave one in
    words ("no such project"), else a general sentence (Django's "No X matches the given query.",
    a URL no route matches)."""
    message = exception.args[0] if exception is not None and exception.args else ""
    if isinstance(message, str) and message.strip() and not DJANGO_NOT_FOUND.match(message.strip()):
        return _sentence(message)
    return "There is nothing at this address: the link may be mistyped or old, or what it showed was removed."


def forbidden_reason(exception) -> str:
    """The reason a 403 page gives: the PermissionDenied's message ("your role in this project does
    not allow this"), else a general sentence."""
    message = str(exception or "").strip()
    return _sentence(message) if message else "Your account may not open this page."


def not_found(request, exception=None):
    """``handler404``: JSON under /api/; elsewhere templates/404.html, a page with the site's header,
    the reason in words (``not_found_reason``) and a link home (issue 21)."""
    if _is_api(request):
        return JsonResponse({"detail": "not found", "errors": {}}, status=404)
    return render(request, "404.html", {"reason": not_found_reason(exception)}, status=404)


def server_error(request):
    """``handler500``: JSON under /api/ (no detail leaks), Django's page elsewhere."""
    if _is_api(request):
        return JsonResponse({"detail": "server error; it was logged", "errors": {}}, status=500)
    return defaults.server_error(request)


def bad_request(request, exception=None):
    """``handler400`` (a SuspiciousOperation such as a body over DATA_UPLOAD_MAX_MEMORY_SIZE): JSON
    under /api/, Django's page elsewhere."""
    if _is_api(request):
        return JsonResponse({"detail": "bad request", "errors": {}}, status=400)
    return defaults.bad_request(request, exception)


def permission_denied(request, exception=None):
    """``handler403``: JSON under /api/; elsewhere templates/403.html, a page with the site's header,
    the reason in words (``forbidden_reason``) and a link home (issue 21)."""
    if _is_api(request):
        return JsonResponse({"detail": str(exception or "") or "forbidden", "errors": {}}, status=403)
    return render(request, "403.html", {"reason": forbidden_reason(exception)}, status=403)
