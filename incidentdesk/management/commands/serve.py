from typing import IO, Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from copilot.services import agent_run_fail_interrupted
from incidentdesk import embedded, shutdown, supervisor
from incidentdesk.db import declared_indexes_ensure
from incidents.services import import_job_requeue_interrupted


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
        """1. claim the port; 2. prepare the database; 3. supervise.

        A stop signal at any step stops what was started (manage.py installed
        the handlers before the embedded services started).
        """
        lock = self.claim_port(options["port"])
        try:
            self.prepare(no_demo=options["no_demo"])
        except shutdown.Interrupted as stop:
            shutdown.ignore()
            self.stdout.write(f"\n{stop} during start-up: stopping the embedded services...")
            embedded.stop_owned_services()
            return
        address = f"http://{options['host']}:{options['port']}/"
        workers = settings.WEB_WORKERS
        self.stdout.write(f"Serving on {address} with {workers} daphne process(es) (Ctrl-C stops)")
        hold = (lock.fileno(),) if lock else ()
        try:
            code = supervisor.supervise(
                host=options["host"], port=options["port"], out=self.stdout, hold=hold
            )
        except OSError as exc:  # the port is taken, or the address is not ours
            raise CommandError(f"Cannot listen on {address}: {exc}") from exc
        if code:
            raise CommandError("a supervised process kept crashing; everything was stopped")

    def claim_port(self, port: int) -> IO[str] | None:
        """Fail before any work if another IncidentDesk serves this port (0: any free port)."""
        if not port:
            return None
        try:
            return supervisor.port_lock(port)
        except supervisor.PortInUse as exc:
            embedded.stop_owned_services()
            raise CommandError(str(exc)) from exc

    def prepare(self, *, no_demo: bool) -> None:
        """1. migrate; 2. static files; 3. repair what a crash left; 4. demo data and login."""
        call_command("migrate", interactive=False, verbosity=0)
        call_command("collectstatic", interactive=False, verbosity=0)
        self.recover()
        if not no_demo:
            call_command("load_demo", stdout=self.stdout)

    def recover(self) -> None:
        """What a crash (kill -9, power loss) left half-done, before any worker runs.

        1. indexes an import dropped and never rebuilt; 2. answers left `running`
        (their conversations would stay busy); 3. import jobs that lost their worker.
        """
        for name in declared_indexes_ensure():
            self.stdout.write(f"Rebuilt the missing index {name}")
        if runs := agent_run_fail_interrupted():
            self.stdout.write(f"Marked {runs} interrupted answer(s) as failed")
        if jobs := import_job_requeue_interrupted():
            self.stdout.write(f"Queued {len(jobs)} interrupted import job(s) again")
