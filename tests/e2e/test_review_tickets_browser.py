"""In Chromium: staff review a chat report, a reporter works her ticket (status actions,
screenshot, the way back to the conversation), and an import job's page follows the job."""

from __future__ import annotations

from typing import Any

import pytest

from copilot.intake import media
from copilot.intake.services import report_screenshot_store
from copilot.models import Message, Ticket
from copilot.services import conversation_create, conversation_message_append
from incidents.importers import SourceRow
from incidents.models import Dataset, ImportJob, Incident
from incidents.services import (
    INCIDENT_SPEC,
    dataset_import_rows,
    incident_mark_reported,
    incident_review_discard,
    incident_review_merge,
)
from tests.copilot.intake.conftest import error_dialog_png
from tests.e2e.conftest import SCREENSHOTS
from tests.factories import (
    DatasetFactory,
    DatasetVersionFactory,
    IncidentFactory,
    TicketFactory,
    UserFactory,
    incident_row,
)

pytestmark = pytest.mark.e2e
SIZES = [(1280, 860, "desktop"), (390, 844, "phone")]
TWIN = {
    "title": "Refund webhooks failing with HTTP 500",
    "impacted_application": "Refund Service",
    "body": "Refund webhooks to merchants failed with 500 for an hour.",
}


def _log_in(page: Any, base: str, username: str, then: str) -> None:
    page.goto(f"{base}{then}")
    page.get_by_label("Username or email").fill(username)
    page.get_by_label("Password").fill("correct horse battery")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{base}{then}")


@pytest.fixture
def reports(transactional_db: None) -> list[Incident]:
    """A reviewed incident and two chat reports, one repeating it word for word."""
    rows = [
        SourceRow(1, incident_row("INC-2025-03-04-001", **TWIN)),
        SourceRow(2, incident_row("INC-2025-03-04-900001", **TWIN)),
        SourceRow(3, incident_row("INC-2025-03-05-900002", title="Test please ignore")),
    ]
    version, _ = dataset_import_rows(
        spec=INCIDENT_SPEC, kind=Dataset.Kind.INCIDENTS, rows=rows, dataset_name="ops",
        activate=True,
    )  # fmt: skip
    for key in ("INC-2025-03-04-900001", "INC-2025-03-05-900002"):
        incident_mark_reported(version=version, incident_id=key)
    return list(version.incidents.order_by("incident_id"))


@pytest.mark.parametrize(("width", "height", "name"), SIZES)
def test_bob_finds_a_report_badged_below_its_twin_then_reviews_it(
    live_daphne: str, browser: Any, reports: list[Incident], width: int, height: int, name: str
) -> None:
    from playwright.sync_api import expect

    UserFactory(username="bob", is_staff=True, is_superuser=True)
    page = browser.new_page(viewport={"width": width, "height": height})
    _log_in(page, live_daphne, "bob", "/incidents/?q=refund+webhooks+failing")
    rows = page.locator("ol.rows > li")
    expect(rows.nth(0)).to_contain_text("INC-2025-03-04-001")
    expect(rows.nth(0).locator(".reported-badge")).to_have_count(0)
    expect(rows.nth(1)).to_contain_text("INC-2025-03-04-900001")
    expect(rows.nth(1).locator(".reported-badge")).to_have_text("reported, not reviewed")
    page.screenshot(path=SCREENSHOTS / f"review-search-badge-{name}.png", full_page=True)

    menu = page.get_by_role("button", name="Menu")
    if menu.is_visible():  # at phone width the top bar's links are behind it
        menu.click()
    page.get_by_role("link", name="Review", exact=True).click()
    page.wait_for_url(f"{live_daphne}/incidents/review/")
    expect(page.locator("#review-list > li")).to_have_count(2)
    report = page.locator("#review-list > li").filter(has_text="INC-2025-03-04-900001")
    discard = report.get_by_role("button", name="Yes, discard INC-2025-03-04-900001")
    expect(discard).to_be_hidden()  # discarding deletes: it takes a second, deliberate click
    report.get_by_text("Discard…").click()
    expect(discard).to_be_visible()
    page.screenshot(path=SCREENSHOTS / f"review-list-{name}.png", full_page=True)
    report.get_by_label("Merge into incident id").fill("inc\u20132025-03-04\u2013001")
    report.get_by_role("button", name="Merge").click()
    expect(page.get_by_role("status")).to_contain_text(
        "INC-2025-03-04-900001 merged into INC-2025-03-04-001"
    )
    other = page.locator("#review-list > li").filter(has_text="INC-2025-03-05-900002")
    other.get_by_label("Title").fill("Refund queue stalled")
    other.get_by_role("button", name="Accept").click()
    expect(page.get_by_role("status")).to_contain_text("accepted: Refund queue stalled")
    expect(page.locator("#review-list")).to_contain_text("Nothing to review.")
    page.screenshot(path=SCREENSHOTS / f"review-list-done-{name}.png", full_page=True)
    assert not Incident.objects.filter(review_status="reported").exists()


