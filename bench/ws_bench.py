#!/usr/bin/env python
"""The chat websocket under load: N logged-in clients asking at once.

Starts daphne as `manage.py serve` does (WEB_WORKERS processes on one port;
the real ASGI stack: origin check, session auth, the Redis channel layer) on
the demo data with the offline engine, logs N users in
(one session each), opens N websockets and has every client ask its
questions at the same moment, one after another per client. Prints p50 /
p95 from sending a question to its first event and to `done`, the
errors, and the CPU daphne spent per answer. Goal at 50 clients: p95 to
done ≤ 1 s, 0 errors. The bench users and their conversations are
deleted at the end.

`--fairness` (issue 17): one heavy user asks FAIRNESS_HEAVY questions at once
in as many tabs (within her rate limit), one light user asks FAIRNESS_LIGHT
questions one after another; the model is a slow local OpenAI-protocol
server (bench/slow_model.py, ~2 s an answer). Prints the light user's p50 /
p95 to her first event, against one answer's time.
Usage:
  python bench/ws_bench.py [--clients 50] [--questions 3] [--workers N]
                           [--url http://127.0.0.1:8000] [--fairness]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import subprocess
import time
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path

from bootstrap import BASE_DIR
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.models import User
from slow_model import SlowModelServer
from websockets.asyncio.client import connect

from copilot.models import Conversation
from copilot.services import conversation_create
from incidentdesk import embedded, supervisor
from incidentdesk.demo import demo_is_loaded, demo_load

USER_PREFIX = "ws-bench-"
QUESTIONS = [
    "How do I fix HTTP 403 errors in PayU?",
    "Have we seen HTTP 403 errors in PayU Core before?",
    "Checkout Gateway timeouts during peak traffic",
    "Settlement report missing rows",
    "Show Checkout Gateway incidents",
    "What happened in INC-2025-08-24-001?",
]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(share * len(ordered)), len(ordered) - 1)]


@dataclass
class Figures:
    first_event: list[float] = field(default_factory=list)
    done: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


def bench_sessions(clients: int) -> list[tuple[str, int]]:
    """One user, session and conversation per client: (session key, conversation id)."""
    engine = import_module(settings.SESSION_ENGINE)
    sessions = []
    for number in range(clients):
        user, _ = User.objects.get_or_create(username=f"{USER_PREFIX}{number}")
        session = engine.SessionStore()
        session[SESSION_KEY] = str(user.pk)
        session[BACKEND_SESSION_KEY] = settings.AUTHENTICATION_BACKENDS[0]
        session[HASH_SESSION_KEY] = user.get_session_auth_hash()
        session.create()
        sessions.append((session.session_key, conversation_create(owner=user).pk))
    return sessions


def cleanup(sessions: Sequence[tuple[str, int]] = ()) -> None:
    """Delete the bench users, their conversations and the given sessions."""
    engine = import_module(settings.SESSION_ENGINE)
    for session_key, _ in sessions:
        engine.SessionStore(session_key).delete()
    Conversation.objects.filter(owner__username__startswith=USER_PREFIX).delete()
    User.objects.filter(username__startswith=USER_PREFIX).delete()


async def client(
    base: str, session_key: str, conversation_id: int, questions: list[str], start: asyncio.Event,
    figures: Figures,
) -> None:  # fmt: skip
    """Connect, wait for the start, ask each question and time its events."""
    ws_url = base.replace("http", "ws", 1) + f"/ws/conversations/{conversation_id}/"
    headers = {"Cookie": f"{settings.SESSION_COOKIE_NAME}={session_key}", "Origin": base}
    try:
        async with connect(ws_url, additional_headers=headers, open_timeout=30) as ws:
            await start.wait()
            for question in questions:
                await ask(ws, question, figures)
    except Exception as exc:  # a refused or broken socket is a result, not a crash
        figures.errors.append(f"{type(exc).__name__}: {exc}")


async def ask(ws: object, question: str, figures: Figures) -> None:
    sent = time.perf_counter()
    await ws.send(json.dumps({"type": "ask", "text": question}))  # type: ignore[attr-defined]
    first = None
    while True:
        event = json.loads(await asyncio.wait_for(ws.recv(), 30))  # type: ignore[attr-defined]
        first = first or time.perf_counter()
        if event["type"] == "error":
            figures.errors.append(f"{event['code']}: {event['message']}")
            return
        if event["type"] == "done":
            figures.first_event.append((first - sent) * 1000)
            figures.done.append((time.perf_counter() - sent) * 1000)
            return


async def warm_up(base: str, sessions: list[tuple[str, int]], workers: int) -> None:
    """Untimed answers, a few per worker (the kernel picks the worker of
    each connection): a fresh daphne loads the search caches on its first
    question, which no user of a running server waits for."""
    for number in range(4 * workers):  # a user each: they count against the rate limit
        await client(base, *sessions[number % len(sessions)], QUESTIONS[:1], _started(), Figures())


async def run_clients(
    base: str, sessions: list[tuple[str, int]], questions: int,
    connected: Callable[[], None] = lambda: None,
) -> Figures:  # fmt: skip
    figures, start = Figures(), asyncio.Event()
    tasks = [
        asyncio.create_task(
            client(base, key, conv,
                   [QUESTIONS[(i + q) % len(QUESTIONS)] for q in range(questions)], start, figures)
        )
        for i, (key, conv) in enumerate(sessions)
    ]  # fmt: skip
    await asyncio.sleep(2)  # every socket connected and idle
    connected()
    start.set()
    await asyncio.gather(*tasks)
    return figures


def _started() -> asyncio.Event:
    event = asyncio.Event()
    event.set()
    return event


def start_daphne(workers: int) -> tuple[list[subprocess.Popen[bytes]], str]:
    """daphne as `manage.py serve` runs it: `workers` processes on one port."""
    sockets = supervisor.listening_sockets("127.0.0.1", 0, workers)
    port = sockets[0].getsockname()[1]
    children = supervisor.start_web(
        sockets, cwd=BASE_DIR, env={**os.environ, "LOG_LEVEL": "warning"},
        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT,
    )  # fmt: skip
    for sock in sockets:
        sock.close()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # every worker has loaded the app
        if all(_serves(f"http://127.0.0.1:{port}/accounts/login/") for _ in range(2 * workers)):
            return [child.process for child in children], f"http://127.0.0.1:{port}"
        time.sleep(0.2)
    for child in children:
        child.process.kill()
    raise SystemExit("daphne did not start")


def _serves(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - our local server
            return bool(response.status == 200)
    except OSError:
        return False


def stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM, then SIGKILL: after a burst daphne has been seen to hang on exit."""
    process.terminate()
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def cpu_ms(pids: list[int]) -> float:
    """User + system CPU the processes used so far (Linux /proc), in ms.

    A process that has exited meanwhile counts as nothing.
    """
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
    return total * 1000 / ticks


