"""Copilot fixtures: a local OpenAI-compatible server and settings pointing at it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from pytest_django.fixtures import Settings

from copilot.events import Event
from copilot.models import Conversation
from copilot.replies import conversation_reply
from tests.copilot.openai_server import OpenAIServer
from tests.factories import (
    documents_import,
    incident_row,
    incidents_import,
    key_rotation_403,
    key_rotation_runbook,
    secret_cache_known_issue,
    settlement_missing_rows,
)

OPENAI_TEST_KEY = "sk-test-do-not-leak-4c1d"


def ask(conversation: Conversation, user: User, text: str, **options: Any) -> list[Event]:
    """One chat turn through `conversation_reply`, run to its end."""
    return list(conversation_reply(conversation=conversation, user=user, text=text, **options))


@pytest.fixture
def openai_server() -> Iterator[OpenAIServer]:
    """A local server speaking /v1/chat/completions: `.script(...)` its replies, read
    `.requests` back (see tests/copilot/openai_server.py for the reply helpers)."""
    server = OpenAIServer().start()
    yield server
    server.stop()


@pytest.fixture
def openai_settings(settings: Settings, openai_server: OpenAIServer) -> Settings:
    """The copilot on `openai_server`, with a short timeout and near-instant retries so
    failure tests stay quick (a slow_reply needs more than 1 s to time out)."""
    settings.OPENAI_API_KEY = OPENAI_TEST_KEY
    settings.OPENAI_BASE_URL = openai_server.base_url
    settings.COPILOT_MODEL = "gpt-test"
    settings.COPILOT_TIMEOUT_SECONDS = 1.0
    settings.COPILOT_MAX_RETRIES = 2
    settings.COPILOT_RETRY_BACKOFF_SECONDS = 0.01
    return settings


INCIDENTS = [
    key_rotation_403(
        root_cause="The rotated merchant API key never reached the gateway's secret cache.",
        mitigation="Re-synced the secret to every gateway pool and restarted the pods.",
        body="Merchants got HTTP 403 for 40 minutes. About 1,200 payments failed.",
        occurred_at="2025-08-24",
    ),
    settlement_missing_rows(
        title="Settlement report missing rows after DST change",
        impacted_application="Settlement & Reporting",
        root_cause="A timezone bug cut the last hour of the day from the report.",
        mitigation="Re-ran the report with UTC boundaries.",
        body="Finance noticed totals that did not match for one day.",
        occurred_at="2025-09-01",
    ),
    incident_row(
        "INC-2025-10-02-001",
        title="Checkout latency from exhausted database connection pool",
        impacted_application="Checkout Gateway",
        root_cause="A slow query held connections until the pool ran dry.",
        mitigation="Killed the query, added an index and raised the pool size.",
        body="Checkout p99 latency rose to 9 seconds for 25 minutes.",
        occurred_at="2025-10-02",
    ),
]
DOCUMENTS = [
    key_rotation_runbook(
        title="Rotating PayU Core API keys without 403s",
        body="## Steps\n1. Sync the new key to every gateway pool.\n2. Restart the pods.",
    ),
    secret_cache_known_issue(
        title="Gateway secret caches keep old keys for a day",
        body="## Issue\nGateway pools cache secrets for 24 hours after a rotation.",
    ),
]


@pytest.fixture
def desk(db: None, tmp_path: Path) -> None:
    """A small active corpus: three incidents and two documents."""
    incidents_import(tmp_path / "incidents.jsonl", INCIDENTS, activate=True)
    documents_import(tmp_path / "kb.jsonl", DOCUMENTS, activate=True)
