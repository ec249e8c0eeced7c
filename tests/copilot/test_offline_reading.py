"""How the offline engine reads a conversation: the earlier turns once per question."""

from __future__ import annotations

from copilot.chat_models.base import ChatMessage
from copilot.chat_models.offline import OfflineChatModel
from copilot.chat_models.offline.reading import conversation_state

FOUND = (
    "Incident ID: INC-2025-08-24-001\nTitle: API key rotation 403s\n"
    "Impacted Application: PayU Core\nDetails and Actions Taken and Steps and Fixes:\n"
    "Re-synced the secret to every gateway pool."
)


def _turn(question: str, call_id: str) -> list[ChatMessage]:
    """A question, its search, what the search found and the answer."""
    call = {"id": call_id, "type": "function",
            "function": {"name": "search_similar_incidents", "arguments": "{}"}}  # fmt: skip
    return [
        {"role": "user", "content": question},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": FOUND},
        {"role": "assistant", "content": "INC-2025-08-24-001 was the key rotation."},
    ]


def test_the_earlier_turns_are_read_once_for_every_round_of_a_question() -> None:
    """The router (first round) and the writer (last round) share one reading: the
    rounds only append this question's tool steps, which the reading leaves out."""
    model = OfflineChatModel()
    messages = [{"role": "system", "content": "prompt"}, *_turn("403s after a key rotation?", "a")]
    messages.append({"role": "user", "content": "What was the resolution?"})
    first = model._state(messages)
    assert [item.incident_id for item in first.focus] == ["INC-2025-08-24-001"]
    messages += _turn("", "b")[1:3]  # this question's round: its call and result
    assert model._state(messages) is first
    assert model._state(messages) == conversation_state(messages)


def test_a_new_question_or_another_conversation_is_read_again() -> None:
    model = OfflineChatModel()
    messages = [*_turn("403s after a key rotation?", "a"), {"role": "user", "content": "why?"}]
    first = model._state(messages)
    messages += [{"role": "assistant", "content": "Because."}, {"role": "user", "content": "ok"}]
    assert model._state(messages) is not first
    other = [{"role": "user", "content": "hello"}]
    assert model._state(other).focus == ()


def test_a_document_shown_is_remembered_with_the_incidents_it_draws_on() -> None:
    block = (
        "Document ID: KB-KI-004\nTitle: Known issue: sequences jump after failover\n"
        "Type: known_issue\nServices: PostgreSQL\n"
        "Related incidents: INC-2021-01-01-001, INC-2024-02-02-001\nRelevance: 1.00\n"
        "Excerpt: Sequences are cached per session."
    )
    call = {"id": "k", "type": "function",
            "function": {"name": "search_knowledge", "arguments": "{}"}}  # fmt: skip
    messages: list[ChatMessage] = [
        {"role": "user", "content": "known issue with sequences jumping?"},
        {"role": "assistant", "content": "", "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "k", "content": block},
        {"role": "assistant", "content": "**KB-KI-004** is the known issue."},
        {"role": "user", "content": "which incidents is it based on?"},
    ]
    (document,) = conversation_state(messages).documents
    assert document.related == ("INC-2021-01-01-001", "INC-2024-02-02-001")
