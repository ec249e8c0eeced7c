"""The start and stop the tests' local HTTP servers (Jira, log search) share."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit


def http_serve(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    """`handler` on a free local port, served from a daemon thread (a request each)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def http_serve_to(answer: Callable[[BaseHTTPRequestHandler], None]) -> ThreadingHTTPServer:
    """`answer(request)` for every GET and POST, through `http_serve`, with no request log."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # BaseHTTPRequestHandler's names
            answer(self)

        def do_POST(self) -> None:
            answer(self)

        def log_message(self, format: str, *args: Any) -> None:
            return  # keep test output clean

    return http_serve(Handler)


def http_stop(server: ThreadingHTTPServer) -> None:
    server.shutdown()
    server.server_close()


@dataclass
class Seen:
    """One request a local server received, for the test to read back."""

    method: str
    path: str  # without the query string
    query: dict[str, str]
    headers: dict[str, str]
    json: dict[str, Any]  # the JSON body ({} without one, as for a GET)


class LocalServer:
    """A scripted local server (Jira, log search): a subclass answers in `_answer`,
    and keeps what it received in its `requests` field."""

    _http: ThreadingHTTPServer
    requests: list[Seen]

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        raise NotImplementedError

    def start(self) -> Self:
        self._http = http_serve_to(self._answer)
        return self

    def stop(self) -> None:
        http_stop(self._http)

    @property
    def url(self) -> str:
        host, port = self._http.server_address[:2]
        return f"http://{host!s}:{port}"

    def _record(self, handler: BaseHTTPRequestHandler) -> Seen:
        length = int(handler.headers.get("Content-Length") or 0)
        url = urlsplit(handler.path)
        seen = Seen(
            method=handler.command,
            path=url.path,
            query={key: values[0] for key, values in parse_qs(url.query).items()},
            headers=dict(handler.headers),
            json=json.loads(handler.rfile.read(length) or b"{}"),
        )
        self.requests.append(seen)
        return seen

    @staticmethod
    def _send(
        handler: BaseHTTPRequestHandler,
        status: int,
        data: bytes,
        headers: Iterable[tuple[str, str]] = (),
    ) -> None:
        """A JSON answer (`data` already encoded); a client that gave up is no error."""
        try:
            handler.send_response(status)
            for name, value in headers:
                handler.send_header(name, value)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)
