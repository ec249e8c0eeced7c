"""What the copilot streams to the browser, the API and the tests.

One frozen dataclass per DESIGN event type; `to_message()` is the only place
that builds the `{"type": ...}` dicts the websocket and SSE clients read.
"""

from __future__ import annotations

from collections.abc import Iterable
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


# --- reading a whole answer ------------------------------------------------------------


@dataclass
class Collected:
    """What a stream of events said, once read to its end: the answer or the
    error, and the tool calls and results on the way."""

    done: DoneEvent | None = None
    error: ErrorEvent | None = None
    tool_calls: list[ToolCallEvent] = field(default_factory=list)
    tool_results: list[ToolResultEvent] = field(default_factory=list)

    def result_data(self, tool: str) -> dict[str, Any]:
        """The data of `tool`'s first result ({} when it gave none)."""
        return next((result.data for result in self.tool_results if result.name == tool), {})


def events_collect(events: Iterable[Event]) -> Collected:
    """Read `events` to the end, keeping what callers without a socket need.

    Always to the end: a reply stopped early is closed, which its run records
    as cancelled by a client that stopped listening, even after its answer.
    """
    collected = Collected()
    for event in events:
        if isinstance(event, DoneEvent):
            collected.done = event
        elif isinstance(event, ErrorEvent):
            collected.error = event
        elif isinstance(event, ToolCallEvent):
            collected.tool_calls.append(event)
        elif isinstance(event, ToolResultEvent):
            collected.tool_results.append(event)
    return collected