def connections_per_process(pids: list[int], port: int) -> list[int]:
    """Established connections each process holds on `port` (Linux /proc).

    How the kernel spread the clients: with SO_REUSEPORT it hashes each
    connection to a process, and the busiest one sets the p95.
    """
    established = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == "01":
            established.add(fields[9])  # the socket's inode
    return [len(_socket_inodes(pid) & established) for pid in pids]


def _socket_inodes(pid: int) -> set[str]:
    inodes = set()
    with contextlib.suppress(OSError):  # exited meanwhile
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    inodes.add(target[len("socket:[") : -1])
    return inodes


def postgres_pids() -> list[int]:
    """This checkout's PostgreSQL processes, backends included (Linux /proc); every
    `postgres` of the machine when the server is not the embedded one.

    Only ours: another checkout's tests on the same machine were counted as
    this bench's database CPU.
    """
    pids = []
    postmaster = embedded.var_dir() / "pg" / "postmaster.pid"
    ours = int(postmaster.read_text().split()[0]) if postmaster.exists() else None
    for entry in Path("/proc").iterdir():
        with contextlib.suppress(OSError, IndexError, ValueError):
            if entry.name.isdigit() and (entry / "comm").read_text().strip() == "postgres":
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                if ours is None or ours in {int(entry.name), parent}:
                    pids.append(int(entry.name))
    return pids


