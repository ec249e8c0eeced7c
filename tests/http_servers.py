"""The start and stop the tests' local HTTP servers (Jira, log search) share."""

from __future__ import annotations

import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


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


class LocalServer:
    """A scripted local server (Jira, log search): a subclass answers in `_answer`."""

    _http: ThreadingHTTPServer

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
