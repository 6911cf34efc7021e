"""Who may fetch the files of studies (``access.files``): ordering frames (``frames/``) and the clips
cut for study items (``studyclips/``), for accounts and for a study link's anonymous participants;
and the veto on playing footage a person still has to order. Registered by ``StudiesConfig.ready``."""

from __future__ import annotations

import functools
import operator

from django.db.models import Q

from annotator import access
from annotator.access import files
from annotator.studies import sessions
from annotator.studies.models import Element, Item, Trial
from annotator.studies.selectors import current_trials_show, footage_in_open_trials, open_trial_shows


@files.register("frames/")
def may_see_frame(user, name: str) -> bool:
    """Whether ``user`` may fetch the ordering frame stored as ``name``: the project's admins,
    reviewers and researchers may, and a participant whose trials include an element with that image.
    Nobody else (an annotator of the video's units is not shown its frames)."""
    elements = list(Element.objects.filter(image=name).select_related("video__project"))
    if not elements or elements[0].video is None:
        return False
    if access.role_in(user, elements[0].video.project) in access.OVERSEE_ROLES:
        return True
    # An image stored once may back several elements (identical bytes share a content name).
    shown = functools.reduce(operator.or_, (Q(item__payload__shown__contains=[e.pk]) for e in elements))
    return Trial.objects.filter(participant__user=user).filter(shown).exists()


@files.register("studyclips/")
def may_see_study_clip(user, name: str) -> bool:
    """Whether ``user`` may fetch ``name``, a clip cut for study items (``studyclips/``): the
    project's admins, reviewers and researchers may, and a participant with an unanswered trial of
    an item that plays it (``Item.payload["media"]``: a video's clip, or a clip of a life log's
    segment). Nobody else."""
    item = (
        Item.objects.filter(
            Q(payload__contains={"media": [{"name": name}]})
            | Q(payload__contains={"media": [{"segments": [{"name": name}]}]})
        )
        .select_related("condition__study__project")
        .first()
    )
    if item is None:
        return False
    if access.role_in(user, item.condition.study.project) in access.OVERSEE_ROLES:
        return True
    return open_trial_shows(user, name)


@files.visitor_check
def is_link_participant(request) -> bool:
    """Whether an anonymous request carries a study link's participant (``studies.sessions``)."""
    return bool(sessions.participant_ids(request))


@files.register_visitor("studyclips/")
@files.register_visitor("frames/")
def link_may_fetch(request, name: str) -> bool:
    """A study link's anonymous participant may fetch only a study clip or ordering frame of the
    trial they are on (``selectors.current_trials_show``): never a video's rendition, HLS files,
    posters or another trial's media (no rule for those prefixes)."""
    return current_trials_show(sessions.participant_ids(request), name)


@files.veto_video
def footage_to_order(user, video) -> bool:
    """True for footage whose frames ``user`` still has to order (and a video derived from it): the
    footage would give the order away."""
    return (video.derived_from_id or video.pk) in footage_in_open_trials(user)
