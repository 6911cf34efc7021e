"""The page django-axes shows instead of logging in once a username and address are locked out."""

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render


def locked_out(request: HttpRequest, original_response=None, credentials=None) -> HttpResponse:
    """429 with the lockout explained in plain words: how many failures, how many minutes to wait
    (``AXES_COOLOFF_TIME``, a timedelta). Named by ``AXES_LOCKOUT_CALLABLE``."""
    minutes = max(1, round(settings.AXES_COOLOFF_TIME.total_seconds() / 60))
    return render(
        request,
        "registration/locked_out.html",
        {"failure_limit": settings.AXES_FAILURE_LIMIT, "cooloff_minutes": minutes},
        status=429,
    )
