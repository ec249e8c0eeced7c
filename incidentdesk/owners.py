"""Which process owns a row that is being worked on (an answer, an import job).

A process killed by a crash cannot mark its own work as failed. Rows in
progress record `host:pid` of the process writing them, so a periodic check
(`manage.py recover`, run by the supervisor) can tell work whose process is
gone from work still running, without asking the processes. Only owners on
this host can be checked; a row from another host is left to its own
supervisor. No Django here.
"""

from __future__ import annotations

import os
import socket

import psutil


def current() -> str:
    """`host:pid` of this process, to store on the row it starts working on."""
    return f"{socket.gethostname()}:{os.getpid()}"


def is_gone(owner: str) -> bool:
    """True when `owner` names a process of this host that no longer runs.

    A blank owner (a row from before owners were recorded) is not known to
    be gone: start-up recovery, which runs before any worker, closes those.
    """
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        return bool(psutil.Process(int(pid)).status() == psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return True
