"""Helpers shared by the experiments' management commands."""

from django.core.management.base import CommandError

from annotator.experiments.models import Experiment


def experiment_named(name: str, project_slug: str | None = None) -> Experiment:
    """The experiment called ``name`` (in ``project_slug`` if given); CommandError if none or several."""
    qs = Experiment.objects.filter(name=name)
    if project_slug:
        qs = qs.filter(project__slug=project_slug)
    found = list(qs[:2])
    if not found:
        raise CommandError(f"no experiment named {name!r}")
    if len(found) > 1:
        raise CommandError(f"several experiments are named {name!r}: give --project")
    return found[0]
