"""In Chromium: a streaming answer is drawn as Markdown before `done` (markdown.js),
tables included, model text in it stays inert, and offline answers arrive paced, a few words at a
time (OFFLINE_STREAM_PACE_MS), at desktop and phone width."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from copilot.models import AgentRun, Conversation, Message
from copilot.services import conversation_create
from incidentdesk.demo import demo_load
from tests.e2e.conftest import SCREENSHOTS
from tests.e2e.test_chat_browser import _log_in, _publish
from tests.factories import UserFactory

pytestmark = pytest.mark.e2e
SIZES = [(1280, 860, "desktop"), (390, 844, "phone")]
FORMATTED = [
    "The **gateway pool** key ",
    "was stale.\n\n1. Drain `gw-pool-b` first\n",
    "2. Rotate the key\n   - then watch 403s\n\n",
    "Seen before in INC\u20132025\u201308\u201324\u2013001; ",
    "see [the runbook](/knowledge/KB-RB-001/).",
]
TABLE_HEAD = "Seen before:\n| Incident | Cause | Fix |\n"
TABLE_REST = [
    "|---|:--|--:|\n",
    "| INC\u20132025\u201308\u201324\u2013001 | **stale key** in `gw-pool-b` ",
    "| [rotate](/knowledge/KB-RB-001/) |\n",
    '| INC-2025-09-01-002 | <img src=x onerror="window.__xss=6"> | *drain* \\| retry |\n',
    "| INC-2025-10-01-003 | half a row",  # still streaming: its last cell has not come
]
PAYLOAD = [
    '\n\n<img src=x onerror="window.__xss=1"> <script>window.__xss=2</script> ',
    "[click me](javascript:window.__xss=3) [elsewhere](//evil.example/x) ",
    "[slash](/\\evil.example) [data](data:text/html,<b>x</b>) ",
    '**<svg onload="window.__xss=4">** `<iframe src="javascript:window.__xss=5">`',
]
# How far the document reaches past the viewport's right edge, in CSS pixels.
OVERFLOW = "document.documentElement.scrollWidth - document.documentElement.clientWidth"
# Counts, while the answer is still streaming, how often its text grew and
# whether formatting (bold, list items) was on screen before `done`.
WATCHER = """
() => {
  window.__grew = 0; window.__formatted = false;
  let last = 0;
  new MutationObserver(() => {
    const body = document.querySelector(".answer.is-streaming .answer-body");
    if (!body) return;
    const length = body.textContent.length;
    if (length > last) window.__grew += 1;
    last = length;
    if (body.querySelector("strong, li")) window.__formatted = true;
  }).observe(document.getElementById("thread"),
             {childList: true, characterData: true, subtree: true});
}
"""


@pytest.fixture
def daphne_env() -> dict[str, str]:
    """This module watches answers arrive: daphne paces the offline engine."""
    return {"OFFLINE_STREAM_PACE_MS": "40"}


@pytest.fixture
def carol(transactional_db: None) -> User:
    return UserFactory(username="carol")


def _streaming_conversation(owner: User) -> tuple[Conversation, Message]:
    """An answer still being written: the page joins its stream."""
    conversation = conversation_create(owner=owner, title="Gateway 403s")
    question = Message.objects.create(conversation=conversation, role="user", content="Why 403?")
    run = AgentRun.objects.create(conversation=conversation, model="offline", question=question)
    partial = Message.objects.create(
        conversation=conversation, run=run, role="assistant", content="", is_complete=False
    )
    return conversation, partial


def _open(page: Any, base: str, conversation: Conversation, partial: Message) -> Any:
    _log_in(page, base)
    with page.expect_response(f"**/messages/{partial.pk}/answer/"):  # joined, then caught up
        page.goto(f"{base}/conversations/{conversation.pk}/")
    return page.locator(".answer.is-streaming .answer-body")


@pytest.mark.parametrize(("width", "height", "name"), SIZES)
def test_a_streaming_answer_is_formatted_before_done(
    live_daphne: str, browser: Any, carol: User, width: int, height: int, name: str
) -> None:
    from playwright.sync_api import expect

    conversation, partial = _streaming_conversation(carol)
    page = browser.new_page(viewport={"width": width, "height": height})
    body = _open(page, live_daphne, conversation, partial)
    _publish(conversation.pk, *({"type": "token", "text": text} for text in FORMATTED))

    expect(body.locator("p strong")).to_have_text("gateway pool")
    expect(body.locator("ol > li")).to_have_count(2)
    expect(body.locator("ol > li code")).to_have_text("gw-pool-b")
    expect(body.locator("ol > li ul > li")).to_have_text("then watch 403s")
    incident = body.locator("a.ref-incident")
    expect(incident).to_have_text("INC-2025-08-24-001")
    expect(incident).to_have_attribute("href", "/incidents/INC-2025-08-24-001/")
    expect(body.get_by_role("link", name="the runbook")).to_have_attribute(
        "href", "/knowledge/KB-RB-001/"
    )
    assert "**" not in body.inner_text()
    expect(page.locator(".answer-body.markdown")).to_have_count(0)  # not done yet
    page.screenshot(path=SCREENSHOTS / f"chat-streaming-markdown-{name}.png")
    page.close()


@pytest.mark.parametrize(("width", "height", "name"), SIZES)
def test_a_streaming_table_is_drawn_with_formatted_cells_and_kept_when_done(
    live_daphne: str, browser: Any, carol: User, width: int, height: int, name: str
) -> None:
    from playwright.sync_api import expect

    conversation, partial = _streaming_conversation(carol)
    page = browser.new_page(viewport={"width": width, "height": height})
    body = _open(page, live_daphne, conversation, partial)
    _publish(conversation.pk, {"type": "token", "text": TABLE_HEAD})
    expect(body).to_contain_text("| Incident | Cause | Fix |")  # a table only once the
    assert body.locator("table").count() == 0  # delimiter row says so
    _publish(conversation.pk, *({"type": "token", "text": text} for text in TABLE_REST))

    table = body.locator("table")
    expect(table.locator("thead th")).to_have_text(["Incident", "Cause", "Fix"])
    rows = table.locator("tbody tr")
    expect(rows).to_have_count(3)
    first = rows.nth(0).locator("td")
    expect(first.nth(0).locator("a.ref-incident")).to_have_attribute(
        "href", "/incidents/INC-2025-08-24-001/"
    )
    expect(first.nth(1).locator("strong")).to_have_text("stale key")
    expect(first.nth(1).locator("code")).to_have_text("gw-pool-b")
    expect(first.nth(2).get_by_role("link", name="rotate")).to_have_attribute(
        "href", "/knowledge/KB-RB-001/"
    )
    second = rows.nth(1).locator("td")
    expect(second.nth(1)).to_have_text('<img src=x onerror="window.__xss=6">')  # text, inert
    expect(second.nth(2)).to_have_text("drain | retry")  # an escaped pipe is not a column
    expect(second.nth(2).locator("em")).to_have_text("drain")
    expect(rows.nth(2).locator("td")).to_have_text(["INC-2025-10-01-003", "half a row", ""])
    expect(body.locator("p").first).to_have_text("Seen before:")
    assert body.locator("img").count() == 0
    assert page.evaluate(OVERFLOW) == 0  # a wide table scrolls inside the answer
    page.screenshot(path=SCREENSHOTS / f"chat-streaming-table-{name}.png")

    partial.content = TABLE_HEAD + "".join(TABLE_REST) + " |\n\nRotate first."
    partial.is_complete = True
    partial.save()
    AgentRun.objects.filter(pk=partial.run_id).update(status=AgentRun.Status.DONE)
    done = {"type": "done", "conversation_id": conversation.pk, "message_id": partial.pk,
            "run_id": partial.run_id, "content": partial.content, "citations": [],
            "dropped_citations": [], "steps": []}  # fmt: skip
    _publish(conversation.pk, done)
    final = page.locator(".answer-body.markdown")
    expect(final.locator("tbody tr")).to_have_count(3)  # the server draws the same table
    expect(final.locator("thead th")).to_have_text(["Incident", "Cause", "Fix"])
    expect(final.locator("td strong")).to_have_text("stale key")
    assert page.evaluate("window.__xss") is None
    page.close()


def test_markup_and_script_links_in_streamed_text_stay_inert(
    live_daphne: str, browser: Any, carol: User
) -> None:
    from playwright.sync_api import expect

    conversation, partial = _streaming_conversation(carol)
    page = browser.new_page(viewport={"width": 1280, "height": 860})
    body = _open(page, live_daphne, conversation, partial)
    _publish(conversation.pk, *({"type": "token", "text": text} for text in PAYLOAD))

    expect(body).to_contain_text('<img src=x onerror="window.__xss=1">')
    expect(body.locator("strong")).to_have_text('<svg onload="window.__xss=4">')
    expect(body.locator("code")).to_contain_text("<iframe")
    assert body.locator("img, script, svg, iframe, b").count() == 0
    assert body.locator("a").count() == 0  # none of them points into this site
    for label in ("click me", "elsewhere", "slash", "data"):
        expect(body).to_contain_text(label)
    page.wait_for_timeout(300)  # an onerror or onload would have run by now
    assert page.evaluate("window.__xss") is None
    page.screenshot(path=SCREENSHOTS / "chat-streaming-xss-inert.png")
    page.close()


@pytest.mark.parametrize(("width", "height", "name"), SIZES)
def test_an_offline_answer_arrives_paced_and_formatted_before_done(
    live_daphne: str, browser: Any, carol: User, width: int, height: int, name: str
) -> None:
    from playwright.sync_api import expect

    demo_load()
    page = browser.new_page(viewport={"width": width, "height": height})
    _log_in(page, live_daphne)
    page.evaluate(WATCHER)
    page.get_by_label("Your question").fill("Have we seen HTTP 403 errors in PayU Core before?")
    page.keyboard.press("Enter")
    expect(page.locator(".answer.is-streaming .answer-body li").first).to_be_visible(timeout=30_000)
    page.screenshot(path=SCREENSHOTS / f"chat-paced-streaming-{name}.png")
    expect(page.locator(".answer-body.markdown")).to_have_count(1, timeout=30_000)
    assert page.evaluate("window.__formatted")
    assert page.evaluate("window.__grew") >= 5  # seen arriving, not in one or two frames
    page.close()
