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

SO_REUSEPORT would also let a second IncidentDesk (another checkout, another
`var/`) bind the same port and silently take half the connections. So serve
first takes a lock per port (`port_lock`), which its daphne processes inherit:
a second serve fails with the first one's pid and data directory, even if
only orphaned workers of the first are left.
"""

from __future__ import annotations

import fcntl
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Protocol

from django.conf import settings

from incidentdesk import embedded, shutdown

GRACE_SECONDS = 10


class Output(Protocol):
    """sys.stdout or a management command's OutputWrapper."""

    def write(self, msg: str) -> Any: ...


@dataclass
class Child:
    """A supervised process, and how to start it again after a crash."""

    name: str
    start: Callable[[], subprocess.Popen[bytes]]
    process: subprocess.Popen[bytes] = field(init=False)
    crashes: list[float] = field(default_factory=list)  # monotonic times, recent ones

    def __post_init__(self) -> None:
        self.process = self.start()


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


class PortInUse(OSError):
    pass


def port_lock_path(port: int) -> Path:
    """One lock file per port for every checkout on the machine (not under `var/`)."""
    return Path(tempfile.gettempdir()) / f"incidentdesk-port-{port}.lock"


def port_lock(port: int) -> IO[str]:
    """Hold the port's lock (released when this process and its workers are gone).

    The file says who holds it, for the second instance's message. Keep the
    returned file open; pass its descriptor to the daphne processes.
    """
    handle = open(port_lock_path(port), "a+")  # noqa: SIM115 - held for the process's life
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "pid unknown"
        handle.close()
        raise PortInUse(f"port {port} is in use by another IncidentDesk ({holder})") from None
    handle.seek(0)
    handle.truncate()
    handle.write(f"pid {os.getpid()}, var {embedded.var_dir()}\n")
    handle.flush()
    return handle


def daphne_command(sock: socket.socket) -> list[str]:
    """daphne serving the app on an already listening socket."""
    return [
        sys.executable, "-m", "daphne", "--fd", str(sock.fileno()), "incidentdesk.asgi:application"
    ]  # fmt: skip


def start_web(
    sockets: Sequence[socket.socket], *, hold: Sequence[int] = (), **popen: Any
) -> list[Child]:
    """One daphne process per socket; each inherits its own socket (and `hold`: the port lock).

    The sockets stay open here too, so a restarted worker adopts the same one
    and connections that arrive meanwhile wait in its backlog.
    """

    def starter(sock: socket.socket) -> Callable[[], subprocess.Popen[bytes]]:
        return lambda: subprocess.Popen(  # noqa: S603 - our argv
            daphne_command(sock), pass_fds=(sock.fileno(), *hold), **popen
        )

    return [Child(f"daphne-{n}", starter(sock)) for n, sock in enumerate(sockets, start=1)]


def start_celery() -> Child:
    argv = [
        sys.executable, "-m", "celery", "-A", "incidentdesk", "worker",
        "--loglevel", "INFO", "--concurrency", "1",
        "-Q", settings.CELERY_TASK_DEFAULT_QUEUE, "--hostname", "incidentdesk@%h",
    ]  # fmt: skip
    return Child("celery", lambda: subprocess.Popen(argv, start_new_session=True))  # noqa: S603


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


def supervise(*, host: str, port: int, out: Output, hold: Sequence[int] = ()) -> int:
    """Run the children until a signal or until one of them exits.

    Stop signals raise `shutdown.Interrupted` (manage.py installed the
    handlers); starting the children is deferred past them, so every child
    started is in `children` when the clean-up runs.
    """
    shutdown.install()  # manage.py did already; again for callers that are not manage.py
    children: list[Child] = []
    exit_code = 0
    sockets: list[socket.socket] = []
    try:
        with shutdown.deferred():
            sockets = listening_sockets(host, port, settings.WEB_WORKERS)
            children += start_web(sockets, hold=hold, start_new_session=True)
            children.append(start_celery())
        exit_code = _watch(children, out)
    except shutdown.Interrupted as stop:
        out.write(f"\n{stop}: stopping daphne, the worker and the embedded services...\n")
    finally:
        shutdown.ignore()
        stop_children(children, out)
        for sock in sockets:
            sock.close()
        embedded.stop_owned_services()
    out.write("stopped.\n")
    return exit_code


def _watch(children: Sequence[Child], out: Output) -> int:
    """Restart a child that exits, after a growing delay; give up (1) when one
    keeps crashing. A stop signal raises instead."""
    restart_at: dict[str, float] = {}
    while True:
        now = time.monotonic()
        for child in children:
            if child.name in restart_at:
                if now >= restart_at[child.name]:
                    del restart_at[child.name]
                    with shutdown.deferred():  # a signal now still finds it in `children`
                        child.process = child.start()
                    out.write(f"{child.name} restarted (pid {child.process.pid})\n")
            elif (code := child.process.poll()) is not None:
                delay = _crash_delay(child, now)
                if delay is None:
                    out.write(
                        f"{child.name} exited with {code}, {len(child.crashes)} times in "
                        f"{settings.SUPERVISOR_RESTART_WINDOW_SECONDS}s; giving up: stopping\n"
                    )
                    return 1
                out.write(f"{child.name} exited with {code}; restarting it in {delay:.0f}s\n")
                restart_at[child.name] = now + delay
        time.sleep(0.5)


def _crash_delay(child: Child, now: float) -> float | None:
    """Seconds to wait before restarting `child` (1, 2, 4... up to 30), or None
    when it crashed more than SUPERVISOR_RESTARTS times within the window."""
    window = settings.SUPERVISOR_RESTART_WINDOW_SECONDS
    child.crashes = [*(t for t in child.crashes if now - t < window), now]
    if len(child.crashes) > settings.SUPERVISOR_RESTARTS:
        return None
    return float(min(2 ** (len(child.crashes) - 1), 30))
