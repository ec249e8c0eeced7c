"""A new user in Chromium: logs in, asks, watches the answer stream, follows a
citation, gives a thumbs-down, and finds the conversation again after a reload."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest
from django.contrib.auth.models import User

from copilot.models import AgentRun, Conversation, Message
from copilot.services import conversation_create
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
    page.screenshot(path=SCREENSHOTS / "chat-answer.png")

    cited = answer.locator("a.ref-incident").first
    incident_id = cited.inner_text()
    cited.click()
    expect(page.locator("h1")).to_contain_text(incident_id)
    expect(page.get_by_role("heading", name="Similar incidents")).to_be_visible()
    page.screenshot(path=SCREENSHOTS / "incident.png", full_page=True)
    page.go_back()

    # The search read "PayU Core" from the question: drop that chip and re-run.
    page.get_by_role("button", name="Remove the App filter PayU Core").click()
    page.get_by_role("button", name="Re-run").click()
    expect(page.locator(".question .bubble").last).to_have_text(
        "Have we seen HTTP 403 errors before?"
    )
    expect(page.locator(".answer-body.markdown")).to_have_count(3, timeout=30_000)

    # Thumbs-down on the answer whose citation was followed (the second).
    feedback = page.locator("form.feedback").nth(1)
    feedback.get_by_role("button", name="Not helpful").click()
    expect(feedback.get_by_role("button", name="Not helpful")).to_have_attribute(
        "aria-pressed", "true"
    )
    feedback.get_by_label("Comment on this answer").fill("Name the gateway pool first.")
    feedback.get_by_role("button", name="Save comment").click()
    expect(feedback.locator(".feedback-state")).to_have_text("Thanks for the feedback.")

    page.reload()
    conversation = Conversation.objects.get(owner=carol)
    assert conversation.title
    expect(page.locator("#conversations .conversation-title").first).to_have_text(
        conversation.title
    )
    expect(page.locator(".answer-body.markdown a.ref-incident").first).to_be_visible()
    expect(
        page.locator("form.feedback").nth(1).get_by_role("button", name="Not helpful")
    ).to_have_attribute("aria-pressed", "true")
    page.screenshot(path=SCREENSHOTS / "chat-after-reload.png")

    answers = Message.objects.filter(conversation=conversation, role="assistant", is_complete=True)
    disliked = answers.get(feedback="down")
    assert disliked.feedback_comment == "Name the gateway pool first."
    assert incident_id in disliked.citations

    page.set_viewport_size({"width": 390, "height": 844})
    page.screenshot(path=SCREENSHOTS / "chat-phone.png")
    page.close()


def _publish(conversation_id: int, *events: dict[str, Any]) -> None:
    """What the socket that runs an answer sends to its conversation's group.

    From a thread of its own: Playwright's sync API keeps an event loop on
    this one, and the channel layer needs a loop to run on.
    """
    from channels_redis.core import RedisChannelLayer
    from django.conf import settings

    async def send() -> None:
        layer = RedisChannelLayer(**settings.CHANNEL_LAYERS["default"]["CONFIG"])
        for event in events:
            message = {"type": "chat.event", "event": event, "origin": "another-tab"}
            await layer.group_send(f"conversation-{conversation_id}", message)
        await layer.close_pools()

    worker = threading.Thread(target=lambda: asyncio.run(send()))
    worker.start()
    worker.join(timeout=30)


def test_a_reload_mid_answer_shows_the_partial_text_and_follows_the_rest(
    live_daphne: str, browser: Any, carol: User
) -> None:
    from playwright.sync_api import expect

    conversation = conversation_create(owner=carol, title="Gateway 403s")
    question = Message.objects.create(conversation=conversation, role="user", content="Why 403?")
    run = AgentRun.objects.create(conversation=conversation, model="offline", question=question)
    partial = Message.objects.create(
        conversation=conversation, run=run, role="assistant", content="The key was ",
        is_complete=False,
    )  # fmt: skip
    page = browser.new_page(viewport={"width": 1280, "height": 860})
    _log_in(page, live_daphne)
    with page.expect_response(f"**/messages/{partial.pk}/answer/"):  # rejoined, then caught up
        page.goto(f"{live_daphne}/conversations/{conversation.pk}/")
    body = page.locator(".answer.is-streaming .answer-body")
    expect(body).to_have_text("The key was ")
    expect(page.locator("#status")).to_have_text("Still answering…")
    expect(page.get_by_role("button", name="Stop")).to_be_visible()

    _publish(conversation.pk, {"type": "status", "text": "Found 1 relevant incidents..."})
    expect(page.locator("#status")).to_have_text("Found 1 relevant incidents...")
    _publish(conversation.pk, {"type": "token", "text": "stale in **gw-pool-b**."})
    expect(body).to_have_text("The key was stale in gw-pool-b.")  # Markdown while it streams
    expect(body.locator("strong")).to_have_text("gw-pool-b")

    partial.content, partial.is_complete = "The key was stale in **gw-pool-b**.", True
    partial.save()
    run.status = AgentRun.Status.DONE
    run.save()
    done = {"type": "done", "conversation_id": conversation.pk, "message_id": partial.pk,
            "run_id": run.pk, "content": partial.content, "citations": [],
            "dropped_citations": [], "steps": []}  # fmt: skip
    _publish(conversation.pk, done)
    expect(page.locator(".answer-body.markdown strong")).to_have_text("gw-pool-b")
    expect(page.get_by_role("button", name="Stop")).to_be_hidden()
    page.screenshot(path=SCREENSHOTS / "chat-reattached.png")
    page.close()
