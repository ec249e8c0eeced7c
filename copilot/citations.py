"""Citations in a final answer, checked against what the tools returned. No ORM here.

A model may write an id it never saw (a hallucination or a prompt injection
in a document). Such ids are dropped from the citation list and marked in
the text, so the reader sees that nothing backs them. The caller passes as
`returned` what the tools returned and, for other ids the answer writes (an
incident a runbook quotes), those the user may read in the database.

Two kinds of id are not citations and are left as written: an id the user
typed (the answer repeats the question's words), and an id in a clause
saying it was not found ("No incident found with ID ..."): neither claims
that a record backs it. Only its own clause counts: "found no incidents in
2019; the closest is INC-..." and "no incident other than INC-..." do claim it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection
from dataclasses import dataclass
from functools import lru_cache

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


_NOT_FOUND_RE = re.compile(
    r"\b(?:no\s+(?:incident|document|record|result)s?\b|not\s+(?:be\s+)?found|"
    r"could\s*n[o']t\s+find|can\s*n[o']t\s+find|does\s*n[o']t\s+exist|found\s+no(?:thing)?\b|"
    r"nothing\s+(?:was\s+)?found|did\s*n[o']t\s+find)",
    re.IGNORECASE,
)
# Where a clause ends: a sentence, a semicolon, a spaced dash, or a turn to
# something else ("..., but", "however", "instead").
_CLAUSE_END_RE = re.compile(
    r"[.!?;](?:\s|$)|\n|\s[-\u2013\u2014]\s|\b(?:but|however|instead|although|though)\b",
    re.IGNORECASE,
)
# "No incident other than INC-...": the id is the one that was found.
_EXCEPT_RE = re.compile(r"\b(?:other\s+than|except(?:\s+for)?|apart\s+from|besides)\W*$", re.I)


@lru_cache(maxsize=8)
def _id_matches(text: str) -> tuple[re.Match[str], ...]:
    """Where ids are written in `text`, kept for the last few texts: an answer is
    scanned for the ids to verify, then again to mark them, and one scan of a
    1,500-character answer costs ~0.2 ms (the pattern starts with no literal the
    engine can skip to, so it is tried at every character)."""
    return tuple(_ANY_ID_RE.finditer(text))


def cited_ids(text: str) -> set[str]:
    """Every incident and document id written in `text`, normalised."""
    return {_normalise(m.group(0)) for m in _id_matches(text)}


def check_citations(text: str, returned: Collection[str], *, typed: str = "") -> CheckedAnswer:
    """Keep ids a tool returned; mark the others where they are written,
    except ids `typed` by the user and ids in a not-found sentence."""
    kept: dict[str, None] = {}
    dropped: dict[str, None] = {}
    from_user = {_normalise(m.group(0)) for m in _ANY_ID_RE.finditer(typed)}

    def mark(match: re.Match[str]) -> str:
        cited = _normalise(match.group(0))
        if cited in returned:
            kept[cited] = None
            return match.group(0)
        if cited in from_user or _said_not_found(text, match):
            return match.group(0)
        dropped[cited] = None
        return match.group(0) + UNVERIFIED_MARK

    return CheckedAnswer(_replaced(text, mark), list(kept), list(dropped))


def _replaced(text: str, replace: Callable[[re.Match[str]], str]) -> str:
    """`_ANY_ID_RE.sub(replace, text)` on the matches already found."""
    parts: list[str] = []
    end = 0
    for match in _id_matches(text):
        parts += (text[end : match.start()], replace(match))
        end = match.end()
    return "".join(parts) + text[end:]


def _said_not_found(text: str, match: re.Match[str]) -> bool:
    """Whether the clause the id is written in says that it was not found."""
    starts = [m.end() for m in _CLAUSE_END_RE.finditer(text, 0, match.start())]
    start = starts[-1] if starts else 0
    end = _CLAUSE_END_RE.search(text, match.end())
    if _EXCEPT_RE.search(text, start, match.start()):
        return False
    return bool(_NOT_FOUND_RE.search(text[start : end.start() if end else len(text)]))
