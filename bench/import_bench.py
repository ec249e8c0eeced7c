#!/usr/bin/env python
"""Import throughput and memory: the raw embedder, the CLI and the Celery worker.

Builds N incidents from ../shared/eval/incidents.jsonl (cycled, with new ids
so nothing is unchanged), then:
  1. embeds every chunk text those rows produce, with nothing else going on
     (the ceiling: the import cannot beat its own embedder), and imports the
     same rows through the real import service in this process; prints both
     rates and their ratio (goal >= 0.85);
  2. writes the rows to a JSON Lines file and imports it `--runs` times each
     way, alternating: `manage.py import_incidents` (the CLI, a process of its
     own) and an upload through a Celery worker started the way `manage.py
     serve` starts it (prefork, one process), timed from the upload's commit
     to the job's end. Prints the median rows/s of each with the spread, and
     the ratio (goal: worker >= 0.85 x CLI);
  3. with --memory: generates a JSON Lines file and a JSON array of
     --memory-mb each in a temporary directory and imports each with the CLI,
     printing the command's peak resident memory (goal: bounded, far from the
     file's size times the parse overhead), and how long reading it takes alone
     (`read_rows`: linear in the file, for the array too).
Bench datasets are deleted afterwards, files live in a temporary directory.
Usage: python bench/import_bench.py [--rows N] [--runs K] [--memory] [--memory-mb MB]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bootstrap import BASE_DIR, EVAL_DIR
from django.core.files import File

from incidentdesk.embeddings import embed_texts
from incidents.importers import SourceRow, parse_incident, read_rows
from incidents.importing import INCIDENT_SPEC, rows_import
from incidents.models import Dataset, ImportJob
from incidents.services import (
    dataset_get_or_create,
    dataset_version_get_or_create,
    import_job_create,
)
from tests.celery_worker import celery_worker

BENCH_DATASET = "bench-import"
WORKER_TIMEOUT = 1800  # seconds: a loaded machine is slow, a stuck worker is not


def source_rows() -> list[dict[str, Any]]:
    lines = (EVAL_DIR / "incidents.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def build_rows(count: int) -> list[SourceRow]:
    """Eval incidents cycled with fresh ids so every row is new."""
    source = source_rows()
    rows = []
    for number in range(count):
        row = dict(source[number % len(source)])
        row["incident_id"] = f"INC-2000-01-01-{number:06d}"  # the form an import accepts
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


def spread(values: list[float]) -> str:
    return f"median {statistics.median(values):6.1f} (min {min(values):.1f}, max {max(values):.1f})"


# --- 1. the import against its own embedder ------------------------------------------


def bench_engine(count: int) -> None:
    rows = build_rows(count)
    texts = chunk_texts(rows)
    embed_texts(texts[:64])  # load the model and warm up before timing
    started = time.perf_counter()
    embed_texts(texts)
    raw_seconds = time.perf_counter() - started

    Dataset.objects.filter(name=BENCH_DATASET).delete()
    version = dataset_version_get_or_create(dataset=dataset_get_or_create(name=BENCH_DATASET))
    result = rows_import(spec=INCIDENT_SPEC, version=version, rows=rows)
    Dataset.objects.filter(name=BENCH_DATASET).delete()

    assert result.created == count and result.failed == 0
    raw_rate = count / raw_seconds
    print(f"rows: {count}, chunks: {len(texts)}")
    print(f"raw embedder:  {raw_rate:7.1f} rows/s ({len(texts) / raw_seconds:.1f} chunks/s)")
    print(f"import:        {result.rows_per_second:7.1f} rows/s ({result.seconds:.1f}s)")
    print(f"ratio import/raw: {result.rows_per_second / raw_rate:.2f} (goal >= 0.85)")


# --- 2. the CLI against the Celery worker, on the same file -----------------------------


def write_jsonl(path: Path, rows: list[SourceRow]) -> Path:
    with path.open("w") as out:
        for row in rows:
            out.write(json.dumps(row.data) + "\n")
    return path


@dataclass(frozen=True)
class Run:
    """One import, timed from outside (wall) and by the import service itself."""

    wall: float  # CLI: start to exit; worker: upload to the job's end
    service: float  # what rows_import reports (the "in N s" of its summary)
    waited: float = 0.0  # worker: upload to the job's start (queue and pick-up)
    peak_kb: int = 0  # CLI: the command's peak resident memory


def service_seconds(summary: str) -> float:
    found = re.search(r" in ([0-9.]+)s \(", summary)
    if found is None:
        raise SystemExit(f"no timing in {summary!r}")
    return float(found.group(1))


def cli_import(path: Path, dataset: str) -> Run:
    """`manage.py import_incidents`, a process of its own, as someone runs it."""
    argv = [sys.executable, "manage.py", "import_incidents", str(path), "--dataset", dataset]
    started = time.perf_counter()
    process = subprocess.Popen(  # noqa: S603 - our argv
        [*argv, "-v", "0"], cwd=BASE_DIR, stdout=subprocess.PIPE, text=True
    )
    output = process.stdout.read() if process.stdout else ""
    _, status, usage = os.wait4(process.pid, 0)  # wait4: this child's own peak RSS
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status):
        raise SystemExit(f"import_incidents failed: {output}")
    return Run(wall, service_seconds(output), peak_kb=usage.ru_maxrss)


def worker_import(path: Path, dataset: str) -> Run:
    """An upload through the worker, timed from upload to the job's end as the admin sees it."""
    started = time.perf_counter()
    with path.open("rb") as handle:
        job = import_job_create(
            dataset=dataset_get_or_create(name=dataset),
            label="v1",
            uploaded_file=File(handle, name=path.name),
        )
    waited = 0.0
    while time.perf_counter() < started + WORKER_TIMEOUT:
        job.refresh_from_db()
        if not waited and job.status != ImportJob.Status.QUEUED:
            waited = time.perf_counter() - started
        if job.finished_at is not None:
            wall = time.perf_counter() - started
            job.file.delete(save=False)
            if job.status != ImportJob.Status.SUCCEEDED:
                raise SystemExit(f"worker import ended {job.status}: {job.message}")
            return Run(wall, service_seconds(job.message), waited)
        time.sleep(0.02)
    raise SystemExit(f"worker import still {job.status} after {WORKER_TIMEOUT}s")


