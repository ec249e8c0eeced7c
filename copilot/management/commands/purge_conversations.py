import datetime as dt
from argparse import ArgumentParser
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from copilot.services import conversation_purge_deleted


class Command(BaseCommand):
    help = (
        "Permanently remove conversations deleted more than --days ago (until then their "
        "owner can undo the delete), and empty conversations older than a day. "
        "Run it daily from cron, or let `celery beat` run the same job."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument(
            "--days",
            type=int,
            default=settings.CONVERSATION_PURGE_AFTER_DAYS,
            help="Days a deleted conversation stays restorable "
            "(default: CONVERSATION_PURGE_AFTER_DAYS).",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        purged = conversation_purge_deleted(older_than=dt.timedelta(days=options["days"]))
        self.stdout.write(f"purged {purged} conversation(s)")
