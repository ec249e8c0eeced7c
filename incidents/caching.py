"""Per-process caches of values that may be a little stale: one helper for all.

No Django here. Search reads the active versions, the application catalog,
the scope's topic words and the term statistics on every question; each is
cheap to keep and costly to build, and each says how stale it may be.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable


class TimedCache[K: Hashable, V]:
    """Values built on first use and kept for `ttl_seconds` (None: until cleared).

    With `keep_one`, building a value forgets every other key: one scope is
    hot at a time, and memory stays flat when scopes change. Shared between
    threads and requests: read the values, never change them.
    """

    def __init__(self, *, ttl_seconds: float | None, keep_one: bool = False) -> None:
        self._ttl = ttl_seconds
        self._keep_one = keep_one
        self._entries: dict[K, tuple[float, V]] = {}

    def get(self, key: K, build: Callable[[], V]) -> V:
        """The value kept for `key` while it is fresh, else `build()`'s, kept."""
        cached = self._entries.get(key)
        if cached is not None and (self._ttl is None or time.monotonic() - cached[0] < self._ttl):
            return cached[1]
        value = build()
        if self._keep_one:
            self._entries.clear()
        self._entries[key] = (time.monotonic(), value)
        return value

    def clear(self) -> None:
        self._entries.clear()