def bench_worker(count: int, runs: int) -> None:
    cli_runs: list[Run] = []
    worker_runs: list[Run] = []
    with tempfile.TemporaryDirectory() as folder, celery_worker():
        path = write_jsonl(Path(folder) / "bench.jsonl", build_rows(count))
        for number in range(runs):
            # Alternate, so a busier minute on a shared machine weighs on both.
            for name, importer, done in (
                ("cli", cli_import, cli_runs),
                ("worker", worker_import, worker_runs),
            ):
                dataset = f"{BENCH_DATASET}-{name}-{number}-{os.getpid()}"
                Dataset.objects.filter(name=dataset).delete()
                run = importer(path, dataset)
                Dataset.objects.filter(name=dataset).delete()
                done.append(run)
                print(
                    f"  run {number + 1} {name:6} {count / run.wall:6.1f} rows/s "
                    f"(wall {run.wall:.1f}s, import {run.service:.1f}s, queued {run.waited:.2f}s)"
                )
    print(f"{runs} runs of {count} rows each way (rows/s):")
    print(f"  CLI, whole command:     {spread([count / r.wall for r in cli_runs])}")
    print(f"  CLI, import alone:      {spread([count / r.service for r in cli_runs])}")
    print(f"  worker, upload to done: {spread([count / r.wall for r in worker_runs])}")
    print(f"  worker, import alone:   {spread([count / r.service for r in worker_runs])}")
    print(f"  worker, queued for (s): {spread([r.waited for r in worker_runs])}")
    ratio = statistics.median(count / r.wall for r in worker_runs) / statistics.median(
        count / r.wall for r in cli_runs
    )
    ratio_alone = statistics.median(count / r.service for r in worker_runs) / statistics.median(
        count / r.service for r in cli_runs
    )
    print(f"ratio worker/CLI: {ratio:.2f} as people see them, {ratio_alone:.2f} import alone")
    print("(goal >= 0.85)")


# --- 3. peak memory of large imports --------------------------------------------------


def write_large(folder: Path, megabytes: int, pad_kb: int) -> tuple[Path, Path, int]:
    """A JSON Lines file and a JSON array (one element a line) of about `megabytes` each.

    `pad_kb` adds a column of that size to each row (kept in `extra`, not embedded):
    the same bytes in fewer rows, so a loaded machine can embed them in minutes.
    """
    source = [dict(row, raw="x" * pad_kb * 1024) for row in source_rows()]
    jsonl, array = folder / "large.jsonl", folder / "large.json"
    target, written, count = megabytes * 1024 * 1024, 0, 0
    with jsonl.open("w") as lines, array.open("w") as elements:
        elements.write("[\n")
        while written < target:
            row = dict(source[count % len(source)], incident_id=f"INC-2000-01-02-{count:07d}")
            text = json.dumps(row)
            lines.write(text + "\n")
            elements.write(("," if count else "") + text + "\n")
            written += len(text) + 1
            count += 1
        elements.write("]\n")
    return jsonl, array, count


def bench_memory(megabytes: int, pad_kb: int) -> None:
    with tempfile.TemporaryDirectory() as folder:
        jsonl, array, count = write_large(Path(folder), megabytes, pad_kb)
        for path in (jsonl, array):
            started = time.perf_counter()
            read = sum(1 for _ in read_rows(path))
            seconds = time.perf_counter() - started
            print(f"{path.suffix[1:]:5} read alone: {read} rows in {seconds:.1f}s")
            dataset = f"{BENCH_DATASET}-memory-{os.getpid()}"
            Dataset.objects.filter(name=dataset).delete()
            run = cli_import(path, dataset)
            Dataset.objects.filter(name=dataset).delete()
            size = path.stat().st_size / 1024 / 1024
            print(
                f"{path.suffix[1:]:5} {size:5.1f} MB, {count} rows: peak RSS "
                f"{run.peak_kb / 1024:6.0f} MB, {count / run.wall:.1f} rows/s ({run.wall:.0f}s)"
            )


def main() -> None:
    # A stopped bench still stops its worker (the `finally` of celery_worker).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("stopped"))
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=500, help="incidents to import")
    parser.add_argument("--runs", type=int, default=3, help="CLI and worker imports of each")
    parser.add_argument("--skip-worker", action="store_true", help="skip the CLI/worker part")
    parser.add_argument("--memory", action="store_true", help="also measure large imports' RSS")
    parser.add_argument("--memory-mb", type=int, default=50, help="size of each large file")
    parser.add_argument(
        "--memory-pad-kb", type=int, default=0, help="a column of this size in each large row"
    )
    parser.add_argument("--skip-engine", action="store_true", help="skip the raw/import part")
    args = parser.parse_args()
    if not args.skip_engine:
        bench_engine(args.rows)
    if not args.skip_worker:
        bench_worker(args.rows, args.runs)
    if args.memory:
        bench_memory(args.memory_mb, args.memory_pad_kb)


if __name__ == "__main__":
    main()
