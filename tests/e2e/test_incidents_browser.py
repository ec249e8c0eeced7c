"""The incidents page in Chromium: an id typed with en dashes opens that incident, and a
filtered search survives opening a result and coming back."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from incidentdesk.demo import demo_load
from tests.e2e.conftest import SCREENSHOTS
from tests.factories import UserFactory

pytestmark = pytest.mark.e2e


@pytest.fixture
def erin(transactional_db: None) -> User:
    """erin is on call and was handed an incident id in a chat message."""
    demo_load()
    return UserFactory(username="erin")


def _log_in(page: Any, base: str) -> None:
    page.goto(f"{base}/incidents/")
    page.get_by_label("Username or email").fill("erin")
    page.get_by_label("Password").fill("correct horse battery")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{base}/incidents/")


@pytest.mark.parametrize(("width", "height", "name"), [(1280, 860, "desktop"), (390, 844, "phone")])
def test_erin_opens_an_incident_by_its_id_and_returns_to_her_filtered_search(
    live_daphne: str, browser: Any, erin: User, width: int, height: int, name: str
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": width, "height": height})
    _log_in(page, live_daphne)
    page.get_by_label("Search by symptom, cause or id").fill("inc\u20132025-08-24\u2013001")
    page.get_by_role("button", name="Search").click()
    page.wait_for_url(f"{live_daphne}/incidents/INC-2025-08-24-001/")
    expect(page.get_by_role("heading", level=1)).to_contain_text("INC-2025-08-24-001")
    page.screenshot(path=SCREENSHOTS / f"incidents-id-search-{name}.png", full_page=True)

    page.goto(f"{live_daphne}/incidents/")
    page.get_by_label("Search by symptom, cause or id").fill("timeouts")
    page.get_by_label("Application").select_option("Payout Service")
    page.get_by_role("button", name="Search").click()
    expect(page).to_have_url(
        f"{live_daphne}/incidents/?q=timeouts&application=Payout+Service&from=&to=&version="
    )
    page.locator("ol.rows a.id").first.click()
    page.wait_for_url("**/incidents/INC-**")
    page.get_by_role("link", name="← Back to results").click()
    page.wait_for_url("**/incidents/?q=timeouts**")
    expect(page.get_by_label("Search by symptom, cause or id")).to_have_value("timeouts")
    expect(page.get_by_label("Application")).to_have_value("Payout Service")
    page.screenshot(path=SCREENSHOTS / f"incidents-back-to-results-{name}.png", full_page=True)
