from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from incidentdesk import supervisor


class Command(BaseCommand):
    help = (
        "Migrate, load the demo data once, then run daphne and a Celery worker "
        "on the embedded services until Ctrl-C (what `make run` runs)."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--host", default="127.0.0.1", help="Address daphne binds to.")
        parser.add_argument("--port", type=int, default=8000, help="Port daphne listens on.")
        parser.add_argument("--no-demo", action="store_true", help="Skip the demo data.")

    def handle(self, *args: Any, **options: Any) -> None:
        """1. migrate; 2. static files; 3. demo data and login; 4. supervise."""
        call_command("migrate", interactive=False, verbosity=0)
        call_command("collectstatic", interactive=False, verbosity=0)
        if not options["no_demo"]:
            call_command("load_demo", stdout=self.stdout)
        address = f"http://{options['host']}:{options['port']}/"
        workers = settings.WEB_WORKERS
        self.stdout.write(f"Serving on {address} with {workers} daphne process(es) (Ctrl-C stops)")
        try:
            code = supervisor.supervise(host=options["host"], port=options["port"], out=self.stdout)
        except OSError as exc:  # the port is taken, or the address is not ours
            raise CommandError(f"Cannot listen on {address}: {exc}") from exc
        if code:
            raise CommandError("a supervised process exited unexpectedly")
