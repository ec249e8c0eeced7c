"""The offline engine's decision logic: a question (and state) → a tool call.

Deterministic and explainable: incident ids first, then knowledge wording,
then time windows, then application listings, else similar-incident search.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from incidents import query_parsing as qp
from incidents.parsing import find_incident_ids

DEFAULT_LIMITS = {
    "search_similar_incidents": 5,
    "get_incidents_by_application": 5,
    "get_recent_incidents": 10,
    "search_knowledge": 10,
}
LISTING_LIMIT = 25  # "all", "every", "list": people want the whole set
_LIST_ALL_RE = re.compile(r"\b(?:all|every|list|each|show\s+me)\b", re.IGNORECASE)
KNOWLEDGE_RE = re.compile(
    r"\b(?:runbooks?\s+(?:for|to|on|about)|the\s+runbook|is\s+there\s+a\s+(?:runbook|playbook|doc)"
    r"|runbook\b|playbook\s+for|known\s+issues?|postmortem\s+template|review\s+doc"
    r"|how\s+(?:do|can|should)\s+(?:i|we|you)\b|how\s+to\b|how\s+should\b"
    r"|what\s+(?:do|should)\s+(?:we|i|on-?call)\s+do|what\s+to\s+do\b|what\s+are\s+the\s+first\s+steps"
    r"|steps\s+(?:to|for)\b|procedure|guidance|checklist|best\s+practices?|template)",
    re.IGNORECASE,
)
_KNOWLEDGE_TYPES = (
    (re.compile(r"\bknown\s+issues?\b", re.IGNORECASE), "known_issue"),
    (re.compile(r"\brunbooks?\b", re.IGNORECASE), "runbook"),
)


@dataclass(frozen=True)
class Route:
    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    reason: str = ""


def route(question: str, *, catalog: Sequence[qp.ApplicationEntry], today: dt.date) -> Route:
    """Pick the first tool a good agent would call for `question`."""
    for decide in (_by_id, _by_knowledge, _by_window, _by_application):
        decision = decide(question, catalog, today)
        if decision is not None:
            return decision
    return Route(
        "search_similar_incidents",
        {"query": question, "limit": _limit(question, "search_similar_incidents")},
        "default",
    )


def _limit(question: str, tool: str) -> int:
    return LISTING_LIMIT if _LIST_ALL_RE.search(question) else DEFAULT_LIMITS[tool]


def _by_id(question: str, catalog: Sequence[qp.ApplicationEntry], today: dt.date) -> Route | None:
    ids = find_incident_ids(question)
    if not ids:
        return None
    return Route("lookup_incident_by_id", {"incident_id": ids[0]}, "incident id")


def _by_knowledge(
    question: str, catalog: Sequence[qp.ApplicationEntry], today: dt.date
) -> Route | None:
    if not KNOWLEDGE_RE.search(question):
        return None
    arguments: dict[str, Any] = {"query": question, "limit": DEFAULT_LIMITS["search_knowledge"]}
    for pattern, doc_type in _KNOWLEDGE_TYPES:
        if pattern.search(question):
            arguments["type_filter"] = doc_type
            break
    return Route("search_knowledge", arguments, "knowledge wording")


def _by_window(
    question: str, catalog: Sequence[qp.ApplicationEntry], today: dt.date
) -> Route | None:
    window, rest = qp.parse_time_window(question, today)
    if window is None:
        return None
    narrowed = (
        _application_subject(rest, catalog)
        or qp.parse_category(rest)
        or qp.parse_repeat(rest)
        or qp.parse_severity(rest)
    )
    if narrowed or window.days is None or window.end != today:
        # Filters beyond the date, or a calendar window: the search tool
        # applies all of them together.
        limit = _limit(question, "search_similar_incidents")
        return Route(
            "search_similar_incidents", {"query": question, "limit": limit}, "window + filters"
        )
    limit = _limit(question, "get_recent_incidents")
    return Route(
        "get_recent_incidents", {"days": max(window.days, 1), "limit": limit}, window.label
    )


def _application_subject(text: str, catalog: Sequence[qp.ApplicationEntry]) -> str | None:
    subject = qp.listing_subject(text)
    if subject is None and len(text.split()) <= 4:
        subject = re.sub(r"[?!.]+$", "", text.strip())
    if subject and qp.parse_category(text) is None and qp.match_applications(subject, catalog):
        return subject
    return None


def _by_application(
    question: str, catalog: Sequence[qp.ApplicationEntry], today: dt.date
) -> Route | None:
    subject = _application_subject(question, catalog)
    if subject is None:
        return None
    limit = _limit(question, "get_incidents_by_application")
    return Route(
        "get_incidents_by_application", {"app_name": subject, "limit": limit}, "application"
    )


# --- follow-ups: questions about what earlier answers found --------------------------


@dataclass(frozen=True)
class Remembered:
    """An incident an earlier turn's tools returned, as the model read it."""

    incident_id: str
    title: str
    application: str = ""
    occurred_at: str = ""
    text: str = ""  # the whole block, for matching names and topics


