#!/usr/bin/env python
"""HNSW upkeep in a bulk load: insert with the index in place, or drop, load, rebuild.

Over a chunk table already holding --base chunks (another version, as the
active one would be), writes --new chunks the way the import does
(bulk_create, 500 a statement) both ways and prints the seconds of each:
  drop + rebuild: loads without it, then builds it (CONCURRENTLY, as
  declared_indexes_ensure does) over the whole table, base + new; meanwhile
  every search of every version is a sequential scan;
  in place, then, into the table now holding base + new: the index is updated
  row by row and every search keeps using it.
Vectors are synthetic (clustered around 263 random centres, like the eval
incidents' topics) so only the index work is timed, not the embedder.
The bench dataset is deleted afterwards.
Usage: python bench/index_bench.py [--base N] [--new N]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import bootstrap  # noqa: F401 - Django on the embedded services
import numpy as np
from django.db import connection

from incidentdesk.db import declared_indexes_ensure
from incidents.models import Dataset, Incident, IncidentChunk
from incidents.services import dataset_get_or_create, dataset_version_get_or_create

BENCH_DATASET = "bench-index"
INDEX = "incidents_chunk_embedding_hnsw"
rng = np.random.default_rng(17)
CENTRES = rng.normal(size=(263, 384))


def vectors(count: int) -> np.ndarray:
    picked = CENTRES[rng.integers(0, len(CENTRES), count)] + 0.6 * rng.normal(size=(count, 384))
    return picked / np.linalg.norm(picked, axis=1, keepdims=True)


def load(label: str, count: int) -> float:
    """Write `count` chunks into a new version; return the seconds it took."""
    version = dataset_version_get_or_create(
        dataset=dataset_get_or_create(name=BENCH_DATASET), label=label
    )
    incident = Incident.objects.create(version=version, incident_id=f"BENCH-{label}", title="b")
    rows = vectors(count)
    started = time.perf_counter()
    for start in range(0, count, 500):
        IncidentChunk.objects.bulk_create(
            IncidentChunk(incident=incident, version=version, ordinal=start + i, text="t",
                          embedding=vector)
            for i, vector in enumerate(rows[start : start + 500])
        )  # fmt: skip
    return time.perf_counter() - started


def execute(sql: str) -> float:
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute(sql)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=int, default=20000, help="chunks already in the table")
    parser.add_argument("--new", type=int, default=10000, help="chunks the import writes")
    args = parser.parse_args()
    Dataset.objects.filter(name=BENCH_DATASET).delete()
    execute(f'DROP INDEX IF EXISTS "{INDEX}"')
    load("base", args.base)
    build_base = _timed(declared_indexes_ensure, [IncidentChunk])

    # Dropped first, then in place into the larger table: if in place still wins,
    # it wins on a table larger than the rebuild's. No VACUUM between (an HNSW
    # vacuum after deleting 10k of 30k chunks ran for minutes).
    dropped = execute(f'DROP INDEX "{INDEX}"')
    loaded = load("dropped", args.new)
    rebuilt = _timed(declared_indexes_ensure, [IncidentChunk])
    in_place = load("in-place", args.new)
    Dataset.objects.filter(name=BENCH_DATASET).delete()

    print(f"table {args.base} chunks, import {args.new}; index over the table: {build_base:.1f}s")
    print(f"in place:       {in_place:6.1f}s (searches keep the index)")
    print(f"drop + rebuild: {dropped + loaded + rebuilt:6.1f}s (load {loaded:.1f}s, rebuild")
    print(f"                {rebuilt:.1f}s; every search is a sequential scan meanwhile)")


def _timed(function: Callable[..., object], *args: object) -> float:
    started = time.perf_counter()
    function(*args)
    return time.perf_counter() - started


if __name__ == "__main__":
    main()
