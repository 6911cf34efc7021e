"""Who may do what in a project: the one place role checks are decided.

Pages and API views call these; both refuse with 404 for non-members (a project's existence is
not disclosed) and 403 for members whose role does not allow the action.
"""

from django.contrib.auth.models import AbstractBaseUser

from annotator.projects.models import Membership, Project, Role

ANNOTATE_ROLES = frozenset({Role.ADMIN, Role.REVIEWER, Role.ANNOTATOR})
EXPORT_ROLES = frozenset({Role.ADMIN})
VIEW_VIDEOS_ROLES = frozenset({Role.ADMIN, Role.REVIEWER, Role.RESEARCHER, Role.ANNOTATOR})
# Seeing other people's work (progress per person, a QA pair's history) is for the people who
# run the project, never for annotators (SPEC "Qualities").
OVERSEE_ROLES = frozenset({Role.ADMIN, Role.REVIEWER, Role.RESEARCHER})
EDIT_QA_ROLES = frozenset({Role.ADMIN, Role.REVIEWER})
MANAGE_ROLES = frozenset({Role.ADMIN})
ALL_ROLES = frozenset(Role.values)


def role_in(user: AbstractBaseUser, project: Project) -> str | None:
    """Return the user's role in ``project`` ("admin", "annotator", ...) or None if not a member.

    Superusers count as admins of every project.
    """
    if not user.is_authenticated:
        return None
    if user.is_superuser:
        return Role.ADMIN
    return (
        Membership.objects.filter(project=project, user=user).values_list("role", flat=True).first()
    )


def project_and_role(user, slug: str) -> tuple[Project | None, str | None]:
    """The project with ``slug`` and the user's role in it, in one query: (project, role), or
    (project or None, None) when the user is not a member. Superusers are admins everywhere."""
    if not user.is_authenticated:
        return None, None
    if user.is_superuser:
        project = Project.objects.filter(slug=slug).first()
        return project, (Role.ADMIN if project else None)
    m = Membership.objects.filter(project__slug=slug, user=user).select_related("project").first()
    return (m.project, m.role) if m else (None, None)


def project_and_role_of_unit(user, unit_id: int) -> tuple[Project | None, str | None]:
    """As ``project_and_role`` for the project of work unit ``unit_id`` (one query)."""
    if not user.is_authenticated:
        return None, None
    if user.is_superuser:
        project = Project.objects.filter(units__id=unit_id).first()
        return project, (Role.ADMIN if project else None)
    m = Membership.objects.filter(project__units__id=unit_id, user=user).select_related("project").first()
    return (m.project, m.role) if m else (None, None)


def can_annotate(user, project: Project) -> bool:
    """True if the user may claim and submit verification units in ``project``."""
    return role_in(user, project) in ANNOTATE_ROLES


def can_export(user, project: Project) -> bool:
    """True if the user may export verified QA (admins only, SPEC "Qualities")."""
    return role_in(user, project) in EXPORT_ROLES


def can_view_videos(user, project: Project) -> bool:
    """True if the user may list the project's videos and their ingest status."""
    return role_in(user, project) in VIEW_VIDEOS_ROLES


def can_oversee(user, project: Project) -> bool:
    """True if the user may see progress per person and QA pair histories."""
    return role_in(user, project) in OVERSEE_ROLES


def can_edit_qa(user, project: Project) -> bool:
    """True if the user may edit QA pairs outside the queue (with optimistic locking)."""
    return role_in(user, project) in EDIT_QA_ROLES


def can_manage(user, project: Project) -> bool:
    """True if the user may change the project: QA types, guidelines, queue policy, model flags."""
    return role_in(user, project) in MANAGE_ROLES


def can_view_project(user, project: Project) -> bool:
    """True for any member (e.g. to read the QA types and guidelines)."""
    return role_in(user, project) is not None
