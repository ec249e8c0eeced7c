"""The composer in Chromium keeps the typed question when sending fails (no connection,
or an `error` event from the server) and offers Retry, which then gets the answer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User

from incidentdesk.demo import demo_load
from tests.e2e.conftest import SCREENSHOTS
from tests.factories import UserFactory

pytestmark = pytest.mark.e2e
QUESTION = "How do I fix HTTP 403 errors in PayU?"

# The first socket the page opens goes to a closed port: a real connection failure.
FIRST_SOCKET_FAILS = """
(() => {
  const Real = window.WebSocket;
  let failures = 1;
  window.WebSocket = class extends Real {
    constructor(url, protocols) {
      super(failures-- > 0 ? "ws://127.0.0.1:9/" : url, protocols);
    }
  };
})();
"""


@pytest.fixture
def frank(transactional_db: None) -> User:
    """frank is on call on a flaky hotel wifi."""
    demo_load()
    return UserFactory(username="frank")


def _log_in(page: Any, base: str) -> None:
    page.goto(f"{base}/")
    page.get_by_label("Username or email").fill("frank")
    page.get_by_label("Password").fill("correct horse battery")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(f"{base}/")


def _send_fails_then_retry_answers(page: Any, screenshot: str) -> None:
    from playwright.sync_api import expect

    page.get_by_label("Your question").fill(QUESTION)
    page.keyboard.press("Enter")
    expect(page.locator("#status")).to_contain_text("Your question is kept; press Retry.")
    expect(page.get_by_label("Your question")).to_have_value(QUESTION)
    expect(page.get_by_role("button", name="Retry")).to_be_visible()
    page.screenshot(path=SCREENSHOTS / screenshot)
    page.get_by_role("button", name="Retry").click()
    expect(page.locator(".answer-body.markdown")).to_have_count(1, timeout=30_000)
    expect(page.get_by_label("Your question")).to_have_value("")
    expect(page.get_by_role("button", name="Retry")).to_be_hidden()
    expect(page.locator(".turn .bubble").last).to_have_text(QUESTION)


@pytest.mark.parametrize(("width", "height", "name"), [(1280, 860, "desktop"), (390, 844, "phone")])
def test_a_failed_connection_keeps_the_question_and_retry_sends_it(
    live_daphne: str, browser: Any, frank: User, width: int, height: int, name: str
) -> None:
    page = browser.new_page(viewport={"width": width, "height": height})
    _log_in(page, live_daphne)
    page.add_init_script(FIRST_SOCKET_FAILS)
    page.reload()
    _send_fails_then_retry_answers(page, f"composer-connection-failed-{name}.png")


@pytest.mark.parametrize(("width", "height", "name"), [(1280, 860, "desktop"), (390, 844, "phone")])
def test_a_server_error_event_keeps_the_question_and_retry_sends_it(
    live_daphne: str, browser: Any, frank: User, width: int, height: int, name: str
) -> None:
    page = browser.new_page(viewport={"width": width, "height": height})
    _log_in(page, live_daphne)
    asked: list[str] = []

    def first_question_fails(socket: Any) -> None:
        server = socket.connect_to_server()

        def relay(message: str) -> None:
            asked.append(message)
            if len(asked) > 1:
                server.send(message)
                return
            socket.send(json.dumps({"type": "status", "text": "Analyzing your request..."}))
            failure = {"type": "error", "code": "failed", "message": "Something went wrong."}
            socket.send(json.dumps(failure))

        socket.on_message(relay)

    page.route_web_socket("**/ws/conversations/**", first_question_fails)
    _send_fails_then_retry_answers(page, f"composer-server-error-{name}.png")
    assert [json.loads(m)["text"] for m in asked] == [QUESTION, QUESTION]
