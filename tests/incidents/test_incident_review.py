"""Chat reports wait for review: badged, ranked below reviewed incidents, and staff
accept, edit, merge or discard them (page and admin)."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from incidents.importers import SourceRow
from incidents.models import Dataset, Incident
from incidents.selectors import incident_search_similar
from incidents.services import INCIDENT_SPEC, dataset_import_rows, incident_mark_reported
from tests.factories import incident_row

pytestmark = pytest.mark.django_db

TWIN = {
    "title": "Refund webhooks failing with HTTP 500",
    "impacted_application": "Refund Service",
    "root_cause": "The webhook signer lost its key.",
    "mitigation": "Restored the signing key.",
    "body": "Refund webhooks to merchants failed with 500 for an hour.",
}
QUERY = "refund webhooks failing with 500"


@pytest.fixture
def twins() -> tuple[Incident, Incident]:
    """Two incidents with the very same words: equal relevance to any question."""
    rows = [
        SourceRow(1, incident_row("INC-2025-03-04-001", **TWIN)),
        SourceRow(2, incident_row("INC-2025-03-04-002", **TWIN)),
    ]
    version, _ = dataset_import_rows(
        spec=INCIDENT_SPEC, kind=Dataset.Kind.INCIDENTS, rows=rows, dataset_name="ops",
        activate=True,
    )  # fmt: skip
    first, second = version.incidents.order_by("incident_id")
    return first, second


def _order(query: str = QUERY) -> list[str]:
    return [hit.incident.incident_id for hit in incident_search_similar(query=query, limit=5).hits]


def _report(incident: Incident) -> Incident:
    incident_mark_reported(version=incident.version, incident_id=incident.incident_id)
    incident.refresh_from_db()
    return incident


def test_a_report_ranks_below_a_reviewed_incident_of_equal_relevance(twins) -> None:
    first, second = twins
    _report(first)
    assert _order()[:2] == [second.incident_id, first.incident_id]
    Incident.objects.update(review_status="reviewed")
    _report(second)
    assert _order()[:2] == [first.incident_id, second.incident_id]


def test_the_model_reads_the_badge_and_the_page_shows_it(twins, client: Client, alice) -> None:
    first, _ = twins
    _report(first)
    search = incident_search_similar(query=QUERY, limit=5)
    assert "Review: reported, not reviewed" in search.as_text()
    results = {r["incident_id"]: r["review_status"] for r in search.as_data()["results"]}
    assert results[first.incident_id] == "reported"
    client.force_login(alice)
    listing = client.get("/incidents/", {"q": QUERY}).content.decode()
    assert listing.count("reported, not reviewed") == 1
    page = client.get(f"/incidents/{first.incident_id}/").content.decode()
    assert "reported, not reviewed" in page
    assert "/incidents/review/" not in page  # the review link is for staff


def test_only_staff_see_and_act_on_the_review_list(twins, client: Client, alice) -> None:
    first, _ = twins
    _report(first)
    client.force_login(alice)
    assert client.get("/incidents/review/").status_code == 403
    response = client.post(f"/incidents/review/{first.pk}/", {"action": "discard"})
    assert response.status_code == 403
    assert Incident.objects.filter(pk=first.pk).exists()


def test_staff_accept_a_report_with_an_edited_title(twins, client: Client, bob: User) -> None:
    first, second = twins
    _report(first)
    client.force_login(bob)
    listing = client.get("/incidents/review/").content.decode()
    assert first.incident_id in listing and second.incident_id not in listing
    response = client.post(
        f"/incidents/review/{first.pk}/",
        {"action": "accept", "title": "Signer key lost", "severity": "SEV2"},
        follow=True,
    )
    assert "accepted: Signer key lost" in response.content.decode()
    first.refresh_from_db()
    assert (first.review_status, first.title, first.severity) == (
        "reviewed", "Signer key lost", "SEV2",
    )  # fmt: skip
    assert _order("signer key lost")[0] == first.incident_id  # re-embedded with the new title
    again = client.post(f"/incidents/review/{first.pk}/", {"action": "accept"})
    assert again.status_code == 404  # no longer waiting


def test_staff_merge_a_report_into_the_incident_it_repeats(twins, client: Client, bob) -> None:
    first, second = twins
    _report(first)
    client.force_login(bob)
    response = client.post(
        f"/incidents/review/{first.pk}/",
        {"action": "merge", "into": second.incident_id.lower().replace("-", "\u2013")},
        follow=True,
    )
    assert f"merged into {second.incident_id}" in response.content.decode()
    assert not Incident.objects.filter(pk=first.pk).exists()
    second.refresh_from_db()
    assert [m["incident_id"] for m in second.extra["merged_reports"]] == [first.incident_id]
    assert second.version.row_count == 1


def test_merging_into_an_unknown_id_or_itself_changes_nothing(twins, client, bob) -> None:
    first, _ = twins
    _report(first)
    client.force_login(bob)
    for into in ("INC-1999-01-01-001", first.incident_id):
        response = client.post(f"/incidents/review/{first.pk}/", {"action": "merge", "into": into})
        assert response.status_code in {400, 404}  # bad input: the list again, with the reason
        assert 'class="error"' in response.content.decode()
    assert Incident.objects.get(pk=first.pk).is_reported


def test_staff_discard_a_report_and_bad_actions_are_refused(twins, client, bob) -> None:
    first, _ = twins
    _report(first)
    client.force_login(bob)
    listing = client.get("/incidents/review/").content.decode()
    assert f"Yes, discard {first.incident_id}" in listing  # behind a second, deliberate click
    assert client.post(f"/incidents/review/{first.pk}/", {"action": "zap"}).status_code == 400
    assert client.get(f"/incidents/review/{first.pk}/").status_code == 405
    response = client.post(f"/incidents/review/{first.pk}/", {"action": "discard"})
    assert response.status_code == 302
    assert not Incident.objects.filter(pk=first.pk).exists()
    assert first.version.incidents.count() == 1


def test_the_admin_filters_reports_and_accepts_them(twins, client: Client, bob) -> None:
    first, second = twins
    _report(first)
    client.force_login(bob)
    listing = client.get("/admin/incidents/incident/", {"review_status__exact": "reported"})
    assert first.incident_id in listing.content.decode()
    assert second.incident_id not in listing.content.decode()
    client.post(
        "/admin/incidents/incident/",
        {"action": "accept_reports", "_selected_action": [first.pk, second.pk]},
    )
    first.refresh_from_db()
    assert first.review_status == "reviewed"
    client.post(
        "/admin/incidents/incident/",
        {"action": "discard_reports", "_selected_action": [second.pk]},
    )
    assert Incident.objects.filter(pk=second.pk).exists()  # reviewed: not discarded


def test_the_admin_merges_a_report_into_the_id_typed_beside_the_action(
    twins, client: Client, bob
) -> None:
    first, second = twins
    _report(first)
    client.force_login(bob)
    merge = {"action": "merge_reports", "_selected_action": [first.pk]}
    unknown = client.post("/admin/incidents/incident/", {**merge, "into": "INC-1999-01-01-001"})
    assert unknown.status_code == 302 and Incident.objects.filter(pk=first.pk).exists()
    typed = second.incident_id.lower().replace("-", "\u2013")
    response = client.post("/admin/incidents/incident/", {**merge, "into": typed}, follow=True)
    assert f"{first.incident_id} merged into {second.incident_id}" in response.content.decode()
    assert not Incident.objects.filter(pk=first.pk).exists()
    second.refresh_from_db()
    assert [m["incident_id"] for m in second.extra["merged_reports"]] == [first.incident_id]


def test_a_merged_reports_page_redirects_to_the_incident_it_joined(
    twins, client: Client, alice, bob
) -> None:
    first, second = twins
    _report(first)
    client.force_login(bob)
    client.post(f"/incidents/review/{first.pk}/", {"action": "merge", "into": second.incident_id})
    client.force_login(alice)  # an old link in her chat answer
    response = client.get(f"/incidents/{first.incident_id.lower().replace('-', '\u2011')}/")
    assert response.status_code == 302
    assert response["Location"] == f"/incidents/{second.incident_id}/"
    page = client.get(response["Location"]).content.decode()
    assert (
        f"{first.incident_id} was a chat report; staff merged it into {second.incident_id}" in page
    )


def test_a_discarded_reports_page_says_so_with_410_never_a_bare_404(
    twins, client: Client, alice, bob
) -> None:
    first, _ = twins
    _report(first)
    client.force_login(bob)
    client.post("/admin/incidents/incident/",
                {"action": "discard_reports", "_selected_action": [first.pk]})  # fmt: skip
    assert not Incident.objects.filter(pk=first.pk).exists()
    client.force_login(alice)
    response = client.get(f"/incidents/{first.incident_id}/")
    assert response.status_code == 410
    page = response.content.decode()
    assert f"{first.incident_id}</span> was discarded" in page
    assert TWIN["title"] in page
    assert client.get("/incidents/INC-1999-01-01-001/").status_code == 404  # never existed
