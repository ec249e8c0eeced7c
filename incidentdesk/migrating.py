"""The database schema is there before a command or bench uses it.

On a fresh checkout, `manage.py evaluate`, `import_incidents` or a bench run
before the first `make run` (which migrates) ended in a raw
`ProgrammingError: relation "incidents_dataset" does not exist`. The embedded
database is ours, so it is migrated on the spot; a configured one
(DATABASE_URL) may be shared or need a review first, so the command stops
with one line saying what to run.
"""

from __future__ import annotations

from collections.abc import Callable

from django.core.management import call_command
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from incidentdesk import embedded
from incidentdesk.errors import IncidentDeskError


class SchemaMissingError(IncidentDeskError):
    """The configured database lacks migrations; the message says what to run."""


def pending_migrations() -> list[str]:
    """`app.name` of every migration not yet applied to the default database."""
    executor = MigrationExecutor(connection)
    plan = executor.migration_plan(executor.loader.graph.leaf_nodes())
    return [f"{migration.app_label}.{migration.name}" for migration, _ in plan]


def schema_ensure(*, say: Callable[[str], object] = print) -> None:
    """Apply pending migrations to the embedded database, or raise SchemaMissingError.

    `say` gets one line when it migrates, so the pause is explained.
    """
    pending = pending_migrations()
    if not pending:
        return
    if not embedded.uses_embedded_postgres():
        raise SchemaMissingError(
            f"The database (DATABASE_URL) has {len(pending)} unapplied migrations: "
            "run `python manage.py migrate` first."
        )
    say(f"Migrating the embedded database first ({len(pending)} migrations)...")
    call_command("migrate", interactive=False, verbosity=0)
