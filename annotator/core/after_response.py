"""Work a request leaves for after its response has been sent (``defer``).

Django sends ``request_finished`` from the response's ``close()``, which a WSGI server (gunicorn)
calls once it has written the response, and which the test client calls as a server would. Work
deferred here therefore never adds to the time the client measures for its request: the gold copy a
person's next claim may serve is made after their claim's response (``gold.claims.gate``), so a
claim that draws gold costs what a real one does (issue 20, section 2; M4 of its last security
review). Each deferred call runs once, in the request's thread, with its own error logged and
swallowed: the response is already sent, and beat's periodic run does the same work later.
"""

from __future__ import annotations

import logging
import threading
from typing import Callable

from django.core.signals import request_finished, request_started

log = logging.getLogger(__name__)
_local = threading.local()


def defer(fn: Callable[[], object]) -> bool:
    """Run ``fn()`` after the current request's response is sent. Outside a request (a command, a
    task, a test calling services directly) nothing is deferred and ``fn`` is not run. Returns
    whether it was deferred."""
    pending = getattr(_local, "pending", None)
    if pending is None:
        return False
    pending.append(fn)
    return True


def _started(**kwargs) -> None:
    _local.pending = []


def _finished(**kwargs) -> None:
    pending, _local.pending = getattr(_local, "pending", None) or [], None
    for fn in pending:
        try:
            fn()
        except Exception:  # the response is sent: nobody is left to answer, so it is logged
            log.exception("work deferred after a response failed: %r", fn)


request_started.connect(_started, dispatch_uid="annotator.core.after_response.started")
request_finished.connect(_finished, dispatch_uid="annotator.core.after_response.finished")
