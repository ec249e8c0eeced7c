"""A real Celery worker process on the real Redis runs an uploaded import."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection

from incidentdesk.celery import app
from incidents.models import ImportJob
from incidents.services import import_job_create
from tests.factories import DatasetFactory, incident_row

BASE_DIR = Path(__file__).resolve().parents[1]
WAIT_SECONDS = 120  # an upper bound for a slow machine, not a speed assertion


def worker_database_url() -> str:
    db = connection.settings_dict
    host = quote(db["HOST"], safe="")
    return f"postgresql://{db['USER']}@{host}:{db['PORT']}/{db['NAME']}"


@pytest.fixture
def worker_queue() -> Iterator[str]:
    """A worker on its own queue, reading the test database."""
    queue = f"test-{uuid.uuid4().hex[:8]}"
    env = {**os.environ, "DATABASE_URL": worker_database_url(), "CELERY_QUEUE": queue}
    argv = [
        sys.executable, "-m", "celery", "-A", "incidentdesk", "worker", "--pool", "solo",
        "-Q", queue, "--without-gossip", "--without-mingle", "--loglevel", "WARNING",
    ]  # fmt: skip
    worker = subprocess.Popen(argv, env=env, cwd=BASE_DIR)  # noqa: S603
    previous = app.conf.task_default_queue
    app.conf.task_default_queue = queue
    try:
        yield queue
    finally:
        app.conf.task_default_queue = previous
        worker.terminate()
        worker.wait(30)


def wait_for_job(job_id: int) -> ImportJob:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        job = ImportJob.objects.get(pk=job_id)
        if job.status not in {ImportJob.Status.QUEUED, ImportJob.Status.RUNNING}:
            return job
        time.sleep(0.2)
    raise AssertionError(f"job {job_id} still {job.status} after {WAIT_SECONDS}s")


@pytest.mark.celery
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_imports_an_upload_and_activates_it(worker_queue: str) -> None:
    rows = [incident_row(f"INC-2025-02-0{i}-001") for i in range(1, 4)]
    upload = SimpleUploadedFile("up.jsonl", "\n".join(json.dumps(r) for r in rows).encode())
    job = import_job_create(
        dataset=DatasetFactory(), label="uploaded", uploaded_file=upload, activate=True
    )
    try:
        job = wait_for_job(job.pk)
        assert (job.status, job.created, job.rows_done, job.rows_total) == ("succeeded", 3, 3, 3)
        assert job.version.status == "active"
        assert job.version.incident_chunks.count() == 6  # summary + one body window each
    finally:
        job.file.delete(save=False)


@pytest.mark.celery
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_imports_the_good_rows_around_hostile_ones(worker_queue: str) -> None:
    lines = [
        json.dumps(incident_row("INC-2025-03-01-001")),
        '{"incident_id": "INC-2025-03-02-001", "deep": ' + "[" * 100_000 + "]" * 100_000 + "}",
        '{"incident_id": "INC-2025-03-03-001", "n": ' + "9" * 100_000 + "}",
        json.dumps(incident_row("INC-2025-03-04-001", note="a\x00b")),
        json.dumps(incident_row("INC-2025-03-05-001")),
    ]
    upload = SimpleUploadedFile("hostile.jsonl", "\n".join(lines).encode())
    job = import_job_create(dataset=DatasetFactory(), label="hostile", uploaded_file=upload)
    try:
        job = wait_for_job(job.pk)
        assert (job.status, job.created, job.rows_failed) == ("partial", 2, 3)
        assert [error["line"] for error in job.errors] == [2, 3, 4]
        assert job.version.status == "ready"
    finally:
        job.file.delete(save=False)
