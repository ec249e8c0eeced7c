from argparse import ArgumentParser
from typing import Any

from django.core.management.base import CommandError

from incidentdesk.errors import IncidentDeskError
from incidentdesk.management.base import SchemaCommand
from incidentdesk.services import service_token_create


class Command(SchemaCommand):
    help = (
        "Print the API token of a (service) account, creating the account when missing. "
        "Use it as `Authorization: Token <key>`. Tokens are also managed in the admin."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("username", help="the account, e.g. monitoring-bot")
        parser.add_argument(
            "--staff", action="store_true", help="a new account gets staff rights (writes)"
        )
        parser.add_argument(
            "--rotate", action="store_true", help="replace the existing token with a new one"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            token, created = service_token_create(
                username=options["username"], staff=options["staff"], rotate=options["rotate"]
            )
        except IncidentDeskError as exc:
            raise CommandError(exc.message) from exc
        if created:
            self.stderr.write(f"created service account {token.user.username}")
        self.stdout.write(token.key)
