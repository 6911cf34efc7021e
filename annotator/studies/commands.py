"""Helpers shared by the studies' management commands."""

from django.core.management.base import CommandError

from annotator.studies.models import Study


def study_named(name: str, project_slug: str | None = None) -> Study:
    """The study called ``name`` (in ``project_slug`` if given); CommandError if none or several."""
    qs = Study.objects.filter(name=name)
    if project_slug:
        qs = qs.filter(project__slug=project_slug)
    found = list(qs[:2])
    if not found:
        raise CommandError(f"no study named {name!r}")
    if len(found) > 1:
        raise CommandError(f"several studies are named {name!r}: give --project")
    return found[0]
