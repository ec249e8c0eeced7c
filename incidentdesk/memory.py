"""Giving freed memory back to the system (glibc), for the long-lived processes.

No Django here: the supervisor sets the children's allocator environment too.

glibc keeps what a process frees for its next allocations: the peak of
loading the embedder (its weights are folded to float32 at load, about
150 MB passing through for 86 MB kept) and of one large batch stayed in
daphne and the Celery pool process for good (bench/memory_bench.py).
`malloc_trim` hands the free pages back; it is a no-op elsewhere.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

# Two malloc arenas, not eight per core: daphne's answer threads, onnxruntime's
# threads and the Channels executor each took an arena of their own, and memory
# freed in one is never reused by another. Read by glibc when the process starts.
ALLOCATOR_ENV = {"MALLOC_ARENA_MAX": "2"}
# daphne also maps blocks from 128 KiB up on their own and unmaps them when
# freed. By default glibc raises that threshold to the largest block freed so
# far, after which such blocks stay in the heap: 15-20 MB more per daphne
# (302 against 285 MB after 100 answers). Not for Celery: an import's batches
# then fault their pages afresh each time, 7% more CPU.
WEB_ALLOCATOR_ENV = {**ALLOCATOR_ENV, "MALLOC_MMAP_THRESHOLD_": "131072"}


def allocator_env(environ: Mapping[str, str] | None = None, *, web: bool = False) -> dict[str, str]:
    """`environ` (default: this process's) with ALLOCATOR_ENV (WEB_ALLOCATOR_ENV for
    daphne), for a child process; a value set already (by whoever runs us) is kept."""
    settings = WEB_ALLOCATOR_ENV if web else ALLOCATOR_ENV
    return {**settings, **(os.environ if environ is None else environ)}


@lru_cache(maxsize=1)
def _libc() -> Any:
    name = ctypes.util.find_library("c")
    return ctypes.CDLL(name) if name else None


def release_free_memory() -> bool:
    """Return the pages malloc holds free to the system; whether it could (glibc)."""
    trim = getattr(_libc(), "malloc_trim", None)
    if trim is None:  # musl, macOS: their allocators return memory on their own
        return False
    trim(0)
    return True
