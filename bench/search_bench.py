#!/usr/bin/env python
"""Search latency and ANN recall at 100k incidents (about 300k chunks).

How the data is built: every eval incident's chunks are embedded once with
the real model; each synthetic incident copies one eval incident's text (new
id, one of 60 application names), and each of its chunk vectors becomes
normalise(v + w * u + n): u a chunk vector of another random eval incident
with w uniform in [0, 0.6], n Gaussian noise of norm about 0.3. Copies thus
spread between real topics (as a large corpus does) instead of piling up as
hundreds of near-identical vectors, which no ANN index can rank exactly. The rows
are split over three versions of one dataset (one active), loaded with
binary COPY without the HNSW index, which is then built once.

Then, over 200 questions (the dev questions and eval incident titles):
  - p50/p95 of the whole search_similar_incidents call (embedding, hybrid
    query, formatting), with the HNSW index and with exact scan, and their
    ratio;
  - recall@10 of the HNSW nearest neighbours against exact search: on all
    chunks, on the active version (1 of 3), and on one application.
The bench dataset is deleted at the end. Usage:
  python bench/search_bench.py [--incidents 100000] [--questions 200] [--keep] [--reuse]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np
from bootstrap import EVAL_DIR
from django.db import connection, transaction
from pgvector.psycopg import register_vector

from incidentdesk import embeddings
from incidents.importers import SourceRow, parse_incident
from incidents.models import Dataset, DatasetVersion, IncidentChunk
from incidents.selectors import (
    EXACT_DISTANCE,
    INDEXED_DISTANCE,
    VECTOR_CANDIDATES,
    _scope_where,
    search_similar_incidents,
)
from incidents.services import INCIDENT_SPEC, dataset_version_activate

DATASET = "bench-search"
APPLICATIONS = 60
NOISE = 0.3  # per-vector noise norm relative to the unit vector
MAX_BLEND = 0.6  # weight of a random other incident's chunk blended in
INDEX = next(i for i in IncidentChunk._meta.indexes if i.name == "incidents_chunk_embedding_hnsw")


def eval_sources() -> list[tuple[dict[str, object], list[str], np.ndarray]]:
    """Each eval incident with its chunk texts and their real embeddings."""
    lines = (EVAL_DIR / "incidents.jsonl").read_text().splitlines()
    sources = []
    for number, line in enumerate(lines, start=1):
        parsed, _ = parse_incident(SourceRow(number, json.loads(line)))
        assert parsed is not None
        texts = INCIDENT_SPEC.chunk_texts(parsed.fields)
        sources.append((parsed.fields, texts, embeddings.embed_texts(texts)))
    return sources


def create_versions() -> list[DatasetVersion]:
    Dataset.objects.filter(name=DATASET).delete()
    dataset = Dataset.objects.create(name=DATASET, slug=DATASET)
    return [
        DatasetVersion.objects.create(dataset=dataset, label=f"v{i}", status="ready")
        for i in (1, 2, 3)
    ]


def copy_incidents(versions: list[DatasetVersion], sources: list, count: int) -> None:
    """Binary-free COPY of incident rows (text is cheap); ids come back after."""
    raw = connection.connection
    with raw.cursor() as cursor:
        copy_sql = (
            "COPY incidents_incident (version_id, incident_id, title, impacted_application,"
            " root_cause, mitigation, accountable_party, source_system, repeat_incident,"
            " severity, status, occurred_at, category, tags, source_url, body, extra,"
            " content_hash, created_at, updated_at) FROM STDIN"
        )
        with cursor.copy(copy_sql) as copy:
            for number in range(count):
                fields, _, _ = sources[number % len(sources)]
                copy.write_row(_incident_row(versions[number % 3].pk, number, fields))
    raw.commit()


def _incident_row(version_id: int, number: int, fields: dict) -> tuple:
    now = "2026-01-01T00:00:00Z"
    return (
        version_id, f"BENCH-{number:06d}", fields["title"], f"Bench App {number % APPLICATIONS}",
        fields["root_cause"], fields["mitigation"], fields["accountable_party"], "bench",
        fields["repeat_incident"], fields["severity"], fields["status"], fields["occurred_at"],
        fields["category"], "{}", "", fields["body"], "{}", "", now, now,
    )  # fmt: skip


def copy_chunks(versions: list[DatasetVersion], sources: list, count: int) -> int:
    """Binary COPY of every chunk with a perturbed copy of its real vector."""
    raw = connection.connection
    register_vector(raw)
    rng = np.random.default_rng(42)
    with raw.cursor() as cursor:
        cursor.execute(
            "SELECT id, incident_id FROM incidents_incident WHERE version_id = ANY(%s)",
            [[v.pk for v in versions]],
        )
        ids = {incident_id: pk for pk, incident_id in cursor.fetchall()}
        copy_sql = (
            "COPY incidents_incidentchunk (incident_id, version_id, ordinal, text, embedding)"
            " FROM STDIN WITH (FORMAT BINARY)"
        )
        written = 0
        with cursor.copy(copy_sql) as copy:
            copy.set_types(["int8", "int8", "int4", "text", "vector"])
            for number in range(count):
                _, texts, vectors = sources[number % len(sources)]
                _, _, other = sources[int(rng.integers(len(sources)))]
                blend = rng.uniform(0, MAX_BLEND) * other[int(rng.integers(len(other)))]
                noise = rng.normal(0, NOISE / np.sqrt(vectors.shape[1]), vectors.shape)
                noisy = vectors + blend + noise
                noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
                parent = ids[f"BENCH-{number:06d}"]
                for ordinal, (text, vector) in enumerate(zip(texts, noisy, strict=True)):
                    version_id = versions[number % 3].pk
                    copy.write_row((parent, version_id, ordinal, text, vector.astype(np.float32)))
                    written += 1
    raw.commit()
    return written


def questions(count: int, sources: list) -> list[str]:
    dev = [json.loads(line) for line in (EVAL_DIR / "queries_dev.jsonl").read_text().splitlines()]
    texts = [q["query"] if isinstance(q["query"], str) else q["query"][0] for q in dev]
    texts += [str(fields["title"]) for fields, _, _ in sources]
    return texts[:count]


def timed_searches(texts: list[str], *, exact: bool) -> list[float]:
    """Milliseconds per whole call; the query-embedding cache is cleared each time."""
    timings = []
    with connection.cursor() as cursor:
        cursor.execute(f"SET enable_indexscan = {'off' if exact else 'on'}")
    for text in texts:
        embeddings.forget_cached_queries()
        started = time.perf_counter()
        result = search_similar_incidents(text, 5)
        result.as_text()
        timings.append((time.perf_counter() - started) * 1000)
    with connection.cursor() as cursor:
        cursor.execute("SET enable_indexscan = on")
    return timings


def nearest_ids(vector: list[float], scope: dict, *, exact: bool) -> list[int]:
    """Top 10 as the selector's query gets them (same distance expression,
    so the same index, and as many candidates), re-sorted."""
    where, params = _scope_where(IncidentChunk.objects.filter(**scope))
    distance = EXACT_DISTANCE if exact else INDEXED_DISTANCE
    sql = (
        f"SELECT {distance} AS distance, id FROM incidents_incidentchunk"  # noqa: S608 - ours
        f" WHERE {where} ORDER BY distance LIMIT {VECTOR_CANDIDATES:d}"
    )
    with transaction.atomic(), connection.cursor() as cursor:
        if exact:
            cursor.execute("SET LOCAL enable_indexscan = off")
        cursor.execute(sql, ["[" + ",".join(map(repr, vector)) + "]", *params])
        rows = sorted(cursor.fetchall())
    return [pk for _, pk in rows[:10]]


def recall_at_10(texts: list[str], scope: dict) -> float:
    recalls = []
    for text in texts:
        vector = embeddings.embed_query(text)
        truth = set(nearest_ids(vector, scope, exact=True))
        recalls.append(len(truth & set(nearest_ids(vector, scope, exact=False))) / len(truth))
    return statistics.mean(recalls)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(share * len(ordered)), len(ordered) - 1)]


def load(sources: list, count: int) -> DatasetVersion:
    """Steps: versions, COPY without the HNSW index, build it, activate one."""
    started = time.perf_counter()
    versions = create_versions()
    with connection.cursor() as cursor:
        cursor.execute(f'DROP INDEX IF EXISTS "{INDEX.name}"')
    copy_incidents(versions, sources, count)
    chunks = copy_chunks(versions, sources, count)
    load_seconds = time.perf_counter() - started
    started = time.perf_counter()
    with connection.cursor() as cursor:
        cursor.execute("SET maintenance_work_mem = '1GB'")
        with connection.schema_editor() as editor:  # the index exactly as the model declares it
            editor.add_index(IncidentChunk, INDEX)
        cursor.execute("ANALYZE incidents_incidentchunk")
        cursor.execute("ANALYZE incidents_incident")
    index_seconds = time.perf_counter() - started
    print(f"loaded {count} incidents, {chunks} chunks in {load_seconds:.0f}s; "
          f"HNSW built in {index_seconds:.0f}s")  # fmt: skip
    return dataset_version_activate(version=versions[2])


def drop_bench_data() -> None:
    """Delete the bench rows; rebuild the index from what is left (vacuuming
    200k dead tuples out of an HNSW graph takes far longer than a rebuild)."""
    Dataset.objects.filter(name=DATASET).delete()
    with connection.cursor() as cursor:
        cursor.execute("REINDEX TABLE incidents_incidentchunk")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--incidents", type=int, default=100_000)
    parser.add_argument("--questions", type=int, default=200)
    parser.add_argument("--keep", action="store_true", help="keep the bench dataset")
    parser.add_argument("--reuse", action="store_true", help="reuse a kept bench dataset")
    args = parser.parse_args()

    connection.ensure_connection()
    sources = eval_sources()
    kept = DatasetVersion.objects.filter(dataset__name=DATASET, status="active").first()
    active = kept if args.reuse and kept else load(sources, args.incidents)
    texts = questions(args.questions, sources)

    try:
        timed_searches(texts[:10], exact=False)  # warm caches
        fast = timed_searches(texts, exact=False)
        slow = timed_searches(texts, exact=True)
        print(f"search_similar_incidents, {len(texts)} questions (ms):")
        print(f"  HNSW   p50 {statistics.median(fast):6.1f}  p95 {percentile(fast, 0.95):6.1f}")
        print(f"  exact  p50 {statistics.median(slow):6.1f}  p95 {percentile(slow, 0.95):6.1f}")
        print(f"  exact/HNSW p50 ratio {statistics.median(slow) / statistics.median(fast):.1f}x")
        sample = texts[:100]
        print("recall@10 of HNSW vs exact nearest chunks:")
        print(f"  all chunks              {recall_at_10(sample, {}):.3f}")
        print(f"  active version (1 of 3) {recall_at_10(sample, {'version': active}):.3f}")
        # Application 8 lives in the active version (8 % 3 == 2).
        app_scope = {"version": active, "incident__impacted_application": "Bench App 8"}
        print(
            f"  one application         {recall_at_10(sample, app_scope):.3f}"
            "  (a selective filter: PostgreSQL ranks it exactly)"
        )
    finally:
        if not args.keep:
            drop_bench_data()


if __name__ == "__main__":
    main()
