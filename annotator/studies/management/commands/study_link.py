"""python manage.py study_link NAME [--project SLUG] [--max-participants N] [--expires ISO8601]
[--completion-url URL] [--abandon-after MINUTES] [--json]"""

import json
from datetime import datetime

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from annotator.errors import DomainError
from annotator.studies import links
from annotator.studies.commands import study_named


class Command(BaseCommand):
    help = (
        "Make a link to a study for panel participants (Prolific: add ?PROLIFIC_PID={{%PROLIFIC_PID%}}&"
        "STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}; other panels: ?pid=ID). The token is shown once. "
        "Links are under PUBLIC_BASE_URL."
    )

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--project", help="Project slug, if the name is used in several projects.")
        parser.add_argument(
            "--max-participants", type=int, help=f"At most this many participants (1-{links.MAX_PARTICIPANTS_BOUND})."
        )
        parser.add_argument("--expires", help="ISO 8601 time after which the link is closed (UTC if no offset).")
        parser.add_argument(
            "--completion-url", default="", help="Where participants go with their code (default: the study's)."
        )
        parser.add_argument(
            "--abandon-after",
            type=int,
            help="Minutes idle before a participant is timed out (the study's setting, 1-10080; default 60).",
        )
        parser.add_argument("--json", action="store_true", help='Print {"url", "token"} as JSON.')

    def handle(self, *args, **opts):
        study = study_named(opts["name"], opts["project"])
        expires = None
        if opts["expires"]:
            try:
                expires = datetime.fromisoformat(opts["expires"])
            except ValueError:
                raise CommandError(f"--expires {opts['expires']!r} is not an ISO 8601 time") from None
        if opts["abandon_after"] is not None and not 1 <= opts["abandon_after"] <= 10080:
            raise CommandError("--abandon-after must be 1 to 10080 minutes")
        try:
            made = links.create_link(
                study,
                max_participants=opts["max_participants"],
                expires_at=expires,
                completion_url=opts["completion_url"],
            )
        except DomainError as exc:
            raise CommandError(str(exc)) from None
        if opts["abandon_after"] is not None:
            study.abandon_after_min = opts["abandon_after"]
            study.save(update_fields=["abandon_after_min"])
        url = settings.PUBLIC_BASE_URL + made.path
        if opts["json"]:
            self.stdout.write(json.dumps({"url": url, "token": made.token}))
        else:
            self.stdout.write(url)
