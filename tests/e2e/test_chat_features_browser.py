"""The chat features people expect, in Chromium: copy (an answer, a code block),
regenerate, edit-and-resend the last question, a light/dark toggle that sticks, the
history as a drawer at phone width, status lines that stay, and a Stop that answers; on
a phone (touch) the same copy, sources, edit, regenerate and theme."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User

from copilot.models import AgentRun, Conversation, Message
from copilot.services import conversation_create
from tests.e2e.conftest import SCREENSHOTS
from tests.factories import UserFactory

pytestmark = pytest.mark.e2e
QUESTION = "How do I roll back the checkout deploy?"
COMMAND = "kubectl rollout undo deployment/checkout-api"
ANSWER = (
    f"Roll back the deploy (as in INC-2026-03-02-001):\n\n```\n{COMMAND}\n```\n\n"
    "Then watch the 5xx rate."
)
CITED = {
    "incident_id": "INC-2026-03-02-001",
    "title": "Checkout API 502s after a deploy",
    "root_cause": "A bad build of checkout-api <b>crashed</b> on start.",
}


@pytest.fixture
def grace(transactional_db: None) -> User:
    """grace is on call and copies commands out of answers."""
    return UserFactory(username="grace")


@pytest.fixture
def answered(grace: User) -> Conversation:
    """A stored conversation whose answer carries a code block."""
    conversation = conversation_create(owner=grace, title="Checkout rollback")
    question = Message.objects.create(conversation=conversation, role="user", content=QUESTION)
    run = AgentRun.objects.create(
        conversation=conversation, model="offline", question=question, status="done"
    )
    Message.objects.create(
        conversation=conversation, run=run, role="tool", tool_name="lookup_incident_by_id",
        tool_call_id="call-1", data={"results": [CITED]},
    )  # fmt: skip
    Message.objects.create(
        conversation=conversation, run=run, role="assistant", content=ANSWER, is_complete=True,
        citations=[CITED["incident_id"]],
    )  # fmt: skip
    return conversation


def _log_in(page: Any, base: str, next_path: str = "/") -> None:
    page.goto(f"{base}{next_path}")
    page.get_by_label("Username or email").fill("grace")
    page.get_by_label("Password").fill("correct horse battery")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{base}{next_path}")


def _clipboard(page: Any) -> str:
    return str(page.evaluate("navigator.clipboard.readText()"))


def test_copy_regenerate_edit_and_the_theme_toggle(
    live_daphne: str, browser: Any, answered: Conversation
) -> None:
    from playwright.sync_api import expect

    context = browser.new_context(viewport={"width": 1280, "height": 860})
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_daphne)
    page = context.new_page()
    _log_in(page, live_daphne, f"/conversations/{answered.pk}/")

    page.get_by_role("button", name="Copy the code").click()
    expect(page.get_by_role("button", name="Copy the code")).to_have_text("Copied")
    assert _clipboard(page) == COMMAND
    page.locator(".answer").get_by_role("button", name="Copy", exact=True).click()
    copied = _clipboard(page)
    assert copied.startswith("Roll back the deploy") and COMMAND in copied

    source = page.locator(".citations .source").first
    card = source.get_by_role("tooltip")
    expect(card).to_be_hidden()
    source.get_by_role("link", name=CITED["incident_id"]).hover()
    expect(card).to_be_visible()
    expect(card).to_contain_text(CITED["title"])
    expect(card).to_contain_text("<b>crashed</b>")  # shown as text, never as markup
    page.screenshot(path=SCREENSHOTS / "chat-sources-hover.png")
    page.mouse.move(0, 0)
    expect(card).to_be_hidden()
    source.get_by_role("button", name=f"About {CITED['incident_id']}").click()  # a tap
    expect(card).to_be_visible()

    page.locator(".turn .question").last.hover()
    page.get_by_role("button", name="Edit", exact=True).click()
    expect(page.get_by_label("Your question")).to_have_value(QUESTION)
    expect(page.get_by_label("Your question")).to_be_focused()
    page.get_by_label("Your question").fill(f"{QUESTION} Only the API.")
    page.keyboard.press("Enter")
    expect(page.locator(".answer-body.markdown")).to_have_count(2, timeout=60_000)
    expect(page.locator(".turn .bubble").last).to_have_text(f"{QUESTION} Only the API.")
    expect(page.get_by_text("Successfully signed in")).to_have_count(0)  # stale once asked

    page.locator(".answer").last.get_by_role("button", name="Regenerate").click()
    expect(page.locator(".answer-body.markdown")).to_have_count(3, timeout=60_000)
    expect(page.locator(".turn .bubble").last).to_have_text(f"{QUESTION} Only the API.")
    assert Message.objects.filter(conversation=answered, role="user").count() == 3

    toggle = page.get_by_role("button", name="Dark theme")
    toggle.click()
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    expect(toggle).to_have_attribute("aria-pressed", "true")
    page.reload()  # the choice sticks
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    page.screenshot(path=SCREENSHOTS / "chat-dark.png")
    page.get_by_role("button", name="Dark theme").click()
    expect(page.locator("html")).to_have_attribute("data-theme", "light")
    context.close()


def test_on_a_phone_copy_sources_edit_regenerate_and_the_theme_work_by_touch(
    live_daphne: str, browser: Any, answered: Conversation
) -> None:
    from playwright.sync_api import expect

    context = browser.new_context(
        viewport={"width": 390, "height": 844}, is_mobile=True, has_touch=True
    )
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_daphne)
    page = context.new_page()
    _log_in(page, live_daphne, f"/conversations/{answered.pk}/")

    page.get_by_role("button", name="Copy the code").tap()
    expect(page.get_by_role("button", name="Copy the code")).to_have_text("Copied")
    assert _clipboard(page) == COMMAND

    source = page.locator(".citations .source").first
    card = source.get_by_role("tooltip")
    source.get_by_role("button", name=f"About {CITED['incident_id']}").tap()
    expect(card).to_be_visible()
    expect(card).to_contain_text(CITED["title"])
    expect(card).to_be_in_viewport(ratio=1)  # the whole card on the screen
    page.screenshot(path=SCREENSHOTS / "chat-sources-tap-phone.png")

    edit = page.get_by_role("button", name="Edit", exact=True)
    expect(edit).to_be_visible()  # no hover on a touch screen: shown as is
    edit.tap()
    expect(page.get_by_label("Your question")).to_have_value(QUESTION)
    page.get_by_role("button", name="Send").tap()
    expect(page.locator(".answer-body.markdown")).to_have_count(2, timeout=60_000)
    page.locator(".answer").last.get_by_role("button", name="Regenerate").tap()
    expect(page.locator(".answer-body.markdown")).to_have_count(3, timeout=60_000)
    assert Message.objects.filter(conversation=answered, role="user").count() == 3

    page.get_by_role("button", name="Menu").tap()  # the toggle lives in the menu here
    page.get_by_role("button", name="Dark theme").tap()
    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    page.screenshot(path=SCREENSHOTS / "chat-dark-phone.png")
    context.close()


def test_at_phone_width_the_history_is_a_drawer(
    live_daphne: str, browser: Any, answered: Conversation
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 390, "height": 844})
    _log_in(page, live_daphne, f"/conversations/{answered.pk}/")
    history = page.get_by_role("complementary", name="Conversations")
    expect(history).to_be_hidden()
    expect(page.locator(".answer-body.markdown")).to_be_visible()
    page.screenshot(path=SCREENSHOTS / "chat-phone-drawer-closed.png")

    page.get_by_role("button", name="History").click()
    expect(history).to_be_visible()
    expect(history.get_by_role("link", name="Checkout rollback")).to_be_visible()
    expect(page.get_by_role("button", name="History")).to_have_attribute("aria-expanded", "true")
    expect(history).to_be_in_viewport(ratio=1)  # slid all the way in
    page.screenshot(path=SCREENSHOTS / "chat-phone-drawer-open.png")
    page.keyboard.press("Escape")
    expect(history).to_be_hidden()


@pytest.mark.parametrize(("width", "height", "name"), [(1280, 860, "desktop"), (390, 844, "phone")])
def test_status_lines_stay_and_stop_always_answers(
    live_daphne: str, browser: Any, grace: User, width: int, height: int, name: str
) -> None:
    """The socket is scripted (Playwright's WebSocket route): two status lines, then
    silence; Stop is pressed while the server has no running answer to cancel."""
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": width, "height": height})
    _log_in(page, live_daphne)
    seen: list[str] = []
    sockets: list[Any] = []

    def scripted(socket: Any) -> None:
        sockets.append(socket)

        def reply(message: str) -> None:
            seen.append(json.loads(message)["text"])
            for text in ["Searching for Similar Incidents...", "Found 3 relevant incidents..."]:
                socket.send(json.dumps({"type": "status", "text": text}))

        socket.on_message(reply)

    page.route_web_socket("**/ws/conversations/**", scripted)
    page.get_by_label("Your question").fill("Why is checkout failing?")
    page.keyboard.press("Enter")
    expect(page.locator("#status")).to_have_text("Found 3 relevant incidents...")
    expect(page.locator("#status")).to_have_text("Found 3 relevant incidents...")  # it stays
    stop = page.get_by_role("button", name="Stop")
    stop.click()
    expect(page.locator("#status")).to_contain_text("Stopping…")
    expect(page.locator("#status")).to_have_text(
        "Stopping… the answer is finishing its last step."
    )  # the server had nothing running: said so, not silence
    sockets[0].send(json.dumps({"type": "error", "code": "cancelled", "message": "Stopped."}))
    expect(page.locator("#status")).to_have_text("Stopped.")
    expect(page.locator(".answer").last).to_contain_text("Stopped.")
    expect(stop).to_be_hidden()
    assert seen == ["Why is checkout failing?"]
    page.screenshot(path=SCREENSHOTS / f"chat-stop-acknowledged-{name}.png")
