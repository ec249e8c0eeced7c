"""Knowledge freshness in Chromium: with the demo data most documents carry no stale
banner; bob (staff) marks a stale one validated from its page, alice gets no button."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from incidentdesk.demo import demo_load
from knowledge.models import KnowledgeDocument
from tests.e2e.conftest import SCREENSHOTS
from tests.factories import UserFactory

pytestmark = pytest.mark.e2e
STALE = "KB-AR-002"  # stale on purpose in the demo data


@pytest.fixture
def people(transactional_db: None) -> dict[str, User]:
    """bob curates the knowledge (staff); alice is on call."""
    demo_load()
    return {
        "bob": UserFactory(username="bob", is_staff=True),
        "alice": UserFactory(username="alice"),
    }


def _log_in(page: Any, base: str, username: str, path: str) -> None:
    page.goto(f"{base}{path}")
    page.get_by_label("Username or email").fill(username)
    page.get_by_label("Password").fill("correct horse battery")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{base}{path}")


@pytest.mark.parametrize(("width", "height", "name"), [(1280, 860, "desktop"), (390, 844, "phone")])
def test_bob_marks_a_stale_document_validated_and_alice_cannot(
    live_daphne: str, browser: Any, people: dict[str, User], width: int, height: int, name: str
) -> None:
    from playwright.sync_api import expect

    bob = browser.new_context(viewport={"width": width, "height": height}).new_page()
    _log_in(bob, live_daphne, "bob", "/knowledge/")
    # Every demo document has a validation date, the latest the day the demo was
    # loaded (tests/test_demo.py checks "most fresh, a few stale" for any day).
    expect(bob.locator("ol.rows")).to_contain_text(f"validated {timezone.localdate():%Y-%m-%d}")
    expect(bob.locator("ol.rows")).not_to_contain_text("never validated")
    bob.goto(f"{live_daphne}/knowledge/{STALE}/")
    expect(bob.locator("p.stale")).to_contain_text("Last validated")
    bob.screenshot(path=SCREENSHOTS / f"knowledge-stale-{name}.png", full_page=True)
    bob.get_by_role("button", name="Mark validated").click()
    expect(bob.get_by_role("status")).to_contain_text(f"{STALE} marked validated today.")
    expect(bob.locator("p.stale")).to_have_count(0)
    expect(bob.locator(".fields")).to_contain_text("0 days ago")
    bob.screenshot(path=SCREENSHOTS / f"knowledge-validated-{name}.png", full_page=True)
    assert KnowledgeDocument.objects.get(doc_id=STALE).last_validated_at is not None

    alice = browser.new_context(viewport={"width": width, "height": height}).new_page()
    _log_in(alice, live_daphne, "alice", f"/knowledge/{STALE}/")
    expect(alice.get_by_role("heading", level=1)).to_contain_text(STALE)
    expect(alice.get_by_role("button", name="Mark validated")).to_have_count(0)
