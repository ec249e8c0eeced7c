"""Background jobs for incident datasets."""

import ast
import json
from typing import Any

from celery import current_app, shared_task

from incidents.importing import CONNECTION_ERRORS
from incidents.models import ImportJob
from incidents.services import import_job_run_now
from incidents.vector_indexes import partial_indexes_sync

UNFINISHED = {ImportJob.Status.QUEUED, ImportJob.Status.RUNNING}


# acks_late + reject_on_worker_lost: a pool process killed mid-import (kill -9, the
# OOM killer: Celery's WorkerLostError) puts the message back on the queue instead of
# dropping it with the job stuck `running`. Re-running is safe: rows are upserted.
# A lost database is retried too, after 1, 2, 4... 32 s (a minute in all: the
# supervisor restarts an embedded PostgreSQL within seconds); the job's process is
# alive, so the periodic check would never pick the job up.
@shared_task(
    autoretry_for=(ConnectionError, *CONNECTION_ERRORS),
    retry_backoff=True,
    retry_jitter=False,
    max_retries=6,
    acks_late=True,
    reject_on_worker_lost=True,
)
def import_job_run(job_id: int) -> str:
    """Run an uploaded import; progress is written to the job row as it goes.

    A job found `running` was started by a worker that died (a live worker still
    holds the message), so it runs again; import_job_run_now gives up after
    MAX_ATTEMPTS, so a file that kills its worker every time cannot loop forever.
    """
    job = ImportJob.objects.select_related("version__dataset").get(pk=job_id)
    if job.status not in UNFINISHED:
        return job.status  # already finished (redelivered after the ack was lost)
    return import_job_run_now(job=job).status


# One queued after every activation and archiving (incidents.services); a build
# takes minutes at 100k incidents, so it runs here, never in a request. A failed
# build has dropped what it left; the retry builds it again.
@shared_task(
    autoretry_for=(Exception,),
    retry_backoff=30,
    retry_jitter=False,
    max_retries=3,
    acks_late=True,
)
def partial_indexes_sync_task() -> dict[str, list[str]]:
    """Build the active versions' partial HNSW indexes, drop stale ones."""
    built, dropped = partial_indexes_sync()
    return {"built": built, "dropped": dropped}


def import_job_ids_waiting() -> set[int]:
    """Ids of the jobs whose message waits in the broker's queue (Redis, kombu's list).

    What `manage.py recover` compares `queued` jobs with: a job queued for a
    while whose message is not there lost it, and is queued again.
    """
    queue = current_app.conf.task_default_queue
    with current_app.connection_for_read() as conn:
        channel: Any = conn.default_channel  # kombu's Redis channel
        messages = channel.client.lrange(queue, 0, -1)
    ids = set()
    for raw in messages:
        headers = json.loads(raw).get("headers", {})
        if headers.get("task") == import_job_run.name:
            ids.add(int(ast.literal_eval(headers["argsrepr"])[0]))
    return ids
