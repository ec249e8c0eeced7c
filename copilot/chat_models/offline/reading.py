"""How the offline engine reads tool messages: the text a model would read.

The engine never queries the database for facts: it parses the blocks the
tools wrote (`incidents.rendering`, `KnowledgeSearch.as_text`), so it can
only say what the tools returned, exactly like a model.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from copilot.chat_models.base import ChatMessage
from copilot.chat_models.offline.state import ConversationState, Remembered, RememberedDocument
from incidents.rendering import BODY_HEADING as BODY_MARKER

BLOCK_SEPARATOR = "\n\n---\n\n"
_FIELD_RE = re.compile(r"^(?P<name>[A-Z][A-Za-z ]+): ?(?P<value>.*)$")


@dataclass(frozen=True)
class Record:
    """An incident or document block of a tool result."""

    id: str
    fields: dict[str, str]
    body: str = ""

    @property
    def is_document(self) -> bool:
        return "Document ID" in self.fields

    def get(self, name: str) -> str:
        return self.fields.get(name, "")

    @property
    def title(self) -> str:
        return self.get("Title")

    @property
    def text(self) -> str:
        return " ".join([*self.fields.values(), self.body])


@dataclass(frozen=True)
class ToolOutcome:
    """One tool call of this turn and what it returned."""

    name: str
    arguments: str
    text: str
    records: list[Record] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return self.text.startswith("Error:")

    @property
    def expanded(self) -> bool:
        return "so they were loosened" in self.text or "so it was loosened" in self.text

    @property
    def loosened(self) -> str:
        """Which filters matched nothing ("severity SEV1"), as the tool said."""
        found = _LOOSENED_RE.search(self.text)
        return found.group(1) if found else ""


_LOOSENED_RE = re.compile(
    r"^No (?:incident|document) matched (.+?), so (?:they were|it was) loosened", re.MULTILINE
)


def parse_records(text: str) -> list[Record]:
    """Every incident or document block in a tool message."""
    records = []
    for block in text.split(BLOCK_SEPARATOR):
        record = _parse_block(block)
        if record is not None:
            records.append(record)
    return records


def _parse_block(block: str) -> Record | None:
    head, _, body = block.partition(BODY_MARKER)
    fields: dict[str, str] = {}
    for line in head.splitlines():
        match = _FIELD_RE.match(line.strip())
        if match and (fields or match.group("name") in {"Incident ID", "Document ID"}):
            fields[match.group("name")] = match.group("value").strip()
    record_id = fields.get("Incident ID") or fields.get("Document ID")
    return Record(record_id, fields, body.strip()) if record_id else None


def last_user_index(messages: list[ChatMessage]) -> int:
    return max(i for i, m in enumerate(messages) if m["role"] == "user")


def turn_outcomes(messages: list[ChatMessage], start: int) -> list[ToolOutcome]:
    """The tool results after `start`, paired with the calls that asked for them."""
    calls = {
        call["id"]: call["function"]
        for message in messages[start:]
        for call in message.get("tool_calls") or []
    }
    outcomes = []
    for message in messages[start:]:
        if message["role"] == "tool":
            call = calls.get(message.get("tool_call_id", ""), {})
            text = message.get("content") or ""
            outcomes.append(
                ToolOutcome(call.get("name", ""), call.get("arguments", ""), text,
                            parse_records(text))
            )  # fmt: skip
    return outcomes


def conversation_state(messages: list[ChatMessage]) -> ConversationState:
    """The incidents of the latest earlier turn whose tools returned any (and, when
    that was one incident, the latest listing of several before it)."""
    # Each earlier turn's tool messages parsed once: the incidents and the
    # documents below both read them (parsing is most of this function's time).
    earlier = _earlier_turn_records(messages)
    turns = list(_earlier_turns_with_incidents(messages, earlier))
    documents, documents_question = _latest_documents(messages, earlier)
    if not turns:
        return ConversationState(documents=documents, documents_question=documents_question)
    question, focus = turns[0]
    listed = next((found for _, found in turns[1:] if len(found) > 1), ())
    seen: dict[str, Remembered] = {}
    for item in (item for _, found in turns for item in found):
        seen.setdefault(item.incident_id, item)
    return ConversationState(
        focus,
        question,
        documents=documents,
        documents_question=documents_question,
        listed=listed if len(focus) == 1 else (),
        seen=tuple(seen.values()),
    )


# (first, end) message indices of an earlier turn, and the records its tools returned.
_TurnRecords = tuple[int, int, list[Record]]


def _earlier_turn_records(messages: list[ChatMessage]) -> list[_TurnRecords]:
    """Each earlier turn with its tools' records, latest first."""
    return [
        (start, end, [r for o in turn_outcomes(messages[:end], start) for r in o.records])
        for start, end in _earlier_turns(messages)
    ]


def _latest_documents(
    messages: list[ChatMessage], earlier: list[_TurnRecords]
) -> tuple[tuple[RememberedDocument, ...], str]:
    """The documents the latest earlier turn that found anything was about, those
    its answer named first leading, and the question they answered; none when that
    turn's answer led with an incident (the past fixes under a runbook are not what
    it was about)."""
    for start, end, records in earlier:
        if records:
            ordered = _as_answered(records, _final_answer(messages[start:end]))
            if not ordered[0].is_document:
                return (), ""
            documents = [r for r in ordered if r.is_document]
            question = messages[start]["content"] or ""
            return tuple(_remembered_document(r) for r in documents), question
    return (), ""


def _remembered_document(record: Record) -> RememberedDocument:
    related = tuple(i.strip() for i in record.get("Related incidents").split(",") if i.strip())
    return RememberedDocument(record.id, record.title, record.get("Type"), related)


def _earlier_turns(messages: list[ChatMessage]) -> Iterator[tuple[int, int]]:
    """(first, end) message indices of each earlier turn, latest first."""
    current = last_user_index(messages)
    starts = [i for i, m in enumerate(messages[:current]) if m["role"] == "user"]
    ends = [*starts[1:], current]
    return reversed(list(zip(starts, ends, strict=False)))


def _as_answered(records: list[Record], answer: str) -> list[Record]:
    """Unique records, those the answer named first leading."""
    unique = list({r.id: r for r in records}.values())
    unique.sort(key=lambda r: answer.find(r.id) if r.id in answer else len(answer) + 1)
    return unique


def _earlier_turns_with_incidents(
    messages: list[ChatMessage], earlier: list[_TurnRecords]
) -> Iterator[tuple[str, tuple[Remembered, ...]]]:
    """(question, incidents remembered) of each earlier turn that found any, latest first."""
    for start, end, records in earlier:
        incidents = [r for r in records if not r.is_document]
        if incidents:
            answer = _final_answer(messages[start:end])
            yield messages[start]["content"], _remember(incidents, answer)


def _final_answer(messages: list[ChatMessage]) -> str:
    """The assistant's last answer (not a tool-call turn) among `messages`, or ""."""
    answers = [m for m in messages if m["role"] == "assistant" and not m.get("tool_calls")]
    if not answers:
        return ""
    return str(answers[-1].get("content") or "")


def _remember(records: list[Record], answer: str) -> tuple[Remembered, ...]:
    """Unique incidents, those the answer named first leading (what it was about)."""
    return tuple(
        Remembered(r.id, r.title, r.get("Impacted Application"), r.get("Occurred At"), r.text)
        for r in _as_answered(records, answer)
    )
