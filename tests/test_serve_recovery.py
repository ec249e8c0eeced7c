"""What `manage.py serve` repairs at start-up, before any worker runs, and what its
periodic check (`manage.py recover`) repairs while they run."""

from __future__ import annotations

import datetime as dt
import json
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.core.management import call_command
from django.utils import timezone

from copilot.asking import question_admitted
from copilot.models import AgentRun
from copilot.selectors import agent_run_is_active
from incidentdesk import owners
from incidentdesk.celery import app
from incidentdesk.management.commands.serve_prepare import Command
from incidents.models import ImportJob
from incidents.tasks import import_job_ids_waiting, import_job_run, partial_indexes_sync_task
from tests.factories import (
    AgentRunFactory,
    ConversationFactory,
    DatasetVersionFactory,
    ImportJobFactory,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def queue() -> Iterator[str]:
    """A queue of this test's own on the real Redis (no worker reads it), emptied after."""
    name, previous = f"test-{uuid.uuid4().hex[:8]}", app.conf.task_default_queue
    app.conf.task_default_queue = name
    yield name
    app.conf.task_default_queue = previous
    with app.connection_for_write() as conn:
        conn.default_channel.client.delete(name)


def queued_messages(queue: str) -> int:
    with app.connection_for_write() as conn:
        return int(conn.default_channel.client.llen(queue))


def queued_tasks(queue: str) -> list[str]:
    """The task name of each message waiting on `queue`."""
    with app.connection_for_write() as conn:
        raw = conn.default_channel.client.lrange(queue, 0, -1)
    return [json.loads(message)["headers"]["task"] for message in raw]


def recover() -> str:
    out = StringIO()
    Command(stdout=out).recover()
    return out.getvalue()


def test_an_answer_a_crash_left_running_is_failed_so_the_conversation_is_usable(
    alice: User, queue: str
) -> None:
    conversation = ConversationFactory(owner=alice)
    run = AgentRunFactory(conversation=conversation)
    assert agent_run_is_active(conversation=conversation, stale_after=dt.timedelta(minutes=10))

    assert "Marked 1 interrupted answer(s) as failed" in recover()
    run.refresh_from_db()
    assert run.status == AgentRun.Status.FAILED and "interrupted" in run.error
    assert run.finished_at is not None
    assert not agent_run_is_active(conversation=conversation, stale_after=dt.timedelta(minutes=10))


def test_import_jobs_a_crash_left_unfinished_are_queued_again(queue: str) -> None:
    version = DatasetVersionFactory(status="building")
    statuses = [ImportJob.Status.QUEUED, ImportJob.Status.RUNNING, ImportJob.Status.SUCCEEDED]
    for status in statuses:
        ImportJobFactory(version=version, status=status)

    assert "Queued 2 interrupted import job(s) again" in recover()
    tasks = queued_tasks(queue)
    # Start-up also queues the partial HNSW indexes' sync (incidents.vector_indexes).
    assert tasks.count(import_job_run.name) == 2
    assert tasks.count(partial_indexes_sync_task.name) == 1


def dead_owner() -> str:
    """`host:pid` of a process that has exited (a daphne or worker killed mid-work)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return f"{socket.gethostname()}:{process.pid}"


def check() -> str:
    out = StringIO()
    call_command("recover", stdout=out)
    return out.getvalue()


def test_the_periodic_check_fails_answers_whose_process_died_and_frees_the_conversation(
    alice: User, queue: str
) -> None:
    orphaned, alive = ConversationFactory(owner=alice), ConversationFactory(owner=alice)
    dead = AgentRunFactory(conversation=orphaned, owner=dead_owner())
    live = AgentRunFactory(conversation=alive, owner=owners.current())
    cache.set(f"chat-run:{orphaned.pk}", 1)  # the claim the dead process held

    assert "Marked 1 interrupted answer(s) as failed" in check()
    dead.refresh_from_db(), live.refresh_from_db()
    assert (dead.status, live.status) == (AgentRun.Status.FAILED, AgentRun.Status.RUNNING)
    assert "interrupted" in dead.error
    with question_admitted(user_id=alice.pk, conversation_id=orphaned.pk):
        pass  # no ConflictError: the conversation is usable at once


def test_the_periodic_check_queues_again_jobs_whose_worker_died_or_message_was_lost(
    queue: str,
) -> None:
    version = DatasetVersionFactory(status="building")
    long_ago = timezone.now() - dt.timedelta(minutes=5)

    def job(status: str, owner: str = "") -> ImportJob:
        created = ImportJobFactory(version=version, file="x.jsonl", status=status, owner=owner)
        ImportJob.objects.filter(pk=created.pk).update(created_at=long_ago)
        return created

    lost_worker = job(ImportJob.Status.RUNNING, dead_owner())
    job(ImportJob.Status.RUNNING, owners.current())  # still being worked on
    lost_message = job(ImportJob.Status.QUEUED)
    ImportJobFactory(version=version, file="x.jsonl")  # just queued: its message is coming

    assert "Queued 2 interrupted import job(s) again" in check()
    assert queued_messages(queue) == 2
    lost_worker.refresh_from_db()
    assert lost_worker.status == ImportJob.Status.QUEUED and lost_worker.owner == ""
    assert "Queued" not in check()  # both wait in the broker now, and so are left alone
    assert lost_message.pk in import_job_ids_waiting()
