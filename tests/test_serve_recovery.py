"""What `manage.py serve` repairs at start-up, before any worker runs."""

from __future__ import annotations

import datetime as dt
import uuid
from collections.abc import Iterator
from io import StringIO

import pytest
from django.contrib.auth.models import User

from copilot.models import AgentRun
from copilot.selectors import agent_run_is_active
from incidentdesk.celery import app
from incidentdesk.management.commands.serve import Command
from incidents.models import ImportJob
from tests.factories import ConversationFactory, DatasetVersionFactory

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


def recover() -> str:
    out = StringIO()
    Command(stdout=out).recover()
    return out.getvalue()


def test_an_answer_a_crash_left_running_is_failed_so_the_conversation_is_usable(
    alice: User, queue: str
) -> None:
    conversation = ConversationFactory(owner=alice)
    run = AgentRun.objects.create(conversation=conversation, model="offline")
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
        ImportJob.objects.create(version=version, file="imports/x.jsonl", status=status)

    assert "Queued 2 interrupted import job(s) again" in recover()
    assert queued_messages(queue) == 2