@dataclass(frozen=True)
class ConversationState:
    """What the offline engine remembers: the incidents the latest turn was about."""

    focus: tuple[Remembered, ...] = ()
    last_question: str = ""


SELECT_MANY_LIMIT = LISTING_LIMIT
PAST_FIXES_LIMIT = 3
_FIXING_RE = re.compile(
    r"\b(?:fix\w*|resolv\w*|troubleshoot\w*|debug\w*|mitigat\w*|recover\w*|errors?|"
    r"fail\w*|outage|down|timeouts?|[45]\d\d)\b",
    re.IGNORECASE,
)
_REFERENCE_RE = re.compile(
    r"\b(?:it|its|they|them|those|these|the\s+same|same|again|afterwards|later|"
    r"this(?=\s*(?:[?.!,]|$|\s+(?:one|incident|outage|kind|issue|type|problem|case)))|"
    r"that(?=\s*(?:[?.!,]|$|\s+(?:one|incident|outage|kind|issue|type|problem|case)))|"
    r"the\s+[\w.-]+(?:\s+[\w.-]+)?\s+one|"
    r"which\s+one|one\s+of\s+(?:them|those))\b",
    re.IGNORECASE,
)
_FIELD_RE = re.compile(
    r"\b(?:mitigat\w*|fix(?:ed)?|resolv\w*|root\s+cause|caused?|why|accountable|responsible|"
    r"who|owner|how\s+long|duration|impact\w*|data|lost|repeat\w*|recover\w*)\b",
    re.IGNORECASE,
)
_RECURRENCE_RE = re.compile(
    r"\b(?:again|later|recur\w*|since\s+then|after\s+that)\b", re.IGNORECASE
)
_SIMILAR_RE = re.compile(
    r"\b(?:more\s+like\s+(?:this|that|it|these|those)|similar\s+(?:ones|incidents|outages)|"
    r"(?:other|any)\s+(?:incidents|outages|ones)\s+like)\b",
    re.IGNORECASE,
)
_SELECT_MANY_RE = re.compile(
    r"\b(?:which\s+of\s+(?:those|them|these)|any\s+of\s+(?:those|them|these)|"
    r"which\s+ones|were\s+any|are\s+any|did\s+any)\b",
    re.IGNORECASE,
)
SUPERLATIVES = {
    "longest": "duration", "shortest": "duration", "latest": "date", "newest": "date",
    "most recent": "date", "oldest": "date", "earliest": "date", "broadest": "breadth",
    "biggest": "breadth", "largest": "breadth", "widest": "breadth", "worst": "breadth",
    "most": "breadth", "greatest": "breadth",
}  # fmt: skip
_SUPERLATIVE_RE = re.compile(
    r"\b(?:which|what)\s+(?:one|incident|outage)\b.*?\b(?P<word>"
    + "|".join(sorted(SUPERLATIVES, key=len, reverse=True)).replace(" ", r"\s+")
    + r")\b",
    re.IGNORECASE,
)
_ORDINALS = {"first": 0, "second": 1, "third": 2, "fourth": 3, "fifth": 4, "last": -1}
_ORDINAL_RE = re.compile(
    r"\b(?:the\s+(?P<n>first|second|third|fourth|fifth|last)\b|"
    r"(?P<m>first|second|third|fourth|fifth|last)\s+(?:one|incident|outage)\b)",
    re.IGNORECASE,
)
_NAME_RE = re.compile(r"\bthe\s+(?P<name>[\w.-]+(?:\s+[\w.-]+)?)\s+(?:one|incident|outage)\b", re.I)
_MONTH_NAMES = [name.capitalize() for name in qp.MONTHS]


def follow_up_kind(question: str, state: ConversationState, today: dt.date) -> str | None:
    """How `question` refers back to earlier results, or None if it stands alone.

    knowledge | similar | recurrence | superlative | select_many | one
    """
    if not state.focus or find_incident_ids(question):
        return None
    window, _ = qp.parse_time_window(question, today)
    short_field_question = len(question.split()) <= 6 and _FIELD_RE.search(question)
    if window is not None or not (_REFERENCE_RE.search(question) or short_field_question):
        return None
    if KNOWLEDGE_RE.search(question) or re.search(r"\bdoc(?:ument)?s?\b", question, re.I):
        return "knowledge"
    if _SIMILAR_RE.search(question):
        return "similar"
    if _RECURRENCE_RE.search(question):
        return "recurrence"
    if _SUPERLATIVE_RE.search(question):
        return "superlative"
    if _SELECT_MANY_RE.search(question):
        return "select_many"
    return "one"


