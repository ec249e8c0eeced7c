"""/healthz (liveness, nothing else touched) and /readyz (database, Redis, embedder)."""

from __future__ import annotations

import json
import os
import signal
import urllib.error
import urllib.request
from typing import Any

import pytest
from django.test import Client

from tests.processes import WAIT_SECONDS, Stack, free_port, wait_for_http


def test_liveness_needs_no_login_and_no_database(client: Client) -> None:
    """No django_db mark: pytest-django fails any database access in this test."""
    response = client.get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_readiness_reports_each_part(client: Client) -> None:
    response = client.get("/readyz")
    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "checks": {"database": "ok", "redis": "ok", "embedder": "ok"},
    }


def get(url: str) -> tuple[int, dict[str, Any], str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:  # noqa: S310 - localhost
            return response.status, json.loads(response.read()), ""
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read()), error.headers.get("Retry-After", "")


def test_readiness_names_a_killed_redis_then_a_killed_database(stack: Stack) -> None:
    port = free_port()
    stack.env["WEB_WORKERS"] = "1"
    serve = stack.start("serve", "--no-demo", "--port", str(port))
    wait_for_http(f"http://127.0.0.1:{port}/healthz", serve)
    ready = f"http://127.0.0.1:{port}/readyz"
    assert get(ready)[0] == 200, stack.output(serve)

    os.kill(int((stack.var_dir / "redis.pid").read_text()), signal.SIGKILL)
    status, body, retry_after = get(ready)
    assert (status, retry_after) == (503, "5")
    assert body["checks"]["redis"] != "ok" and body["checks"]["database"] == "ok"

    stack.kill_postgres()
    status, body, _ = get(ready)
    assert status == 503 and body["checks"]["database"] != "ok"
    assert get(f"http://127.0.0.1:{port}/healthz")[0] == 200  # the process itself is alive

    serve.send_signal(signal.SIGINT)
    serve.wait(WAIT_SECONDS)
