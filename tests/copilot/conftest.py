"""Copilot fixtures: a local OpenAI-compatible server and settings pointing at it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from pytest_django.fixtures import Settings

from tests.copilot.openai_server import OpenAIServer

OPENAI_TEST_KEY = "sk-test-do-not-leak-4c1d"


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