def superlative(question: str) -> tuple[str, str] | None:
    """ "Which one lasted longest?" → ("longest", "duration")."""
    match = _SUPERLATIVE_RE.search(question)
    if match is None:
        return None
    word = " ".join(match.group("word").split())
    return word, SUPERLATIVES[word.lower()]


def plan(
    question: str,
    *,
    state: ConversationState,
    catalog: Sequence[qp.ApplicationEntry],
    today: dt.date,
) -> list[Route]:
    """The tool calls for `question`: several ids or items at once, follow-ups from memory."""
    ids = find_incident_ids(question)
    if len(ids) > 1:
        return [Route("lookup_incident_by_id", {"incident_id": i}, "incident ids") for i in ids[:5]]
    kind = follow_up_kind(question, state, today)
    if kind is not None:
        return _FOLLOW_UPS[kind](question, state)
    first = route(question, catalog=catalog, today=today)
    if first.tool == "search_knowledge" and _FIXING_RE.search(question):
        # "How do I fix X?": the runbook first, and how X was fixed before.
        arguments = {"query": question, "limit": PAST_FIXES_LIMIT}
        return [first, Route("search_similar_incidents", arguments, "past fixes")]
    return [first]


def _lookup(item: Remembered, reason: str) -> Route:
    return Route("lookup_incident_by_id", {"incident_id": item.incident_id}, reason)


def _knowledge_follow_up(question: str, state: ConversationState) -> list[Route]:
    """Documents about what the conversation is on: the question's topic plus the incident."""
    topic = f"{state.last_question} {state.focus[0].title}".strip()
    arguments: dict[str, Any] = {"query": topic, "limit": DEFAULT_LIMITS["search_knowledge"]}
    for pattern, doc_type in _KNOWLEDGE_TYPES:
        if pattern.search(question):
            arguments["type_filter"] = doc_type
            break
    return [Route("search_knowledge", arguments, "knowledge follow-up")]


def _recurrence_follow_up(question: str, state: ConversationState) -> list[Route]:
    """Later incidents like the one in focus: its title, from its month on."""
    item = state.focus[0]
    query = item.title
    if item.occurred_at[:7].count("-") == 1:
        year, month = item.occurred_at[:7].split("-")
        query += f" since {_MONTH_NAMES[int(month) - 1]} {year}"
    limit = DEFAULT_LIMITS["search_similar_incidents"] + 1  # the focus itself comes back too
    return [Route("search_similar_incidents", {"query": query, "limit": limit}, "recurrence")]


def _similar_follow_up(question: str, state: ConversationState) -> list[Route]:
    """More incidents like the one in focus, from any time."""
    limit = DEFAULT_LIMITS["search_similar_incidents"] + 1  # the focus itself comes back too
    query = state.focus[0].title
    return [Route("search_similar_incidents", {"query": query, "limit": limit}, "more like this")]


def _select_many_follow_up(question: str, state: ConversationState) -> list[Route]:
    """Re-read each remembered incident; the answer keeps those that fit."""
    return [_lookup(item, "which of those") for item in state.focus[:SELECT_MANY_LIMIT]]


def _one_follow_up(question: str, state: ConversationState) -> list[Route]:
    """The item pointed at; a name none of them carries is searched for instead."""
    item = selected_item(question, state.focus)
    if item is not None:
        return [_lookup(item, "follow-up")]
    # The name plus the application under discussion; the earlier question's
    # own filters (a category, a window) could hide the named incident.
    application = re.sub(r"\s*\(.*?\)", "", state.focus[0].application)
    query = f"{named_item(question)} {application}".strip()
    limit = DEFAULT_LIMITS["search_similar_incidents"]
    return [Route("search_similar_incidents", {"query": query, "limit": limit}, "named")]


def named_item(question: str) -> str:
    """ "the Mandrill one" → "Mandrill"; "" when no item is named."""
    named = _NAME_RE.search(question)
    if named is None or named.group("name").lower() in _ORDINALS:
        return ""
    return named.group("name")


def selected_item(question: str, focus: Sequence[Remembered]) -> Remembered | None:
    """The item a follow-up points at: by ordinal, by name (None if no item has
    it), else the first."""
    ordinal = _ORDINAL_RE.search(question)
    if ordinal:
        index = _ORDINALS[(ordinal.group("n") or ordinal.group("m")).lower()]
        if -len(focus) <= index < len(focus):
            return focus[index]
    name = named_item(question).lower()
    if not name:
        return focus[0]
    for fields in (lambda i: f"{i.title} {i.application}", lambda i: i.text):
        found = [item for item in focus if name in fields(item).lower()]
        if found:
            return found[0]
    return None


_FOLLOW_UPS: dict[str, Callable[[str, ConversationState], list[Route]]] = {
    "knowledge": _knowledge_follow_up,
    "similar": _similar_follow_up,
    "recurrence": _recurrence_follow_up,
    "superlative": _select_many_follow_up,
    "select_many": _select_many_follow_up,
    "one": _one_follow_up,
}
