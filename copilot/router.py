"""The offline engine's decision logic: a question (and state) → a tool call.

Deterministic and explainable: incident ids first, then knowledge wording,
then time windows, then application listings, else similar-incident search.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
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
_LIST_ALL_RE = re.compile(r"\b(?:all|every|list|each)\b", re.IGNORECASE)
_KNOWLEDGE_RE = re.compile(
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
    if not _KNOWLEDGE_RE.search(question):
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
