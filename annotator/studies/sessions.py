"""The browser session of a study link's anonymous participant (issue 19).

Opening a link binds the participant to the Django session (``bind``): the session row holds
``{study id: participant id}`` under ``SESSION_KEY``, and the browser only a random session key in
a signed-by-the-server, HttpOnly cookie (``SESSION_COOKIE_HTTPONLY``). The session carries no
rights but these participants' own trials: the API's participant endpoints and the media view ask
``participant_for`` and ``participant_ids``, never the user.
"""

from __future__ import annotations

from annotator.studies.models import Participant

SESSION_KEY = "study_links"
MAX_BOUND = 20  # studies one browser session takes part in through links


def bind(request, participant: Participant) -> None:
    """Bind ``participant`` to the request's session (a new session key each time: no session
    fixation), keeping at most ``MAX_BOUND`` studies (the oldest dropped)."""
    bound = dict(request.session.get(SESSION_KEY) or {})
    if request.session.session_key is not None:
        # A stored session (the cookie named one that exists) gets a new key, so a key planted in
        # the browser before is worth nothing after. A browser with no session, or one whose cookie
        # names none (the backend forgets such a key on loading), gets a new key when the response
        # saves the session; cycling would write an empty session first, then update it.
        request.session.cycle_key()
    bound.pop(str(participant.study_id), None)
    bound[str(participant.study_id)] = participant.pk
    while len(bound) > MAX_BOUND:
        bound.pop(next(iter(bound)))
    request.session[SESSION_KEY] = bound


def participant_ids(request) -> list[int]:
    """Ids of the participants bound to the request's session (none without a session)."""
    session = getattr(request, "session", None)
    if session is None:
        return []
    bound = session.get(SESSION_KEY) or {}
    return [pid for pid in bound.values() if isinstance(pid, int)] if isinstance(bound, dict) else []


def participant_for(request, study_id: int) -> Participant | None:
    """The link participant bound to the session for ``study_id``, or None."""
    session = getattr(request, "session", None)
    bound = (session.get(SESSION_KEY) or {}) if session is not None else {}
    pid = bound.get(str(study_id)) if isinstance(bound, dict) else None
    if not isinstance(pid, int):
        return None
    return (
        Participant.objects.select_related("study__project", "link")
        .filter(pk=pid, study_id=study_id, user__isnull=True, kind=Participant.Kind.PERSON)
        .first()
    )
