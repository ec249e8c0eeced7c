"""conversation_reply sends reports and their follow-ups to intake, questions to the agent."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from copilot.events import Event, ToolResultEvent
from copilot.replies import conversation_reply
from copilot.services import conversation_create
from tests.copilot.intake.conftest import error_dialog_png

pytestmark = pytest.mark.usefixtures("payments_desk")


def tools(events: list[Event]) -> list[str]:
    return [e.name for e in events if isinstance(e, ToolResultEvent)]


def test_a_report_goes_to_intake_and_a_question_to_the_agent(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    report = list(
        conversation_reply(
            conversation=conversation,
            user=alice,
            text="Checkout API returns 502 after the 14:00 deploy",
        )
    )
    assert tools(report) == ["incident_intake"]
    question = list(
        conversation_reply(
            conversation=conversation, user=alice, text="How do I fix HTTP 403 errors in PayU?"
        )
    )
    assert "incident_intake" not in tools(question)
    assert tools(question)  # the agent called its own tools
    follow_up = list(
        conversation_reply(conversation=conversation, user=alice, text="what did we decide?")
    )
    assert tools(follow_up) == ["incident_intake"]


def test_a_screenshot_alone_is_a_report(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    events = list(
        conversation_reply(conversation=conversation, user=alice, text="", image=error_dialog_png())
    )
    assert tools(events) == ["incident_intake"]
    data = next(e for e in events if isinstance(e, ToolResultEvent)).data
    assert "502" in data["incident"]["title"]
