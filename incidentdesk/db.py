"""Database helpers shared by the apps."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection, transaction


@contextmanager
def derived_writes() -> Iterator[None]:
    """A transaction whose commit does not wait for the WAL to reach the disk.

    For what the copilot derives while it answers (tool results, traces, the
    answer as it streams): it can be produced again, and a PostgreSQL crash
    loses at most the last ~200 ms of it (wal_writer_delay), never a torn
    row. What a user sends is committed synchronously. Measured here: 3.3 ms
    per synchronous commit, 0.3 ms without the wait.
    """
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit = off")
        yield
