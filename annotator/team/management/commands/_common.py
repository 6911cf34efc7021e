"""What the team commands share: the project by slug and the period from --from/--to."""

from django.core.management.base import CommandError

from annotator.errors import Invalid
from annotator.projects.models import Project
from annotator.team import selectors
from annotator.team.figures import Period


def project_named(slug: str) -> Project:
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        raise CommandError(f"no project {slug!r}")
    return project


def period_from(opts, *, required: bool) -> tuple[Period, str, str]:
    """The period of ``--from``/``--to`` (days, both included) and the two dates as given ('' if
    open). Raises CommandError in plain words."""
    try:
        first = selectors.parse_day(opts.get("from"), "from")
        last = selectors.parse_day(opts.get("to"), "to")
        period = selectors.period_of(first, last, required=required)
    except Invalid as exc:
        raise error(exc) from exc
    return period, first.isoformat() if first else "", last.isoformat() if last else ""


def error(exc: Invalid) -> CommandError:
    words = "; ".join(f"{k}: {v}" for k, v in exc.errors.items())
    return CommandError(f"{exc}: {words}" if words else str(exc))
