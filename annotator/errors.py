"""The domain's error vocabulary: what services raise when a request cannot be applied.

These know nothing of HTTP. ``api.exceptions.handler`` maps them to status codes for the API in one
place (Invalid 400, Forbidden 403, NotFound 404, Conflict and NotHeld 409); pages map them to a
message on the field concerned. Whatever raised one has written nothing.
"""

from __future__ import annotations


class DomainError(Exception):
    """Base class. ``errors`` maps a field path (``decisions[2].reason``) to a message in plain
    words; ``conflicts`` lists rows changed by someone else since the person loaded them, with their
    current content."""

    def __init__(self, message: str, *, errors: dict | None = None, conflicts: list | None = None):
        super().__init__(message)
        self.errors = errors or {}
        self.conflicts = conflicts or []

    def as_body(self) -> dict:
        """The JSON body the API answers with: ``detail``, ``errors`` and, if any, ``conflicts``."""
        body = {"detail": str(self), "errors": self.errors}
        if self.conflicts:
            body["conflicts"] = self.conflicts
        return body


class Invalid(DomainError):
    """The input is malformed or breaks a rule (empty text, a number out of bounds)."""


class Conflict(DomainError):
    """The input was fine but the state changed: a version conflict, already submitted, already answered."""


class NotHeld(Conflict):
    """The person does not hold the work unit (any more): its lease lapsed and someone else took it,
    or they never claimed it."""


class Forbidden(DomainError):
    """The person's role does not allow this (e.g. someone who can export a study's truth enrolling in it)."""


class NotFound(DomainError):
    """The row named does not exist, or is not the person's to see."""


# The HTTP status of each domain error, most specific class first: the API's error handler and the
# pages both answer with it.
STATUS = ((NotHeld, 409), (Conflict, 409), (Invalid, 400), (Forbidden, 403), (NotFound, 404))


def status_of(exc: DomainError) -> int:
    """The HTTP status of a domain error (most specific class first; 400 for any other)."""
    for cls, code in STATUS:
        if isinstance(exc, cls):
            return code
    return 400
