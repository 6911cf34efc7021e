"""The pages of a study link's anonymous participant (issue 19), under ``/s/<token>/``.

``/s/<token>/?PROLIFIC_PID=..&STUDY_ID=..&SESSION_ID=..`` (or ``?pid=..``) creates or resumes the
participant (``links.open_link``), binds them to the session (``sessions.bind``) and redirects to
``/s/<token>/``, which shows where they are, in order: consent, screening, the take page
(instructions, practice and trials, through the same API endpoints as accounts), the debrief, and
``/s/<token>/done/`` with the completion code, from which the page's script goes on to the
completion URL with the code. A full link or study shows "This study is full" (200, no trial);
an unknown token a 404 that says nothing; every page is rate-limited per client address
(``STUDY_LINK_RATE_PER_MIN``, a plain 429). Forms carry Django's CSRF token.
"""

from __future__ import annotations

import functools
import time

from django.conf import settings
from django.core.cache import cache
from django.core.files.storage import default_storage
from django.http import FileResponse, Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils.text import capfirst
from django.views.decorators.http import require_GET, require_POST

from annotator import markdown
from annotator.errors import Conflict, Invalid, NotFound
from annotator.studies import instructions, links, sessions
from annotator.studies.kinds import kind_module
from annotator.studies.models import Participant

DEFAULT_CONSENT = (
    "You are invited to take part in a research study. You will watch short videos and answer "
    "questions about them. Your answers are stored with a pseudonym, never your name. You may stop at "
    "any time."
)
DEFAULT_DEBRIEF = "Thank you for taking part. Your answers help researchers measure how people understand videos."


