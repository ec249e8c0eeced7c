"""kill -9 PostgreSQL while a bulk import has its HNSW index dropped: the index comes back."""

from __future__ import annotations

import json
import signal
from pathlib import Path

import psycopg

from incidents.ranking import INDEXED_DISTANCE
from tests.processes import WAIT_SECONDS, Stack, free_port, wait_for_http, wait_until

INDEX = "incidents_chunk_embedding_hnsw"
ROWS = 150  # enough rows that the import is still embedding when PostgreSQL dies


def index_state(stack: Stack) -> str:
    """ "valid", "invalid", "missing", or "down" when the server does not answer."""
    try:
        with stack.connect() as conn:
            row = conn.execute(
                "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
                " WHERE c.relname = %s",
                [INDEX],
            ).fetchone()
    except (OSError, psycopg.Error):
        return "down"
    return "missing" if row is None else ("valid" if row[0] else "invalid")


def nearest_chunks_plan(stack: Stack) -> str:
    """The plan of the app's indexed nearest-neighbour query (ranking.INDEXED_DISTANCE)."""
    vector = json.dumps([1.0] + [0.0] * 383)
    distance = INDEXED_DISTANCE.replace("%s", f"'{vector}'")
    with stack.connect() as conn:
        conn.execute("SET enable_seqscan = off")  # a plan without the index then shows it gone
        rows = conn.execute(
            f"EXPLAIN SELECT id FROM incidents_incidentchunk ORDER BY {distance} LIMIT 5"  # noqa: S608
        ).fetchall()
    return "\n".join(str(row[0]) for row in rows)


def write_rows(eval_dir: Path, path: Path) -> Path:
    lines = (eval_dir / "incidents.jsonl").read_text().splitlines()
    path.write_text("\n".join(lines[:ROWS]) + "\n")
    return path


def test_the_index_an_import_dropped_is_back_after_postgres_is_killed(
    stack: Stack, eval_dir: Path, tmp_path: Path
) -> None:
    stack.env["IMPORT_REBUILD_INDEX_THRESHOLD"] = "1"  # this small import drops the index too
    stack.manage("migrate", "--verbosity", "0")
    rows = write_rows(eval_dir, tmp_path / "rows.jsonl")

    importing = stack.start("import_incidents", str(rows), "--dataset", "big", "-v", "0")
    wait_until(lambda: index_state(stack) == "missing", "the import's drop of the index")
    stack.kill_postgres()
    assert importing.wait(WAIT_SECONDS) != 0  # the import died with its database

    port = free_port()
    serve = stack.start("serve", "--no-demo", "--port", str(port))
    try:
        wait_for_http(f"http://127.0.0.1:{port}/accounts/login/", serve)
    except AssertionError as exc:
        raise AssertionError(stack.output(serve)) from exc
    assert index_state(stack) == "valid"
    assert INDEX in nearest_chunks_plan(stack)
    serve.send_signal(signal.SIGINT)
    assert serve.wait(WAIT_SECONDS) == 0
