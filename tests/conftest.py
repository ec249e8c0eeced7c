"""Shared fixtures: personas, eval data location, real files to import."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connections
from rest_framework.test import APIClient

from incidents.selectors import forget_cached_scopes
from tests.factories import UserFactory
from tests.processes import Stack

EVAL_DIR = Path(os.environ.get("EVAL_DATA_DIR", Path(__file__).parents[2] / "shared" / "eval"))


@pytest.fixture
def eval_dir() -> Path:
    """../shared/eval (or EVAL_DATA_DIR); CI always has it beside the clone."""
    if not (EVAL_DIR / "incidents.jsonl").exists():
        pytest.skip(f"evaluation data not found at {EVAL_DIR} (set EVAL_DATA_DIR)")
    return EVAL_DIR


@pytest.fixture
def alice(db: None) -> User:
    """alice is on call: a regular user."""
    return UserFactory(username="alice")


@pytest.fixture
def bob(db: None) -> User:
    """bob curates the knowledge: staff."""
    return UserFactory(username="bob", is_staff=True, is_superuser=True)


@pytest.fixture(autouse=True)
def _fresh_search_caches() -> Iterator[None]:
    """Selectors cache what is active per process; each test rolls its data back."""
    forget_cached_scopes()
    yield
    forget_cached_scopes()


@pytest.fixture(autouse=True)
def _unpaced_offline_answers(settings: Any) -> None:
    """Offline answers stream at once in tests; test_pacing sets its own pace."""
    settings.OFFLINE_STREAM_PACE_MS = 0


@pytest.fixture(autouse=True)
def _close_db_connections() -> Iterator[None]:
    """Threads and async tests can leave connections that block dropping the test DB."""
    yield
    for connection in connections.all(initialized_only=True):
        if connection.connection is not None and not connection.in_atomic_block:
            connection.close()


@pytest.fixture
def api_client() -> APIClient:
    return APIClient()


@pytest.fixture
def roomy_api_rates(settings: Any) -> None:
    """Throttle counters live in the shared Redis cache: tests get rates they never reach
    (test_api_errors sets low ones on purpose)."""
    settings.REST_FRAMEWORK = {
        **settings.REST_FRAMEWORK,
        "DEFAULT_THROTTLE_RATES": {
            "anon": "10000/minute",
            "user": "10000/minute",
            "chat": "10000/minute",
        },
    }
    settings.CHAT_QUESTIONS_PER_MINUTE = 10000  # the chat's own count, shared with the API


@pytest.fixture
def stack() -> Iterator[Stack]:
    """`manage.py` processes on a VAR_DIR of their own, all stopped at the end."""
    stack = Stack.fresh()
    yield stack
    stack.stop()
