"""The base of every command that reads or writes the app's tables."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from incidentdesk.migrating import SchemaMissingError, schema_ensure


class SchemaCommand(BaseCommand):
    """A command that needs the schema: migrates the embedded database first, or stops
    with one line saying what to run (never a ProgrammingError traceback).

    Hooks Django's own pre-`handle()` migration check, which only warns.
    """

    requires_migrations_checks = True

    def check_migrations(self) -> None:
        try:
            schema_ensure(say=self.stderr.write)
        except SchemaMissingError as exc:
            raise CommandError(exc.message) from None
