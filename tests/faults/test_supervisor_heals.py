"""kill -9 a daphne worker and the Celery worker under `manage.py serve`: both come back,
until one keeps crashing and serve gives up, stopping everything."""

from __future__ import annotations

import signal
import subprocess

import psutil

from tests.processes import WAIT_SECONDS, Stack, alive, free_port, wait_for_http, wait_until


def child_pids(serve: subprocess.Popen[bytes], marker: str) -> list[int]:
    """Live children whose command line has `marker` (a killed one is a zombie until reaped)."""
    pids = []
    for process in psutil.Process(serve.pid).children():
        try:
            if marker in " ".join(process.cmdline()):
                pids.append(process.pid)
        except psutil.Error:
            pass
    return pids


def kill_and_wait_for_another(serve: subprocess.Popen[bytes], marker: str) -> int:
    [pid] = child_pids(serve, marker)
    psutil.Process(pid).send_signal(signal.SIGKILL)
    wait_until(lambda: [p for p in child_pids(serve, marker) if p != pid], f"a new {marker}")
    [new] = child_pids(serve, marker)
    return new


def test_crashed_workers_are_restarted_until_one_keeps_crashing(stack: Stack) -> None:
    port = free_port()
    stack.env |= {"WEB_WORKERS": "1", "SUPERVISOR_RESTARTS": "1"}
    serve = stack.start("serve", "--no-demo", "--port", str(port))
    health = f"http://127.0.0.1:{port}/healthz"
    wait_for_http(health, serve)

    kill_and_wait_for_another(serve, "celery")
    daphne = kill_and_wait_for_another(serve, "-m daphne")
    assert wait_for_http(health, serve) == 200, stack.output(serve)
    assert "daphne-1 exited with -9; restarting it in 1s" in stack.output(serve)

    started = psutil.Process(serve.pid).children(recursive=True)
    psutil.Process(daphne).send_signal(signal.SIGKILL)  # a second crash: past SUPERVISOR_RESTARTS
    assert serve.wait(WAIT_SECONDS) == 1
    assert "daphne-1 exited with -9, 2 times in 120s; giving up" in stack.output(serve)
    assert [p.pid for p in started if alive(p.pid)] == []
