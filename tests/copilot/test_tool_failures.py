"""A tool that fails (a database error, a timeout, a backend down) is a result the
model reads, recorded on the trace; the answer goes on with what the other tools found.

The fault is real: the incident search runs a query that PostgreSQL cancels on
its statement timeout. Only which selector runs it is swapped in, by monkeypatch.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection

from copilot.chat_models.offline import OfflineChatModel
from copilot.chat_models.offline.reading import ToolOutcome, parse_records
from copilot.chat_models.offline.state import ConversationState
from copilot.chat_models.offline.writing import write_answer
from copilot.events import DoneEvent, Event, StatusEvent, ToolResultEvent
from copilot.models import AgentRun, Conversation, ToolCall
from copilot.replies import conversation_reply
from copilot.services import conversation_create
from copilot.tools import ToolContext, run_tool
from incidents import selectors as incident_selectors
from tests.copilot.openai_server import OpenAIServer, text_reply, tool_call_reply

pytestmark = pytest.mark.usefixtures("desk")
QUESTION = "Merchants get HTTP 403 after we rotated the API key"


def _timed_out_search(*args: Any, **kwargs: Any) -> Any:
    """What a slow database does to a search: PostgreSQL cancels the statement."""
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL statement_timeout = 20")
        cursor.execute("SELECT pg_sleep(2)")
    raise AssertionError("the statement should have been cancelled")


@pytest.fixture
def slow_database(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(incident_selectors, "incident_search_similar", _timed_out_search)


def ask(conversation: Conversation, text: str = QUESTION, **kwargs: Any) -> list[Event]:
    return list(
        conversation_reply(conversation=conversation, user=conversation.owner, text=text, **kwargs)
    )


@pytest.mark.usefixtures("slow_database")
def test_a_failing_tool_is_an_error_result_not_an_exception() -> None:
    result = run_tool("search_similar_incidents", '{"query": "403"}', ToolContext())
    assert result.error.startswith(
        "An error occurred while searching incidents: OperationalError: canceling statement"
    )
    assert result.text.startswith(result.error)
    # The savepoint undid the failed query: the connection still works.
    assert (
        incident_selectors.incident_get_by_public_id(incident_id="INC-2025-08-24-001") is not None
    )


@pytest.mark.usefixtures("slow_database")
def test_the_offline_answer_says_what_it_could_not_look_up(alice: User) -> None:
    conversation = conversation_create(owner=alice, title="Key rotation")
    events = ask(conversation, model=OfflineChatModel())
    result = next(e for e in events if isinstance(e, ToolResultEvent))
    assert result.name == "search_similar_incidents"
    assert result.error.startswith("An error occurred while searching incidents")
    statuses = [e.text for e in events if isinstance(e, StatusEvent)]
    assert "An error occurred while searching incidents" in statuses
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert done.content.startswith(
        "I could not run the search: An error occurred while searching incidents"
    )
    run = AgentRun.objects.get(pk=done.run_id)
    assert run.status == "done"
    traced = ToolCall.objects.get(run=run)
    assert traced.error == result.error
    tool_message = conversation.messages.get(role="tool")
    assert tool_message.content.startswith("An error occurred while searching incidents")


@pytest.mark.usefixtures("slow_database", "openai_settings")
def test_the_model_reads_the_error_and_answers_with_the_other_results(
    alice: User, openai_server: OpenAIServer
) -> None:
    conversation = conversation_create(owner=alice, title="Key rotation")
    openai_server.script(
        tool_call_reply(
            [
                ("search_similar_incidents", '{"query": "403 after key rotation"}'),
                ("search_knowledge", '{"query": "rotate PayU API keys"}'),
            ]
        ),
        text_reply("The incident search failed; KB-RB-001 covers key rotation."),
    )
    events = ask(conversation)
    done = events[-1]
    assert isinstance(done, DoneEvent), events[-1]
    assert done.citations == ["KB-RB-001"]
    sent_back = [m for m in openai_server.requests[1]["messages"] if m["role"] == "tool"]
    assert sent_back[0]["content"].startswith(
        "An error occurred while searching incidents: OperationalError"
    )
    assert "KB-RB-001" in sent_back[1]["content"]
    errors = list(ToolCall.objects.filter(run_id=done.run_id).values_list("name", "error"))
    assert errors[0][0] == "search_similar_incidents" and errors[0][1].startswith("An error")
    assert errors[1] == ("search_knowledge", "")


def test_offline_writing_answers_with_the_rest_after_a_failure() -> None:
    failed = ToolOutcome(
        "search_knowledge",
        "{}",
        "An error occurred while searching the knowledge base: ConnectionError: down\nTry again.",
    )
    found = run_tool("search_similar_incidents", '{"query": "HTTP 403 PayU"}', ToolContext())
    worked = ToolOutcome("search_similar_incidents", "{}", found.text, parse_records(found.text))
    answer = write_answer("403 in PayU?", [failed, worked], ConversationState())
    assert answer.startswith(
        "I could not finish every lookup: An error occurred while searching the knowledge "
        "base: ConnectionError: down\n\n"
    )
    assert "INC-2025-08-24-001" in answer


def step_lines(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    return [json.loads(r.getMessage()) for r in caplog.records if r.name == "copilot.steps"]


@pytest.mark.usefixtures("slow_database", "openai_settings")
def test_each_agent_step_is_one_json_line(
    alice: User, openai_server: OpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="copilot.steps")
    conversation = conversation_create(owner=alice, title="Key rotation")
    openai_server.script(
        tool_call_reply(
            [
                ("search_similar_incidents", '{"query": "403 after key rotation"}'),
                ("search_knowledge", '{"query": "rotate PayU API keys"}'),
                ("search_knowledge", '{"limit": "lots"}'),
            ]
        ),
        text_reply("KB-RB-001 covers key rotation."),
    )
    done = ask(conversation)[-1]
    assert isinstance(done, DoneEvent)
    lines = step_lines(caplog)
    assert [(line["step"], line["outcome"]) for line in lines] == [
        ("search_similar_incidents", "failed"),
        ("search_knowledge", "ok"),
        ("search_knowledge", "rejected"),
    ]
    assert all(line["run"] == done.run_id and isinstance(line["ms"], int) for line in lines)
    assert lines[0]["error"].startswith("An error occurred while searching incidents")
    assert lines[1]["count"] >= 1
