#!/usr/bin/env python
"""Instructions per answer inside daphne, counted by valgrind's callgrind.

CPU time on a shared 2-core machine moves by ±20% from hour to hour and with
other work beside it; instruction counts do not (run-to-run spread ~1 M in
60 M). One daphne runs under callgrind with instrumentation off; after
untimed answers to every question of ws_bench's mix (the caches loaded),
instrumentation goes on, `--clients` clients each ask `--questions` of
ws_bench's questions at once, as ws_bench does (their connects and
disconnects counted in), and it goes off. Prints the instructions per
answer; the profile is left in `--out` for callgrind_annotate.

Needs valgrind and a C compiler (`apt-get install valgrind gcc`): two
callgrind client requests are compiled into a small library that daphne
calls on SIGUSR1 (start) and SIGUSR2 (stop and dump). About 4 minutes.
Usage:
  python bench/ws_instructions.py [--clients 6] [--questions 3] [--out var/callgrind.out]
"""

from __future__ import annotations

import argparse
import asyncio
import glob
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import ws_bench as wb
from bootstrap import BASE_DIR

TOGGLE_C = """#include <valgrind/callgrind.h>
void cg_start(void) { CALLGRIND_ZERO_STATS; CALLGRIND_START_INSTRUMENTATION; }
void cg_stop(void) { CALLGRIND_STOP_INSTRUMENTATION; CALLGRIND_DUMP_STATS_AT("answers"); }
"""
# daphne, with the two signals switching callgrind's counting.
DAPHNE = """import ctypes, signal, sys
lib = ctypes.CDLL(sys.argv.pop(1))
signal.signal(signal.SIGUSR1, lambda *_: lib.cg_start())
signal.signal(signal.SIGUSR2, lambda *_: lib.cg_stop())
from daphne.cli import CommandLineInterface
CommandLineInterface.entrypoint()
"""
# Under callgrind a handshake takes seconds: daphne's 5 s would refuse it.
SLOW_TIMEOUTS = ["--websocket_connect_timeout", "3600", "--ping-interval", "600"]


def toggle_library(folder: str) -> str:
    source, library = Path(folder, "toggle.c"), Path(folder, "toggle.so")
    source.write_text(TOGGLE_C)
    compile_ = ["gcc", "-O2", "-shared", "-fPIC", "-o", str(library), str(source)]
    subprocess.run(compile_, check=True)  # noqa: S603 - our argv, the system gcc
    return str(library)


def start_daphne(library: str, out: str, sock: socket.socket) -> subprocess.Popen[bytes]:
    command = [
        "valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={out}",
        sys.executable, "-c", DAPHNE, library, *SLOW_TIMEOUTS, "--fd", str(sock.fileno()),
        "incidentdesk.asgi:application",
    ]  # fmt: skip
    environ = {**os.environ, "LOG_LEVEL": "warning"}
    return subprocess.Popen(  # noqa: S603 - our argv, the system valgrind
        command, pass_fds=(sock.fileno(),), cwd=BASE_DIR, env=environ,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip


async def warm_up(base: str, sessions: list[tuple[str, int]]) -> None:
    """Each question twice, a user each, one at a time (untimed: callgrind is slow)."""
    for number, session in enumerate(sessions):
        figures = wb.Figures()
        question = wb.QUESTIONS[number % len(wb.QUESTIONS)]
        await wb.client(base, *session, [question], wb._started(), figures)
        if figures.errors:
            raise SystemExit(f"warm-up failed: {figures.errors}")


def counted(out: str) -> int:
    """Instructions in the dump made at SIGUSR2."""
    total = 0
    for path in glob.glob(out + ".*"):
        for line in Path(path).read_text().splitlines():
            if line.startswith("totals:"):
                total += int(line.split()[1])
    return total


def measure(clients: int, questions: int, out: str) -> None:
    warm, sessions = wb.bench_sessions(2 * len(wb.QUESTIONS)), []
    sock = socket.create_server(("127.0.0.1", 0))
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    with tempfile.TemporaryDirectory() as folder:
        daphne = start_daphne(toggle_library(folder), out, sock)
        try:
            while not wb._serves(base + "/accounts/login/"):
                if daphne.poll() is not None:
                    raise SystemExit("daphne under valgrind did not start")
                time.sleep(1)
            asyncio.run(warm_up(base, warm))
            sessions = wb.bench_sessions(clients)
            daphne.send_signal(signal.SIGUSR1)
            figures = asyncio.run(wb.run_clients(base, sessions, questions))
            time.sleep(8)  # the disconnects handled
            daphne.send_signal(signal.SIGUSR2)
            time.sleep(5)
        finally:
            wb.stop(daphne)
            wb.cleanup([*warm, *sessions])
    answers = len(figures.done)
    print(f"answers: {answers}, errors: {len(figures.errors)}")
    print(f"instructions per answer inside daphne: {counted(out) / answers / 1e6:.1f} M")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=6, help="clients asking at once")
    parser.add_argument("--questions", type=int, default=3, help="questions each client asks")
    parser.add_argument("--out", default=str(BASE_DIR / "var" / "callgrind.out"),
                        help="callgrind's output (a .1 suffix is added at the dump)")  # fmt: skip
    args = parser.parse_args()
    for stale in glob.glob(args.out + "*"):
        os.remove(stale)
    wb.cleanup()
    measure(args.clients, args.questions, args.out)


if __name__ == "__main__":
    main()