def rate_limited(view):
    """At most ``STUDY_LINK_RATE_PER_MIN`` requests per minute from one client address
    (``REMOTE_ADDR``: a forwarded header could be forged) to link pages, counted in Django's cache
    per minute; beyond it a plain-text 429 with Retry-After."""

    @functools.wraps(view)
    def wrapped(request, *args, **kwargs):
        minute = int(time.time() // 60)
        key = f"studylink:rate:{request.META.get('REMOTE_ADDR', '')}:{minute}"
        cache.add(key, 0, timeout=120)
        try:
            n = cache.incr(key)
        except ValueError:  # expired between add and incr
            cache.set(key, 1, timeout=120)
            n = 1
        if n > settings.STUDY_LINK_RATE_PER_MIN:
            response = HttpResponse(
                "Too many requests from your address. Wait a minute and try again.\n",
                status=429,
                content_type="text/plain; charset=utf-8",
            )
            response["Retry-After"] = str(60 - int(time.time()) % 60)
            return response
        return view(request, *args, **kwargs)

    return wrapped


def _message(request, title: str, text: str, status: int = 200, **extra):
    return render(request, "studies/link/message.html", {"title": title, "text": text, **extra}, status=status)


def _not_found(request):
    return _message(request, "Not found", "There is nothing here.", status=404)


def _link_and_participant(request, token: str):
    """(link, participant bound to this session for the link's study) or raises Http404."""
    try:
        link = links.link_of(token)
    except NotFound:
        raise Http404("no such link") from None
    participant = sessions.participant_for(request, link.study_id)
    return link, participant


@rate_limited
@require_GET
def entry(request, token: str):
    """Open a link: with panel ids, create or resume the participant and redirect to the clean
    address; without, show where the session's participant is."""
    try:
        ids, malformed = links.panel_ids(request.GET), None
    except Invalid as exc:
        ids, malformed = None, exc
    try:
        # With the panel id's pseudonym: whether they entered before comes with the link.
        link = links.link_of(token, pseudonym=links.pseudonym_of(ids.external_id) if ids else None)
    except links.LinkClosed:
        return _message(
            request, "This study is closed", "This link is no longer open. Return to the panel.", status=410
        )
    except NotFound:
        return _not_found(request)
    if malformed is not None:
        return _message(request, "This link is not complete", str(malformed), status=400)
    if ids is not None:
        bound = sessions.participant_for(request, link.study_id)
        if (
            bound is not None
            and bound.pseudonym != links.pseudonym_of(ids.external_id)
            and bound.status == Participant.Status.IN_PROGRESS
            and bound.stage != Participant.Stage.DONE
        ):
            # A link with another panel id (say, sent by someone else) does not take this browser's
            # place over: its work would go to that id.
            return _message(
                request,
                "This browser is already taking this study",
                "This browser is taking part in this study under another participant id. Finish that "
                "first, or open this link in another browser.",
                status=409,
            )
        try:
            participant, _ = links.open_link(link, ids)
        except links.StudyFull:
            return _full(request)
        except Conflict as exc:
            return _message(request, "This study is not open", str(exc), status=409)
        sessions.bind(request, participant)
        return redirect(f"/s/{token}/")
    participant = sessions.participant_for(request, link.study_id)
    if participant is None:
        return _message(
            request,
            "Open this study from your panel",
            "This link needs your participant id: open it from the panel's page (it adds ?PROLIFIC_PID=... "
            "or ?pid=...).",
            status=400,
        )
    return _page(request, token, participant)


def _full(request):
    return render(request, "studies/link/full.html", {}, status=200)


def _page(request, token: str, p: Participant):
    """The page of where ``p`` is."""
    study = p.study
    if p.status == Participant.Status.RETURNED:
        return render(request, "studies/link/done.html", _done_context(p, returned=True))
    if p.status == Participant.Status.TIMED_OUT:
        return _message(
            request,
            "This session has ended",
            f"You were away for more than {study.abandon_after_min} minutes, so your unanswered questions "
            "were given to others. Return the study on the panel's page.",
        )
    if p.consented_at is None:
        return render(
            request,
            "studies/link/consent.html",
            {"study": study, "token": token, "consent_html": markdown.render(study.consent or DEFAULT_CONSENT)},
        )
    if p.screened_at is None:
        return _screening(request, token, p)
    if p.stage != Participant.Stage.DONE:
        module = kind_module(study.kind)
        links.touch(p)
        config = {
            "kind": study.kind,
            "enrollUrl": f"/api/studies/{study.pk}/enroll/",
            "currentUrl": f"/api/studies/{study.pk}/current/",
            "shownUrl": "/api/trials/{id}/shown/",
            "answerUrl": "/api/trials/{id}/answer/",
            "afterUrl": f"/s/{token}/",
        }
        return render(
            request,
            "studies/take.html",
            {
                "study": study,
                "title": capfirst(module.TITLE),
                "config": config,
                "anonymous": True,
                "instructions_html": markdown.render(instructions.text(study)),
            },
        )
    return render(
        request,
        "studies/link/debrief.html",
        {"study": study, "token": token, "debrief_html": markdown.render(study.debrief or DEFAULT_DEBRIEF)},
    )


def _screening(request, token: str, p: Participant, error: str = "", status: int = 200):
    study = p.study
    config = {
        "minWidth": study.min_viewport_width,
        "minHeight": study.min_viewport_height,
        "clipUrl": f"/s/{token}/test-clip.mp4",
    }
    return render(
        request,
        "studies/link/screening.html",
        {"study": study, "token": token, "config": config, "error": error},
        status=status,
    )


def _done_context(p: Participant, *, returned: bool = False) -> dict:
    return {
        "study": p.study,
        "code": p.completion_code,
        "returned": returned,
        "config": {"completionUrl": links.completion_url(p)},
    }


@rate_limited
@require_POST
def consent(request, token: str):
    """Accept (``decision=accept``) or decline (``decision=decline``) the consent."""
    link, p = _link_and_participant(request, token)
    if p is None:
        return _not_found(request)
    decision = request.POST.get("decision")
    if decision not in ("accept", "decline"):
        return _message(request, "Choose", "Choose to take part or not.", status=400)
    try:
        links.consent(p, decision == "accept")
    except Conflict:
        pass  # already left or finished: the page of where they are says so
    return redirect(f"/s/{token}/")


def _int(value) -> int | None:
    return int(value) if isinstance(value, str) and value.isdigit() and len(value) <= 6 else None


@rate_limited
@require_POST
def screening(request, token: str):
    """The screening page's measurements (``width``, ``height``, ``codec``, ``played``): on to the
    instructions, or the page again with what failed."""
    link, p = _link_and_participant(request, token)
    if p is None:
        return _not_found(request)
    width, height = _int(request.POST.get("width")), _int(request.POST.get("height"))
    try:
        links.screened(
            p,
            width=width if width is not None else 0,
            height=height if height is not None else 0,
            codec=request.POST.get("codec") == "yes",
            played=request.POST.get("played") == "yes",
        )
    except Invalid as exc:
        return _screening(request, token, p, error=str(exc).capitalize() + ".", status=400)
    except Conflict:
        pass
    return redirect(f"/s/{token}/")


@rate_limited
@require_GET
def done(request, token: str):
    """The completion code, and (by the page's script) on to the completion URL with it."""
    link, p = _link_and_participant(request, token)
    if p is None:
        return _not_found(request)
    try:
        links.finish(p)
    except Conflict:
        return redirect(f"/s/{token}/")
    return render(request, "studies/link/done.html", _done_context(p))


@require_GET
def test_clip(request, token: str):
    """The screening's test clip (a synthetic test pattern, ``links.test_clip``), to the session's
    participant of this link's study only."""
    link, p = _link_and_participant(request, token)
    if p is None:
        raise Http404("no such media")
    name = links.test_clip()
    response = FileResponse(default_storage.open(name, "rb"), content_type="video/mp4")
    response["Cache-Control"] = "private, max-age=3600"
    return response
