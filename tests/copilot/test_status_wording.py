"""The status lines of every tool, in DESIGN's wording, event by event.

A local OpenAI-protocol server scripts which tool the model calls, so each
sequence is exactly one tool's; the tools run on the real database.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from pytest_django.fixtures import Settings

from copilot.chat_models.offline import OfflineChatModel
from copilot.events import Event, StatusEvent, TitleEvent, ToolResultEvent
from copilot.services import conversation_create
from tests.copilot.conftest import ask
from tests.copilot.log_servers import Line, LogServer
from tests.copilot.openai_server import OpenAIServer, text_reply, tool_call_reply

pytestmark = pytest.mark.django_db
ANALYZING = "Analyzing your request... please hold on."
WRAPPING_UP = "Almost done, wrapping up the details"


def statuses(events: list[Event]) -> list[str]:
    return [e.text for e in events if isinstance(e, StatusEvent)]


def ask_with_tool(alice: User, server: OpenAIServer, name: str, arguments: str) -> list[Event]:
    conversation = conversation_create(owner=alice, title="Titled already")
    server.script(tool_call_reply([(name, arguments)]), text_reply("Done."))
    return ask(conversation, alice, "A question")


@pytest.mark.usefixtures("desk", "openai_settings")
@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("lookup_incident_by_id", '{"incident_id": "INC-2025-08-24-001"}',
         ["Searching for INC-2025-08-24-001...", "Found incident INC-2025-08-24-001"]),
        ("lookup_incident_by_id", '{"incident_id": "INC-2099-01-01-001"}',
         ["Searching for INC-2099-01-01-001...", "No incident found with ID INC-2099-01-01-001"]),
        ("get_incidents_by_application", '{"app_name": "payu core"}',
         ["Searching incidents for payu core...", "Found 1 incidents for payu core..."]),
        ("get_incidents_by_application", '{"app_name": "Settlement"}',
         ["Searching incidents for Settlement...", "Trying broader search...",
          "Found 1 incidents for Settlement..."]),
        ("get_recent_incidents", '{"days": 36500}',
         ["Searching incidents from the last 36500 days...",
          "Found 3 incidents from the last 36500 days..."]),
        ("get_recent_incidents", "{}",
         ["Searching incidents from the last 7 days...",
          "No incidents found from the last 7 days"]),
        ("search_knowledge", '{"type_filter": "runbook"}',
         ["Searching runbooks and known issues...", "Found 1 relevant documents..."]),
        ("search_knowledge", '{"type_filter": "postmortem"}',
         ["Searching runbooks and known issues...", "No matching documents found"]),
        ("search_similar_incidents", '{"query": "PayU Core incidents in 1999"}',
         ["Searching for Similar Incidents...", "Expanding search...", "FOUND"]),
        ("search_similar_incidents", '{"query": "HTTP 403 after the API key rotation"}',
         ["Searching for Similar Incidents...", "FOUND"]),
    ],
)  # fmt: skip
def test_each_tool_says_what_it_does_and_finds(
    alice: User, openai_server: OpenAIServer, name: str, arguments: str, expected: list[str]
) -> None:
    events = ask_with_tool(alice, openai_server, name, arguments)
    result = next(e for e in events if isinstance(e, ToolResultEvent))
    if expected[-1] == "FOUND":  # how many a hybrid search finds is the ranking's business
        assert result.count
        expected[-1] = f"Found {result.count} relevant incidents..."
    assert outline(events) == one_tool(name, *expected)


def one_tool(name: str, before: str, *after: str) -> list[tuple[str, str]]:
    """The events of a turn in which the model calls `name` once, then answers "Done."."""
    return [
        ("status", ANALYZING),
        ("status", before),
        ("tool_call", name),
        ("tool_result", name),
        *(("status", text) for text in after),
        ("token", "Done."),
        ("status", WRAPPING_UP),
        ("done", "Done."),
    ]


@pytest.mark.usefixtures("openai_settings")
@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("search_similar_incidents", '{"query": "HTTP 403 after the API key rotation"}',
         ["Searching for Similar Incidents...", "No similar incidents found"]),
        ("search_similar_incidents", '{"query": "PayU Core incidents in 1999"}',
         ["Searching for Similar Incidents...", "Expanding search...",
          "No similar incidents found"]),
        ("get_incidents_by_application", '{"app_name": "PayU Core"}',
         ["Searching incidents for PayU Core...", "Trying broader search...",
          "No incidents found for PayU Core"]),
        ("lookup_incident_by_id", '{"incident_id": "INC-2025-08-24-001"}',
         ["Searching for INC-2025-08-24-001...", "No incident found with ID INC-2025-08-24-001"]),
    ],
)  # fmt: skip
def test_with_no_incidents_each_search_says_it_found_none(
    alice: User, openai_server: OpenAIServer, name: str, arguments: str, expected: list[str]
) -> None:
    events = ask_with_tool(alice, openai_server, name, arguments)
    assert outline(events) == one_tool(name, *expected)


NOW = timezone.now()


@pytest.fixture
def loki(settings: Settings) -> Iterator[LogServer]:
    lines = [
        Line(NOW - dt.timedelta(minutes=m), "checkout-gateway", "502 upstream") for m in (2, 9)
    ]
    server = LogServer(lines, label="service_name").start()
    settings.LOG_SEARCH_URL = server.url
    settings.LOG_SEARCH_BACKEND = "loki"
    settings.LOG_SEARCH_SERVICE_FIELD = "service_name"
    settings.LOG_SEARCH_TIMEOUT_SECONDS = 0.5
    yield server
    server.stop()


@pytest.mark.usefixtures("openai_settings")
@pytest.mark.parametrize(
    ("query", "delay", "after"),
    [
        ("502", 0.0, "Found 2 log lines..."),
        ("503", 0.0, "No log lines found"),
        ("502", 2.0, "An error occurred while searching logs"),
    ],
)
def test_search_logs_says_what_it_found_or_that_it_failed(
    alice: User, openai_server: OpenAIServer, loki: LogServer, query: str, delay: float, after: str
) -> None:
    loki.delay = delay
    arguments = f'{{"service": "checkout-gateway", "query": "{query}"}}'
    events = ask_with_tool(alice, openai_server, "search_logs", arguments)
    assert outline(events) == one_tool(
        "search_logs", "Searching logs of checkout-gateway...", after
    )


def outline(events: list[Event]) -> list[tuple[str, str]]:
    """Each event as (type, what it says): a status's text, a tool's name, the answer;
    the streamed tokens joined into one."""
    said: list[tuple[str, str]] = []
    for event in events:
        message = event.to_message()
        what = str(message.get("text") or message.get("name") or message.get("content") or "")
        if said and event.type == "token" and said[-1][0] == "token":
            said[-1] = ("token", said[-1][1] + what)
        else:
            said.append((event.type, what))
    return said


@pytest.mark.usefixtures("desk")
def test_an_offline_search_streams_the_design_wording(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    events = ask(conversation, alice, "Look up INC-2025-08-24-001", model=OfflineChatModel())
    assert statuses(events) == [
        ANALYZING,
        "Searching for INC-2025-08-24-001...",
        "Found incident INC-2025-08-24-001",
        "Generating title for the incident report...",
        WRAPPING_UP,
    ]


def test_a_greeting_is_not_analyzed_and_does_not_title_the_conversation(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    events = ask(conversation, alice, "Hi there!", model=OfflineChatModel())
    assert statuses(events) == [WRAPPING_UP]
    assert not any(isinstance(e, TitleEvent) for e in events)
    conversation.refresh_from_db()
    assert conversation.title == ""


@pytest.mark.usefixtures("openai_settings")
def test_a_question_answered_without_tools_is_not_analyzed(
    alice: User, openai_server: OpenAIServer
) -> None:
    conversation = conversation_create(owner=alice, title="Titled already")
    openai_server.script(text_reply("I can search incidents and runbooks."))
    events = ask(conversation, alice, "What can you do?")
    assert statuses(events) == [WRAPPING_UP]
