"""One place where errors become HTTP answers under ``/api/``.

``handler`` is DRF's ``EXCEPTION_HANDLER``: the domain errors of ``annotator.errors`` map to 400,
403, 404 and 409 with a JSON body (``detail``, ``errors``, ``conflicts``); Django's Http404 and
PermissionDenied and DRF's own errors keep DRF's mapping. ``not_found`` and ``server_error`` answer
JSON for ``/api/`` paths that no view handled (a bad path integer, say) and HTML elsewhere.
"""

from __future__ import annotations

from django.http import JsonResponse
from django.views import defaults
from rest_framework.response import Response
from rest_framework.views import exception_handler

from annotator import errors

STATUS = ((errors.NotHeld, 409), (errors.Conflict, 409), (errors.Invalid, 400), (errors.Forbidden, 403),
          (errors.NotFound, 404))


def status_of(exc: errors.DomainError) -> int:
    """The HTTP status of a domain error (most specific class first)."""
    for cls, code in STATUS:
        if isinstance(exc, cls):
            return code
    return 400


def handler(exc, context):
    """DRF exception handler: domain errors by ``STATUS``, everything else as DRF does."""
    if isinstance(exc, errors.DomainError):
        return Response(exc.as_body(), status=status_of(exc))
    return exception_handler(exc, context)


def _is_api(request) -> bool:
    return request.path.startswith("/api/")


def not_found(request, exception=None):
    """``handler404``: JSON under /api/, Django's page elsewhere."""
    if _is_api(request):
        return JsonResponse({"detail": "not found"}, status=404)
    return defaults.page_not_found(request, exception)


def server_error(request):
    """``handler500``: JSON under /api/ (no detail leaks), Django's page elsewhere."""
    if _is_api(request):
        return JsonResponse({"detail": "server error; it was logged"}, status=500)
    return defaults.server_error(request)