@pytest.mark.parametrize(("width", "height", "name"), SIZES)
def test_bob_merges_a_report_from_the_admin_into_the_id_he_types(
    live_daphne: str, browser: Any, reports: list[Incident], width: int, height: int, name: str
) -> None:
    from playwright.sync_api import expect

    reviewed, report, _ = reports
    UserFactory(username="bob", is_staff=True, is_superuser=True)
    page = browser.new_page(viewport={"width": width, "height": height})
    _log_in(page, live_daphne, "bob", "/admin/incidents/incident/?review_status__exact=reported")
    page.locator(f'input[name="_selected_action"][value="{report.pk}"]').check()
    page.locator("select[name=action]").select_option("merge_reports")
    field = page.get_by_label("Merge into incident id")
    page.screenshot(path=SCREENSHOTS / f"admin-review-merge-field-{name}.png")
    box = field.bounding_box()
    # A one-line text field at every width: at phone width Django's action bar
    # stretched it to the height of its wrapped label, a box several lines tall.
    assert box is not None and box["height"] <= 48 and box["width"] >= 160, box
    field.fill("inc\u20132025-03-04\u2013001")
    page.get_by_role("button", name="Run", exact=True).click()
    expect(page.locator("ul.messagelist")).to_contain_text(
        f"{report.incident_id} merged into {reviewed.incident_id}"
    )
    page.screenshot(path=SCREENSHOTS / f"admin-review-merge-{name}.png", full_page=True)
    assert not Incident.objects.filter(pk=report.pk).exists()
    page.close()


@pytest.mark.parametrize(("width", "height", "name"), SIZES)
def test_old_links_to_reviewed_away_reports_say_what_became_of_them(
    live_daphne: str, browser: Any, reports: list[Incident], width: int, height: int, name: str
) -> None:
    from playwright.sync_api import expect

    reviewed, merged, discarded = reports
    incident_review_merge(incident=merged, into=reviewed)
    incident_review_discard(incident=discarded)
    UserFactory(username="alice")
    page = browser.new_page(viewport={"width": width, "height": height})
    _log_in(page, live_daphne, "alice", f"/incidents/{reviewed.incident_id}/")
    page.goto(f"{live_daphne}/incidents/{merged.incident_id}/")  # a link in an old answer
    page.wait_for_url(f"{live_daphne}/incidents/{reviewed.incident_id}/")
    expect(page.get_by_role("status")).to_contain_text(
        f"{merged.incident_id} was a chat report; staff merged it into {reviewed.incident_id}"
    )
    expect(page.locator("h1")).to_contain_text(reviewed.incident_id)
    page.screenshot(path=SCREENSHOTS / f"report-merged-redirect-{name}.png", full_page=True)

    response = page.goto(f"{live_daphne}/incidents/{discarded.incident_id}/")
    assert response is not None and response.status == 410
    expect(page.locator("h1")).to_have_text(f"{discarded.incident_id} was discarded")
    expect(page.get_by_role("status")).to_contain_text("Test please ignore")
    page.screenshot(path=SCREENSHOTS / f"report-discarded-{name}.png", full_page=True)
    page.close()


