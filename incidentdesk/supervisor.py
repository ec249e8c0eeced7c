"""`manage.py serve`: run daphne and a Celery worker until Ctrl-C.

Daphne runs as WEB_WORKERS processes (default: one per core), because one
Python process answers on one core at a time: at 50 concurrent chat clients
one process took 1.3 s at p95 and two took 0.9-1.2 s (bench/ws_bench.py).
Each worker gets its own listening socket on the same port (SO_REUSEPORT);
the kernel spreads connections over them by a hash of the client's address,
evenly on average but not client by client.

The `manage.py` process has already started (and so owns) the embedded
PostgreSQL and Redis; its children only attach. Children run in their own
sessions so the terminal's Ctrl-C reaches this process alone, and shutdown
happens in order: web and worker first, then Redis, then PostgreSQL.
"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from types import FrameType
from typing import Any, Protocol

from django.conf import settings

from incidentdesk import embedded

GRACE_SECONDS = 10


class Output(Protocol):
    """sys.stdout or a management command's OutputWrapper."""

    def write(self, msg: str) -> Any: ...


@dataclass
class Child:
    name: str
    process: subprocess.Popen[bytes]


def listening_sockets(host: str, port: int, count: int) -> list[socket.socket]:
    """`count` IPv4 sockets listening on one address, for daphne processes to adopt.

    Port 0 picks a free port for the first socket; the others share it.
    IPv4 only: daphne adopts a descriptor as AF_INET (its `--fd`).
    """
    if ":" in host:
        raise OSError(f"{host} is an IPv6 address; serve listens on IPv4 (e.g. 0.0.0.0)")
    sockets: list[socket.socket] = []
    try:
        for _ in range(count):
            sockets.append(socket.socket(socket.AF_INET, socket.SOCK_STREAM))
            sockets[-1].setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sockets[-1].setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            sockets[-1].bind((host, port))
            port = sockets[-1].getsockname()[1]
            sockets[-1].listen(1024)
    except OSError:
        for sock in sockets:
            sock.close()
        raise
    return sockets


def daphne_command(sock: socket.socket) -> list[str]:
    """daphne serving the app on an already listening socket."""
    return [
        sys.executable, "-m", "daphne", "--fd", str(sock.fileno()), "incidentdesk.asgi:application"
    ]  # fmt: skip


def start_web(sockets: Sequence[socket.socket], **popen: Any) -> list[Child]:
    """One daphne process per socket; each inherits only its own socket."""
    return [
        Child(f"daphne-{number}", subprocess.Popen(  # noqa: S603 - our argv
            daphne_command(sock), pass_fds=(sock.fileno(),), **popen
        ))
        for number, sock in enumerate(sockets, start=1)
    ]  # fmt: skip


def start_celery() -> Child:
    argv = [
        sys.executable, "-m", "celery", "-A", "incidentdesk", "worker",
        "--loglevel", "INFO", "--concurrency", "1",
        "-Q", settings.CELERY_TASK_DEFAULT_QUEUE, "--hostname", "incidentdesk@%h",
    ]  # fmt: skip
    return Child("celery", subprocess.Popen(argv, start_new_session=True))  # noqa: S603 - our argv


def stop_children(children: Sequence[Child], out: Output) -> None:
    """SIGTERM each child, wait, then SIGKILL what is left: no orphans."""
    for child in children:
        if child.process.poll() is None:
            child.process.terminate()
    deadline = time.monotonic() + GRACE_SECONDS
    for child in children:
        try:
            child.process.wait(max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            out.write(f"{child.name} did not stop in {GRACE_SECONDS}s; killing it\n")
            child.process.kill()
            child.process.wait()


class _Stop(Exception):
    pass


def _raise_stop(signum: int, frame: FrameType | None) -> None:
    raise _Stop(signal.Signals(signum).name)


def supervise(*, host: str, port: int, out: Output) -> int:
    """Run the children until a signal or until one of them exits."""
    signal.signal(signal.SIGINT, _raise_stop)
    signal.signal(signal.SIGTERM, _raise_stop)
    sockets = listening_sockets(host, port, settings.WEB_WORKERS)
    children = [*start_web(sockets, start_new_session=True), start_celery()]
    for sock in sockets:  # the workers hold them now
        sock.close()
    exit_code = 0
    try:
        while True:
            dead = [c for c in children if c.process.poll() is not None]
            if dead:
                out.write(f"{dead[0].name} exited with {dead[0].process.returncode}; stopping\n")
                exit_code = 1
                break
            time.sleep(0.5)
    except _Stop as stop:
        out.write(f"\n{stop}: stopping daphne, the worker and the embedded services...\n")
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        stop_children(children, out)
        embedded.stop_owned_services()
    out.write("stopped.\n")
    return exit_code