def report(figures: Figures, clients: int, questions: int, seconds: float) -> None:
    asked = clients * questions
    print(f"clients: {clients}, questions each: {questions}, answered {len(figures.done)}/{asked}"
          f" in {seconds:.1f} s")  # fmt: skip
    for name, values in (("first event", figures.first_event), ("done", figures.done)):
        if values:
            p50, p95 = percentile(values, 0.5), percentile(values, 0.95)
            print(f"{name:>12}: p50 {p50:7.0f} ms   p95 {p95:7.0f} ms   max {max(values):7.0f} ms")
    print(f"      errors: {len(figures.errors)}")
    for error in sorted(set(figures.errors))[:10]:
        print(f"        {error}")
    p95 = percentile(figures.done, 0.95) if figures.done else float("inf")
    verdict = "met" if p95 <= 1000 and not figures.errors else "missed"
    print(f"goal (p95 to done <= 1000 ms, 0 errors): {verdict}")


# --- fairness: a heavy user against a light one --------------------------------------

FAIRNESS_HEAVY = 10  # her questions, at once, each in its own tab (rate limit: 10 a minute)
FAIRNESS_LIGHT = 8
FAIRNESS_QUESTIONS = [  # past-incident questions: the agent answers, no classifier call
    "Have we seen HTTP 403 errors in PayU Core before?",
    "What happened in INC-2025-08-24-001?",
    "Show Checkout Gateway incidents",
    "How do I fix HTTP 403 errors in PayU?",
]


def fairness_sessions(
    workers: int,
) -> tuple[list[tuple[str, int]], tuple[str, int], list[tuple[str, int]]]:
    """The heavy user's tabs (one session, a titled conversation each), the light
    user's, and warm-up users'; titled, so no title request competes for the model."""
    sessions = bench_sessions(2 + 4 * workers)
    heavy_key, heavy_conversation = sessions[0]
    owner = Conversation.objects.get(pk=heavy_conversation).owner
    tabs = [(heavy_key, conversation_create(owner=owner, title="heavy").pk)
            for _ in range(FAIRNESS_HEAVY)]  # fmt: skip
    Conversation.objects.filter(owner__username__startswith=USER_PREFIX).update(title="bench")
    return tabs, sessions[1], sessions[2:]


async def light_client(
    base: str, session: tuple[str, int], start: asyncio.Event, figures: Figures
) -> None:
    await start.wait()
    await asyncio.sleep(0.3)  # the heavy burst is in
    ws_url = base.replace("http", "ws", 1) + f"/ws/conversations/{session[1]}/"
    headers = {"Cookie": f"{settings.SESSION_COOKIE_NAME}={session[0]}", "Origin": base}
    async with connect(ws_url, additional_headers=headers, open_timeout=30) as ws:
        for number in range(FAIRNESS_LIGHT):
            await ask(ws, FAIRNESS_QUESTIONS[number % len(FAIRNESS_QUESTIONS)], figures)
            await asyncio.sleep(0.5)


async def run_fairness(
    base: str, tabs: list[tuple[str, int]], light: tuple[str, int]
) -> tuple[Figures, Figures]:
    heavy, light_figures, start = Figures(), Figures(), asyncio.Event()
    tasks = [
        asyncio.create_task(client(base, key, conv, [FAIRNESS_QUESTIONS[n % 4]], start, heavy))
        for n, (key, conv) in enumerate(tabs)
    ]
    tasks.append(asyncio.create_task(light_client(base, light, start, light_figures)))
    await asyncio.sleep(2)  # every heavy tab connected
    start.set()
    await asyncio.gather(*tasks)
    return heavy, light_figures


def report_fairness(heavy: Figures, light: Figures) -> None:
    answer = [done - first for done, first in zip(light.done, light.first_event, strict=True)]
    print(
        f"heavy user: {FAIRNESS_HEAVY} questions at once, answered {len(heavy.done)}, "
        f"errors {len(heavy.errors)}; p95 to done {percentile(heavy.done, 0.95):.0f} ms"
    )
    print(f"light user: {FAIRNESS_LIGHT} questions one after another, answered "
          f"{len(light.done)}, errors {len(light.errors)}")  # fmt: skip
    for error in sorted(set(heavy.errors + light.errors))[:5]:
        print(f"  {error}")
    if light.first_event:
        p50, p95 = percentile(light.first_event, 0.5), percentile(light.first_event, 0.95)
        print(
            f"light user's first event: p50 {p50:.0f} ms   p95 {p95:.0f} ms   "
            f"max {max(light.first_event):.0f} ms"
        )
        print(f"  each: {', '.join(f'{value:.0f}' for value in light.first_event)} ms")
        print(f"one answer's time (light, first event to done): p50 "
              f"{percentile(answer, 0.5):.0f} ms")  # fmt: skip


