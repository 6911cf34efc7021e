"""python manage.py createuser NAME --role annotator|admin --project SLUG [--token] [--password P]"""

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotator.projects.models import Role
from annotator.projects.services import ensure_member, ensure_project, token_for


class Command(BaseCommand):
    help = "Create (or update) a user with a role in a project; --token prints their API token."

    def add_arguments(self, parser):
        parser.add_argument("name")
        parser.add_argument("--role", required=True, choices=Role.values)
        parser.add_argument("--project", required=True, help="Project slug (created if missing).")
        parser.add_argument("--password", help="Set this password (for browser login).")
        parser.add_argument("--superuser", action="store_true", help="Also grant Django admin access.")
        parser.add_argument("--token", action="store_true", help="Print the user's API token.")

    def handle(self, *args, **opts):
        if opts["password"] is not None:
            # The same validators as every other way to set a password (AUTH_PASSWORD_VALIDATORS),
            # checked before anything is written.
            User = get_user_model()
            user = User.objects.filter(username=opts["name"]).first() or User(username=opts["name"])
            try:
                validate_password(opts["password"], user=user)
            except ValidationError as exc:
                raise CommandError(f"password for {opts['name']} refused: " + " ".join(exc.messages)) from None
        project = ensure_project(opts["project"])
        try:
            user, created = ensure_member(
                opts["name"], role=opts["role"], project=project, password=opts["password"], superuser=opts["superuser"]
            )
        except ValueError as exc:
            raise CommandError(str(exc)) from None
        if opts["token"]:
            self.stdout.write(token_for(user))
        else:
            verb = "created" if created else "updated"
            self.stdout.write(f"{verb} {user.username}: {opts['role']} in {project.slug}")
