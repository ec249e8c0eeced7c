"""The issue's check in Chromium: report with a screenshot, get the card, confirm, get a
ticket, add a comment, ask "what did we decide?"; a wrong file type is refused."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User

from copilot.models import Ticket, TicketComment
from incidentdesk.demo import demo_load
from tests.copilot.intake.conftest import error_dialog_png
from tests.e2e.conftest import SCREENSHOTS
from tests.factories import UserFactory

pytestmark = pytest.mark.e2e
REPORT = "Checkout API returns 502 after the 14:00 deploy"
SIZES = [(1280, 900, "desktop"), (390, 844, "phone")]
NO_SIDEWAYS_SCROLL = "document.documentElement.scrollWidth - document.documentElement.clientWidth"


@pytest.fixture
def dave(transactional_db: None) -> User:
    """dave is on call when checkout breaks."""
    demo_load()
    return UserFactory(username="dave")


def _log_in(page: Any, base: str) -> None:
    page.goto(f"{base}/")
    page.get_by_label("Username or email").fill("dave")
    page.get_by_label("Password").fill("correct horse battery")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{base}/")


def _send(page: Any, text: str) -> Any:
    """Send from the composer; the finished card of the answer."""
    from playwright.sync_api import expect

    count = page.locator(".answer .intake-card").count()
    page.get_by_label("Your question").fill(text)
    page.keyboard.press("Enter")
    expect(page.locator(".answer .intake-card")).to_have_count(count + 1, timeout=60_000)
    return page.locator(".answer .intake-card").last


@pytest.mark.parametrize(("width", "height", "name"), SIZES)
def test_dave_reports_files_comments_and_reads_the_ledger(
    live_daphne: str, browser: Any, dave: User, tmp_path: Any, width: int, height: int, name: str
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": width, "height": height})
    _log_in(page, live_daphne)

    wrong = tmp_path / "error.png"
    wrong.write_bytes(b"GIF89a this is not a PNG")
    page.set_input_files("#screenshot", str(wrong))
    expect(page.locator("#status")).to_have_text("The screenshot must be a PNG or JPEG image.")
    expect(page.locator("#attachment")).to_be_hidden()

    shot = tmp_path / "checkout-502.png"
    shot.write_bytes(error_dialog_png())
    page.set_input_files("#screenshot", str(shot))
    expect(page.locator("#attachment")).to_contain_text("checkout-502.png")
    card = _send(page, REPORT)
    expect(card.locator("h3")).to_contain_text("Checkout Gateway 502 errors")
    expect(card).to_contain_text("Checkout Gateway")
    expect(card).to_contain_text("SEV2")
    expect(card.get_by_role("heading", name="Similar incidents")).to_be_visible()
    expect(card.locator(".intake-list a.source").first).to_be_visible()  # actions cite sources
    expect(card).to_contain_text("owner:")
    expect(card).to_contain_text("reply “yes, file it”")
    page.screenshot(path=SCREENSHOTS / f"intake-report-{name}.png", full_page=True)

    filed = _send(page, "yes, file it")
    key = Ticket.objects.get().key
    expect(filed.get_by_role("link", name=key)).to_have_attribute("href", f"/tickets/{key}/")

    _send(page, "add a comment: we rolled back the 14:00 deploy and decided to keep the flag off")
    assert TicketComment.objects.get().ticket.key == key

    ledger = _send(page, "what did we decide?")
    expect(ledger).to_contain_text("Decision: keep the flag off")
    expect(ledger).to_contain_text(f"on {key}")
    page.screenshot(path=SCREENSHOTS / f"intake-ledger-{name}.png", full_page=True)
    assert page.evaluate(NO_SIDEWAYS_SCROLL) == 0  # the cards fit the phone's width

    page.reload()
    expect(page.locator(".answer .intake-card")).to_have_count(4)
    ticket = page.get_by_role("link", name=key).first
    ticket.scroll_into_view_if_needed()
    ticket.click()  # report -> ticket, as on-call people follow it on a phone
    page.wait_for_url(f"{live_daphne}/tickets/{key}/")
    expect(page.get_by_role("heading", level=1)).to_contain_text(key)
    page.screenshot(path=SCREENSHOTS / f"intake-ticket-{name}.png", full_page=True)
    assert page.evaluate(NO_SIDEWAYS_SCROLL) == 0
    page.close()


@pytest.mark.parametrize(("width", "height", "name"), [(1280, 860, "desktop"), (390, 844, "phone")])
def test_a_deploy_report_offers_rollback_first_with_sources_and_no_raw_scores(
    live_daphne: str, browser: Any, dave: User, width: int, height: int, name: str
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": width, "height": height})
    _log_in(page, live_daphne)
    card = _send(page, REPORT)
    actions = card.locator(".intake-panel").filter(has_text="Proposed actions")
    items = actions.locator("ol.intake-list > li")
    # After a deploy, undoing it comes first ("… and roll back the most recent one …").
    expect(items.first).to_contain_text(re.compile(r"\broll back\b", re.IGNORECASE))
    expect(items.first.locator(".source")).to_have_text("change rule")
    for i in range(items.count()):
        expect(items.nth(i).locator(".source")).not_to_be_empty()  # each with its source
        assert not items.nth(i).inner_text().lower().startswith(("raised", "rolled", "added"))
    similar = card.locator(".intake-panel").filter(has_text="Similar incidents")
    expect(similar.locator("li").first).to_contain_text("closest match")  # a word, not a score
    assert "score" not in card.inner_text().lower()
    assert page.evaluate(NO_SIDEWAYS_SCROLL) == 0
    actions.scroll_into_view_if_needed()  # the thread scrolls, not the page
    page.screenshot(path=SCREENSHOTS / f"intake-playbook-{name}.png")
    page.close()
