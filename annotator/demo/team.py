"""The team's part of the demo (issue 20): the demo project pays EUR 20 per video, as EgoNight did
(seed 000 App. A.2.1), and the pay report of the people who worked on it is printed.

``run_demo`` is called by ``demo_setup`` on every ``make demo``: it sets the rate (the same values each
time) and reports from the day of the project's first submitted pass to today, so a rerun prints
the same report unless someone worked meanwhile.
"""

from __future__ import annotations

from django.db.models import Min
from django.utils import timezone

from annotator.qa.models import QueueItem
from annotator.team import pay, selectors, services

DEMO_RATE = {"basis": "video", "amount": "20", "currency": "EUR"}


def run_demo(project, stdout) -> dict:
    """Set ``project``'s rate to EUR 20 per video and write its pay report to ``stdout`` (a command's
    stdout or any object with ``write``). Returns ``{"project", "from", "to", "rate", "people", "total"}``
    (``pay.report``), people limited to those with a counted unit or active time."""
    from annotator.team.management.commands.pay_report import text_lines

    services.set_rate(project, **DEMO_RATE)
    first = QueueItem.objects.filter(project=project, status=QueueItem.Status.DONE).aggregate(
        first=Min("completed_at")
    )["first"]
    today = timezone.localdate()
    start = timezone.localdate(first) if first else today
    report = pay.report(project, selectors.period_of(start, today))
    data = {
        "project": project.slug,
        "from": start.isoformat(),
        "to": today.isoformat(),
        **report,
        "people": [p for p in report["people"] if p["units"] or p["active_s"]],
    }
    for line in text_lines(data):
        stdout.write(line + "\n")
    return data
