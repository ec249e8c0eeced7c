"""Answers worth reading, in Chromium with the demo data and the offline engine: a "how do
I" question quotes the runbook's steps in whole sentences with its link, a known issue its
workaround, an architecture note the section the question names, and a severity filter
that leaves nothing says so first, then labels the nearest results."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from incidentdesk.demo import demo_load
from tests.e2e.conftest import SCREENSHOTS
from tests.e2e.test_chat_browser import _ask
from tests.factories import UserFactory

pytestmark = pytest.mark.e2e
SIZES = [(1280, 860, "desktop"), (390, 844, "phone")]
HOW_TO = "How do I re-run settlement reports for a missing window?"
SEVERITY = "sev1s for Checkout Gateway in the last 90 days"
KNOWN_ISSUE = "Is there a known issue with DNS caching when the database fails over?"
ARCHITECTURE = "What is the request path of a payment through PayU Core?"


@pytest.fixture
def henry(transactional_db: None) -> User:
    """henry is on call for settlement and checkout."""
    demo_load()
    return UserFactory(username="henry")


def _log_in(page: Any, base: str) -> None:
    page.goto(f"{base}/")
    page.get_by_label("Username or email").fill("henry")
    page.get_by_label("Password").fill("correct horse battery")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{base}/")


@pytest.mark.parametrize(("width", "height", "name"), SIZES)
def test_a_how_do_i_question_quotes_the_runbook_steps_with_its_link(
    live_daphne: str, browser: Any, henry: User, width: int, height: int, name: str
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": width, "height": height})
    _log_in(page, live_daphne)
    answer = _ask(page, HOW_TO)
    runbook = answer.get_by_role("link", name="KB-RB-007").first
    expect(runbook).to_have_attribute("href", "/knowledge/KB-RB-007/")
    quote = answer.locator("blockquote").first
    expect(quote).to_contain_text("settlement-report rerun")
    text = quote.inner_text().strip()
    assert text.startswith("Steps:"), text  # the steps section, not metadata or prevention
    assert text.endswith("."), text  # whole sentences, never cut mid-word
    assert "Prevention" not in text
    expect(page.locator(".citations").last.locator(".cite-document").first).to_be_visible()
    quote.scroll_into_view_if_needed()  # the thread scrolls, not the page
    page.screenshot(path=SCREENSHOTS / f"answer-runbook-steps-{name}.png")

    runbook.click()
    page.wait_for_url(f"{live_daphne}/knowledge/KB-RB-007/")
    expect(page.get_by_role("heading", level=1)).to_contain_text("KB-RB-007")
    page.close()


@pytest.mark.parametrize(("width", "height", "name"), SIZES)
def test_a_severity_that_matches_nothing_is_said_first_then_the_nearest_are_labelled(
    live_daphne: str, browser: Any, henry: User, width: int, height: int, name: str
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": width, "height": height})
    _log_in(page, live_daphne)
    answer = _ask(page, SEVERITY)
    opening = answer.locator(":scope > :first-child")
    expect(opening).to_contain_text("No incident matched")
    expect(opening.locator("strong")).to_contain_text("severity SEV1")  # "sev1s" understood
    expect(opening).to_contain_text("The nearest matches without that filter")
    expect(answer.locator("a.ref-incident").first).to_be_visible()
    opening.scroll_into_view_if_needed()
    page.screenshot(path=SCREENSHOTS / f"answer-severity-none-{name}.png")
    page.close()


@pytest.mark.parametrize(("width", "height", "name"), SIZES)
def test_a_known_issue_gives_its_workaround_and_an_architecture_note_the_named_section(
    live_daphne: str, browser: Any, henry: User, width: int, height: int, name: str
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": width, "height": height})
    _log_in(page, live_daphne)
    answer = _ask(page, KNOWN_ISSUE)
    expect(answer.get_by_role("link", name="KB-KI-004").first).to_have_attribute(
        "href", "/knowledge/KB-KI-004/"
    )
    quote = answer.locator("blockquote").first
    expect(quote).to_contain_text("Workaround: Restart the affected deployments")
    quote.scroll_into_view_if_needed()
    page.screenshot(path=SCREENSHOTS / f"answer-known-issue-workaround-{name}.png")

    page.goto(f"{live_daphne}/")  # a new chat: not a follow-up of the known issue
    answer = _ask(page, ARCHITECTURE)
    expect(answer.get_by_role("link", name="KB-AR-001").first).to_be_visible()
    quote = answer.locator("blockquote").first
    text = quote.inner_text().strip()
    assert text.startswith("Request path:"), text  # the section asked for, not the Overview
    assert text.endswith("."), text
    quote.scroll_into_view_if_needed()
    page.screenshot(path=SCREENSHOTS / f"answer-architecture-section-{name}.png")
    page.close()
