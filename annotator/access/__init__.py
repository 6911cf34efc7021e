"""Who may do what in a project: the one place role checks are decided and role sets are defined.

Pages and API views call ``require`` with the roles an action allows; both refuse with 404 for
non-members (a project's existence is not disclosed) and 403 for members whose role does not
allow the action. Who may fetch a stored file is ``access.files`` (each app registers a rule for
its own files). Domain apps, pages and ``api/`` all ask this package; it imports only ``projects``.
"""

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.http import Http404

from annotator.projects.models import Membership, Project, Role

ANNOTATE_ROLES = frozenset({Role.ADMIN, Role.REVIEWER, Role.ANNOTATOR})
EXPORT_ROLES = frozenset({Role.ADMIN})
# The project's video and group lists name every video by id, file name and duration: from them an
# annotator could place the footage a unit shows in the project's order and tell a gold copy's older
# footage apart (issue 20). Annotators see only the footage of what they hold.
VIEW_VIDEOS_ROLES = frozenset({Role.ADMIN, Role.REVIEWER, Role.RESEARCHER})
# Seeing other people's work (progress per person, a QA pair's history) is for the people who
# run the project, never for annotators (SPEC "Qualities").
OVERSEE_ROLES = frozenset({Role.ADMIN, Role.REVIEWER, Role.RESEARCHER})
EDIT_QA_ROLES = frozenset({Role.ADMIN, Role.REVIEWER})
# The people who run a project's research: start, cancel and resume drafting runs and evaluations
# (they spend money on model servers), create, build and preview studies, import agreement ratings.
# Reviewers see runs (OVERSEE_ROLES); annotators do not.
RESEARCH_ROLES = frozenset({Role.ADMIN, Role.RESEARCHER})
MANAGE_ROLES = frozenset({Role.ADMIN})
# Per-annotator figures through the API (units, active time, gold accuracy, override rate): admins and reviewers.
FIGURES_ROLES = frozenset({Role.ADMIN, Role.REVIEWER})
ALL_ROLES = frozenset(Role.values)


def role_in(user: AbstractBaseUser, project: Project) -> str | None:
    """Return the user's role in ``project`` ("admin", "annotator", ...) or None if not a member.

    Superusers count as admins of every project.
    """
    if not user.is_authenticated:
        return None
    if user.is_superuser:
        return Role.ADMIN
    return Membership.objects.filter(project=project, user=user).values_list("role", flat=True).first()


def _membership(user, **project_filter) -> tuple[Project | None, str | None]:
    """The project matching ``project_filter`` and the user's role in it, in one query."""
    if not user.is_authenticated:
        return None, None
    if user.is_superuser:
        project = Project.objects.filter(**project_filter).first()
        return project, (Role.ADMIN if project else None)
    m = (
        Membership.objects.filter(user=user, **{f"project__{k}": v for k, v in project_filter.items()})
        .select_related("project")
        .first()
    )
    return (m.project, m.role) if m else (None, None)


def project_and_role(user, slug: str) -> tuple[Project | None, str | None]:
    """The project with ``slug`` and the user's role in it, in one query: (project, role), or
    (None, None) when the user is not a member. Superusers are admins everywhere."""
    return _membership(user, slug=slug)


def project_and_role_of_unit(user, unit_id: int) -> tuple[Project | None, str | None]:
    """As ``project_and_role`` for the project of work unit ``unit_id`` (one query)."""
    return _membership(user, units__id=unit_id)


def require(user, roles: frozenset, *, slug: str | None = None, unit_id: int | None = None) -> tuple[Project, str]:
    """The project (by ``slug`` or by one of its work units) and the user's role, if that role is in
    ``roles``. Raises Http404 for non-members (a project's existence is not disclosed) and
    PermissionDenied for members whose role does not allow the action; pages and DRF views alike
    turn these into 404 and 403. One query."""
    project, role = project_and_role(user, slug) if unit_id is None else project_and_role_of_unit(user, unit_id)
    if project is None or role is None:
        raise Http404("no such project" if unit_id is None else "no such unit")
    if role not in roles:
        raise PermissionDenied("your role in this project does not allow this")
    return project, role
