#!/usr/bin/env python
"""Import throughput against the raw embedder, measured in the same run.

Builds N incidents from ../shared/eval/incidents.jsonl (cycled, with new ids
so nothing is unchanged), then:
  1. embeds every chunk text those rows produce, with nothing else going on
     (the ceiling: the import cannot beat its own embedder);
  2. imports the same rows into a fresh dataset version through the real
     import service (validation, hashing, embedding, COPY-free bulk writes,
     index maintenance).
Prints rows/s for both and their ratio (goal: >= 0.85). The bench dataset is
deleted afterwards. Usage: python bench/import_bench.py [--rows N]
"""

from __future__ import annotations

import argparse
import json
import time

from bootstrap import EVAL_DIR

from incidentdesk.embeddings import embed_texts
from incidents.importers import SourceRow, parse_incident
from incidents.importing import INCIDENT_SPEC, rows_import
from incidents.models import Dataset
from incidents.services import dataset_get_or_create, dataset_version_get_or_create

BENCH_DATASET = "bench-import"


def build_rows(count: int) -> list[SourceRow]:
    """Eval incidents cycled with fresh ids (INC-2030-...) so every row is new."""
    source = [json.loads(line) for line in (EVAL_DIR / "incidents.jsonl").read_text().splitlines()]
    rows = []
    for number in range(count):
        row = dict(source[number % len(source)])
        row["incident_id"] = f"BENCH-{number:06d}"
        row["occurred_at"] = row.get("occurred_at") or "2020-01-01"
        rows.append(SourceRow(number + 1, row))
    return rows


def chunk_texts(rows: list[SourceRow]) -> list[str]:
    texts: list[str] = []
    for row in rows:
        parsed, _ = parse_incident(row)
        assert parsed is not None
        texts.extend(INCIDENT_SPEC.chunk_texts(parsed.fields))
    return texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=500, help="incidents to import")
    args = parser.parse_args()
    rows = build_rows(args.rows)
    texts = chunk_texts(rows)
    embed_texts(texts[:64])  # load the model and warm up before timing

    started = time.perf_counter()
    embed_texts(texts)
    raw_seconds = time.perf_counter() - started

    Dataset.objects.filter(name=BENCH_DATASET).delete()
    version = dataset_version_get_or_create(dataset=dataset_get_or_create(name=BENCH_DATASET))
    result = rows_import(spec=INCIDENT_SPEC, version=version, rows=rows)
    Dataset.objects.filter(name=BENCH_DATASET).delete()

    assert result.created == args.rows and result.failed == 0
    raw_rate = args.rows / raw_seconds
    print(f"rows: {args.rows}, chunks: {len(texts)}")
    print(f"raw embedder:  {raw_rate:7.1f} rows/s ({len(texts) / raw_seconds:.1f} chunks/s)")
    print(f"import:        {result.rows_per_second:7.1f} rows/s ({result.seconds:.1f}s)")
    print(f"ratio import/raw: {result.rows_per_second / raw_rate:.2f} (goal >= 0.85)")


if __name__ == "__main__":
    main()
