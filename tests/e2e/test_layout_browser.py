"""The top bar in Chromium: at phone width every page fits the screen (nothing scrolls
sideways) and every link of the main navigation, Log out included, is reachable from the
"Menu" button; at desktop width they are all in the bar itself."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from incidentdesk.demo import demo_load
from tests.e2e.conftest import SCREENSHOTS
from tests.factories import UserFactory

pytestmark = pytest.mark.e2e
# Staff see the most links: Review and Admin come on top of what everyone has.
PAGES = ["/", "/incidents/", "/knowledge/", "/tickets/", "/incidents/review/"]
LINKS = ["Chat", "Incidents", "Knowledge", "Tickets", "Review", "Admin"]
# How far the document reaches past the viewport's right edge, in CSS pixels.
OVERFLOW = "document.documentElement.scrollWidth - document.documentElement.clientWidth"


@pytest.fixture
def bob(transactional_db: None) -> User:
    """bob curates (staff): his top bar has every link there is."""
    demo_load()
    return UserFactory(username="bob", is_staff=True, is_superuser=True)


def _log_in(page: Any, base: str) -> None:
    page.goto(f"{base}/")
    page.get_by_label("Username or email").fill("bob")
    page.get_by_label("Password").fill("correct horse battery")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{base}/")


def _items(page: Any) -> list[Any]:
    nav = page.get_by_role("navigation", name="Main")
    return [
        *(nav.get_by_role("link", name=name, exact=True) for name in LINKS),
        nav.get_by_role("button", name="Dark theme"),
        nav.get_by_role("button", name="Log out"),
    ]


def test_at_phone_width_nothing_scrolls_sideways_and_the_menu_holds_every_link(
    live_daphne: str, browser: Any, bob: User
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 390, "height": 844})
    _log_in(page, live_daphne)
    menu = page.get_by_role("button", name="Menu")
    for path in PAGES:
        page.goto(f"{live_daphne}{path}")
        assert page.evaluate(OVERFLOW) == 0, path
        expect(menu).to_have_attribute("aria-expanded", "false")
        menu.click()
        expect(menu).to_have_attribute("aria-expanded", "true")
        for item in _items(page):
            expect(item).to_be_in_viewport(ratio=1)
        assert page.evaluate(OVERFLOW) == 0, path  # the open menu does not widen the page
        if path == "/incidents/":
            page.screenshot(path=SCREENSHOTS / "nav-menu-open-phone.png")
        page.keyboard.press("Escape")
        expect(page.get_by_role("navigation", name="Main")).to_be_hidden()
        expect(menu).to_be_focused()

    menu.click()
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Knowledge").click()
    page.wait_for_url(f"{live_daphne}/knowledge/")
    page.screenshot(path=SCREENSHOTS / "nav-menu-closed-phone.png")
    menu.click()
    page.get_by_role("button", name="Log out").click()
    expect(page.get_by_role("button", name="Menu")).to_have_count(0)  # signed out
    page.close()


# 768 and 800: tablets, just wider than the phone layout (760 px and less), where a staff
# user's links fill the bar and the incidents filters used to reach past the screen.
WIDTHS = [(1280, "desktop"), (800, "tablet"), (768, "tablet-portrait")]
# Links the bar's nav hides by scrolling: clipped, though the page itself does not scroll.
NAV_OVERFLOW = "(n => n.scrollWidth - n.clientWidth)(document.getElementById('main-nav'))"


@pytest.mark.parametrize(("width", "name"), WIDTHS)
def test_at_desktop_width_every_link_is_in_the_bar(
    live_daphne: str, browser: Any, bob: User, width: int, name: str
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": width, "height": 860})
    _log_in(page, live_daphne)
    for path in PAGES:
        page.goto(f"{live_daphne}{path}")
        expect(page.get_by_role("button", name="Menu")).to_be_hidden()
        for item in _items(page):
            expect(item).to_be_in_viewport(ratio=1)
        assert page.evaluate(NAV_OVERFLOW) == 0, path
        assert page.evaluate(OVERFLOW) == 0, path
        if path == "/incidents/":  # the widest filter bar
            page.screenshot(path=SCREENSHOTS / f"incidents-filters-{name}.png")
    page.screenshot(path=SCREENSHOTS / f"nav-{name}.png")
    page.close()
