"""Commands and benches run before the first `make run` (which migrates) on a fresh checkout.

The embedded database is migrated on the spot; a configured one (DATABASE_URL)
stops the command with one line saying what to run. Before, both ended in a
raw `ProgrammingError: relation "incidents_dataset" does not exist` traceback.
Real processes on real, empty databases.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.parse
import uuid
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from django.db import connection

from tests.factories import incident_row

BASE_DIR = Path(__file__).resolve().parents[1]


def _run(
    args: list[str], env: dict[str, str], timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603  # our own scripts, fixed arguments
        [sys.executable, *args],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture
def empty_database_url(db: None) -> Iterator[str]:
    """A database with no tables on the test server, as DATABASE_URL."""
    settings = connection.settings_dict
    name = f"fresh_{uuid.uuid4().hex[:12]}"
    admin = {"host": settings["HOST"], "port": settings["PORT"], "user": settings["USER"]}
    with psycopg.connect(**admin, dbname="postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    host = urllib.parse.quote(str(settings["HOST"]), safe="")
    yield f"postgres://{settings['USER']}@{host}:{settings['PORT']}/{name}"
    with psycopg.connect(**admin, dbname="postgres", autocommit=True) as conn:
        conn.execute(f'DROP DATABASE "{name}" WITH (FORCE)')


@pytest.fixture
def rows_file(tmp_path: Path) -> Path:
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(incident_row("INC-2025-08-24-001", title="HTTP 403")) + "\n")
    return path


@pytest.mark.parametrize(
    "args",
    [
        ["manage.py", "import_incidents", "ROWS", "--dataset", "ops"],
        ["manage.py", "evaluate", "--golden"],
        ["manage.py", "import_knowledge", "ROWS", "--dataset", "docs"],
        ["bench/search_bench.py"],
    ],
    ids=["import_incidents", "evaluate", "import_knowledge", "search_bench"],
)
def test_a_configured_empty_database_stops_with_one_line_saying_what_to_run(
    empty_database_url: str, rows_file: Path, args: list[str]
) -> None:
    env = {**os.environ, "DATABASE_URL": empty_database_url}
    result = _run([str(rows_file) if a == "ROWS" else a for a in args], env)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert "ProgrammingError" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "unapplied migrations: run `python manage.py migrate` first." in lines[0]


def test_a_fresh_embedded_database_is_migrated_before_the_first_import(rows_file: Path) -> None:
    # A short path: the unix sockets of PostgreSQL and Redis live under it.
    var = Path(tempfile.mkdtemp(prefix="idfresh", dir="/tmp"))
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    env["VAR_DIR"] = str(var)
    try:
        args = ["manage.py", "import_incidents", str(rows_file), "--dataset", "ops"]
        result = _run(args, env)
        assert result.returncode == 0, result.stderr[-3000:]
        assert "Migrating the embedded database first" in result.stderr
        assert "Traceback" not in result.stderr
        again = _run(args, env)
        assert again.returncode == 0, again.stderr[-3000:]
        assert "Migrating" not in again.stderr
    finally:
        shutil.rmtree(var, ignore_errors=True)
