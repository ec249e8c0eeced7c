"""A slow local model server for the benches: OpenAI's streaming chat completions,
a word every WORD_SECONDS, the same answer to every request, no tools.

What a self-hosted model on a busy GPU looks like to the copilot: each
answer holds its answering thread for `words * WORD_SECONDS` seconds.
Standard library only; the wire format is the one tests/copilot/openai_server.py
checks the client against (chunked SSE, a finish reason, usage, [DONE]).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

WORD_SECONDS = 0.1
ANSWER = (
    "Yes: INC-2025-08-24-001 looked the same. The rotated key never reached one gateway "
    "pool; re-syncing the secret and restarting the pods fixed it."
)


class SlowModelServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False

    def __init__(self, word_seconds: float = WORD_SECONDS) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.word_seconds = word_seconds
        self.base_url = f"http://127.0.0.1:{self.server_address[1]}/v1"

    def start(self) -> SlowModelServer:
        threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True).start()
        return self

    def stop(self) -> None:
        self.shutdown()
        self.server_close()

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client closing an idle kept-alive connection is no news


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: SlowModelServer

    def do_POST(self) -> None:
        request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        head = {
            "id": f"chatcmpl-{time.monotonic_ns()}", "object": "chat.completion.chunk",
            "created": int(time.time()), "model": request.get("model", ""),
        }  # fmt: skip
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        try:
            self._chunk(head, {"role": "assistant", "content": ""}, None)
            for word in ANSWER.split(" "):
                time.sleep(self.server.word_seconds)
                self._chunk(head, {"content": word + " "}, None)
            self._chunk(head, {}, "stop")
            usage = {"prompt_tokens": 100, "completion_tokens": 30, "total_tokens": 130}
            self._send({**head, "choices": [], "usage": usage})
            self._raw(b"data: [DONE]\n\n")
            self._raw(b"")
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _chunk(self, head: dict[str, Any], delta: dict[str, Any], finish: str | None) -> None:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        self._send({**head, "choices": [choice]})

    def _send(self, data: dict[str, Any]) -> None:
        self._raw(f"data: {json.dumps(data)}\n\n".encode())

    def _raw(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def log_message(self, format: str, *args: Any) -> None:
        pass
