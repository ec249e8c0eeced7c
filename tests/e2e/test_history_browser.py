"""The history sidebar in Chromium: "+ New chat" saves nothing, a new chat has its ⋯ menu
at once, search narrows the list to her own conversations, and delete asks first and can
be undone; at phone width the same from the history drawer."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from copilot.models import Conversation
from incidentdesk.demo import demo_load
from tests.e2e.conftest import SCREENSHOTS
from tests.factories import MessageFactory, UserFactory

pytestmark = pytest.mark.e2e
FIRST = "How do I fix HTTP 403 errors in PayU?"
SECOND = "Known issues with settlement reports"


@pytest.fixture
def grace(transactional_db: None) -> User:
    """grace keeps many conversations and tidies them; mallory has her own about settlement."""
    demo_load()
    mallory = UserFactory(username="mallory")
    theirs = Conversation.objects.create(owner=mallory, title="Mallory settlement notes")
    MessageFactory(conversation=theirs, role="user", content="settlement reports again")
    return UserFactory(username="grace")


def _log_in(page: Any, base: str) -> None:
    page.goto(f"{base}/")
    page.get_by_label("Username or email").fill("grace")
    page.get_by_label("Password").fill("correct horse battery")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{base}/")


def _ask(page: Any, text: str) -> None:
    from playwright.sync_api import expect

    count = page.locator(".answer-body.markdown").count()
    page.get_by_label("Your question").fill(text)
    page.keyboard.press("Enter")
    expect(page.locator(".answer-body.markdown")).to_have_count(count + 1, timeout=30_000)


def _open_menu(page: Any, conversation: Conversation) -> Any:
    entry = page.locator(f'#conversations [data-id="{conversation.pk}"]')
    if entry.locator("details").get_attribute("open") is None:  # a click closes an open one
        entry.locator("summary").click()
    return entry


def test_grace_searches_deletes_with_confirmation_and_undoes(
    live_daphne: str, browser: Any, grace: User
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 860})
    _log_in(page, live_daphne)
    page.get_by_role("link", name="New chat").click()
    page.wait_for_url(f"{live_daphne}/")
    assert not Conversation.objects.filter(owner=grace).exists()

    _ask(page, FIRST)
    first = Conversation.objects.get(owner=grace)
    assert 2 <= len(first.title.split()) <= 4, first.title  # a key phrase, not the question
    entry = _open_menu(page, first)  # no reload: the menu came with the new entry
    expect(entry.get_by_role("button", name="Delete conversation")).to_be_visible()
    expect(entry.get_by_role("button", name="Rename")).to_be_visible()
    entry.locator("summary").click()

    page.get_by_role("link", name="New chat").click()
    page.wait_for_url(f"{live_daphne}/")
    expect(page.locator("#conversations .conversation")).to_have_count(1)  # nothing empty added
    _ask(page, SECOND)
    second = Conversation.objects.filter(owner=grace).exclude(pk=first.pk).get()
    expect(page.locator("#conversations .conversation")).to_have_count(2)

    search = page.get_by_label("Search conversations")
    search.fill("settlem")
    expect(page.locator("#conversations .conversation")).to_have_count(1)
    expect(page.locator(f'#conversations [data-id="{second.pk}"]')).to_be_visible()
    expect(page.locator("#conversations")).not_to_contain_text("Mallory")
    page.screenshot(path=SCREENSHOTS / "history-search.png")
    search.fill("gateway pool nothing")
    expect(page.locator("#conversations")).to_contain_text("No conversation matches")
    search.fill("")
    expect(page.locator("#conversations .conversation")).to_have_count(2)

    # Delete the first: asked first, Cancel keeps it, Delete hides it, Undo restores it.
    _open_menu(page, first).get_by_role("button", name="Delete conversation").click()
    dialog = page.get_by_role("dialog", name="Delete this conversation?")
    expect(dialog).to_be_visible()
    page.screenshot(path=SCREENSHOTS / "history-delete-confirm.png")
    dialog.get_by_role("button", name="Cancel").click()
    expect(dialog).to_be_hidden()
    first.refresh_from_db()
    assert first.deleted_at is None

    _open_menu(page, first).get_by_role("button", name="Delete conversation").click()
    dialog.get_by_role("button", name="Delete").click()
    page.wait_for_url(f"**/conversations/{second.pk}/?deleted={first.pk}")
    expect(page.locator("#undo-banner")).to_contain_text("Deleted “")
    expect(page.locator(f'#conversations [data-id="{first.pk}"]')).to_have_count(0)
    first.refresh_from_db()
    assert first.deleted_at is not None
    page.screenshot(path=SCREENSHOTS / "history-deleted-undo.png")

    page.locator("#undo-banner").get_by_role("button", name="Undo").click()
    page.wait_for_url(f"**/conversations/{first.pk}/")
    expect(page.locator(f'#conversations [data-id="{first.pk}"]')).to_be_visible()
    expect(page.locator(".answer-body.markdown")).to_have_count(1)
    first.refresh_from_db()
    assert first.deleted_at is None

    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=SCREENSHOTS / "history-phone.png")
    page.close()


def test_on_a_phone_grace_finds_searches_deletes_and_undoes_in_the_drawer(
    live_daphne: str, browser: Any, grace: User
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 390, "height": 844})
    _log_in(page, live_daphne)
    _ask(page, FIRST)
    _ask(page, SECOND)
    conversation = Conversation.objects.get(owner=grace)
    assert 2 <= len(conversation.title.split()) <= 4, conversation.title
    drawer = page.get_by_role("complementary", name="Conversations")
    page.get_by_role("button", name="History").click()
    entry = page.locator(f'#conversations [data-id="{conversation.pk}"]')
    expect(entry.locator(".conversation-title")).to_have_text(conversation.title)
    expect(entry).to_be_in_viewport(ratio=1)

    drawer.get_by_label("Search conversations").fill("settlem")
    expect(page.locator("#conversations .conversation")).to_have_count(1)
    expect(page.locator("#conversations")).not_to_contain_text("Mallory")
    page.screenshot(path=SCREENSHOTS / "history-search-phone.png")
    drawer.get_by_label("Search conversations").fill("gateway pool nothing")
    expect(page.locator("#conversations")).to_contain_text("No conversation matches")
    drawer.get_by_label("Search conversations").fill("")

    _open_menu(page, conversation).get_by_role("button", name="Delete conversation").click()
    dialog = page.get_by_role("dialog", name="Delete this conversation?")
    expect(dialog.get_by_role("button", name="Delete")).to_be_in_viewport(ratio=1)
    page.screenshot(path=SCREENSHOTS / "history-delete-confirm-phone.png")
    dialog.get_by_role("button", name="Delete").click()
    page.wait_for_url(f"**/?deleted={conversation.pk}")
    undo = page.locator("#undo-banner").get_by_role("button", name="Undo")
    expect(undo).to_be_in_viewport(ratio=1)
    conversation.refresh_from_db()
    assert conversation.deleted_at is not None
    page.screenshot(path=SCREENSHOTS / "history-deleted-undo-phone.png")
    undo.click()
    page.wait_for_url(f"**/conversations/{conversation.pk}/")
    expect(page.locator(".answer-body.markdown")).to_have_count(2)
    conversation.refresh_from_db()
    assert conversation.deleted_at is None
    page.close()
