"""Freed memory goes back to the system, and children start with a lean allocator."""

from __future__ import annotations

import subprocess
import sys

from incidentdesk.memory import WEB_ALLOCATOR_ENV, allocator_env, release_free_memory

# 400 blocks of 256 KiB in the heap (under a raised mmap threshold, as glibc
# raises it itself after large frees), all freed but the last, which pins the
# heap's top: without malloc_trim the freed pages stay resident.
FRAGMENTED_HEAP = """
import ctypes, sys
from incidentdesk.memory import release_free_memory
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype, libc.free.argtypes = ctypes.c_void_p, [ctypes.c_void_p]
libc.mallopt(-3, 1 << 20)  # M_MMAP_THRESHOLD: 1 MiB, so 256 KiB blocks land in the heap
def rss():
    return int(next(l for l in open("/proc/self/status") if l.startswith("VmRSS")).split()[1])
blocks = [libc.malloc(256 * 1024) for _ in range(400)]
for block in blocks:
    ctypes.memset(block, 1, 256 * 1024)
for block in blocks[:-1]:
    libc.free(block)
before = rss()
released = release_free_memory()
print(released, before - rss())
"""


def test_children_get_two_malloc_arenas_and_daphne_a_fixed_mmap_threshold() -> None:
    assert allocator_env({"PATH": "/usr/bin"}) == {"PATH": "/usr/bin", "MALLOC_ARENA_MAX": "2"}
    web = allocator_env({"PATH": "/usr/bin"}, web=True)
    assert web == {"PATH": "/usr/bin", **WEB_ALLOCATOR_ENV}
    assert web["MALLOC_MMAP_THRESHOLD_"] == "131072"


def test_an_allocator_setting_given_by_whoever_runs_us_is_kept() -> None:
    assert allocator_env({"MALLOC_ARENA_MAX": "8"})["MALLOC_ARENA_MAX"] == "8"


def test_freed_heap_pages_go_back_to_the_system() -> None:
    output = subprocess.run(  # noqa: S603 - our own interpreter and script
        [sys.executable, "-c", FRAGMENTED_HEAP], capture_output=True, text=True, check=True
    ).stdout.split()
    released, freed_kib = output[0] == "True", int(output[1])
    assert released and freed_kib > 50 * 1024  # of the ~100 MB freed


def test_releasing_with_nothing_free_is_harmless() -> None:
    assert release_free_memory() in {True, False}
