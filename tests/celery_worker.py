"""A real Celery worker process on a queue of its own, for the tests and the import bench.

It starts with the command `manage.py serve` uses (`supervisor.celery_command`:
prefork, one pool process, recycled past CELERY_MAX_MEMORY_KIB, the same allocator
settings); `options` are added after it, and Celery takes an option's last value,
so `--pool solo` overrides the pool. While it runs, the tasks this process sends go
to its queue, so no other worker on the same Redis takes them.
"""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from incidentdesk import memory, supervisor
from incidentdesk.celery import app

BASE_DIR = Path(__file__).resolve().parents[1]


@contextmanager
def celery_worker(
    *options: str, env: Mapping[str, str] | None = None, stop_seconds: float = 60
) -> Iterator[subprocess.Popen[bytes]]:
    """The worker process, terminated (and waited for) when the block ends; `env`
    adds to this process's environment (a test passes its database's URL)."""
    queue = f"worker-{uuid.uuid4().hex[:8]}"
    argv = [*supervisor.celery_command(queue, f"{queue}@%h"), *options,
            "--without-gossip", "--without-mingle", "--loglevel", "WARNING"]  # fmt: skip
    # CELERY_QUEUE: a task the worker itself enqueues stays on this queue too.
    child_env = {**memory.allocator_env(), "CELERY_QUEUE": queue, **(env or {})}
    worker = subprocess.Popen(argv, cwd=BASE_DIR, env=child_env)  # noqa: S603 - our argv
    previous = app.conf.task_default_queue
    app.conf.task_default_queue = queue
    try:
        yield worker
    finally:
        app.conf.task_default_queue = previous
        worker.terminate()
        worker.wait(stop_seconds)
