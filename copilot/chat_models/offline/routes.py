"""A route: one tool call the engine decides on, with the reason it was chosen."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from copilot.tools import default_limit

# The routed tools' limits when the question asks for no number: the tools' own.
DEFAULT_LIMITS = {
    name: default_limit(name)
    for name in (
        "search_similar_incidents",
        "get_incidents_by_application",
        "get_recent_incidents",
        "search_knowledge",
    )
}
LISTING_LIMIT = 25  # "all", "every", "list": people want the whole set
# "at all" and "all day" say how much something broke, not how many to list.
_LIST_ALL_RE = re.compile(
    r"\b(?:(?<!\bat\s)all(?!\s+(?:day|night|morning|week|the\s+time))|every|list|each|"
    r"show\s+me|everything)\b",
    re.IGNORECASE,
)
# A kind named outright wins over one inferred from how the question asks: "is that
# expected? what does the arch doc say" wants the architecture note.
_DOCUMENT_TYPES = (
    # What people call a documented gotcha: "a known issue", "is this a known thing?".
    (
        re.compile(
            r"\b(?:known|documented)[- ]"
            r"(?:issues?|problems?|bugs?|things?|gotchas?|limitations?)\b",
            re.IGNORECASE,
        ),
        "known_issue",
    ),
    (re.compile(r"\b(?:runbooks?|playbooks?)\b", re.IGNORECASE), "runbook"),
    (
        re.compile(
            r"\b(?:post-?mortems?|(?:incident\s+)?reviews?\s+docs?|incident\s+reviews?|"
            # "our review of the us-east-1 events": a review *of* something is a document.
            r"(?:our|the)\s+(?:reviews?|write-?ups?)\s+(?:of|on)|"
            # What several incidents share is what incident reviews draw out.
            r"(?:common|recurring|shared)\s+(?:threads?|themes?|patterns?|causes?)|"
            r"what(?:'?s|\s+is)\s+the\s+pattern|"
            r"retros?|retrospectives?)\b",
            re.IGNORECASE,
        ),
        "postmortem",
    ),
    (
        re.compile(
            r"\barchitecture\b|\barch\s+(?:docs?|notes?|diagrams?|overview|review)\b"
            r"|\bdesign\s+(?:docs?|notes?)\b",
            re.IGNORECASE,
        ),
        "architecture",
    ),
)
# A kind inferred from how the question asks, when it names none outright.
_INFERRED_TYPE = (
    re.compile(
        # "...every 15 minutes, is that expected?": whether it is known behaviour.
        r"\b(?:is|was)\s+(?:this|that|it)\s+(?:expected|normal|by\s+design|common|"
        r"a\s+(?:known\s+|common\s+)?(?:thing|bug))\b"
        # "...at 16TB, hidden limit?": a limit nobody wrote down is a known issue.
        r"|\b(?:hidden|undocumented|silent|secret)\s+(?:limits?|caps?|quotas?|ceilings?)\b",
        re.IGNORECASE,
    ),
    "known_issue",
)


@dataclass(frozen=True)
class Route:
    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)
    reason: str = ""


def limit_for(question: str, tool: str) -> int:
    return LISTING_LIMIT if _LIST_ALL_RE.search(question) else DEFAULT_LIMITS[tool]


# A search's story says "all" and "every" of what broke ("every client reconnected at
# once", "took all the nodes down"): only asking for all the incidents asks for more
# than the closest few.
_ALL_INCIDENTS_RE = re.compile(
    r"\b(?:all|every|each)\s+(?:(?:of\s+)?(?:the|such|similar|other|past|those|these|"
    r"relevant|matching|related)\s+)*(?:incidents?|outages?|cases?|times?|ones?|events?|"
    r"matches|results|post-?mortems?|examples?)\b"
    r"|^\W*(?:list|show\s+me\s+(?:all|every))\b|\blist\s+(?:all|every|them|those|these)\b"
    r"|\beverything\b",
    re.IGNORECASE,
)


def search_limit(question: str) -> int:
    """How many similar incidents a search asks for (`_ALL_INCIDENTS_RE`)."""
    tool = "search_similar_incidents"
    return LISTING_LIMIT if _ALL_INCIDENTS_RE.search(question) else DEFAULT_LIMITS[tool]


def listing_limit(question: str) -> int:
    """A listing (an application's incidents, a window's) asks for the set, not
    its first page: "CircleCI outages?" means all of them, as "all" would. A
    number the question gives ("the 3 most recent", "top 10") is kept."""
    asked = _ASKED_NUMBER_RE.search(question)
    if asked is None:
        return LISTING_LIMIT
    return min(int(asked.group("n") or asked.group("m")), LISTING_LIMIT)


# "the 3 most recent", "top 10", "last 5 incidents"; not "last 5 days" (a window).
_ASKED_NUMBER_RE = re.compile(
    r"\b(?:top|first|latest|last|newest|recent)\s+(?P<n>[1-9]\d?)\b"
    r"(?!\s*(?:days?|weeks?|months?|years?|hours?|quarters?)\b)"
    r"|\b(?P<m>[1-9]\d?)\s+(?:most\s+recent|latest|newest|biggest|worst)\b",
    re.IGNORECASE,
)


# Documentation asked for without a type ("any docs on X?", "docs about the payments
# service"): a request for documents, never a filter. The words before it keep
# product names ("Google Docs outages") and stories ("the docs say retries are
# safe, yet…", "our wiki for X was wrong") out. "A write-up" is left out: people
# say it of an incident's own postmortem as often as of a document.
_DOCUMENTATION_RE = re.compile(
    r"\b(?:any|a|some|there(?:\s+(?:a|any))?)\s+"
    r"(?:docs?|documentation|wiki(?:\s+page)?|guides?|guidance|guidelines?)\b"
    r"|(?<!\bthe\s)(?<!\bour\s)\b(?:docs?|documentation|wiki|guides?|guidance|guidelines?)\s+"
    r"(?:on|about|for|covering)\b"
    # "anything written up for when someone hijacks our prefixes?", "what do we have
    # documented on X": what was written down, asked for without naming a kind.
    r"|\b(?:anything|something|stuff|notes?)\s+(?:written|documented)\b"
    r"|\b(?:written|wrote)\s+(?:up|down)\s+(?:for|about|on)\b"
    r"|\bdocumented\s+(?:for|about|on|anywhere)\b",
    re.IGNORECASE,
)


def document_asked(question: str) -> str | None:
    """The kind of document a question asks for: its type, "document" when it
    asks for documentation of no type, "review" when it asks what several
    incidents share, None when it asks for none."""
    asked = _DOCUMENT_IN_STORY_RE.sub(" ", question)
    if _DOCUMENTATION_RE.search(asked) or len(document_types(asked)) > 1:
        return document_type(asked) or "document"
    return document_type(asked) or ("review" if _SYNTHESIS_RE.search(asked) else None)


# What several incidents share, as people ask for it: what they have in common,
# what ties them together, the lessons drawn from them, what goes wrong across
# them, a review of them. Incident reviews say it, and so may a runbook: no type
# filter.
_SYNTHESIS_RE = re.compile(
    r"\bin\s+common\b|\b(?:ties?|tying|links?|connects?)\s+(?:[\w'\u2019./-]+\s+){0,5}?together\b"
    r"|\bpatterns?\s+(?:that\s+)?(?:repeat|recur|keep)\w*"
    r"|\b(?:lessons?|across|reviews?\s+(?:of|on|about|covering))\s+(?:[\w'\u2019./-]+\s+){0,12}?"
    r"(?:incidents|outages|events|failures|failovers|post-?mortems)\b",
    re.IGNORECASE,
)


# A kind of document that is part of the story, not what is asked for: "someone
# fat-fingered a playbook command", "the runbook script hung", "quick one for the
# retro: did we ever lose…" (what the retro needs is the past incident), "the
# runbook's rollback made it worse".
_DOCUMENT_IN_STORY_RE = re.compile(
    r"\b(?:runbook|playbook|post-?mortem|retro)s?\s+(?:commands?|scripts?|jobs?|meetings?|calls?|"
    r"drills?)\b"
    # ...or what one of them did: "the runbook's rollback made it worse".
    r"|\b(?:runbook|playbook)['\u2019]s\b"
    r"|\bfor\s+(?:the|our|a|my|this)\s+(?:post-?mortem|retro(?:spective)?|incident\s+review)"
    r"(?=\s*[:,;\u2014-]|\s+(?:i|we)\b)",
    re.IGNORECASE,
)


def document_type(question: str) -> str | None:
    """The document type a question names ("the runbook", "known issues"), if it
    names one: "a known issue or runbook" asks for either, so for no one type. A
    kind inferred from how it asks ("is that expected?") only when none is named."""
    named = document_types(question)
    if named:
        return named[0] if len(named) == 1 else None
    inferred, kind = _INFERRED_TYPE
    return kind if inferred.search(question) else None


def document_types(question: str) -> list[str]:
    """The kinds of document a question names outright, in the order of the types."""
    return list(
        dict.fromkeys(kind for pattern, kind in _DOCUMENT_TYPES if pattern.search(question))
    )
