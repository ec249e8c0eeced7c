#!/usr/bin/env python
"""Resident memory of the `make run` process tree, after real work.

Starts `manage.py serve` (demo data included, so daphne loads the embedder)
on a data directory of its own, asks 100 questions through `POST /api/chat/`
(the offline model, the whole agent path), uploads the demo incidents as a
new version through the API and waits for the Celery worker to import
them (and waits SETTLE_SECONDS for the worker to be idle), then prints each
process's RSS and PSS (shared pages split between
the processes that map them, so PostgreSQL's shared buffers count once) and
the totals. Goals (issue 19): supervisor ≤ 120 MB, each daphne ≤ 300 MB,
Celery ≤ 250 MB.

Usage:
  python bench/memory_bench.py [--answers 100] [--workers N]
It imports nothing from the project: it measures the processes from outside.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path
from typing import Any

import psutil

BASE_DIR = Path(__file__).resolve().parents[1]
DEMO_INCIDENTS = BASE_DIR / "incidentdesk" / "demo_data" / "incidents.jsonl"
GOALS_MB = {"supervisor": 120, "daphne": 300, "celery": 250}
SETTLE_SECONDS = 3
QUESTIONS = [
    "What caused the HTTP 403 errors in PayU Core?",
    "Have we seen database connection pool exhaustion before?",
    "How was the last checkout latency incident mitigated?",
    "Which incidents hit the payments gateway last month?",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Api:
    """JSON calls with a service token."""

    def __init__(self, base: str, token: str) -> None:
        self.base, self.token = base, token

    def call(self, method: str, path: str, body: bytes | None = None, **headers: str) -> Any:
        request = urllib.request.Request(  # noqa: S310 - localhost
            self.base + path, data=body, method=method,
            headers={"Authorization": f"Token {self.token}", "Accept": "application/json",
                     **headers},
        )  # fmt: skip
        with urllib.request.urlopen(request, timeout=300) as response:  # noqa: S310
            return json.loads(response.read())

    def ask(self, question: str) -> None:
        body = json.dumps({"message": question}).encode()
        self.call("POST", "/api/chat/", body, **{"Content-Type": "application/json"})

    def upload(self, path: Path, dataset: str) -> int:
        boundary = uuid.uuid4().hex
        body = (
            (
                f'--{boundary}\r\nContent-Disposition: form-data; name="file"; '
                f'filename="{path.name}"\r\nContent-Type: application/octet-stream\r\n\r\n'
            ).encode()
            + path.read_bytes()
            + f"\r\n--{boundary}--\r\n".encode()
        )
        content_type = f"multipart/form-data; boundary={boundary}"
        job = self.call("POST", f"/api/datasets/{dataset}/uploads/", body,
                        **{"Content-Type": content_type})  # fmt: skip
        return int(job["id"])


def wait_for(url: str, serve: subprocess.Popen[bytes], timeout: float = 900) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if serve.poll() is not None:
            sys.exit(f"manage.py serve exited with {serve.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=5):  # noqa: S310 - localhost
                return
        except OSError:
            time.sleep(0.5)
    sys.exit(f"{url} did not answer within {timeout:.0f}s")


def kind(process: psutil.Process, serve_pid: int) -> str:
    """supervisor, daphne, celery, postgres, redis, or the command's name."""
    if process.pid == serve_pid:
        return "supervisor"
    name, command = process.name(), " ".join(process.cmdline())
    if "celery" in command:  # the worker, and the pool process it forked for the tasks
        parent = process.parent()
        return "celery pool" if parent and "celery" in " ".join(parent.cmdline()) else "celery"
    markers = [("daphne", "-m daphne"), ("redis", "redis"), ("recover", "manage.py recover")]
    for label, marker in markers:
        if marker in command:
            return label
    return "postgres" if name.startswith("postgres") else name


def postgres_processes(var_dir: Path) -> list[psutil.Process]:
    pid = int((var_dir / "pg" / "postmaster.pid").read_text().split()[0])
    postmaster = psutil.Process(pid)
    return [postmaster, *postmaster.children(recursive=True)]


