"""The OpenAI-compatible chat model against a local server that speaks the protocol."""

from __future__ import annotations

import logging

import pytest

from copilot.chat_models.base import (
    ChatMessage,
    End,
    ModelEvent,
    ModelFailure,
    TextDelta,
    ToolCallRequest,
    ToolSpec,
    Usage,
)
from copilot.chat_models.openai_compat import OpenAIChatModel
from copilot.tools import tool_specs
from tests.copilot.conftest import OPENAI_TEST_KEY
from tests.copilot.openai_server import (
    OpenAIServer,
    Reply,
    cut_reply,
    error_reply,
    slow_reply,
    text_reply,
    tool_call_reply,
)

QUESTION: list[ChatMessage] = [
    {"role": "system", "content": "You answer on-call engineers."},
    {"role": "user", "content": "Why did checkout fail last night?"},
]
CUT_OFF = ModelFailure("The model's answer was cut off.")


def chat_model(server: OpenAIServer, *, timeout: float = 10.0, retries: int = 2) -> OpenAIChatModel:
    """A model on the local server; a tiny backoff keeps retry tests quick."""
    return OpenAIChatModel(
        api_key=OPENAI_TEST_KEY,
        base_url=server.base_url,
        model="gpt-test",
        timeout=timeout,
        max_retries=retries,
        backoff_seconds=0.001,
    )


def ask(model: OpenAIChatModel, tools: list[ToolSpec] | None = None) -> list[ModelEvent]:
    return list(model.stream(QUESTION, tool_specs() if tools is None else tools))


def texts(events: list[ModelEvent]) -> list[str]:
    return [event.text for event in events if isinstance(event, TextDelta)]


def test_text_streams_as_several_deltas_in_order_then_usage_then_end(
    openai_server: OpenAIServer,
) -> None:
    answer = "Checkout failed because the settlement queue stalled (INC-2024-03-02-001)."
    openai_server.script(text_reply(answer, usage=(120, 14)))
    events = ask(chat_model(openai_server))
    deltas = texts(events)
    assert len(deltas) > 3
    assert "".join(deltas) == answer
    assert events[len(deltas) :] == [Usage(prompt_tokens=120, completion_tokens=14), End("stop")]


def test_tool_call_deltas_accumulate_into_one_complete_call(openai_server: OpenAIServer) -> None:
    arguments = '{"query": "checkout timeouts", "limit": 3}'
    openai_server.script(tool_call_reply([("search_similar_incidents", arguments)], pieces=4))
    events = ask(chat_model(openai_server))
    [call] = [event for event in events if isinstance(event, ToolCallRequest)]
    assert (call.name, call.arguments) == ("search_similar_incidents", arguments)
    assert call.call_id.startswith("call_")
    assert events[-2:] == [Usage(42, 7), End("tool_calls")]


def test_two_parallel_tool_calls_arrive_complete_and_in_order(openai_server: OpenAIServer) -> None:
    calls = [
        ("lookup_incident_by_id", '{"incident_id": "INC-2024-03-02-001"}'),
        ("search_knowledge", '{"query": "settlement queue runbook", "type_filter": "runbook"}'),
    ]
    openai_server.script(tool_call_reply(calls))
    events = ask(chat_model(openai_server))
    requests = [event for event in events if isinstance(event, ToolCallRequest)]
    assert [(call.name, call.arguments) for call in requests] == calls
    assert len({call.call_id for call in requests}) == 2


def test_interleaved_pieces_of_parallel_calls_are_told_apart_by_index(
    openai_server: OpenAIServer,
) -> None:
    def piece(index: int, **function: str) -> dict[str, object]:
        return {"tool_calls": [{"index": index, "function": function}]}

    heads = [
        {
            "tool_calls": [
                {"index": i, "id": f"call_{i}", "type": "function", "function": {"name": n}}
            ]
        }
        for i, n in [(0, "get_recent_incidents"), (1, "get_incidents_by_application")]
    ]
    deltas = (*heads, piece(1, arguments='{"app_name": '), piece(0, arguments='{"days": 7}'))
    openai_server.script(
        Reply(deltas=(*deltas, piece(1, arguments='"Checkout"}')), finish_reason="tool_calls")
    )
    events = ask(chat_model(openai_server))
    assert [event for event in events if isinstance(event, ToolCallRequest)] == [
        ToolCallRequest("call_0", "get_recent_incidents", '{"days": 7}'),
        ToolCallRequest("call_1", "get_incidents_by_application", '{"app_name": "Checkout"}'),
    ]


def test_a_rate_limit_is_retried_and_the_answer_then_arrives(openai_server: OpenAIServer) -> None:
    openai_server.script(error_reply(429, retry_after=0), text_reply("All clear."))
    events = ask(chat_model(openai_server))
    assert "".join(texts(events)) == "All clear."
    assert events[-1] == End("stop")
    assert len(openai_server.requests) == 2


def test_a_server_error_on_every_attempt_fails_after_max_retries_plus_one_requests(
    openai_server: OpenAIServer,
) -> None:
    openai_server.script(*[error_reply(500)] * 3)
    events = ask(chat_model(openai_server, retries=2))
    assert events == [ModelFailure("The language model is unavailable (HTTP 500) after 2 retries.")]
    assert len(openai_server.requests) == 3


