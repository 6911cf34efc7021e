"""python manage.py model_server --project SLUG --name NAME --base-url URL --model M [--key-env VAR] [--concurrency C]

Creates or updates a project's named model server (any OpenAI-compatible endpoint). Without
--base-url and --model it lists the project's servers.
"""

from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError

from annotator.inference.models import ModelServer
from annotator.projects.models import Project

MAX_CONCURRENCY = 256
MAX_PRICE = 10_000.0  # USD per million tokens
MAX_TIMEOUT_S = 3600.0


class Command(BaseCommand):
    help = "Create or update a project's model server (an OpenAI-compatible endpoint), or list them."

    def add_arguments(self, parser):
        parser.add_argument("--project", required=True)
        parser.add_argument("--name", help="Server name, e.g. gpt41 or local-qwen (letters, digits, - and _).")
        parser.add_argument("--base-url", help="e.g. https://api.openai.com/v1 or http://127.0.0.1:8000/v1")
        parser.add_argument("--model", help="Model name the server knows, e.g. gpt-4.1")
        parser.add_argument(
            "--key-env",
            help="Environment variable holding the API key, ending in _API_KEY (the key is never stored; "
            "none: a placeholder key is sent).",
        )
        parser.add_argument(
            "--concurrency", type=int, help=f"Requests in flight at most (1-{MAX_CONCURRENCY}; default 4)."
        )
        parser.add_argument("--price-prompt", type=float, help="USD per million prompt tokens (default 0).")
        parser.add_argument("--price-completion", type=float, help="USD per million completion tokens (default 0).")
        parser.add_argument(
            "--timeout", type=float, help=f"Seconds to wait for one reply (1-{MAX_TIMEOUT_S:g}; default 120)."
        )

    def handle(self, *args, **opts):
        project = Project.objects.filter(slug=opts["project"]).first()
        if project is None:
            raise CommandError(f"no project {opts['project']!r}")
        if not opts["name"]:
            for s in ModelServer.objects.filter(project=project):
                self.stdout.write(
                    f"{s.name}\t{s.model}\t{s.base_url}\tkey_env={s.key_env or '-'}\tconcurrency={s.concurrency}"
                )
            return
        server = ModelServer.objects.filter(project=project, name=opts["name"]).first()
        if server is None and not (opts["base_url"] and opts["model"]):
            raise CommandError(f"server {opts['name']!r} is new: give --base-url and --model")
        server = server or ModelServer(project=project, name=opts["name"])
        checks = {
            "concurrency": (1, MAX_CONCURRENCY),
            "price_prompt": (0, MAX_PRICE),
            "price_completion": (0, MAX_PRICE),
            "timeout": (1, MAX_TIMEOUT_S),
        }
        for option, (low, high) in checks.items():
            value = opts[option]
            if value is not None and not (low <= value <= high):
                raise CommandError(f"--{option.replace('_', '-')} must be between {low:g} and {high:g}, not {value:g}")
        fields = {
            "base_url": opts["base_url"],
            "model": opts["model"],
            "key_env": opts["key_env"],
            "concurrency": opts["concurrency"],
            "price_prompt_per_mtok": opts["price_prompt"],
            "price_completion_per_mtok": opts["price_completion"],
            "timeout_s": opts["timeout"],
        }
        for name, value in fields.items():
            if value is not None:
                setattr(server, name, value)
        try:
            server.full_clean(exclude=["project"])
        except ValidationError as exc:
            raise CommandError("; ".join(f"{k}: {' '.join(v)}" for k, v in exc.message_dict.items())) from None
        created = server.pk is None
        server.save()
        self.stdout.write(
            f"{'created' if created else 'updated'} model server {server.name}: {server.model} at "
            f"{server.base_url} (key from {server.key_env or 'no variable: none sent'}, concurrency {server.concurrency})"
        )
