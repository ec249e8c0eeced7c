"""The API's Swagger UI renders in Chromium from this server's own files (no network)."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from tests.e2e.conftest import SCREENSHOTS
from tests.factories import UserFactory

pytestmark = pytest.mark.e2e


@pytest.fixture
def erin(transactional_db: None) -> User:
    """erin wires the paging system to the API."""
    return UserFactory(username="erin")


def test_the_schema_loads_in_the_offline_swagger_ui(
    live_daphne: str, browser: Any, erin: User
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 900})
    outside: list[str] = []
    page.on("request", lambda r: r.url.startswith(live_daphne) or outside.append(r.url))
    page.goto(f"{live_daphne}/accounts/login/?next=/api/docs/")
    page.get_by_label("Username or email").fill("erin")
    page.get_by_label("Password").fill("correct horse battery")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{live_daphne}/api/docs/")
    operation = page.locator(".opblock-summary-path", has_text="/api/incidents/search/")
    expect(operation.first).to_be_visible(timeout=30_000)
    expect(page.locator(".opblock-summary-path", has_text="/api/chat/").first).to_be_visible()
    page.screenshot(path=str(SCREENSHOTS / "api-docs.png"))
    assert outside == []  # every file came from this server
