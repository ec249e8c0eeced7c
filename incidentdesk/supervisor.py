"""`manage.py serve`: run daphne and a Celery worker until Ctrl-C.

Daphne runs as WEB_WORKERS processes (default: one per core), because one
Python process answers on one core at a time: at 50 concurrent chat clients
one process took 1.3 s at p95 and two took 0.9-1.2 s (bench/ws_bench.py).
Each worker gets its own listening socket on the same port (SO_REUSEPORT);
the kernel spreads connections over them by a hash of the client's address,
evenly on average but not client by client.

The supervisor does no Django work, so it stays small (issue 19: it held
790 MB after loading the demo's embedder): `manage.py serve` lands in
`main()` here without setting Django up. It starts (and so owns) the
embedded PostgreSQL and Redis, runs the Django steps of start-up in a child
(`manage.py serve_prepare`: migrations, static files, repairs, demo data,
the intent model), then starts daphne and Celery, which only attach to the
services.

While they run it watches them all: a daphne or Celery process that exits,
and an owned PostgreSQL or Redis that dies, is restarted after a growing
delay (until it keeps dying). Meanwhile pages answer 503 with Retry-After
(`incidentdesk/unavailable.py`). After any restart, and every
SUPERVISOR_CHECK_SECONDS, it runs `manage.py recover` in a child: answers
and import jobs whose process died are closed or queued again at once.

Children run in their own sessions so the terminal's Ctrl-C reaches this
process alone, and shutdown happens in order: web and worker first, then
Redis, then PostgreSQL.

SO_REUSEPORT would also let a second IncidentDesk (another checkout, another
`var/`) bind the same port and silently take half the connections. So serve
first takes a lock per port (`port_lock`), which its daphne processes inherit:
a second serve fails with the first one's pid and data directory, even if
only orphaned workers of the first are left.
"""

from __future__ import annotations

import argparse
import fcntl
import io
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

from incidentdesk import embedded, memory, shutdown
from incidentdesk.env import env_int, env_str

GRACE_SECONDS = 10
MANAGE_PY = str(embedded.BASE_DIR / "manage.py")


@dataclass(frozen=True)
class Limits:
    """The supervisor's settings, read from the environment without Django
    (settings.py takes its WEB_WORKERS and SUPERVISOR_* from here)."""

    web_workers: int
    restarts: int
    restart_window: int
    check_seconds: int
    celery_queue: str

    @classmethod
    def from_env(cls) -> Limits:
        return cls(
            web_workers=env_int("WEB_WORKERS", os.cpu_count() or 1, minimum=1),
            restarts=env_int("SUPERVISOR_RESTARTS", 5, minimum=0),
            restart_window=env_int("SUPERVISOR_RESTART_WINDOW_SECONDS", 120, minimum=1),
            check_seconds=env_int("SUPERVISOR_CHECK_SECONDS", 60, minimum=1),
            celery_queue=env_str("CELERY_QUEUE", "incidentdesk"),
        )


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

    def failure(self) -> str | None:
        """Why it is down ("exited with -9"), or None while it runs."""
        code = self.process.poll()
        return None if code is None else f"exited with {code}"

    def restart(self) -> str:
        self.process = self.start()
        return f"pid {self.process.pid}"


@dataclass
class Service:
    """An embedded PostgreSQL or Redis this process started, so restarts."""

    name: str
    alive: Callable[[], bool]
    start: Callable[[], object]
    crashes: list[float] = field(default_factory=list)

    def failure(self) -> str | None:
        return None if self.alive() else "died"

    def restart(self) -> str:
        self.start()
        return "answering again"


Watched = Child | Service


def owned_services() -> list[Service]:
    """The embedded services this process started (others are not ours to restart)."""
    services = []
    if embedded.owns("postgres"):
        services.append(
            Service("postgresql", embedded.postgres_is_running, embedded.start_postgres)
        )
    if embedded.owns("redis"):
        services.append(Service("redis", embedded.redis_is_alive, embedded.start_redis))
    return services


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
    """One daphne process per socket; each inherits its own socket (and `hold`: the port lock)
    and the allocator settings of `memory.WEB_ALLOCATOR_ENV`.

    The sockets stay open here too, so a restarted worker adopts the same one
    and connections that arrive meanwhile wait in its backlog.
    """

    environ = popen.pop("env", None)  # None: ours, as it is at each (re)start

    def starter(sock: socket.socket) -> Callable[[], subprocess.Popen[bytes]]:
        return lambda: subprocess.Popen(  # noqa: S603 - our argv
            daphne_command(sock), pass_fds=(sock.fileno(), *hold),
            env=memory.allocator_env(environ, web=True), **popen,
        )  # fmt: skip

    return [Child(f"daphne-{n}", starter(sock)) for n, sock in enumerate(sockets, start=1)]


