"""Where a call's time goes: stage timers that cost one ContextVar read when off.

A benchmark switches timing on for one call (`StageTimes.collect()`); the code
measured marks its stages with `with stage("vector query"):`. Nobody else
sets the variable, so in production each mark is a lookup and a None check.
No Django here: it is imported by selectors and benchmarks alike.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future
from contextlib import contextmanager
from contextvars import ContextVar
from types import TracebackType


class StageTimes(dict[str, float]):
    """Seconds spent per stage name during one collected call (stages add up)."""

    def add(self, name: str, seconds: float) -> None:
        self[name] = self.get(name, 0.0) + seconds

    @classmethod
    @contextmanager
    def collect(cls) -> Iterator[StageTimes]:
        """Time the stages run inside the block, in this context."""
        times = cls()
        token = _current.set(times)
        try:
            yield times
        finally:
            _current.reset(token)


_current: ContextVar[StageTimes | None] = ContextVar("stage_times", default=None)


class stage:  # used like a function: `with stage("..."):`
    """Add the block's wall time to `name` when a benchmark collects times."""

    __slots__ = ("_name", "_started", "_times")

    def __init__(self, name: str) -> None:
        self._name = name

    def __enter__(self) -> None:
        self._times = _current.get()
        if self._times is not None:
            self._started = time.perf_counter()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self._times is not None:
            self._times.add(self._name, time.perf_counter() - self._started)


def submit_staged[**P, T](
    pool: Executor, name: str, fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs
) -> Future[T]:
    """`pool.submit(fn, ...)`, timed as stage `name` on the worker thread when
    times are collected (a ContextVar does not follow work into a pool)."""
    times = _current.get()
    if times is None:
        return pool.submit(fn, *args, **kwargs)

    def timed() -> T:
        started = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            times.add(name, time.perf_counter() - started)

    return pool.submit(timed)
