"""A local server that speaks OpenAI's streaming chat completions, scripted per test.

A test queues one reply per request it expects and reads back what the client
sent:

    openai_server.script(error_reply(429, retry_after=0), text_reply("All clear."))
    ...
    assert openai_server.requests[0]["model"] == "gpt-4o-mini"

Replies follow the real wire format: chunked HTTP/1.1 carrying SSE lines
`data: {chunk}` of `chat.completion.chunk` objects, tool-call arguments split
across deltas, a finish reason, a usage chunk when the request asks for one,
then `data: [DONE]`. A request with nothing scripted gets a 500 that says so.
"""

from __future__ import annotations

import itertools
import json
import re
import socket
import threading
import time
from collections import deque
from dataclasses import dataclass, replace
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHAT_PATH = "/v1/chat/completions"
_ids = itertools.count(1)  # call and completion ids unique across a whole test run


@dataclass(frozen=True)
class Reply:
    """One scripted answer to one request; the helpers below build the usual ones."""

    deltas: tuple[dict[str, Any], ...] = ()  # choices[0].delta of each chunk, in order
    finish_reason: str | None = "stop"  # None: the stream ends without one
    usage: tuple[int, int] = (42, 7)  # prompt and completion tokens
    status: int = 200
    error: dict[str, Any] | None = None  # the JSON body of a non-200 answer
    headers: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0  # seconds before the status line
    cut: bool = False  # drop the connection right after the deltas
    gate: threading.Event | None = None  # held until the test sets it (a model still thinking)


def text_reply(
    text: str, *, finish_reason: str | None = "stop", usage: tuple[int, int] = (42, 7)
) -> Reply:
    """The model answers `text`, streamed a word at a time."""
    deltas = tuple({"content": piece} for piece in _words(text))
    return Reply(deltas=deltas, finish_reason=finish_reason, usage=usage)


def tool_call_reply(calls: list[tuple[str, str]], *, text: str = "", pieces: int = 3) -> Reply:
    """The model calls tools, given as (name, raw JSON arguments); several calls are
    parallel calls. Each call's arguments arrive in `pieces` deltas, as OpenAI sends them."""
    deltas: list[dict[str, Any]] = [{"content": piece} for piece in _words(text)]
    for index, (name, arguments) in enumerate(calls):
        head = {"index": index, "id": f"call_{next(_ids)}", "type": "function"}
        deltas.append({"tool_calls": [{**head, "function": {"name": name, "arguments": ""}}]})
        deltas += [
            {"tool_calls": [{"index": index, "function": {"arguments": part}}]}
            for part in _split(arguments, pieces)
        ]
    return Reply(deltas=tuple(deltas), finish_reason="tool_calls")


def error_reply(status: int, *, retry_after: float | None = None, message: str = "") -> Reply:
    """The server refuses with `status` and OpenAI's error body (429 may say Retry-After)."""
    reason = HTTPStatus(status).phrase
    error = {"message": message or reason, "type": _ERROR_TYPES.get(status, "server_error")}
    headers = (("Retry-After", f"{retry_after:g}"),) if retry_after is not None else ()
    return Reply(
        status=status, error={"error": {**error, "param": None, "code": None}}, headers=headers
    )


def slow_reply(seconds: float, then: Reply | None = None) -> Reply:
    """Nothing for `seconds` (longer than the client's timeout), then `then` if still wanted."""
    return replace(then or text_reply("This answer comes too late."), delay=seconds)


def cut_reply(text: str) -> Reply:
    """`text` streams, then the connection drops: no finish reason, no [DONE]."""
    return replace(text_reply(text, finish_reason=None), cut=True)


_ERROR_TYPES = {400: "invalid_request_error", 401: "invalid_request_error", 429: "requests"}
NOTHING_SCRIPTED = error_reply(500, message="openai_server: no reply scripted for this request")