def measure(serve_pid: int, var_dir: Path) -> list[tuple[str, int, int, int]]:
    """(kind, pid, RSS, PSS) of every process of the stack."""
    supervisor = psutil.Process(serve_pid)
    processes = [supervisor, *supervisor.children(recursive=True), *postgres_processes(var_dir)]
    rows = []
    for process in processes:
        try:
            memory = process.memory_full_info()
            rows.append((kind(process, serve_pid), process.pid, memory.rss, memory.pss))
        except psutil.Error:
            continue  # ended meanwhile
    return rows


def report(rows: list[tuple[str, int, int, int]]) -> None:
    """One line per process (PostgreSQL's summed into one), the totals, the goals."""
    mb = 2**20
    print(f"{'process':<22}{'pid':>8}{'RSS MB':>10}{'PSS MB':>10}")
    for label, pid, rss, pss in rows:
        if label != "postgres":
            print(f"{label:<22}{pid:>8}{rss / mb:>10.1f}{pss / mb:>10.1f}")
    postgres = [row for row in rows if row[0] == "postgres"]
    name = f"postgres ({len(postgres)} procs)"
    pg_rss, pg_pss = sum(r[2] for r in postgres) / mb, sum(r[3] for r in postgres) / mb
    print(f"{name:<22}{postgres[0][1]:>8}{pg_rss:>10.1f}{pg_pss:>10.1f}")
    total_rss, total_pss = sum(r[2] for r in rows) / mb, sum(r[3] for r in rows) / mb
    print(f"{'total':<22}{'':>8}{total_rss:>10.1f}{total_pss:>10.1f}")
    print("RSS counts shared pages (PostgreSQL's buffers, forked Celery pages) in every")
    print("process that maps them; PSS splits them, so the PSS total is the real one.")
    for label, goal in GOALS_MB.items():
        largest = max([r[2] for r in rows if r[0].startswith(label)] or [0]) / mb
        verdict = "met" if largest <= goal else "MISSED"
        print(f"goal: {label} <= {goal} MB RSS (largest process): {largest:.1f} MB, {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--answers", type=int, default=100, help="questions to ask first")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="daphne processes (WEB_WORKERS)")  # fmt: skip
    args = parser.parse_args()
    var_dir = Path(tempfile.mkdtemp(prefix="idmem-"))
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    env |= {
        "VAR_DIR": str(var_dir), "XDG_RUNTIME_DIR": "", "WEB_WORKERS": str(args.workers),
        # 100 questions in a few minutes, from one account: past the default limits.
        "API_THROTTLE_CHAT": "100000/minute", "CHAT_QUESTIONS_PER_MINUTE": "100000",
        "API_THROTTLE_USER": "100000/minute",
    }  # fmt: skip
    log = (var_dir / "serve.log").open("wb")
    serve = subprocess.Popen(  # noqa: S603 - our argv
        [sys.executable, "manage.py", "serve", "--port", str(port)],
        cwd=BASE_DIR, env=env, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        run(serve, var_dir, env, port, args.answers)
    finally:
        serve.send_signal(signal.SIGINT)
        serve.wait(120)
        log.close()
        shutil.rmtree(var_dir, ignore_errors=True)


def run(serve: subprocess.Popen[bytes], var_dir: Path, env: dict[str, str], port: int,
        answers: int) -> None:  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    wait_for(f"{base}/readyz", serve)
    token = subprocess.run(
        [sys.executable, "manage.py", "create_service_token", "memory-bench", "--staff"],
        cwd=BASE_DIR, env=env, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    api = Api(base, token)
    started = time.monotonic()
    for n in range(answers):
        api.ask(QUESTIONS[n % len(QUESTIONS)])
    print(f"{answers} answers in {time.monotonic() - started:.1f}s")
    job = api.upload(DEMO_INCIDENTS, "demo-incidents")
    while (status := api.call("GET", f"/api/import-jobs/{job}/")["status"]) in {
        "queued",
        "running",
    }:
        time.sleep(0.5)
    print(f"import of {DEMO_INCIDENTS.name} through Celery: {status}")
    # The job row ends before its task returns; the worker then replaces a pool
    # process left over its memory limit (--max-memory-per-child), within a second.
    time.sleep(SETTLE_SECONDS)
    report(measure(serve.pid, var_dir))


if __name__ == "__main__":
    main()