# A pool process that ends a task holding more than this (KiB) is replaced by a
# fresh fork of the worker: the embedder an import or a golden example loaded
# (about 130 MB) goes with it, so an idle worker is back near its parent's size
# (issue 19: the pool process held 415-682 MB after an import, goal 250). The
# next embedding task loads the model again, about a second, as the CLI does.
CELERY_MAX_MEMORY_KIB = 200 * 1024


def celery_command(queue: str, hostname: str = "incidentdesk@%h") -> list[str]:
    """The Celery worker: prefork, one pool process, recycled past CELERY_MAX_MEMORY_KIB."""
    return [
        sys.executable, "-m", "celery", "-A", "incidentdesk", "worker",
        "--loglevel", "INFO", "--concurrency", "1",
        "--max-memory-per-child", str(CELERY_MAX_MEMORY_KIB),
        "-Q", queue, "--hostname", hostname,
    ]  # fmt: skip


def start_celery(queue: str) -> Child:
    argv = celery_command(queue)
    return Child("celery", lambda: subprocess.Popen(  # noqa: S603 - our argv
        argv, start_new_session=True, env=memory.allocator_env()
    ))  # fmt: skip


def manage_py(*args: str) -> subprocess.Popen[bytes]:
    """A `manage.py` command as a child in its own session (Ctrl-C reaches us alone)."""
    argv = [sys.executable, MANAGE_PY, *args]
    return subprocess.Popen(argv, start_new_session=True)  # noqa: S603 - our argv


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


def main(argv: Sequence[str]) -> int:
    """`manage.py serve`: claim the port, start the services, prepare, supervise.

    No Django here, before or after start-up: the Django steps run in
    `manage.py serve_prepare` and `manage.py recover` children. A stop signal
    at any step raises `shutdown.Interrupted` (manage.py installed the
    handlers first); the caller's exit hook stops the services we started.
    """
    parser = argparse.ArgumentParser(
        prog="manage.py serve",
        description="Migrate, load the demo data once, then run daphne and a Celery worker "
        "on the embedded services until Ctrl-C (what `make run` runs).",
    )
    parser.add_argument("--host", default="127.0.0.1", help="Address daphne binds to.")
    parser.add_argument("--port", type=int, default=8000, help="Port daphne listens on.")
    parser.add_argument("--no-demo", action="store_true", help="Skip the demo data.")
    options = parser.parse_args(argv)
    if isinstance(sys.stdout, io.TextIOWrapper):
        sys.stdout.reconfigure(line_buffering=True)  # a log file is read as it is written
    out, limits = sys.stdout, Limits.from_env()
    try:
        lock = port_lock(options.port) if options.port else None
    except PortInUse as exc:
        print(f"Error: {exc}", file=sys.stderr)
        return 1
    embedded.ensure_services()
    os.environ[embedded.SUPERVISED_ENV] = "1"  # children attach; only we restart services
    if code := _prepare(no_demo=options.no_demo):
        print(f"Error: start-up failed (manage.py serve_prepare exited with {code})")
        embedded.stop_owned_services()
        return 1
    address = f"http://{options.host}:{options.port}/"
    out.write(f"Serving on {address} with {limits.web_workers} daphne process(es) (Ctrl-C stops)\n")
    out.flush()
    hold = (lock.fileno(),) if lock else ()
    try:
        code = supervise(host=options.host, port=options.port, out=out, hold=hold, limits=limits)
    except OSError as exc:  # the port is taken, or the address is not ours
        print(f"Error: cannot listen on {address}: {exc}", file=sys.stderr)
        return 1
    if code:
        print("Error: a supervised process kept crashing; everything was stopped", file=sys.stderr)
    return code


