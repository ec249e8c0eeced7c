"""`manage.py serve`: run daphne and a Celery worker until Ctrl-C.

The `manage.py` process has already started (and so owns) the embedded
PostgreSQL and Redis; its children only attach. Children run in their own
sessions so the terminal's Ctrl-C reaches this process alone, and shutdown
happens in order: web and worker first, then Redis, then PostgreSQL.
"""

from __future__ import annotations

import signal
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


def child_commands(host: str, port: int) -> dict[str, list[str]]:
    python = sys.executable
    return {
        "daphne": [
            python, "-m", "daphne", "-b", host, "-p", str(port), "incidentdesk.asgi:application",
        ],
        "celery": [
            python, "-m", "celery", "-A", "incidentdesk", "worker",
            "--loglevel", "INFO", "--concurrency", "1",
            "-Q", settings.CELERY_TASK_DEFAULT_QUEUE, "--hostname", "incidentdesk@%h",
        ],
    }  # fmt: skip


def start_children(commands: dict[str, list[str]]) -> list[Child]:
    return [
        Child(name, subprocess.Popen(argv, start_new_session=True))  # noqa: S603 - our argv
        for name, argv in commands.items()
    ]


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
    children = start_children(child_commands(host, port))
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