class OpenAIServer(ThreadingHTTPServer):
    """Answers each request with the next scripted reply and records every request body."""

    daemon_threads = True
    block_on_close = False  # a slow reply's thread must not hold up the test's teardown

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)  # port 0: the system picks a free one
        self.base_url = f"http://127.0.0.1:{self.server_address[1]}/v1"
        self.requests: list[dict[str, Any]] = []
        self.stopping = threading.Event()
        self._replies: deque[Reply] = deque()
        self._lock = threading.Lock()

    def script(self, *replies: Reply) -> None:
        """Queue replies, one per coming request, in order."""
        with self._lock:
            self._replies.extend(replies)

    @property
    def unused(self) -> list[Reply]:
        """Scripted replies no request has taken yet."""
        with self._lock:
            return list(self._replies)

    def take(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            self.requests.append(body)
            return self._replies.popleft() if self._replies else NOTHING_SCRIPTED

    def start(self) -> OpenAIServer:
        # A short poll keeps stop() quick; the default waits up to half a second.
        threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def stop(self) -> None:
        self.stopping.set()  # wakes slow replies so their threads end now
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.1 for a chunked stream, so a dropped connection looks like a real cut.
    protocol_version = "HTTP/1.1"
    server: OpenAIServer

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if self.path != CHAT_PATH:
            self._send_json(404, {"error": {"message": f"no route for {self.path}"}}, ())
            return
        reply = self.server.take(request)
        if self.server.stopping.wait(reply.delay) or not self._opened(reply.gate):
            return  # torn down while waiting
        try:
            if reply.status == 200:
                self._send_stream(reply, request)
            else:
                self._send_json(reply.status, reply.error or {}, reply.headers)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client gave up first (its timeout)

    def _opened(self, gate: threading.Event | None) -> bool:
        """Wait for the test to open `gate`; False when the server stops first."""
        while gate is not None and not gate.wait(0.05):
            if self.server.stopping.is_set():
                return False
        return True

    def _send_json(
        self, status: int, body: dict[str, Any], headers: tuple[tuple[str, str], ...]
    ) -> None:
        raw = json.dumps(body).encode()
        self.send_response(status)
        for name, value in (("Content-Type", "application/json"), *headers):
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _send_stream(self, reply: Reply, request: dict[str, Any]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunk = _ChunkMaker(request.get("model", ""))
        for delta in ({"role": "assistant", "content": ""}, *reply.deltas):
            self._send_event(chunk.choice(delta, None))
        if reply.cut:
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)  # no last chunk: the body is incomplete
            return
        if reply.finish_reason:
            self._send_event(chunk.choice({}, reply.finish_reason))
        if (request.get("stream_options") or {}).get("include_usage"):
            self._send_event(chunk.usage(*reply.usage))
        self._send_chunk(b"data: [DONE]\n\n")
        self._send_chunk(b"")  # the zero-length chunk that ends a chunked body

    def _send_event(self, data: dict[str, Any]) -> None:
        self._send_chunk(f"data: {json.dumps(data)}\n\n".encode())

    def _send_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output quiet


class _ChunkMaker:
    """Chunks of one completion: same id, model and timestamp, as OpenAI sends them."""

    def __init__(self, model: str) -> None:
        self.head = {
            "id": f"chatcmpl-{next(_ids)}",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "system_fingerprint": "fp_local",
        }

    def choice(self, delta: dict[str, Any], finish_reason: str | None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        return {**self.head, "choices": [choice]}

    def usage(self, prompt: int, completion: int) -> dict[str, Any]:
        tokens = {"prompt_tokens": prompt, "completion_tokens": completion}
        return {
            **self.head,
            "choices": [],
            "usage": {**tokens, "total_tokens": prompt + completion},
        }


def _words(text: str) -> list[str]:
    """`text` in word-sized pieces that join back to exactly `text`."""
    return re.findall(r"\S+\s*|\s+", text)


def _split(text: str, pieces: int) -> list[str]:
    size = max(1, -(-len(text) // pieces))  # ceiling division
    return [text[start : start + size] for start in range(0, len(text), size)] or [""]
