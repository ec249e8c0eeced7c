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

# Read by glibc when the process starts (bench/memory_bench.py, issue 19):
# - two malloc arenas, not eight per core: daphne's answer threads,
#   onnxruntime's threads and the Channels executor each took an arena of
#   their own, and memory freed in one is never reused by another;
# - blocks from 128 KiB up (tensors, numpy arrays, query results) mapped on
#   their own and unmapped when freed. By default glibc raises that threshold
#   to the largest block freed so far, after which such blocks stay in the
#   heap: one daphne held 60 MB more heap than the other, 15-20 MB in all.
ALLOCATOR_ENV = {"MALLOC_ARENA_MAX": "2", "MALLOC_MMAP_THRESHOLD_": "131072"}


def allocator_env(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """`environ` (default: this process's) with ALLOCATOR_ENV, for a child process;
    a value set already (by whoever runs us) is kept."""
    return {**ALLOCATOR_ENV, **(os.environ if environ is None else environ)}


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
