"""A real Celery worker process on the real Redis runs an uploaded import."""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import quote

import psutil
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection

from incidentdesk.celery import app
from incidents.models import ImportJob
from incidents.services import import_job_create
from incidents.tasks import import_job_run
from tests.celery_worker import celery_worker
from tests.factories import DatasetFactory, incident_row

WAIT_SECONDS = 120  # an upper bound for a slow machine, not a speed assertion


def worker_database_url() -> str:
    db = connection.settings_dict
    host = quote(db["HOST"], safe="")
    return f"postgresql://{db['USER']}@{host}:{db['PORT']}/{db['NAME']}"


@contextmanager
def running_worker(*options: str) -> Iterator[subprocess.Popen[bytes]]:
    """`manage.py serve`'s worker (tests/celery_worker.py), reading the test database."""
    with celery_worker(*options, env={"DATABASE_URL": worker_database_url()}) as worker:
        yield worker


@pytest.fixture
def worker_queue() -> Iterator[None]:
    with running_worker("--pool", "solo"):
        yield


def wait_for_progress(job_id: int, rows: int) -> ImportJob:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        job = ImportJob.objects.get(pk=job_id)
        if job.rows_done >= rows:
            return job
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} still at {job.rows_done} rows after {WAIT_SECONDS}s")


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
def test_a_real_worker_imports_an_upload_and_activates_it(worker_queue: None) -> None:
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
def test_a_real_worker_imports_the_good_rows_around_hostile_ones(worker_queue: None) -> None:
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


@pytest.mark.celery
@pytest.mark.django_db(transaction=True)
def test_a_job_whose_worker_process_is_killed_runs_again_to_the_end() -> None:
    """`make run`'s worker (prefork, one process): kill -9 the process running the import."""
    count = 400
    rows = [incident_row(f"INC-2025-05-{n % 28 + 1:02d}-{n:03d}") for n in range(count)]
    upload = SimpleUploadedFile("big.jsonl", "\n".join(json.dumps(r) for r in rows).encode())
    with running_worker() as worker:
        job = import_job_create(
            dataset=DatasetFactory(), label="killed", uploaded_file=upload, activate=True
        )
        try:
            running = wait_for_progress(job.pk, 64)  # the first batch is committed
            assert (running.status, running.attempts) == ("running", 1)
            [pool_process] = psutil.Process(worker.pid).children()
            pool_process.kill()  # Celery's WorkerLostError
            job = wait_for_job(job.pk)
        finally:
            job.file.delete(save=False)
    assert (job.status, job.attempts, job.rows_done, job.rows_total) == (
        "succeeded", 2, count, count,
    )  # fmt: skip
    assert job.created + job.unchanged == count and job.unchanged >= 64  # resumed, not redone
    assert job.version.status == "active" and job.version.incidents.count() == count


@pytest.mark.celery
@pytest.mark.django_db(transaction=True)
def test_the_pool_process_an_import_grew_is_replaced_and_the_next_import_still_runs() -> None:
    """`make run`'s worker recycles a pool process left holding the embedder
    (--max-memory-per-child); nothing is lost by it."""
    jobs = []
    with running_worker():  # --max-memory-per-child CELERY_MAX_MEMORY_KIB, as serve runs it
        for n in (1, 2):
            row = json.dumps(incident_row(f"INC-2025-03-0{n}-001")).encode()
            upload = SimpleUploadedFile("up.jsonl", row)
            job = import_job_create(dataset=DatasetFactory(), label=f"r{n}", uploaded_file=upload)
            jobs.append(wait_for_job(job.pk))
            job.file.delete(save=False)
    assert [job.status for job in jobs] == ["succeeded", "succeeded"]
    assert jobs[0].owner != jobs[1].owner  # `host:pid`: a fresh process ran the second


@pytest.mark.django_db
def test_a_job_that_keeps_killing_its_worker_is_failed_not_retried_forever() -> None:
    upload = SimpleUploadedFile("up.jsonl", json.dumps(incident_row("INC-2025-02-01-001")).encode())
    job = import_job_create(dataset=DatasetFactory(), label="poison", uploaded_file=upload)
    try:
        ImportJob.objects.filter(pk=job.pk).update(status="running", attempts=3)
        assert import_job_run(job.pk) == "failed"  # the task body, run here
        job.refresh_from_db()
        assert "stopped 3 times" in job.message and job.finished_at is not None
    finally:
        job.file.delete(save=False)


def test_a_running_import_is_not_handed_out_again_before_it_can_end() -> None:
    """acks_late's visibility timeout (kombu's default is an hour): a large import runs longer."""
    assert app.conf.broker_transport_options["visibility_timeout"] >= 12 * 3600