def fairness(workers: int) -> None:
    """The slow model for daphne (through its environment), then the two users."""
    model = SlowModelServer().start()
    os.environ.update(OPENAI_API_KEY="sk-bench-local", OPENAI_BASE_URL=model.base_url,
                      COPILOT_MODEL="slow-local")  # fmt: skip
    tabs, light, warming = fairness_sessions(workers)
    processes, base = start_daphne(workers)
    try:
        asyncio.run(warm_up(base, warming, workers))  # as in the main bench: caches loaded
        threads = settings.CHAT_ANSWER_THREADS
        print(f"server: {base}, {len(processes)} daphne process(es), {threads} answer "
              f"threads each, model {model.base_url}")  # fmt: skip
        report_fairness(*asyncio.run(run_fairness(base, tabs, light)))
    finally:
        for process in processes:
            stop(process)
        model.stop()
        cleanup([*tabs[:1], light, *warming])


def pacing(*, external: bool) -> str:
    """What the offline answers' pacing adds to the figures (bootstrap sets it to 0)."""
    if external:
        return "offline pacing: the server's own OFFLINE_STREAM_PACE_MS (up to 1.5 s an answer)"
    return f"offline pacing: {os.environ['OFFLINE_STREAM_PACE_MS']} ms per word group"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=50, help="concurrent websocket clients")
    parser.add_argument("--questions", type=int, default=3, help="questions each client asks")
    parser.add_argument("--url", help="an already running server (default: start daphne)")
    parser.add_argument(
        "--workers", type=int, default=settings.WEB_WORKERS,
        help="daphne processes to start on one port (default WEB_WORKERS, as manage.py serve)",
    )  # fmt: skip
    parser.add_argument(
        "--fairness", action="store_true",
        help="a heavy user against a light one on a slow local model (see above)",
    )  # fmt: skip
    args = parser.parse_args()
    if not demo_is_loaded():
        print("loading the demo data...")
        demo_load()
    cleanup()
    if args.fairness:
        fairness(args.workers)
        return
    sessions = bench_sessions(args.clients)
    processes, base = ([], args.url) if args.url else start_daphne(args.workers)
    try:
        print(f"server: {base}, {len(processes) or 'external'} daphne process(es), "
              f"{pacing(external=not processes)}")  # fmt: skip
        asyncio.run(warm_up(base, sessions, len(processes) or 1))
        pids = [process.pid for process in processes]
        database = postgres_pids()  # the pool's backends are open by now
        started, cpu_before, db_before = time.perf_counter(), cpu_ms(pids), cpu_ms(database)
        own_before = time.process_time()
        spread: list[int] = []
        port = int(base.rsplit(":", 1)[1])
        figures = asyncio.run(run_clients(
            base, sessions, args.questions,
            lambda: spread.extend(connections_per_process(pids, port)),
        ))  # fmt: skip
        own = (time.process_time() - own_before) * 1000
        db = cpu_ms(database) - db_before
        report(figures, args.clients, args.questions, time.perf_counter() - started - 2)
        if pids and figures.done:  # connecting the sockets is counted in too
            per_answer = (cpu_ms(pids) - cpu_before) / len(figures.done)
            print(f"  daphne CPU: {per_answer:.1f} ms per answer")
            print(f"  PostgreSQL CPU: {db / len(figures.done):.1f} ms per answer")
            print(f"  bench clients' CPU: {own / len(figures.done):.1f} ms per answer")
            print(f"  clients per daphne process: {', '.join(map(str, spread))}")
    finally:
        for process in processes:
            stop(process)
        cleanup(sessions)


if __name__ == "__main__":
    main()
