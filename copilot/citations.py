"""Citations in a final answer, checked against what the tools returned. No ORM here.

A model may write an id it never saw (a hallucination or a prompt injection
in a document). Such ids are dropped from the citation list and marked in
the text, so the reader sees that nothing backs them.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from incidents.parsing import INCIDENT_ID_IN_TEXT_RE, normalize_incident_id
from knowledge.parsing import DOCUMENT_ID_IN_TEXT_RE, normalize_document_id

UNVERIFIED_MARK = " [unverified: no search returned this id]"


@dataclass(frozen=True)
class CheckedAnswer:
    text: str
    kept: list[str]
    dropped: list[str]


def _normalise(raw: str) -> str:
    if raw.upper().startswith("KB"):
        return normalize_document_id(raw)
    return normalize_incident_id(raw)


_ANY_ID_RE = re.compile(
    f"(?:{INCIDENT_ID_IN_TEXT_RE.pattern})|(?:{DOCUMENT_ID_IN_TEXT_RE.pattern})", re.IGNORECASE
)


def check_citations(text: str, returned: Collection[str]) -> CheckedAnswer:
    """Keep ids a tool returned; mark the others where they are written."""
    kept: dict[str, None] = {}
    dropped: dict[str, None] = {}

    def mark(match: re.Match[str]) -> str:
        cited = _normalise(match.group(0))
        if cited in returned:
            kept[cited] = None
            return match.group(0)
        dropped[cited] = None
        return match.group(0) + UNVERIFIED_MARK

    marked = _ANY_ID_RE.sub(mark, text)
    return CheckedAnswer(marked, list(kept), list(dropped))
