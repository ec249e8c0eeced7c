"""`manage.py serve` as a real process: one instance per port, and Ctrl-C at any moment."""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable

import psutil
import pytest

from tests.processes import WAIT_SECONDS, Stack, alive, free_port, wait_for_http


def serve_stack(stack: Stack, port: int) -> subprocess.Popen[bytes]:
    stack.env["WEB_WORKERS"] = "1"  # two cores, shared: the fewest processes that show it
    return stack.start("serve", "--no-demo", "--port", str(port))


def test_a_second_instance_on_a_served_port_fails_naming_the_first(stack: Stack) -> None:
    """SO_REUSEPORT let a second checkout share the port: half the logins went to the wrong one."""
    port = free_port()
    first = serve_stack(stack, port)
    wait_for_http(f"http://127.0.0.1:{port}/accounts/login/", first)

    other = Stack.fresh()
    try:
        second = serve_stack(other, port)
        assert second.wait(WAIT_SECONDS) != 0
        message = (
            f"port {port} is in use by another IncidentDesk (pid {first.pid}, var {stack.var_dir}"
        )
        assert message in other.output(second)
        database = other.postmaster_pid()  # it stopped the database it had started
        assert database is None or not alive(database), other.output(second)
    finally:
        other.stop()
    assert first.poll() is None


def descendants(pid: int) -> set[int]:
    try:
        return {p.pid for p in psutil.Process(pid).children(recursive=True)}
    except psutil.NoSuchProcess:
        return set()


Moment = Callable[[Stack, "subprocess.Popen[bytes]"], bool]
MOMENTS: dict[str, Moment] = {
    # PostgreSQL is starting (its pid file is written before it accepts connections)
    "postgres": lambda stack, serve: stack.postmaster_pid() is not None,
    # Redis answers, so serve is migrating or about to
    "migrate": lambda stack, serve: (stack.var_dir / "redis.pid").exists(),
    # the first daphne process exists
    "workers": lambda stack, serve: any(
        "daphne" in " ".join(psutil.Process(pid).cmdline()) for pid in descendants(serve.pid)
    ),
}


@pytest.mark.parametrize(
    ("moment", "signum"),
    [("postgres", signal.SIGINT), ("migrate", signal.SIGTERM), ("workers", signal.SIGINT)],
)
def test_a_stop_signal_during_start_up_stops_everything_started(
    stack: Stack, moment: str, signum: int
) -> None:
    serve = serve_stack(stack, free_port())
    seen: set[int] = set()
    deadline = time.monotonic() + WAIT_SECONDS
    while not _reached(MOMENTS[moment], stack, serve):
        assert serve.poll() is None, stack.output(serve)
        assert time.monotonic() < deadline, f"{moment} never came"
        seen |= descendants(serve.pid)
    seen |= descendants(serve.pid)
    postmaster = stack.postmaster_pid()
    serve.send_signal(signum)

    serve.wait(WAIT_SECONDS)
    left = [pid for pid in [*seen, postmaster] if pid is not None and alive(pid)]
    assert left == [], stack.output(serve)
    assert serve.returncode == 0, stack.output(serve)
    assert stack.postmaster_pid() is None or not alive(stack.postmaster_pid() or 0)


def _reached(check: Moment, stack: Stack, serve: subprocess.Popen[bytes]) -> bool:
    try:
        return check(stack, serve)
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return False
