"""Ctrl-C and SIGTERM for `manage.py serve`, from its first line to its last.

`manage.py` installs the handlers before it starts anything, so a signal at
any moment of start-up raises `Interrupted` and the command's clean-up stops
what was started. Starting a process and recording that we own it must not
be cut apart (a PostgreSQL started but not yet recorded would be orphaned):
such steps run under `deferred()`, and a signal that arrives meanwhile is
raised when the step ends.

This module imports nothing from Django: `manage.py` uses it before settings.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

SIGNALS = (signal.SIGINT, signal.SIGTERM)

_deferring = 0
_pending: int | None = None


class Interrupted(BaseException):
    """A stop signal arrived. BaseException, so no `except Exception` swallows it."""


def _handle(signum: int, frame: FrameType | None) -> None:
    global _pending
    if _deferring:
        _pending = signum
        return
    raise Interrupted(signal.Signals(signum).name)


def install() -> None:
    """Raise Interrupted on SIGINT and SIGTERM from now on (the default kills
    the process on SIGTERM without clean-up, orphaning PostgreSQL and Redis)."""
    for signum in SIGNALS:
        signal.signal(signum, _handle)


def ignore() -> None:
    """While stopping: a second Ctrl-C must not cut the clean-up short."""
    for signum in SIGNALS:
        signal.signal(signum, signal.SIG_IGN)


@contextmanager
def deferred() -> Iterator[None]:
    """Hold a stop signal until the block ends, then raise it."""
    global _deferring, _pending
    _deferring += 1
    try:
        yield
    finally:
        _deferring -= 1
    if not _deferring and _pending is not None:
        signum, _pending = _pending, None
        raise Interrupted(signal.Signals(signum).name)
