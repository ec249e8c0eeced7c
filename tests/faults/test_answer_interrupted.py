"""kill -9 the daphne writing an answer, in the middle of it, under `manage.py serve`:
the question is kept, the answer is marked interrupted (and its page says so), and once
serve has restarted daphne the conversation takes the next question at once: no "busy",
no waiting for the user's turn, no socket of the dead process still counted.

The model is a local OpenAI-protocol server holding its first reply, so daphne is killed
while the answer is being written, not by luck of timing.
"""

from __future__ import annotations

import asyncio
import json
import signal
import threading
import urllib.request
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import psutil
import pytest
import redis
from django.core.cache import cache
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed

from tests.copilot.openai_server import OpenAIServer, text_reply
from tests.processes import (
    ALICE,
    WAIT_SECONDS,
    Stack,
    free_port,
    intent_model_share,
    wait_for_http,
    wait_until,
)

QUESTION = "Have we seen PayU 403s after a key rotation?"


@pytest.fixture
def model() -> Iterator[OpenAIServer]:
    server = OpenAIServer().start()
    yield server
    server.stop()


class Served:
    """`manage.py serve` (one daphne) answering with `model`, and alice's way in."""

    def __init__(self, stack: Stack, model: OpenAIServer) -> None:
        stack.env |= {
            "OPENAI_API_KEY": "sk-faults-local", "OPENAI_BASE_URL": model.base_url,
            "COPILOT_MODEL": "gpt-test", "WEB_WORKERS": "1", "SUPERVISOR_CHECK_SECONDS": "2",
        }  # fmt: skip
        stack.manage("migrate", "--verbosity", "0")
        self.session, conversation, _ = stack.manage(
            "shell", "--no-imports", "-c", ALICE
        ).stdout.split()
        self.conversation = int(conversation)
        intent_model_share(stack.var_dir)
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        self.serve = stack.start("serve", "--no-demo", "--port", str(port))
        self.stack = stack
        wait_for_http(f"{self.base}/healthz", self.serve)

    def socket(self) -> Any:
        url = f"ws{self.base.removeprefix('http')}/ws/conversations/{self.conversation}/"
        headers = {"Cookie": f"sessionid={self.session}", "Origin": self.base}
        return connect(url, additional_headers=headers, open_timeout=30)

    def daphne(self) -> psutil.Process:
        [daphne] = [
            child for child in psutil.Process(self.serve.pid).children()
            if "daphne" in child.cmdline()
        ]  # fmt: skip
        return daphne

    def page(self) -> str:
        request = urllib.request.Request(  # noqa: S310 - localhost
            f"{self.base}/conversations/{self.conversation}/",
            headers={"Cookie": f"sessionid={self.session}"},
        )
        with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310
            return str(response.read().decode())

    def query(self, sql: str) -> list[tuple[Any, ...]]:
        with self.stack.connect() as connection:
            return connection.execute(sql, [self.conversation]).fetchall()  # type: ignore[arg-type]

    def held_in_redis(self) -> list[bytes]:
        """Keys Redis still holds for alice's answer: her turn, the conversation's claim,
        the sockets counted on it."""
        client = redis.Redis(unix_socket_path=str(self.stack.var_dir / "redis.sock"))
        with client:
            held = client.keys(cache.make_key("chat-user-turn:*"))
            held += client.keys(cache.make_key(f"chat-run:{self.conversation}"))
            held += client.keys(cache.make_key(f"chat-sockets:{self.conversation}"))
            return list(held)


async def asked(served: Served, meanwhile: Any = None) -> tuple[list[dict[str, Any]], Any]:
    """The events a question receives until `done`, an `error` or the socket's end (and its
    close code then), `meanwhile` run once it is sent."""
    events: list[dict[str, Any]] = []
    async with served.socket() as socket:
        await socket.send(json.dumps({"type": "ask", "text": QUESTION}))
        if meanwhile:
            await asyncio.to_thread(meanwhile)
        try:
            while not events or events[-1]["type"] not in {"done", "error"}:
                events.append(json.loads(await asyncio.wait_for(socket.recv(), 60)))
        except ConnectionClosed:
            return events, socket.close_code
    return events, None


def test_an_answer_cut_by_a_killed_daphne_keeps_its_question_and_frees_the_conversation(
    stack: Stack, model: OpenAIServer
) -> None:
    held = threading.Event()  # the first reply: never sent, the model "still thinking"
    model.script(replace(text_reply("The first answer."), gate=held), text_reply("All clear."))
    served = Served(stack, model)

    def kill_daphne_mid_answer() -> None:
        wait_until(lambda: model.requests, "the model to be asked")  # the run is writing
        served.daphne().send_signal(signal.SIGKILL)

    try:
        cut, code = asyncio.run(asked(served, meanwhile=kill_daphne_mid_answer))
    finally:
        held.set()
    assert code == 1006, cut  # the socket died with its daphne, the answer unfinished

    def run_states() -> list[tuple[Any, ...]]:
        return served.query("SELECT status, error FROM copilot_agentrun WHERE conversation_id = %s")

    wait_until(lambda: run_states()[0][0] != "running", "the answer marked", WAIT_SECONDS)
    [(status, error)] = run_states()
    assert status == "failed" and error.startswith("interrupted")
    questions = served.query(
        "SELECT content FROM copilot_message WHERE conversation_id = %s AND role = 'user'"
    )
    assert questions == [(QUESTION,)]  # no question lost
    wait_for_http(f"{served.base}/healthz", served.serve)  # serve restarted daphne
    assert "This answer was interrupted." in served.page()
    wait_until(lambda: served.held_in_redis() == [], "alice's turn and claims freed")

    answered, code = asyncio.run(asked(served))
    assert code is None and answered[-1]["type"] == "done", answered
    assert "All clear." in "".join(e.get("text", "") for e in answered if e["type"] == "token")
