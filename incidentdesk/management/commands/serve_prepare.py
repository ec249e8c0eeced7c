from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

from copilot.asking import (
    conversation_claims_release,
    listeners_release_orphaned,
    user_turns_release_orphaned,
)
from copilot.chat_models.offline.intents import intent_model
from copilot.services import agent_run_fail_interrupted
from incidentdesk.db import declared_indexes_ensure
from incidents.services import import_job_requeue_interrupted
from incidents.tasks import partial_indexes_sync_task


class Command(BaseCommand):
    help = (
        "The Django part of `manage.py serve`'s start-up, run by it in a child process "
        "so the supervisor stays small: migrate, static files, repairs, demo data, "
        "the intent model."
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("--no-demo", action="store_true", help="Skip the demo data.")

    def handle(self, *args: Any, **options: Any) -> None:
        """1. migrate; 2. static files; 3. repair what a crash left; 4. demo data and login;
        5. the intent model's weights (local embeddings)."""
        call_command("migrate", interactive=False, verbosity=0)
        call_command("collectstatic", interactive=False, verbosity=0)
        self.recover()
        if not options["no_demo"]:
            call_command("load_demo", stdout=self.stdout)
        # Trained here, once, and cached under var/: a daphne that trained it on its
        # first question kept scikit-learn and the bank's batches (+200 MB resident,
        # bench/memory_bench.py); the others load the weights in milliseconds.
        # Local embeddings only: with EMBEDDINGS=openai the bank is embedded by a
        # billed service, which must not stop start-up when it is unreachable.
        if settings.EMBEDDINGS == "local":
            intent_model()

    def recover(self) -> None:
        """What a crash (kill -9, power loss) left half-done, before any worker runs.

        1. indexes an import dropped and never rebuilt; 2. answers left `running`
        (their conversations would stay busy: the row, and the claim Redis kept);
        3. users' answer turns Redis kept for a process that died (their next
        question would wait), and the sockets it counted as open; 4. import jobs
        that lost their worker.
        """
        for name in declared_indexes_ensure():
            self.stdout.write(f"Rebuilt the missing index {name}")
        self.partial_indexes_queue()
        if conversations := agent_run_fail_interrupted():
            conversation_claims_release(conversation_ids=conversations)
            self.stdout.write(f"Marked {len(conversations)} interrupted answer(s) as failed")
        if users := user_turns_release_orphaned(at_startup=True):
            self.stdout.write(f"Freed the answer turn of {len(users)} user(s)")
        if sockets := listeners_release_orphaned():
            self.stdout.write(f"Stopped counting {sockets} socket(s) of a dead process")
        if jobs := import_job_requeue_interrupted():
            self.stdout.write(f"Queued {len(jobs)} interrupted import job(s) again")

    def partial_indexes_queue(self) -> None:
        """Queue the partial HNSW indexes' sync (incidents.vector_indexes): one
        a crash cut short is invalid, and a version activated while the broker
        was down has none yet. The worker builds them; search reads the full
        index meanwhile."""
        partial_indexes_sync_task.delay()
