"""The start and stop the tests' local HTTP servers (Jira, log search) share."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def http_serve(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    """`handler` on a free local port, served from a daemon thread (a request each)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def http_stop(server: ThreadingHTTPServer) -> None:
    server.shutdown()
    server.server_close()
