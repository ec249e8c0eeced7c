"""The interface every chat model implements, and the events it streams.

Messages and tool specs use the OpenAI chat format (role/content/tool_calls,
function tools with JSON-schema parameters): it is what every compatible
server speaks, and the offline engine reads the same shapes.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Protocol

ChatMessage = dict[str, Any]
ToolSpec = dict[str, Any]


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ToolCallRequest:
    """A complete tool call; `arguments` is the raw JSON text the model wrote."""

    call_id: str
    name: str
    arguments: str


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int


@dataclass(frozen=True)
class End:
    finish_reason: str  # stop | tool_calls | length | ...


@dataclass(frozen=True)
class ModelFailure:
    """The model could not answer (after retries); `message` is for the user."""

    message: str


ModelEvent = TextDelta | ToolCallRequest | Usage | End | ModelFailure


class ChatModel(Protocol):
    name: str

    def stream(self, messages: list[ChatMessage], tools: list[ToolSpec]) -> Iterator[ModelEvent]:
        """Stream one assistant turn: text deltas and/or tool calls, usage, then End.

        Never raises for model or network trouble: yields ModelFailure instead.
        """
        ...


def runs_offline(model: ChatModel) -> bool:
    """Whether `model` is the offline engine, which answers in-process in
    milliseconds: no thread for side calls, no write before each turn."""
    return bool(getattr(model, "is_offline", False))


def collect_text(events: Iterator[ModelEvent]) -> str:
    """The text of a streamed turn (for short side calls such as titles)."""
    return "".join(event.text for event in events if isinstance(event, TextDelta))
