"""The admin's import job page, the activation diff's wording and the dataset filters."""

from __future__ import annotations

import pytest
from django.test import Client

from incidents.dataset_selectors import dataset_version_diff
from incidents.models import Dataset, ImportJob
from tests.factories import (
    DatasetFactory,
    DatasetVersionFactory,
    ImportJobFactory,
    IncidentFactory,
)

pytestmark = pytest.mark.django_db


def _job(status: str, done: int, total: int) -> ImportJob:
    return ImportJobFactory(
        file="imports/2026/11/incidents.jsonl", status=status, rows_done=done, rows_total=total
    )


def test_a_running_job_page_shows_progress_and_refreshes_itself(client: Client, bob) -> None:
    job = _job("running", 50, 200)
    client.force_login(bob)
    page = client.get(f"/admin/incidents/importjob/{job.pk}/change/").content.decode()
    assert '<meta http-equiv="refresh" content="2">' in page
    assert '<progress max="200" value="50"' in page and "50 of 200 rows (25%)" in page
    assert 'name="_save"' not in page and 'type="file"' not in page


def test_a_finished_job_page_is_read_only_and_still(client: Client, bob) -> None:
    job = _job("succeeded", 200, 200)
    client.force_login(bob)
    url = f"/admin/incidents/importjob/{job.pk}/change/"
    page = client.get(url).content.decode()
    assert 'http-equiv="refresh"' not in page
    assert "this job can no longer be changed" in page
    assert 'name="_save"' not in page and "Change:" not in page
    assert client.post(url, {"activate_when_done": "on"}).status_code == 403
    assert client.get("/admin/incidents/importjob/add/").status_code == 200  # uploads still work


def test_the_diff_tells_an_id_reused_by_another_incident_from_an_edit() -> None:
    dataset = DatasetFactory()
    active = DatasetVersionFactory(dataset=dataset, status="active")
    staged = DatasetVersionFactory(dataset=dataset, status="ready")
    for version, title, digest in [(active, "Checkout 502s", "a"), (staged, "Checkout 502s ", "b")]:
        IncidentFactory(version=version, incident_id="INC-2025-01-01-001", title=title,
                        content_hash=digest)  # fmt: skip
    for version, title, app in [(active, "Ledger lag", "Ledger"), (staged, "DNS outage", "Edge")]:
        IncidentFactory(version=version, incident_id="INC-2025-01-02-001", title=title,
                        impacted_application=app, occurred_at="2025-01-02",
                        content_hash=app)  # fmt: skip
    for version, title in [(active, "Refunds slow"), (staged, "Refund queue backlog")]:
        IncidentFactory(version=version, incident_id="INC-2025-01-03-001", title=title,
                        impacted_application="Refunds", occurred_at="2025-01-03",
                        content_hash=title)  # fmt: skip
    diff = dataset_version_diff(version=staged)
    assert (diff.changed, diff.changed_ids) == (2, ["INC-2025-01-01-001", "INC-2025-01-03-001"])
    assert (diff.replaced, diff.replaced_ids) == (1, ["INC-2025-01-02-001"])  # a retitle is not


def test_the_activation_page_words_an_edit_and_a_reused_id_apart(client: Client, bob) -> None:
    dataset = DatasetFactory()
    active = DatasetVersionFactory(dataset=dataset, status="active")
    staged = DatasetVersionFactory(dataset=dataset, status="ready")
    IncidentFactory(version=active, incident_id="INC-2025-01-02-001", title="Ledger lag",
                    impacted_application="Ledger")  # fmt: skip
    IncidentFactory(version=staged, incident_id="INC-2025-01-02-001", title="DNS outage",
                    impacted_application="Edge", content_hash="new")  # fmt: skip
    client.force_login(bob)
    page = client.post(
        "/admin/incidents/datasetversion/", {"action": "activate", "_selected_action": [staged.pk]}
    ).content.decode()
    assert "id reused" in page and "INC-2025-01-02-001" in page


def test_each_admin_dataset_filter_lists_only_datasets_of_its_kind(client: Client, bob) -> None:
    incidents = DatasetFactory(name="ops-incidents")
    knowledge = DatasetFactory(name="ops-runbooks", kind=Dataset.Kind.KNOWLEDGE)
    client.force_login(bob)
    kb_page = client.get("/admin/knowledge/knowledgedocument/").content.decode()
    assert "ops-runbooks" in kb_page and "ops-incidents" not in kb_page
    incident_page = client.get("/admin/incidents/incident/").content.decode()
    assert "ops-incidents" in incident_page and "ops-runbooks" not in incident_page
    filtered = client.get("/admin/knowledge/knowledgedocument/", {"dataset": knowledge.pk})
    assert filtered.status_code == 200
    assert incidents.pk != knowledge.pk