def test_a_rejected_key_fails_at_once_without_retrying(openai_server: OpenAIServer) -> None:
    openai_server.script(error_reply(401, message="Incorrect API key provided"), text_reply("no"))
    events = ask(chat_model(openai_server))
    assert events == [ModelFailure("The language model refused the API key (HTTP 401).")]
    assert len(openai_server.requests) == 1


def test_a_bad_request_fails_at_once_without_retrying(openai_server: OpenAIServer) -> None:
    openai_server.script(error_reply(400, message="Invalid schema for function"))
    events = ask(chat_model(openai_server))
    assert events == [ModelFailure("The language model rejected the request (HTTP 400).")]
    assert len(openai_server.requests) == 1


def test_a_server_that_never_answers_times_out_into_a_failure(openai_server: OpenAIServer) -> None:
    openai_server.script(slow_reply(30), slow_reply(30))
    events = ask(chat_model(openai_server, timeout=0.3, retries=1))
    assert events == [ModelFailure("The language model did not answer within 0.3 s after 1 retry.")]
    assert len(openai_server.requests) == 2


def test_a_stream_cut_half_way_keeps_the_partial_text_then_fails_without_retrying(
    openai_server: OpenAIServer,
) -> None:
    openai_server.script(cut_reply("The settlement queue stalled because"), text_reply("again"))
    events = ask(chat_model(openai_server))
    assert "".join(texts(events)) == "The settlement queue stalled because"
    assert events[-1] == CUT_OFF
    assert len(openai_server.requests) == 1  # a retry would repeat the text already shown


def test_a_stream_ending_without_a_finish_reason_counts_as_cut_off(
    openai_server: OpenAIServer,
) -> None:
    openai_server.script(text_reply("Half an answer", finish_reason=None))
    events = ask(chat_model(openai_server))
    assert "".join(texts(events)) == "Half an answer"
    assert events[-1] == CUT_OFF


def test_a_connection_dropped_before_any_text_is_retried(openai_server: OpenAIServer) -> None:
    openai_server.script(cut_reply(""), text_reply("Recovered."))
    events = ask(chat_model(openai_server))
    assert "".join(texts(events)) == "Recovered."
    assert events[-1] == End("stop")
    assert len(openai_server.requests) == 2


def test_a_stream_that_ends_before_anything_is_retried(openai_server: OpenAIServer) -> None:
    openai_server.script(text_reply("", finish_reason=None), text_reply("Second try."))
    events = ask(chat_model(openai_server))
    assert "".join(texts(events)) == "Second try."
    assert events[0] == Usage(42, 7)  # the empty attempt was billed too
    assert events[-1] == End("stop")
    assert len(openai_server.requests) == 2


def test_a_long_retry_after_is_reported_instead_of_waited_for(openai_server: OpenAIServer) -> None:
    openai_server.script(error_reply(429, retry_after=120))
    events = ask(chat_model(openai_server))
    assert events == [
        ModelFailure(
            "The language model is rate limited (HTTP 429); it asks to wait 120 s, try again later."
        )
    ]
    assert len(openai_server.requests) == 1


def test_the_request_carries_the_model_messages_tools_and_usage_option(
    openai_server: OpenAIServer,
) -> None:
    openai_server.script(text_reply("ok"))
    ask(chat_model(openai_server))
    [request] = openai_server.requests
    assert request["model"] == "gpt-test"
    assert request["messages"] == QUESTION
    assert request["tools"] == tool_specs()
    assert (request["stream"], request["stream_options"]) == (True, {"include_usage": True})


def test_a_turn_without_tools_sends_no_tools_list(openai_server: OpenAIServer) -> None:
    openai_server.script(text_reply("A short title"))
    ask(chat_model(openai_server), tools=[])
    assert "tools" not in openai_server.requests[0]


@pytest.mark.parametrize(
    "replies",
    [
        [error_reply(401, message=f"Incorrect API key provided: {OPENAI_TEST_KEY}")],
        [error_reply(500, message=f"upstream rejected {OPENAI_TEST_KEY}")] * 3,
        [error_reply(400, message=f"bad request from {OPENAI_TEST_KEY}")],
        [cut_reply(f"partial {OPENAI_TEST_KEY[:4]}")],
    ],
)
def test_the_api_key_never_appears_in_events_or_logs(
    openai_server: OpenAIServer, caplog: pytest.LogCaptureFixture, replies: list[Reply]
) -> None:
    openai_server.script(*replies)
    with caplog.at_level(logging.DEBUG):  # the openai and httpx loggers too
        events = ask(chat_model(openai_server))
    assert isinstance(events[-1], ModelFailure)
    assert OPENAI_TEST_KEY not in repr(events)
    assert OPENAI_TEST_KEY not in caplog.text


def test_from_settings_uses_the_copilot_settings(
    openai_settings: object, openai_server: OpenAIServer
) -> None:
    model = OpenAIChatModel.from_settings()
    assert model.name == "gpt-test"
    openai_server.script(error_reply(503, retry_after=0), text_reply("Configured."))
    assert "".join(texts(ask(model))) == "Configured."
    assert [request["model"] for request in openai_server.requests] == ["gpt-test"] * 2