def _prepare(*, no_demo: bool) -> int:
    """Run `manage.py serve_prepare` to its end; a stop signal stops it first."""
    process: subprocess.Popen[bytes] | None = None
    try:
        with shutdown.deferred():
            process = manage_py("serve_prepare", *(["--no-demo"] if no_demo else []))
        return process.wait()
    finally:
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(GRACE_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def supervise(
    *, host: str, port: int, out: Output, hold: Sequence[int] = (), limits: Limits | None = None
) -> int:
    """Run the children until a signal, or until one keeps crashing (1).

    Stop signals raise `shutdown.Interrupted` (manage.py installed the
    handlers); starting the children is deferred past them, so every child
    started is in `children` when the clean-up runs.
    """
    shutdown.install()  # manage.py did already; again for callers that are not manage.py
    limits = limits or Limits.from_env()
    children: list[Child] = []
    checks: list[Child] = []  # the running `manage.py recover`, stopped with the others
    exit_code = 0
    sockets: list[socket.socket] = []
    try:
        with shutdown.deferred():
            sockets = listening_sockets(host, port, limits.web_workers)
            children += start_web(sockets, hold=hold, start_new_session=True)
            children.append(start_celery(limits.celery_queue))
        exit_code = Watch(children, owned_services(), limits, out, checks=checks).run()
    except shutdown.Interrupted as stop:
        out.write(f"\n{stop}: stopping daphne, the worker and the embedded services...\n")
    finally:
        shutdown.ignore()
        stop_children([*children, *checks], out)
        for sock in sockets:
            sock.close()
        embedded.stop_owned_services()
    out.write("stopped.\n")
    return exit_code


class Watch:
    """The supervision loop: restarts with backoff, and the periodic `manage.py recover`."""

    def __init__(
        self,
        children: list[Child],
        services: list[Service],
        limits: Limits,
        out: Output,
        *,
        checks: list[Child],
    ) -> None:
        self.children, self.services, self.checks = children, services, checks
        self.limits, self.out = limits, out
        self.restart_at: dict[str, float] = {}
        self.check_at = time.monotonic() + limits.check_seconds

    def run(self) -> int:
        """Loop until one keeps crashing (1); a stop signal raises instead."""
        while True:
            now = time.monotonic()
            # Services first: a daphne that dies because the database did is
            # restarted once the database answers again.
            watched_all: list[Watched] = [*self.services, *self.children]
            for watched in watched_all:
                if not self._tend(watched, now):
                    return 1
            self._check(now)
            time.sleep(0.5)

    def _tend(self, watched: Watched, now: float) -> bool:
        """Restart `watched` when it is down and its delay has passed; False: give up."""
        if watched.name in self.restart_at:
            if now >= self.restart_at[watched.name]:
                del self.restart_at[watched.name]
                self._restart(watched, now)
            return True
        if (failure := watched.failure()) is None:
            return True
        delay = self._crash_delay(watched, now)
        if delay is None:
            self.out.write(
                f"{watched.name} {failure}, {len(watched.crashes)} times in "
                f"{self.limits.restart_window}s; giving up: stopping\n"
            )
            return False
        self.out.write(f"{watched.name} {failure}; restarting it in {delay:.0f}s\n")
        self.restart_at[watched.name] = now + delay
        return True

    def _restart(self, watched: Watched, now: float) -> None:
        try:
            with shutdown.deferred():  # a signal now still finds it in `children`
                state = watched.restart()
        except Exception as exc:  # counted as another crash at the next turn, with its delay
            self.out.write(f"{watched.name} did not start: {exc}\n")
            return
        self.out.write(f"{watched.name} restarted ({state})\n")
        self.check_at = min(self.check_at, now + 1)  # close what the crash left, soon

    def _check(self, now: float) -> None:
        """Start `manage.py recover` when due, one at a time, never while a service is down."""
        if any(check.process.poll() is None for check in self.checks):
            return
        if now < self.check_at or self.restart_at:
            return
        with shutdown.deferred():
            self.checks[:] = [Child("recover", lambda: manage_py("recover"))]
        self.check_at = now + self.limits.check_seconds

    def _crash_delay(self, watched: Watched, now: float) -> float | None:
        """Seconds to wait before restarting `watched` (1, 2, 4... up to 30), or None
        when it crashed more than SUPERVISOR_RESTARTS times within the window."""
        window = self.limits.restart_window
        watched.crashes = [*(t for t in watched.crashes if now - t < window), now]
        if len(watched.crashes) > self.limits.restarts:
            return None
        return float(min(2 ** (len(watched.crashes) - 1), 30))
