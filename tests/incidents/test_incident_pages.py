"""The incident list (hybrid search, filters, pages) and the incident page."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.test import Client
from django.utils.html import escape

from incidents.models import DatasetVersion
from incidents.services import dataset_version_activate
from tests.factories import (
    incident_row,
    incidents_import,
    key_rotation_403,
    settlement_missing_rows,
)

pytestmark = pytest.mark.django_db


def _import(tmp_path: Path, rows: list[dict[str, object]], **options: object) -> DatasetVersion:
    path = tmp_path / f"rows-{len(rows)}-{options.get('version_label', 'v')}.jsonl"
    return incidents_import(path, rows, **options)


KEY_ROTATION = key_rotation_403(
    occurred_at="2025-08-24", severity="SEV2", extra_field="kept in extra"
)


@pytest.fixture
def incidents(tmp_path: Path) -> DatasetVersion:
    rows = [
        KEY_ROTATION,
        settlement_missing_rows(
            impacted_application="Settlement & Reporting", occurred_at="2025-09-01"
        ),
        key_rotation_403(
            "INC-2026-01-13-001",
            title="HTTP 403 invalid_api_key after key rotation (again)",
            occurred_at="2026-01-13",
        ),
    ]
    return _import(tmp_path, rows, activate=True)


def test_incident_pages_need_a_login(client: Client, incidents) -> None:
    for url in ["/incidents/", "/incidents/INC-2025-08-24-001/"]:
        assert client.get(url)["Location"].startswith("/accounts/login/"), url


def test_the_list_is_newest_first_without_a_query(client: Client, alice, incidents) -> None:
    client.force_login(alice)
    page = client.get("/incidents/").content.decode()
    assert "3 incidents, newest first" in page
    positions = [page.index(i) for i in ("INC-2026-01-13-001", "INC-2025-09-01-001")]
    assert positions == sorted(positions)


def test_search_ranks_by_meaning_and_filters_narrow_it(client: Client, alice, incidents) -> None:
    client.force_login(alice)
    page = client.get("/incidents/", {"q": "forbidden after rotating credentials"}).content
    assert page.index(b"INC-2025-08-24-001") < page.index(b"INC-2025-09-01-001")
    assert b"best match first" in page
    only_payu = client.get("/incidents/", {"application": "PayU Core"}).content
    assert b"INC-2025-09-01-001" not in only_payu and b"2 incidents" in only_payu
    in_2025 = client.get("/incidents/", {"from": "2025-08-01", "to": "2025-12-31"}).content
    assert b"INC-2026-01-13-001" not in in_2025 and b"2 incidents" in in_2025
    bad_dates = client.get("/incidents/", {"from": "yesterday"})
    assert bad_dates.status_code == 200 and b"3 incidents" in bad_dates.content


def test_staff_can_preview_a_staged_version(client: Client, bob, incidents, tmp_path) -> None:
    staged = _import(tmp_path, [incident_row("INC-2026-02-02-001")], version_label="next")
    client.force_login(bob)
    page = client.get("/incidents/", {"version": staged.pk}).content.decode()
    assert "1 incident," in page and "INC-2026-02-02-001" in page
    assert f"/incidents/INC-2026-02-02-001/?version={staged.pk}" in page
    assert client.get("/incidents/INC-2026-02-02-001/").status_code == 200


def test_a_staged_version_is_a_404_for_everyone_else(
    client: Client, alice, incidents, tmp_path
) -> None:
    staged = _import(tmp_path, [incident_row("INC-2026-02-02-001")], version_label="next")
    client.force_login(alice)
    assert client.get("/incidents/", {"version": staged.pk}).status_code == 404
    assert client.get("/incidents/INC-2026-02-02-001/").status_code == 404
    pinned = f"/incidents/INC-2025-08-24-001/?version={staged.pk}"
    assert client.get(pinned).status_code == 404
    listed = client.get("/incidents/").content.decode()
    assert f'value="{staged.pk}"' not in listed and "INC-2026-02-02-001" not in listed


def test_an_archived_version_stays_readable(client: Client, alice, incidents, tmp_path) -> None:
    """Answers written while it was active link to its incidents."""
    newer = _import(tmp_path, [incident_row("INC-2026-02-02-001")], version_label="next")
    dataset_version_activate(version=newer)
    client.force_login(alice)
    assert client.get("/incidents/", {"version": incidents.pk}).status_code == 200
    assert client.get("/incidents/INC-2025-09-01-001/").status_code == 200


def test_the_list_is_paginated(client: Client, alice, tmp_path) -> None:
    rows = [incident_row(f"INC-2025-01-{day:02d}-001") for day in range(1, 26)]
    _import(tmp_path, rows, activate=True)
    client.force_login(alice)
    first = client.get("/incidents/").content.decode()
    assert "Page 1 of 2" in first and "page=2" in first
    second = client.get("/incidents/", {"page": 2}).content.decode()
    assert "Page 2 of 2" in second


def test_the_list_runs_a_fixed_number_of_queries(
    client: Client, alice, incidents, django_assert_max_num_queries
) -> None:
    client.force_login(alice)
    with django_assert_max_num_queries(12):
        client.get("/incidents/")


def test_the_incident_page_shows_every_field_its_version_and_similar_ones(
    client: Client, alice, incidents
) -> None:
    client.force_login(alice)
    page = client.get("/incidents/inc\u20112025\u201108\u201124\u2011001/").content.decode()
    for text in [
        str(KEY_ROTATION["title"]), "PayU Core", "SEV2", "2025-08-24",
        escape(KEY_ROTATION["root_cause"]), "Raised the pool size", "ops", incidents.label,
        "active",
        "extra_field", "kept in extra", "Similar incidents",
    ]:  # fmt: skip
        assert text in page, text
    similar = page[page.index("Similar incidents") :]
    assert "INC-2026-01-13-001" in similar and "INC-2025-08-24-001" not in similar


def test_an_unknown_incident_is_a_404(client: Client, alice, incidents) -> None:
    client.force_login(alice)
    assert client.get("/incidents/INC-1999-01-01-001/").status_code == 404


@pytest.mark.parametrize(
    "typed",
    ["INC-2025-08-24-001", "inc\u20132025-08-24\u2013001", "Inc\u20142025\u201408\u201424-001 "],
)
def test_searching_an_id_goes_straight_to_that_incident(
    client: Client, alice, incidents, typed: str
) -> None:
    client.force_login(alice)
    response = client.get("/incidents/", {"q": typed})
    assert response.status_code == 302
    assert response["Location"] == "/incidents/INC-2025-08-24-001/"


def test_an_id_in_a_pinned_version_opens_in_that_version(
    client: Client, bob, incidents, tmp_path
) -> None:
    staged = _import(tmp_path, [incident_row("INC-2026-02-02-001")], version_label="next")
    client.force_login(bob)
    response = client.get("/incidents/", {"q": "inc-2026-02-02-001", "version": staged.pk})
    assert response["Location"] == f"/incidents/INC-2026-02-02-001/?version={staged.pk}"


def test_an_unknown_or_hidden_id_is_searched_not_redirected(
    client: Client, alice, incidents, tmp_path
) -> None:
    _import(tmp_path, [incident_row("INC-2026-02-02-001")], version_label="next")  # staged
    client.force_login(alice)
    for typed in ["INC-2030-01-01-001", "INC-2026-02-02-001", "INC-2025-08-24-001 timeout"]:
        assert client.get("/incidents/", {"q": typed}).status_code == 200, typed


def test_results_link_to_incidents_that_lead_back_to_the_same_search(
    client: Client, alice, incidents
) -> None:
    client.force_login(alice)
    search = {"q": "403 after key rotation", "application": "PayU Core", "from": "2025-01-01"}
    page = client.get("/incidents/", search).content.decode()
    assert "results=q%3D403%2Bafter%2Bkey%2Brotation%26application%3DPayU%2BCore" in page
    detail = client.get(
        "/incidents/INC-2025-08-24-001/",
        {"results": "q=403+after+key+rotation&application=PayU+Core&from=2025-01-01"},
    ).content.decode()
    assert (
        'href="/incidents/?q=403+after+key+rotation&amp;application=PayU+Core&amp;from=2025-01-01"'
        in detail
    )
    assert "Back to results" in detail


def test_the_back_link_cannot_leave_the_site(client: Client, alice, incidents) -> None:
    client.force_login(alice)
    detail = client.get(
        "/incidents/INC-2025-08-24-001/", {"results": "//evil.example/"}
    ).content.decode()
    assert 'href="/incidents/?//evil.example/"' in detail
