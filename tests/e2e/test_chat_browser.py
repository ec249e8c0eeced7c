"""A new user in Chromium: logs in, asks, watches the answer stream, follows a
citation, gives a thumbs-down, and finds the conversation again after a reload."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from copilot.models import Conversation, Message
from incidentdesk.demo import demo_load
from tests.e2e.conftest import SCREENSHOTS
from tests.factories import UserFactory

pytestmark = pytest.mark.e2e
QUESTION = "How do I fix HTTP 403 errors in PayU?"

# Records, in order, every status line and the first streamed text, so the
# test sees the status line before the answer even when both come quickly.
RECORDER = """
() => {
  window.__seen = [];
  const status = document.getElementById("status");
  new MutationObserver(() => {
    if (status.textContent) window.__seen.push("status:" + status.textContent);
  }).observe(status, {childList: true, characterData: true, subtree: true});
  new MutationObserver(() => {
    const body = document.querySelector(".answer.is-streaming .answer-body");
    if (body && body.textContent && !window.__seen.includes("tokens")) window.__seen.push("tokens");
  }).observe(document.getElementById("thread"),
             {childList: true, characterData: true, subtree: true});
}
"""


@pytest.fixture
def carol(transactional_db: None) -> User:
    """carol joined the on-call rota today: a brand-new account."""
    demo_load()
    return UserFactory(username="carol")


def _log_in(page: Any, base: str) -> None:
    page.goto(f"{base}/")
    assert "/accounts/login/" in page.url
    page.screenshot(path=SCREENSHOTS / "login.png")
    page.get_by_label("Username or email").fill("carol")
    page.get_by_label("Password").fill("correct horse battery")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{base}/")


def _ask(page: Any, text: str) -> Any:
    """Ask in the composer; the finished (server-rendered) answer."""
    from playwright.sync_api import expect

    count = page.locator(".answer-body.markdown").count()
    page.get_by_label("Your question").fill(text)
    page.keyboard.press("Enter")
    expect(page.locator(".answer-body.markdown")).to_have_count(count + 1, timeout=30_000)
    return page.locator(".answer-body.markdown").last


def test_carol_asks_follows_a_citation_gives_feedback_and_finds_it_again(
    live_daphne: str, browser: Any, carol: User
) -> None:
    from playwright.sync_api import expect

    page = browser.new_page(viewport={"width": 1280, "height": 860})
    _log_in(page, live_daphne)
    page.evaluate(RECORDER)
    first = _ask(page, QUESTION)
    seen = [s for s in page.evaluate("window.__seen") if s != "status:Sending…"]
    assert seen[0] == "status:Analyzing your request... please hold on.", seen
    assert "tokens" in seen and seen.index("tokens") > 0, seen  # status line, then the stream
    expect(first.locator("a.ref-document").first).to_be_visible()
    expect(page.locator(".citations .cite-document").first).to_be_visible()

    # The runbook answer cites documents; asking about past incidents cites incidents.
    answer = _ask(page, "Have we seen HTTP 403 errors in PayU Core before?")
    expect(answer).to_contain_text("INC-")
    expect(page.locator(".citations").last.locator(".cite-incident").first).to_be_visible()
    page.locator(".steps").last.evaluate("d => d.open = true")
    page.screenshot(path=SCREENSHOTS / "chat-answer.png", full_page=True)

    cited = answer.locator("a.ref-incident").first
    incident_id = cited.inner_text()
    cited.click()
    expect(page.locator("h1")).to_contain_text(incident_id)
    expect(page.get_by_role("heading", name="Similar incidents")).to_be_visible()
    page.screenshot(path=SCREENSHOTS / "incident.png", full_page=True)
    page.go_back()

    page.get_by_role("button", name="Not helpful").last.click()
    expect(page.get_by_role("button", name="Not helpful").last).to_have_attribute(
        "aria-pressed", "true"
    )
    page.get_by_label("Comment on this answer").last.fill("Name the gateway pool first.")
    page.get_by_role("button", name="Save comment").last.click()
    expect(page.locator(".feedback-state").last).to_have_text("Thanks for the feedback.")

    page.reload()
    conversation = Conversation.objects.get(owner=carol)
    assert conversation.title
    expect(page.locator("#conversations .conversation-title").first).to_have_text(
        conversation.title
    )
    expect(page.locator(".answer-body.markdown a.ref-incident").first).to_be_visible()
    expect(page.get_by_role("button", name="Not helpful").last).to_have_attribute(
        "aria-pressed", "true"
    )
    page.screenshot(path=SCREENSHOTS / "chat-after-reload.png")

    answers = Message.objects.filter(conversation=conversation, role="assistant", is_complete=True)
    disliked = answers.get(feedback="down")
    assert disliked.feedback_comment == "Name the gateway pool first."
    assert incident_id in disliked.citations

    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=SCREENSHOTS / "chat-phone.png")
    page.close()
