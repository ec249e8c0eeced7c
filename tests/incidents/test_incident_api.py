"""Incident and dataset endpoints: filters, parsed search filters, staff writes, uploads,
version activation and rollback, the diff page, and a real worker reporting row errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from rest_framework.test import APIClient

from incidents.models import DatasetVersion, ImportJob
from incidents.services import import_job_run_now
from tests.factories import IncidentFactory, incident_row, incidents_import
from tests.test_celery import wait_for_job, worker_queue  # noqa: F401  (a fixture)

pytestmark = pytest.mark.usefixtures("roomy_api_rates")


def import_rows(tmp_path: Path, rows: list[dict[str, Any]], **options: Any) -> DatasetVersion:
    return incidents_import(tmp_path / f"{len(list(tmp_path.iterdir()))}.jsonl", rows, **options)


@pytest.mark.django_db
def test_the_list_filters_and_costs_the_same_queries_for_any_page_size(
    api_client: APIClient, alice: Any, django_assert_num_queries: Any
) -> None:
    version = IncidentFactory(severity="SEV1").version
    version.status = "active"
    version.save()
    IncidentFactory.create_batch(30, version=version, impacted_application="Checkout Gateway")
    api_client.force_authenticate(alice)
    with django_assert_num_queries(3):  # active versions, count, page
        page = api_client.get("/api/incidents/", {"application": "checkout gateway"}).json()
    assert page["count"] == 30 and len(page["results"]) == 25
    assert api_client.get("/api/incidents/", {"severity": "sev1"}).json()["count"] == 1
    bad = api_client.get("/api/incidents/", {"occurred_after": "yesterday"})
    assert bad.status_code == 400 and "occurred_after" in bad.json()["error"]["fields"]


@pytest.mark.django_db
def test_search_returns_hits_and_the_filters_it_understood(
    api_client: APIClient, alice: Any, tmp_path: Path
) -> None:
    import_rows(tmp_path, [incident_row("INC-2025-03-04-001")], activate=True)
    api_client.force_authenticate(alice)
    body = api_client.get("/api/incidents/search/", {"q": "checkout gateway errors in 2025"}).json()
    assert body["results"][0]["incident_id"] == "INC-2025-03-04-001"
    assert body["filters"]["window"]["start"] == "2025-01-01"
    assert body["filters"]["applications"] == ["Checkout Gateway"]


@pytest.mark.django_db
def test_staff_create_and_update_incidents_which_are_embedded_at_once(
    api_client: APIClient, bob: Any, tmp_path: Path
) -> None:
    version = import_rows(tmp_path, [incident_row("INC-2025-03-04-001")], activate=True)
    api_client.force_authenticate(bob)
    created = api_client.post(
        "/api/incidents/",
        {"version": version.pk, "incident_id": "inc‐2025‐06‐01‐001", "title": "Disk full"},  # noqa: RUF001
        format="json",
    )
    assert created.status_code == 201 and created.json()["incident_id"] == "INC-2025-06-01-001"
    again = api_client.post(
        "/api/incidents/",
        {"version": version.pk, "incident_id": "INC-2025-06-01-001", "title": "Disk full"},
        format="json",
    )
    assert again.status_code == 409 and again.json()["error"]["code"] == "conflict"
    patched = api_client.patch(
        "/api/incidents/INC-2025-06-01-001/", {"root_cause": "Log rotation stopped."}, format="json"
    )
    assert patched.json()["root_cause"] == "Log rotation stopped."
    assert patched.json()["title"] == "Disk full"
    version.refresh_from_db()
    assert (version.row_count, version.status) == (2, "active")
    found = api_client.get("/api/incidents/search/", {"q": "log rotation stopped"}).json()
    assert found["results"][0]["incident_id"] == "INC-2025-06-01-001"


@pytest.mark.django_db
def test_activation_and_rollback_over_the_api_and_the_diff_they_show(
    api_client: APIClient, bob: Any, tmp_path: Path
) -> None:
    old = import_rows(tmp_path, [incident_row("INC-2025-01-01-001")], activate=True)
    new = import_rows(
        tmp_path,
        [incident_row("INC-2025-01-01-001", title="Changed"), incident_row("INC-2025-02-02-001")],
        version_label="v2",
    )
    api_client.force_authenticate(bob)
    diff = api_client.get(f"/api/dataset-versions/{new.pk}/diff/").json()
    assert (diff["added_ids"], diff["removed_ids"], diff["changed_ids"]) == (
        ["INC-2025-02-02-001"], [], ["INC-2025-01-01-001"],
    )  # fmt: skip
    assert api_client.post(f"/api/dataset-versions/{new.pk}/activate/").json()["status"] == "active"
    assert api_client.post("/api/datasets/ops/rollback/").json()["id"] == old.pk


@pytest.mark.django_db
def test_the_admin_shows_what_activation_changes_before_doing_it(
    client: Client, bob: Any, tmp_path: Path
) -> None:
    import_rows(tmp_path, [incident_row("INC-2025-01-01-001")], activate=True)
    new = import_rows(tmp_path, [incident_row("INC-2025-02-02-001")], version_label="v2")
    client.force_login(bob)
    action = {"action": "activate", "_selected_action": [new.pk]}
    page = client.post("/admin/incidents/datasetversion/", action).content.decode()
    assert "INC-2025-02-02-001" in page and "INC-2025-01-01-001" in page and "Yes, activate" in page
    new.refresh_from_db()
    assert new.status == "ready"  # nothing happened yet
    client.post("/admin/incidents/datasetversion/", {**action, "confirmed": "yes"})
    new.refresh_from_db()
    assert new.status == "active"


@pytest.mark.django_db
def test_an_upload_reports_progress_and_every_row_error(
    api_client: APIClient, bob: Any, django_capture_on_commit_callbacks: Any
) -> None:
    api_client.force_authenticate(bob)
    api_client.post("/api/datasets/", {"name": "uploads", "kind": "incidents"}, format="json")
    content = "\n".join([json.dumps(incident_row("INC-2025-01-01-001")), '{"title": "no id"}'])
    with django_capture_on_commit_callbacks(execute=False):
        job = api_client.post(
            "/api/datasets/uploads/uploads/",
            {"file": SimpleUploadedFile("rows.jsonl", content.encode())},
            format="multipart",
        ).json()
    assert (job["status"], job["version_label"]) == ("queued", "v1")
    import_job_run_now(job=ImportJob.objects.get(pk=job["id"]))  # what the worker does
    done = api_client.get(f"/api/import-jobs/{job['id']}/").json()
    assert (done["status"], done["rows_done"], done["rows_failed"]) == ("partial", 2, 1)
    assert done["errors"] == [{"line": 2, "field": "incident_id", "reason": "is required"}]


@pytest.mark.celery
@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("worker_queue")
def test_a_real_worker_imports_a_bad_upload_and_the_api_lists_its_row_errors(bob: Any) -> None:
    client = APIClient()
    client.force_authenticate(bob)
    client.post("/api/datasets/", {"name": "nightly", "kind": "incidents"}, format="json")
    content = "\n".join(['{"incident_id": "INC-2025-01-01-001"}', "not json", "[1]"])
    job = client.post(
        "/api/datasets/nightly/uploads/",
        {"file": SimpleUploadedFile("bad.jsonl", content.encode()), "activate": "true"},
        format="multipart",
    ).json()
    finished = wait_for_job(job["id"])
    body = client.get(f"/api/import-jobs/{job['id']}/").json()
    assert body["status"] == "partial" and body["rows_failed"] == 3
    assert [error["line"] for error in body["errors"]] == [1, 2, 3]
    assert finished.version.status == "ready"  # not activated: rows failed
    finished.file.delete(save=False)
