from typing import Any

from django.core.management.base import BaseCommand

from copilot.asking import (
    conversation_claims_release,
    listeners_release_orphaned,
    user_turns_release_orphaned,
)
from copilot.services import agent_run_fail_orphaned
from incidents.services import import_job_requeue_orphaned
from incidents.tasks import import_job_ids_waiting


class Command(BaseCommand):
    help = (
        "Close answers and queue again import jobs whose process died, leaving those of "
        "live processes alone. `manage.py serve` runs it after every restart it makes "
        "and every SUPERVISOR_CHECK_SECONDS."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        """1. answers whose daphne died: failed, their conversations freed at once;
        2. users whose answering process died: their turn freed (else "waiting" until it
        expires); 3. sockets of a daphne that died: no longer counted as listening (every
        answer in their conversations was relayed to nobody); 4. import jobs whose worker
        died, or whose message was lost: queued again."""
        if conversations := agent_run_fail_orphaned():
            conversation_claims_release(conversation_ids=conversations)
            self.stdout.write(f"Marked {len(conversations)} interrupted answer(s) as failed")
        if users := user_turns_release_orphaned():
            self.stdout.write(f"Freed the answer turn of {len(users)} user(s)")
        if sockets := listeners_release_orphaned():
            self.stdout.write(f"Stopped counting {sockets} socket(s) of a dead process")
        if jobs := import_job_requeue_orphaned(waiting=import_job_ids_waiting()):
            self.stdout.write(f"Queued {len(jobs)} interrupted import job(s) again")
