"""What `/readyz` checks: the database, Redis and the embedder, each on its own.

A check returns "ok" or the reason it failed, never raises: a probe must
say which part is down, not answer 500.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import connection

from incidentdesk.embeddings import get_embedder


def check_database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")


def check_redis() -> None:
    """PING through the cache's client (the channel layer and Celery use the same server)."""
    client: Any = cache._cache.get_client(write=True)  # type: ignore[attr-defined]
    client.ping()


def check_embedder() -> None:
    """The local model loads and embeds; the OpenAI one is not called (each call is billed)."""
    embedder = get_embedder()
    if settings.EMBEDDINGS != "openai":
        embedder.embed(["ready"])


CHECKS: dict[str, Callable[[], None]] = {
    "database": check_database,
    "redis": check_redis,
    "embedder": check_embedder,
}


def readiness() -> dict[str, str]:
    """Each part's state: "ok", or the exception's type and first line."""
    states = {}
    for name, check in CHECKS.items():
        try:
            check()
        except Exception as exc:
            first_line = (str(exc).strip().splitlines() or [""])[0][:200]
            states[name] = f"{type(exc).__name__}: {first_line}".rstrip(": ")
        else:
            states[name] = "ok"
    return states
