"""Writes for projects and people."""

from django.contrib.auth import get_user_model
from django.db import transaction
from rest_framework.authtoken.models import Token

from annotator.projects.models import Membership, Project, Role


def ensure_project(slug: str, name: str = "") -> Project:
    """Return project ``slug``, creating it (named after the slug) if missing."""
    project, _ = Project.objects.get_or_create(slug=slug, defaults={"name": name or slug})
    return project


@transaction.atomic
def ensure_member(
    username: str, *, role: str, project: Project, password: str | None = None, superuser: bool = False
) -> tuple[object, bool]:
    """Create or update a user with ``role`` in ``project``; returns (user, created).

    ``password`` (if given) is set; otherwise a new user gets an unusable password (token only).
    Raises ValueError for an unknown role.
    """
    if role not in Role.values:
        raise ValueError(f"role must be one of {', '.join(Role.values)}")
    User = get_user_model()
    user, created = User.objects.get_or_create(username=username)
    if password:
        user.set_password(password)
    elif created:
        user.set_unusable_password()
    if superuser:
        user.is_staff = user.is_superuser = True
    user.save()
    Membership.objects.update_or_create(project=project, user=user, defaults={"role": role})
    return user, created


def token_for(user) -> str:
    """The user's API token, created on first use."""
    token, _ = Token.objects.get_or_create(user=user)
    return token.key
