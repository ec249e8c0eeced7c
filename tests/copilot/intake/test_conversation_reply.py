"""conversation_reply sends reports and their follow-ups to intake, questions to the agent."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from copilot.events import Event, ToolResultEvent
from copilot.services import conversation_create
from tests.copilot.conftest import ask
from tests.copilot.intake.conftest import error_dialog_png

pytestmark = pytest.mark.usefixtures("payments_desk")


def tools(events: list[Event]) -> list[str]:
    return [e.name for e in events if isinstance(e, ToolResultEvent)]


def test_a_report_goes_to_intake_and_a_question_to_the_agent(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    report = ask(conversation, alice, "Checkout API returns 502 after the 14:00 deploy")
    assert tools(report) == ["incident_intake"]
    question = ask(conversation, alice, "How do I fix HTTP 403 errors in PayU?")
    assert "incident_intake" not in tools(question)
    assert tools(question)  # the agent called its own tools
    follow_up = ask(conversation, alice, "what did we decide?")
    assert tools(follow_up) == ["incident_intake"]


def test_a_screenshot_alone_is_a_report(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    events = ask(conversation, alice, "", image=error_dialog_png())
    assert tools(events) == ["incident_intake"]
    data = next(e for e in events if isinstance(e, ToolResultEvent)).data
    assert "502" in data["incident"]["title"]