@pytest.fixture
def alices_ticket(transactional_db: None) -> Ticket:
    """alice reported a 502 with a screenshot and had a ticket filed."""
    alice = UserFactory(username="alice")
    UserFactory(username="carol")
    conversation = conversation_create(owner=alice)
    message = conversation_message_append(
        conversation=conversation, role=Message.Role.USER, content="Checkout 502s right now"
    )
    shot = media.screenshot_validate(data=error_dialog_png())
    report_screenshot_store(message=message, screenshot=shot)
    return Ticket.objects.create(
        key="DESK-1", title="Checkout Gateway 502 errors", severity="SEV2",
        service="Checkout Gateway", conversation=conversation,
        incident_id="INC-2026-11-24-900001", created_by=alice, idempotency_key="e2e-1",
        report_message=message,
    )  # fmt: skip


@pytest.mark.parametrize(("width", "height", "name"), SIZES)
def test_alice_works_her_ticket_and_carol_cannot_see_it(
    live_daphne: str, browser: Any, alices_ticket: Ticket, width: int, height: int, name: str
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": width, "height": height})
    _log_in(page, live_daphne, "alice", "/tickets/")
    page.get_by_label("Status").select_option("open")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url("**/tickets/?status=open**")
    page.get_by_role("link", name="DESK-1").click()
    page.wait_for_url(f"{live_daphne}/tickets/DESK-1/")
    image = page.get_by_role("img", name="Screenshot attached to the report")
    expect(image).to_be_visible()
    assert page.evaluate("document.querySelector('.ticket-screenshot').naturalWidth") == 900
    for action, status in [("Acknowledge", "In progress"), ("Resolve", "Resolved")]:
        page.get_by_role("button", name=action).click()
        expect(page.locator("#ticket-status")).to_have_text(status)
    page.screenshot(path=SCREENSHOTS / f"ticket-resolved-{name}.png", full_page=True)
    page.get_by_role("button", name="Reopen").click()
    expect(page.locator("#ticket-status")).to_have_text("Open")
    page.locator("#ticket-conversation").click()
    page.wait_for_url(f"{live_daphne}/conversations/{alices_ticket.conversation_id}/")

    other = browser.new_page(viewport={"width": width, "height": height})
    _log_in(other, live_daphne, "carol", "/tickets/")
    expect(other.locator("#ticket-rows")).to_contain_text("No tickets match.")
    response = other.goto(f"{live_daphne}/tickets/DESK-1/screenshot/")
    assert response is not None and response.status == 404
    other.screenshot(path=SCREENSHOTS / f"ticket-screenshot-refused-{name}.png")


@pytest.mark.parametrize(("width", "height", "name"), SIZES)
def test_bob_filters_every_ticket_by_tracker_and_by_his_own(
    live_daphne: str, browser: Any, alices_ticket: Ticket, width: int, height: int, name: str
) -> None:
    from playwright.sync_api import expect

    bob = UserFactory(username="bob", is_staff=True)
    TicketFactory(
        key="OPS-3", created_by=bob, tracker="jira",
        external_url="https://jira.example.com/browse/OPS-3",
    )  # fmt: skip
    page = browser.new_page(viewport={"width": width, "height": height})
    _log_in(page, live_daphne, "bob", "/tickets/")
    rows = page.locator("#ticket-rows")
    expect(rows).to_contain_text("DESK-1")  # staff see every ticket
    expect(rows).to_contain_text("OPS-3")
    page.get_by_label("Tracker").select_option("jira")
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url("**/tickets/?**tracker=jira**")
    expect(rows).not_to_contain_text("DESK-1")
    expect(rows).to_contain_text("OPS-3")
    page.get_by_label("Tracker").select_option("")
    page.get_by_label("Mine only").check()
    page.get_by_role("button", name="Filter").click()
    page.wait_for_url("**/tickets/?**mine=1**")
    expect(rows).not_to_contain_text("DESK-1")  # alice's
    expect(rows).to_contain_text("OPS-3")
    page.screenshot(path=SCREENSHOTS / f"tickets-mine-{name}.png", full_page=True)
    page.close()


@pytest.mark.parametrize(("width", "height", "name"), SIZES)
def test_the_import_job_page_follows_the_job_then_stays_read_only(
    live_daphne: str, browser: Any, transactional_db: None, width: int, height: int, name: str
) -> None:
    from playwright.sync_api import expect

    UserFactory(username="bob", is_staff=True, is_superuser=True)
    job = ImportJob.objects.create(
        version=DatasetVersionFactory(status="building"), file="imports/2026/11/x.jsonl",
        status="running", rows_done=66, rows_total=263,
    )  # fmt: skip
    url = f"/admin/incidents/importjob/{job.pk}/change/"
    page = browser.new_page(viewport={"width": width, "height": height})
    _log_in(page, live_daphne, "bob", url)
    expect(page.locator("#import-progress progress")).to_have_attribute("value", "66")
    expect(page.locator("#import-progress-text")).to_contain_text("66 of 263 rows (25%)")
    page.screenshot(path=SCREENSHOTS / f"import-job-running-{name}.png", full_page=True)
    ImportJob.objects.filter(pk=job.pk).update(status="succeeded", rows_done=263)
    # The page reloads itself (meta refresh) and shows the finished job, read-only.
    expect(page.locator("#import-progress")).to_contain_text(
        "this job can no longer be changed", timeout=15000
    )
    expect(page.locator("input[name=_save]")).to_have_count(0)
    page.screenshot(path=SCREENSHOTS / f"import-job-finished-{name}.png", full_page=True)


@pytest.mark.parametrize(("width", "height", "name"), SIZES)
def test_bob_reads_an_edit_and_a_reused_id_apart_and_filters_knowledge_by_its_datasets(
    live_daphne: str, browser: Any, transactional_db: None, width: int, height: int, name: str
) -> None:
    from playwright.sync_api import expect

    UserFactory(username="bob", is_staff=True, is_superuser=True)
    dataset = DatasetFactory(name="ops-incidents")
    DatasetFactory(name="ops-runbooks", kind=Dataset.Kind.KNOWLEDGE)
    active = DatasetVersionFactory(dataset=dataset, status="active")
    staged = DatasetVersionFactory(dataset=dataset, status="ready")
    for version, title, app in [(active, "Ledger lag", "Ledger"), (staged, "DNS outage", "Edge")]:
        IncidentFactory(version=version, incident_id="INC-2025-01-02-001", title=title,
                        impacted_application=app, content_hash=app)  # fmt: skip
    for version, digest in [(active, "a"), (staged, "b")]:
        IncidentFactory(version=version, incident_id="INC-2025-01-03-001", title="Refunds slow",
                        impacted_application="Refunds", content_hash=digest)  # fmt: skip
    page = browser.new_page(viewport={"width": width, "height": height})
    _log_in(page, live_daphne, "bob", "/admin/incidents/datasetversion/")
    page.locator(f'input[name="_selected_action"][value="{staged.pk}"]').check()
    page.locator("select[name=action]").select_option("activate")
    page.get_by_role("button", name="Run", exact=True).click()
    edited = page.get_by_role("row").filter(has_text="edited")
    expect(edited).to_contain_text("1: INC-2025-01-03-001")
    reused = page.get_by_role("row").filter(has_text="id reused")
    expect(reused).to_contain_text("1: INC-2025-01-02-001")  # another incident, not "changed"
    page.screenshot(path=SCREENSHOTS / f"admin-activation-diff-{name}.png", full_page=True)

    page.goto(f"{live_daphne}/admin/knowledge/knowledgedocument/")
    filters = page.locator("#changelist-filter")
    if not filters.is_visible():  # narrow: the admin folds its filters behind a toggle
        page.locator("#changelist-filter-button, .changelist-filter-toggle").first.click()
    expect(filters).to_contain_text("ops-runbooks")
    expect(filters).not_to_contain_text("ops-incidents")
