"""What the copilot streams to the browser, the API and the tests.

One frozen dataclass per DESIGN event type; `to_message()` is the only place
that builds the `{"type": ...}` dicts the websocket and SSE clients read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar


@dataclass(frozen=True)
class Event:
    type: ClassVar[str] = ""

    def to_message(self) -> dict[str, Any]:
        # Shallow: the message is serialised at once, and asdict's deep copy
        # of the tool results cost more than sending them.
        return {"type": self.type, **vars(self)}


@dataclass(frozen=True)
class StatusEvent(Event):
    """What the agent is doing, in DESIGN's wording ("Searching for ...")."""

    type: ClassVar[str] = "status"
    text: str


@dataclass(frozen=True)
class TokenEvent(Event):
    """A piece of the answer as it is written."""

    type: ClassVar[str] = "token"
    text: str


@dataclass(frozen=True)
class ToolCallEvent(Event):
    type: ClassVar[str] = "tool_call"
    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True)
class ToolResultEvent(Event):
    """A tool's outcome: how many results, how long, and data for the UI."""

    type: ClassVar[str] = "tool_result"
    call_id: str
    name: str
    count: int
    latency_ms: int
    data: dict[str, Any] = field(default_factory=dict)
    error: str = ""


@dataclass(frozen=True)
class TitleEvent(Event):
    type: ClassVar[str] = "title"
    conversation_id: int
    title: str


@dataclass(frozen=True)
class DoneEvent(Event):
    """The stored final answer: text, verified citations, the run's steps."""

    type: ClassVar[str] = "done"
    conversation_id: int
    message_id: int
    run_id: int
    content: str
    citations: list[str] = field(default_factory=list)
    dropped_citations: list[str] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class ErrorEvent(Event):
    """Something failed; `message` is fit to show the user."""

    type: ClassVar[str] = "error"
    message: str
    code: str = "error"
