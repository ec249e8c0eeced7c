"""What the chat page shows for a turn, built from stored messages.

Filter chips come from the search tool's parsed filters; each chip knows the
phrase that writes it back into a question, so the page can re-run the
question with a chip removed or changed (filters are read from the words).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.safestring import SafeString

from copilot.events import Event, ToolResultEvent
from copilot.intake.services import INTAKE_TOOL_NAME
from copilot.models import Message
from copilot.selectors import Turn
from incidentdesk.richtext import document_url, incident_url, render_markdown
from incidents.parsing import INCIDENT_ID_RE
from incidents.selectors import parse_incident_filters

FILTER_TOOL = "search_similar_incidents"
_WHITESPACE_RE = re.compile(r"\s+")
# "403 errors in" once "PayU Core" is lifted out as a chip: the chip brings its own "in".
_DANGLING_RE = re.compile(r"(?:\s+\b(?:in|for|from|on|at|of|with|since|during))+\s*$", re.I)


@dataclass(frozen=True)
class FilterChip:
    name: str  # the filter: application, window, severity, repeat, category
    label: str  # what the chip says before its value
    value: str
    phrase: str  # how it is written into a question; "{}" stands for the value


@dataclass(frozen=True)
class FilterChips:
    """The filters one search read from the question, and the words without them."""

    query: str
    base: str
    chips: list[FilterChip]
    loosened: bool


def _chips(filters: dict[str, Any]) -> list[FilterChip]:
    chips = []
    if filters.get("application"):
        chips.append(FilterChip("application", "App", filters["application"], "in {}"))
    if filters.get("window"):
        chips.append(FilterChip("window", "When", filters["window"]["label"], "{}"))
    if filters.get("severity"):
        chips.append(FilterChip("severity", "Severity", filters["severity"], "{}"))
    if filters.get("category"):
        chips.append(FilterChip("category", "Category", filters["category"], "{} incidents"))
    if filters.get("repeat"):
        chips.append(FilterChip("repeat", "Repeat", "yes", "repeat incidents"))
    return chips


def filter_chips(tools: list[Message]) -> FilterChips | None:
    """Chips for the turn's last filtered incident search, if it read any filters."""
    for message in reversed(tools):
        data = message.data or {}
        if message.tool_name == FILTER_TOOL and data.get("filters"):
            query = str(data.get("query", ""))
            base = rerun_base(query, data["filters"].get("application"))
            chips = _chips(data["filters"])
            return FilterChips(query, base, chips, bool(data.get("expanded"))) if chips else None
    return None


def rerun_base(query: str, application: str | None) -> str:
    """The question without its filter phrases: what a re-run adds the chips to.

    The application goes with the word that introduced it ("errors in PayU
    Core before?" → "errors before?"); the parser strips the other filters.
    """
    if application:
        phrase = rf"(?:\b(?:in|for|on|at|of|from|with)\s+)?{re.escape(application)}"
        query = re.sub(phrase, " ", query, flags=re.IGNORECASE)
    _, rest = parse_incident_filters(query, today=timezone.localdate())
    return _DANGLING_RE.sub("", " ".join(rest.split()))


@dataclass(frozen=True)
class Citation:
    id: str
    url: str
    kind: str  # incident | document
    title: str = ""  # from the turn's tool results: the sources panel's hover card
    snippet: str = ""
    reported: bool = False  # a chat report staff have not reviewed: the chip says so


SNIPPET_CHARS = 220


def reported_ids(tools: list[Message]) -> set[str]:
    """Incidents the turn's tools returned as reported, not reviewed (from their data)."""
    found = set()
    for message in tools:
        data = message.data or {}
        rows = [*data.get("results", []), data.get("incident") or {}]
        found |= {
            str(row.get("incident_id"))
            for row in rows
            if isinstance(row, dict) and row.get("review_status") == "reported"
        }
    return found


def citations(answer: Message, tools: list[Message] | None = None) -> list[Citation]:
    """The answer's verified citations, each with the title and a snippet of the record
    as the turn's tools returned it, and whether it is an unreviewed report (no
    query: the tool messages are loaded already)."""
    seen = cited_records(tools or [])
    reported = reported_ids(tools or [])
    found = []
    for cited in answer.citations or []:
        title, snippet = seen.get(cited.upper(), ("", ""))
        if INCIDENT_ID_RE.match(cited):
            is_reported = cited in reported
            found.append(
                Citation(cited, incident_url(cited), "incident", title, snippet, is_reported)
            )
        else:
            found.append(Citation(cited, document_url(cited), "document", title, snippet))
    return found


def cited_records(tools: list[Message]) -> dict[str, tuple[str, str]]:
    """Id -> (title, snippet) for every record in the tools' structured results."""
    records: dict[str, tuple[str, str]] = {}
    stack: list[Any] = [tool.data for tool in tools]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, dict):
            record_id = item.get("incident_id") or item.get("id")
            if isinstance(record_id, str) and isinstance(item.get("title"), str):
                records.setdefault(record_id.upper(), (item["title"], _snippet(item)))
            stack.extend(v for v in item.values() if isinstance(v, (list, dict)))
    return records


def _snippet(record: dict[str, Any]) -> str:
    for key in ("preview", "root_cause", "mitigation", "summary"):
        text = record.get(key)
        if isinstance(text, str) and text.strip():
            text = _WHITESPACE_RE.sub(" ", text).strip()
            return text if len(text) <= SNIPPET_CHARS else f"{text[: SNIPPET_CHARS - 1]}…"
    return ""


def answer_html(answer: Message) -> SafeString:
    return render_markdown(answer.content)


def arguments_text(arguments: dict[str, Any]) -> str:
    """Tool arguments on one line for the steps timeline."""
    parts = [f"{name}={value!r}" if isinstance(value, str) else f"{name}={value}"
             for name, value in arguments.items()]  # fmt: skip
    return _WHITESPACE_RE.sub(" ", ", ".join(parts))


@dataclass(frozen=True)
class Step:
    name: str
    arguments: str
    count: int | None
    latency_ms: int
    error: str


@dataclass(frozen=True)
class TurnView:
    """Everything the turn template needs, with the answer already sanitised."""

    turn: Turn
    steps: list[Step]
    chips: FilterChips | None
    citations: list[Citation]
    html: SafeString | None

    @property
    def steps_ms(self) -> int:
        return sum(step.latency_ms for step in self.steps)


def turn_view(turn: Turn) -> TurnView:
    answer = turn.answer
    steps = [
        Step(call.name, arguments_text(call.arguments), call.result_count, call.latency_ms,
             call.error)
        for call in turn.steps
    ]  # fmt: skip
    html = answer_html(answer) if answer is not None and answer.is_complete else None
    return TurnView(
        turn,
        steps,
        filter_chips(turn.tools),
        citations(answer, turn.tools) if answer else [],
        html,
    )


INTAKE_CARD_TEMPLATE = "copilot/_intake_card.html"


def event_message(event: Event) -> dict[str, Any]:
    """The event as the chat page's websocket sends it.

    The intake card comes with its HTML, rendered (escaped) by the template
    the finished answer uses, so the page draws the card one way only.
    """
    message = event.to_message()
    if isinstance(event, ToolResultEvent) and event.name == INTAKE_TOOL_NAME:
        message["html"] = render_to_string(INTAKE_CARD_TEMPLATE, {"card": event.data})
    return message
