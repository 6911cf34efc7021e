"""The tutorial and its examples, and what admins do for a person: lift a pause, grant a try, exempt
those who worked before the gate."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from annotator.errors import Conflict, Invalid, NotFound
from annotator.gold.models import (
    TRIES_MAX,
    Known,
    Pause,
    Policy,
    Source,
    Standing,
)
from annotator.gold.services.copies import make_copy
from annotator.gold.services.sources import make_sources
from annotator.projects.models import Project
from annotator.qa.models import QueueItem, WorkUnit

TUTORIAL_MAX = 100_000  # characters of tutorial Markdown
EXPLANATION_MAX = 4000
NOTE_MAX = 2000


# ------------------------------------------------------------------------------------ admins' actions


def lift_pause(pause_id: int, admin, note: str = "", *, project: Project | None = None) -> Pause:
    """Lift an open pause: the person gets units again, and their gold accuracy window starts afresh
    (results before the lift no longer count towards a pause). Raises NotFound (no such pause, or of
    another project than ``project``), Invalid (note longer than 2,000 characters), Conflict
    (already lifted)."""
    note = (note or "").strip()
    if len(note) > NOTE_MAX:
        raise Invalid(
            f"the note is longer than {NOTE_MAX} characters", errors={"note": f"at most {NOTE_MAX} characters"}
        )
    with transaction.atomic():
        pause = Pause.objects.select_for_update().filter(pk=pause_id).first()
        if pause is None or (project is not None and pause.project_id != project.pk):
            raise NotFound("no such pause")
        if pause.lifted_at is not None:
            raise Conflict(f"this pause was already lifted on {pause.lifted_at:%Y-%m-%d %H:%M}")
        pause.lifted_at, pause.lifted_by, pause.note = timezone.now(), admin, note
        pause.save(update_fields=["lifted_at", "lifted_by", "note"])
        from annotator.gold.models import Result

        last = (
            Result.objects.filter(project_id=pause.project_id, user_id=pause.user_id)
            .order_by("-id")
            .values_list("id", flat=True)
            .first()
            or 0
        )
        Standing.objects.update_or_create(
            project_id=pause.project_id,
            user_id=pause.user_id,
            defaults={"paused": False, "pause_from": None, "window_from": last},
        )
    return pause


def grant_try(project: Project, user_id: int) -> Standing:
    """Give a person one more try at the qualification set than the policy allows. Raises NotFound
    (not a member of the project), Conflict (already qualified), Invalid (20 extra tries already)."""
    from annotator.projects.models import Membership

    if not Membership.objects.filter(project=project, user_id=user_id).exists():
        raise NotFound("no such member of this project")
    with transaction.atomic():
        standing, _ = Standing.objects.select_for_update().get_or_create(project=project, user_id=user_id)
        if standing.qualified_at is not None:
            raise Conflict("this person has already qualified")
        if standing.extra_tries >= TRIES_MAX:
            raise Invalid(f"at most {TRIES_MAX} extra tries", errors={"user": "too many tries"})
        standing.extra_tries += 1
        standing.save(update_fields=["extra_tries"])
    return standing


def exempt(project: Project, user_ids) -> int:
    """Count these people as qualified without an attempt (annotators who worked before the gate was
    turned on). Returns how many were not qualified before. Raises NotFound for a non-member."""
    from annotator.projects.models import Membership

    user_ids = sorted(set(user_ids))
    members = set(Membership.objects.filter(project=project, user_id__in=user_ids).values_list("user_id", flat=True))
    if missing := [u for u in user_ids if u not in members]:
        raise NotFound(f"user {missing[0]} is not a member of this project")
    now, made = timezone.now(), 0
    with transaction.atomic():
        for uid in user_ids:
            standing, _ = Standing.objects.select_for_update().get_or_create(project=project, user_id=uid)
            if standing.qualified_at is None:
                standing.qualified_at = now
                standing.save(update_fields=["qualified_at"])
                made += 1
    return made


def worked_before(project: Project) -> list[int]:
    """Annotators of the project who completed a pass of a real unit (to ``exempt`` them)."""
    from annotator.projects.models import Membership, Role

    annotators = Membership.objects.filter(project=project, role=Role.ANNOTATOR).values("user_id")
    return sorted(
        set(
            QueueItem.objects.filter(
                project=project, unit__purpose=WorkUnit.Purpose.REAL, completed_by__in=annotators
            ).values_list("completed_by", flat=True)
        )
    )


# ------------------------------------------------------------------------------------ the tutorial


def set_tutorial(project: Project, markdown: str) -> Policy:
    """Set the tutorial's Markdown (shown sanitised, ``annotator.markdown.render``). Raises Invalid
    when it is longer than 100,000 characters (nothing saved)."""
    if not isinstance(markdown, str) or len(markdown) > TUTORIAL_MAX:
        raise Invalid(f"the tutorial is longer than {TUTORIAL_MAX:,} characters", errors={"tutorial": "too long"})
    with transaction.atomic():
        policy, _ = Policy.objects.select_for_update().get_or_create(project=project)
        policy.tutorial = markdown
        policy.save(update_fields=["tutorial", "updated_at"])
    return policy


def add_example(project: Project, unit_id: int, user=None) -> Source:
    """Make verified unit ``unit_id`` a tutorial example: a source of role example and its copy (a unit
    of purpose example) shown on the tutorial page with each QA pair's expected decision. Raises
    Invalid when the unit is not a verified real unit of the project (``make_sources``)."""
    with transaction.atomic():
        source = make_sources(project, Source.Role.EXAMPLE, 1, user=user, unit_ids=[unit_id])[0]
        make_copy(source)
    return source


def remove_example(project: Project, source_id: int) -> None:
    """Take an example off the tutorial (its rows are kept, inactive). Raises NotFound."""
    if not Source.objects.filter(pk=source_id, project=project, role=Source.Role.EXAMPLE).update(active=False):
        raise NotFound("no such example")


def set_explanation(project: Project, known_id: int, text: str) -> Known:
    """Set the tutorial's explanation of one example QA pair's expected decision. Raises NotFound (not
    an example pair of the project), Invalid (longer than 4,000 characters)."""
    text = (text or "").strip()
    if len(text) > EXPLANATION_MAX:
        raise Invalid(
            f"the explanation is longer than {EXPLANATION_MAX} characters",
            errors={"explanation": f"at most {EXPLANATION_MAX} characters"},
        )
    known = Known.objects.filter(pk=known_id, source__project=project, source__role=Source.Role.EXAMPLE).first()
    if known is None:
        raise NotFound("no such example QA pair")
    known.explanation = text
    known.save(update_fields=["explanation"])
    return known
