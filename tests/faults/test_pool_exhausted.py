"""Every pooled connection busy: a request waits DATABASE_POOL_TIMEOUT_SECONDS, not
psycopg_pool's 30 s, then answers 503 with Retry-After as while the database is down."""

from __future__ import annotations

import json

from tests.processes import Stack

# In a real process on the stack's PostgreSQL, with a pool of one: the main thread
# holds the only connection (as a long request would), another thread asks the API.
POOL_RUN_DRY = """
import json, threading, time
from django.db import connection
from django.test import Client

connection.ensure_connection()
answer = {}

def ask():
    started = time.monotonic()
    client = Client(raise_request_exception=False, HTTP_HOST="127.0.0.1")
    headers = {"Authorization": "Token abc", "Accept": "application/json"}
    response = client.get("/api/incidents/", headers=headers)
    answer.update(
        status=response.status_code, retry_after=response.get("Retry-After"),
        body=json.loads(response.content), seconds=time.monotonic() - started,
    )

thread = threading.Thread(target=ask)
thread.start()
thread.join()
print(json.dumps(answer))
"""


def test_a_request_that_finds_no_free_connection_answers_503_within_seconds(
    stack: Stack,
) -> None:
    stack.env |= {"DATABASE_POOL_SIZE": "1", "DATABASE_POOL_TIMEOUT_SECONDS": "2"}
    stack.manage("migrate", "--verbosity", "0")
    output = stack.manage("shell", "--no-imports", "-c", POOL_RUN_DRY).stdout
    answer = json.loads(output.splitlines()[-1])

    assert (answer["status"], answer["retry_after"]) == (503, "5"), answer
    assert answer["body"]["error"]["code"] == "unavailable"
    assert 2 <= answer["seconds"] < 10  # psycopg_pool's own default was 30 s
