"""Real processes on a data directory of their own: `manage.py` commands, the
embedded PostgreSQL they start, and faults injected with real signals.
Tests take the `stack` fixture (tests/conftest.py)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil
import psycopg
from django.conf import settings
from websockets.asyncio.client import connect

from tests.test_embedded import (
    BASE_DIR,
    WAIT_SECONDS,
    alive,
    free_port,
    isolated_env,
    wait_for_http,
)

__all__ = ["BASE_DIR", "WAIT_SECONDS", "alive", "free_port", "wait_for_http"]


class Stack:
    """`manage.py` runs against one VAR_DIR; everything they start is stopped at the end."""

    def __init__(self, var_dir: Path, **env: str) -> None:
        self.var_dir = var_dir
        self.env = {**isolated_env(var_dir), **env}
        self.started: list[subprocess.Popen[bytes]] = []
        self.logs: dict[int, Path] = {}

    @classmethod
    def fresh(cls) -> Stack:
        """On a new directory outside pytest's basetemp: every pytest session on the
        machine (all root here) resets /tmp/pytest-of-root to 0700, which took the
        embedded PostgreSQL's own user out of a data directory under it mid-initdb.
        Short, too: unix socket paths are limited to ~107 bytes."""
        return cls(Path(tempfile.mkdtemp(prefix="idf-")))

    def manage(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        return subprocess.run(  # noqa: S603 - our argv
            [sys.executable, "manage.py", *args], env=self.env, cwd=BASE_DIR,
            capture_output=True, text=True, timeout=WAIT_SECONDS, check=check,
        )  # fmt: skip

    def start(self, *args: str) -> subprocess.Popen[bytes]:
        """`manage.py *args` in the background; its output goes to `output(process)`."""
        log = self.var_dir / f"{args[0]}-{len(self.started)}.out"
        with log.open("wb") as out:
            process = subprocess.Popen(  # noqa: S603 - our argv
                [sys.executable, "manage.py", *args], env=self.env, cwd=BASE_DIR,
                stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip
        self.started.append(process)
        self.logs[process.pid] = log
        return process

    def output(self, process: subprocess.Popen[bytes]) -> str:
        return self.logs[process.pid].read_text(errors="replace")

    def postmaster_pid(self) -> int | None:
        pid_file = self.var_dir / "pg" / "postmaster.pid"
        try:
            pid = int(pid_file.read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None
        return pid if pid > 0 else None  # negative: a single-user backend (initdb)

    def connect(self) -> psycopg.Connection[tuple[object, ...]]:
        lines = (self.var_dir / "pg" / "postmaster.pid").read_text().splitlines()
        return psycopg.connect(
            host=lines[4].strip(), port=int(lines[3]), user="postgres",
            dbname="incidentdesk", autocommit=True, connect_timeout=5,
        )  # fmt: skip

    def kill_postgres(self) -> None:
        """kill -9 the postmaster and its backends at once, as a crash of the machine would."""
        pid = self.postmaster_pid()
        assert pid is not None and alive(pid)
        server = psutil.Process(pid)
        processes = [server, *server.children(recursive=True)]
        for process in processes:
            process.send_signal(signal.SIGKILL)
        psutil.wait_procs(processes, timeout=WAIT_SECONDS)

    def stop(self) -> None:
        for process in self.started:
            if process.poll() is None:
                process.send_signal(signal.SIGINT)
                try:
                    process.wait(60)
                except subprocess.TimeoutExpired:
                    process.kill()
        # What a failing test (or the code under test) left: never orphan it.
        pid = self.postmaster_pid()
        if pid is not None and alive(pid):
            os.kill(pid, signal.SIGQUIT)
        redis_pid = self.var_dir / "redis.pid"
        if redis_pid.exists() and alive(int(redis_pid.read_text())):
            os.kill(int(redis_pid.read_text()), signal.SIGTERM)
        shutil.rmtree(self.var_dir, ignore_errors=True)


def wait_until(check: Callable[[], object], what: str, timeout: float = WAIT_SECONDS) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.05)
    raise AssertionError(f"{what} did not happen within {timeout:.0f}s")


# alice, logged in, with a titled conversation and an API token: her session key, the
# conversation's id and the token.
ALICE = """
from importlib import import_module
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token
from copilot.services import conversation_create
alice = User.objects.create_user("alice", password="on-call-2025")
session = import_module(settings.SESSION_ENGINE).SessionStore()
session.update({SESSION_KEY: str(alice.pk), HASH_SESSION_KEY: alice.get_session_auth_hash(),
                BACKEND_SESSION_KEY: settings.AUTHENTICATION_BACKENDS[0]})
session.create()
conversation = conversation_create(owner=alice, title="PayU 403s")  # no title asked of a model
print(session.session_key, conversation.pk, Token.objects.create(user=alice))
"""


def intent_model_share(var_dir: Path) -> None:
    """Give `var_dir` the intent model's weights this test run has cached, if it has:
    a daphne trains them at its first question otherwise (`manage.py serve` trains
    them before it starts daphne), which took 30-40 s on a busy machine."""
    cached = Path(settings.VAR_DIR) / "cache"
    (var_dir / "cache").mkdir(exist_ok=True)
    for path in cached.glob("intents-*"):
        shutil.copy(path, var_dir / "cache" / path.name)


class Daphne:
    """A daphne serving the stack alone, and alice's ways in: her session for the chat
    websocket, her token for the API.

    Not under `manage.py serve`: nothing restarts a service a test kills, so the
    app meets it down, not by luck of timing. daphne started the stack's PostgreSQL
    and Redis (the `manage.py` runs before it stopped theirs), and stops them at exit.
    """

    def __init__(self, stack: Stack) -> None:
        stack.manage("migrate", "--verbosity", "0")
        intent_model_share(stack.var_dir)
        alice = stack.manage("shell", "--no-imports", "-c", ALICE).stdout.split()
        self.session, self.token = alice[0], alice[2]
        self.conversation = int(alice[1])
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        self.url = f"ws://127.0.0.1:{port}/ws/conversations/{self.conversation}/"
        with (stack.var_dir / "daphne.err").open("wb") as err:
            self.process = subprocess.Popen(  # noqa: S603 - our argv
                [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
                 "incidentdesk.asgi:application"],
                env=stack.env, cwd=BASE_DIR, stdout=subprocess.DEVNULL, stderr=err,
            )  # fmt: skip
        stack.started.append(self.process)  # stopped (and its PostgreSQL and Redis) at the end
        self.stack = stack
        wait_for_http(f"{self.base}/healthz", self.process)

    def socket(self) -> Any:
        """A websocket client's connection to alice's conversation (`async with`)."""
        headers = {"Cookie": f"sessionid={self.session}", "Origin": self.base}
        return connect(self.url, additional_headers=headers, open_timeout=30)

    def log(self) -> str:
        """What daphne wrote to stderr (its tracebacks)."""
        return (self.stack.var_dir / "daphne.err").read_text(errors="replace")
