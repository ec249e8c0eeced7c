"""Admin actions call the services; uploads become queued import jobs."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from incidents.models import DatasetVersion, ImportJob
from incidents.services import import_job_run_now
from tests.factories import DatasetFactory, DatasetVersionFactory, incident_row

pytestmark = pytest.mark.django_db


def test_bob_activates_a_version_from_the_admin(client: Client, bob) -> None:
    dataset = DatasetFactory()
    old = DatasetVersionFactory(dataset=dataset, status="active")
    new = DatasetVersionFactory(dataset=dataset, status="ready")
    client.force_login(bob)
    action = {"action": "activate", "_selected_action": [new.pk]}
    confirm = client.post("/admin/incidents/datasetversion/", action)
    assert b"what changes" in confirm.content  # nothing changes before the confirmation
    assert DatasetVersion.objects.get(pk=new.pk).status == "ready"
    response = client.post(
        "/admin/incidents/datasetversion/", {**action, "confirmed": "yes"}, follow=True
    )
    assert response.status_code == 200
    old.refresh_from_db()
    new.refresh_from_db()
    assert (old.status, new.status) == ("archived", "active")


def test_activating_a_building_version_shows_an_error(client: Client, bob) -> None:
    version = DatasetVersionFactory(status="building")
    client.force_login(bob)
    response = client.post(
        "/admin/incidents/datasetversion/",
        {"action": "activate", "_selected_action": [version.pk], "confirmed": "yes"},
        follow=True,
    )
    assert b"still building" in response.content
    version.refresh_from_db()
    assert version.status == "building"


def test_an_upload_queues_a_job_that_imports_and_reports_row_errors(
    client: Client, bob, django_capture_on_commit_callbacks
) -> None:
    dataset = DatasetFactory()
    content = "\n".join(
        [json.dumps(incident_row("INC-2025-01-01-001")), json.dumps(incident_row("", title="x"))]
    )
    client.force_login(bob)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post(
            "/admin/incidents/importjob/add/",
            {
                "dataset": dataset.pk,
                "version_label": "2025-upload",
                "file": SimpleUploadedFile("incidents.jsonl", content.encode()),
                "file_format": "",
                "activate_when_done": "on",
            },
        )
    assert response.status_code == 302
    assert len(callbacks) == 1  # the Celery enqueue, after commit
    job = ImportJob.objects.get()
    assert job.status == "queued"

    job = import_job_run_now(job=job)  # what the worker does (see test_celery)

    assert (job.status, job.rows_total, job.rows_done, job.rows_failed) == ("partial", 2, 2, 1)
    assert job.errors == [{"line": 2, "field": "incident_id", "reason": "is required"}]
    assert job.version.status == DatasetVersion.Status.READY  # not activated: a row failed
