"""The agent loop on an OpenAI-compatible model, against a local server speaking the protocol.

Each failure ends with a graceful answer or an error event, and the user's
question is always stored. Conversations start titled so the title side
call does not take a scripted reply, except in the title test.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User

from copilot.events import DoneEvent, ErrorEvent, Event, TitleEvent, TokenEvent, ToolResultEvent
from copilot.models import AgentRun, Conversation, ToolCall
from copilot.prompts import FINAL_ROUND_NOTE
from copilot.replies import conversation_reply
from copilot.services import conversation_create, golden_example_embed
from tests.copilot.openai_server import (
    OpenAIServer,
    cut_reply,
    error_reply,
    slow_reply,
    text_reply,
    tool_call_reply,
)
from tests.factories import GoldenExampleFactory, incident_row, incidents_import

pytestmark = pytest.mark.usefixtures("desk", "openai_settings")
QUESTION = "Merchants get 403 after a key rotation"
SEARCH = ("search_similar_incidents", '{"query": "403 after API key rotation"}')


@pytest.fixture
def conversation(alice: User) -> Conversation:
    return conversation_create(owner=alice, title="Key rotation")


def ask(conversation: Conversation, text: str = QUESTION) -> list[Event]:
    return list(conversation_reply(conversation=conversation, user=conversation.owner, text=text))


def last(events: list[Event]) -> Event:
    return events[-1]


def question_is_stored(conversation: Conversation) -> bool:
    return conversation.messages.filter(role="user", content=QUESTION).exists()


def test_a_429_is_retried_and_the_answer_cites_what_the_tool_found(
    conversation: Conversation, openai_server: OpenAIServer
) -> None:
    openai_server.script(
        error_reply(429, retry_after=0),
        tool_call_reply([SEARCH]),
        text_reply("The key never reached the cache, as in INC-2025-08-24-001."),
    )
    done = last(ask(conversation))
    assert isinstance(done, DoneEvent)
    assert (done.citations, done.dropped_citations) == (["INC-2025-08-24-001"], [])
    assert len(openai_server.requests) == 3
    tool_message = openai_server.requests[2]["messages"][-1]
    assert tool_message["role"] == "tool" and "INC-2025-08-24-001" in tool_message["content"]
    run = AgentRun.objects.get(pk=done.run_id)
    assert (run.model, run.rounds, run.status) == ("gpt-test", 1, "done")
    assert run.prompt_tokens > 0 and run.completion_tokens > 0


def test_a_server_that_keeps_failing_ends_with_an_error_event(
    conversation: Conversation, openai_server: OpenAIServer
) -> None:
    openai_server.script(*[error_reply(500)] * 3)
    error = last(ask(conversation))
    assert isinstance(error, ErrorEvent)
    assert "HTTP 500" in error.message
    assert question_is_stored(conversation)
    assert AgentRun.objects.get(conversation=conversation).status == "failed"


def test_a_timeout_ends_with_an_error_event(
    conversation: Conversation, openai_server: OpenAIServer
) -> None:
    openai_server.script(*[slow_reply(5)] * 3)
    error = last(ask(conversation))
    assert isinstance(error, ErrorEvent) and "did not answer" in error.message
    assert question_is_stored(conversation)


@pytest.mark.parametrize(
    ("call", "problem"),
    [
        (("search_similar_incidents", '{"query": '), "not valid JSON"),
        (("search_similar_incidents", '{"query": "x", "limit": "lots"}'), "must be an integer"),
        (("delete_everything", "{}"), "Unknown tool 'delete_everything'"),
    ],
)
def test_bad_tool_calls_go_back_to_the_model_as_text(
    conversation: Conversation, openai_server: OpenAIServer, call: tuple[str, str], problem: str
) -> None:
    openai_server.script(tool_call_reply([call]), text_reply("I could not search."))
    events = ask(conversation)
    result = next(e for e in events if isinstance(e, ToolResultEvent))
    assert problem in result.error
    sent_back = openai_server.requests[1]["messages"][-1]
    assert sent_back["role"] == "tool" and problem in sent_back["content"]
    assert isinstance(last(events), DoneEvent)


def test_an_endless_tool_loop_is_cut_after_five_rounds(
    conversation: Conversation, openai_server: OpenAIServer
) -> None:
    openai_server.script(*[tool_call_reply([SEARCH])] * 5, text_reply("Here is what I have."))
    done = last(ask(conversation))
    assert isinstance(done, DoneEvent) and done.content == "Here is what I have."
    final_request = openai_server.requests[5]
    assert "tools" not in final_request
    assert final_request["messages"][-1] == {"role": "system", "content": FINAL_ROUND_NOTE}
    assert AgentRun.objects.get(pk=done.run_id).rounds == 5


def test_the_steps_are_stored_before_the_model_is_asked_again(
    conversation: Conversation, openai_server: OpenAIServer
) -> None:
    """A reload while a slow model thinks shows the steps so far."""
    openai_server.script(tool_call_reply([SEARCH]), text_reply("As in INC-2025-08-24-001."))
    events = conversation_reply(conversation=conversation, user=conversation.owner, text=QUESTION)
    next(event for event in events if isinstance(event, TokenEvent))  # the second model turn
    roles = list(conversation.messages.values_list("role", flat=True))
    traced = ToolCall.objects.filter(run__conversation=conversation).count()
    list(events)
    assert (roles, traced) == (["user", "assistant", "tool"], 1)


def test_a_stream_cut_half_way_keeps_what_was_written(
    conversation: Conversation, openai_server: OpenAIServer
) -> None:
    openai_server.script(cut_reply("The settlement queue was"))
    error = last(ask(conversation))
    assert isinstance(error, ErrorEvent) and "cut off" in error.message
    partial = conversation.messages.get(role="assistant")
    assert partial.content.startswith("The settlement queue was")
    assert "interrupted" in partial.content
    assert question_is_stored(conversation)


def test_an_invented_incident_id_is_dropped_and_marked(
    conversation: Conversation, openai_server: OpenAIServer
) -> None:
    openai_server.script(
        tool_call_reply([SEARCH]),
        text_reply("See INC-2025-08-24-001 and the similar INC-2099-01-01-999."),
    )
    done = last(ask(conversation))
    assert isinstance(done, DoneEvent)
    assert done.citations == ["INC-2025-08-24-001"]
    assert done.dropped_citations == ["INC-2099-01-01-999"]
    assert "INC-2099-01-01-999 [unverified" in done.content
    run = AgentRun.objects.get(pk=done.run_id)
    assert run.citations_dropped == ["INC-2099-01-01-999"]
    assert conversation.messages.get(pk=done.message_id).citations == ["INC-2025-08-24-001"]


def test_the_model_gets_the_system_prompt_tools_and_history(
    conversation: Conversation, openai_server: OpenAIServer
) -> None:
    openai_server.script(text_reply("First answer."), text_reply("Second answer."))
    ask(conversation)
    ask(conversation, "And what was the mitigation?")
    request = openai_server.requests[1]
    assert request["messages"][0]["role"] == "system"
    assert "Cite every incident by its id" in request["messages"][0]["content"]
    assert [m["role"] for m in request["messages"][1:]] == ["user", "assistant", "user"]
    assert {tool["function"]["name"] for tool in request["tools"]} == {
        "lookup_incident_by_id", "search_similar_incidents", "get_incidents_by_application",
        "get_recent_incidents", "search_knowledge",
    }  # fmt: skip


def test_an_untitled_conversation_gets_a_title_from_the_model(
    alice: User, openai_server: OpenAIServer
) -> None:
    conversation = conversation_create(owner=alice)
    # The title call runs alongside the answer: both replies are the same so
    # the order they are taken in does not matter.
    openai_server.script(text_reply("Key rotation failures"), text_reply("Key rotation failures"))
    events = ask(conversation)
    title = next(e for e in events if isinstance(e, TitleEvent))
    assert title.title == "Key rotation failures"
    conversation.refresh_from_db()
    assert conversation.title == "Key rotation failures"


def test_golden_examples_go_into_the_prompt_in_the_designs_wording(
    conversation: Conversation, openai_server: OpenAIServer
) -> None:
    example = GoldenExampleFactory(
        question="Merchants get 403 after a key rotation", answer="Follow KB-RB-001."
    )
    golden_example_embed(example=example)
    openai_server.script(text_reply("Follow KB-RB-001."))
    ask(conversation)
    prompt = openai_server.requests[0]["messages"][0]["content"]
    assert "\n## Verified Knowledge\n" in prompt
    assert (
        "### Direct Answer Available\nQuestion: Merchants get 403 after a key rotation\n"
        "Verified answer: Follow KB-RB-001." in prompt
    )


def test_an_incident_id_quoted_from_a_document_is_verified_against_the_data(
    conversation: Conversation, openai_server: OpenAIServer, tmp_path: Path
) -> None:
    # A runbook names incidents no search returned in this conversation: one that
    # exists is a true citation, one in a staged (inactive) version or in no data
    # at all stays marked.
    staged = incident_row("INC-2025-11-11-001", title="Staged, not yet active")
    incidents_import(tmp_path / "staged.jsonl", [staged], dataset_name="staged")
    openai_server.script(
        tool_call_reply([("search_knowledge", '{"query": "rotating API keys"}')]),
        text_reply(
            "Follow KB-RB-001. It was written after INC-2025-10-02-001, "
            "and mentions INC-2025-11-11-001 and INC-2099-01-01-999."
        ),
    )
    done = last(ask(conversation))
    assert isinstance(done, DoneEvent)
    assert done.citations == ["KB-RB-001", "INC-2025-10-02-001"]
    assert done.dropped_citations == ["INC-2025-11-11-001", "INC-2099-01-01-999"]
    assert "INC-2025-10-02-001," in done.content
    assert "INC-2025-11-11-001 [unverified" in done.content
    assert "INC-2099-01-01-999 [unverified" in done.content
