"""Follow-ups: questions about what the last turns found.

The intent model says *that* a question follows up; these say *how* it
refers back: to one record (by ordinal, by name, else the first), to all of
them ("which of those…", "which lasted longest?"), to later or similar
incidents, or to documents about the same topic. Detail questions re-read
the record with `lookup_incident_by_id` and are answered extractively.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from copilot.chat_models.offline.around import around_focus, places_another_in_time
from copilot.chat_models.offline.extract import pointer_clause
from copilot.chat_models.offline.routes import (
    DEFAULT_LIMITS,
    LISTING_LIMIT,
    Route,
    document_type,
)
from copilot.chat_models.offline.state import ConversationState, Remembered
from incidentdesk.embeddings import similarities
from incidents import query_parsing as qp
from incidents.ranking import content_words

SELECT_MANY_LIMIT = LISTING_LIMIT
_REFERENCE_RE = re.compile(
    r"\b(?:it|its|they|them|theirs|those|these|the\s+same|same|again|afterwards|later|"
    r"this(?=\s*(?:[?.!,]|$|\s+(?:one|incident|outage|kind|issue|type|problem|case)))|"
    r"that(?=\s*(?:[?.!,]|$|\s+(?:one|incident|outage|kind|issue|type|problem|case)))|"
    # "is that a known issue?", "was this expected?": the pronoun is the subject.
    r"(?:is|was|did|does|has|had|could|would|can|will)\s+(?:that|this)\b|"
    # "…about catching this earlier?", "handling that in future": the object of a verb,
    # closing its clause (not "anything that would…", "assuming that the…").
    r"(?!(?:some|any|no|every)thing\b|during\b)\w+ing\s+(?:that|this)"
    r"(?=\s*(?:[?.!,;]|$|\s+(?:earlier|sooner|faster|quicker|again|next\s+time|in\s+(?:the\s+)?"
    r"future|before|early)\b))|"
    r"the\s+[\w.-]+(?:\s+[\w.-]+){0,2}\s+one|"
    r"which\s+one|one\s+of\s+(?:them|those))\b",
    re.IGNORECASE,
)
_FIELD_RE = re.compile(
    r"\b(?:mitigat\w*|fix(?:ed)?|resolv\w*|root\s+cause|caused?|why|accountable|responsible|"
    r"who|owner|how\s+long|duration|impact\w*|data|lost|repeat\w*|recover\w*)\b",
    re.IGNORECASE,
)
# "Did it happen again?", not "how did they get jobs moving again" (a recovery).
_RECURRENCE_RE = re.compile(
    # "Has that hit anyone since?": a bare "since" closing the question is "since then".
    r"\b(?:again|later|recur\w*|since\s+then|after\s+that)\b|\bsince\s*(?:[?.!]|$)",
    re.IGNORECASE,
)
# "What did they change so it wouldn't happen again?", "…to stop it happening again?":
# a repeat guarded against (a purpose), which the record's follow-ups tell, not a
# repeat asked about ("so did it happen again?" still asks).
_NEVER_AGAIN_RE = re.compile(
    r"\b(?:so(?:\s+that)?\s+(?:it|that|this|they|we)\s+(?:would|will|could|can|should|might|"
    r"wouldn't|won't|can't|couldn't|wouldnt|wont|cant|never|not|doesn't|doesnt|does\s+not|"
    r"don't|dont|do\s+not)|to\s+(?:make\s+sure|ensure|"
    r"stop|keep|avoid))\b[^.?!]{0,40}?\bagain\b",
    re.IGNORECASE,
)
# "Again" after a word for a working state is the recovery, not a repeat.
_WORKING_AGAIN_RE = re.compile(
    r"\b(?:working|running|moving|flowing|going|serving|loading|responding|processing|"
    r"syncing|building|deploying|up|back|online|normal|healthy|available|reachable|stable|"
    r"green|operational|functional|usable|fine|ok|okay)\s+again\b",
    re.IGNORECASE,
)


# Whether the incident itself was a repeat: its record's field, looking back ("was it
# flagged as a recurrence of something earlier?"), not whether it happened again.
_WAS_A_REPEAT_RE = re.compile(
    r"\b(?:was|is|were)\s+(?:it|that|this|they)(?:\s+one)?\s+(?:(?:flagged|marked|recorded|"
    r"listed|counted|tagged|classed|classified|considered|labell?ed|noted)\s+as\s+)?"
    r"(?:an?\s+)?(?:repeat|recurrence|re-?occurrence)\b"
    r"|\b(?:repeat|recurrence)\s+of\s+(?:an?\s+|something\s+|the\s+)?"
    r"(?:earlier|previous|prior|older)\b",
    re.IGNORECASE,
)


def asks_recurrence(question: str) -> bool:
    if _WAS_A_REPEAT_RE.search(question):
        return False  # "was it a recurrence?": its record, not later incidents
    question = _NEVER_AGAIN_RE.sub(" ", _WORKING_AGAIN_RE.sub(" ", question))
    return bool(_RECURRENCE_RE.search(question))


_SIMILAR_RE = re.compile(
    r"\b(?:more\s+like\s+(?:this|that|it|these|those)|similar\s+(?:ones|incidents|outages)|"
    r"(?:other|any)\s+(?:incidents|outages|ones)\s+like|"
    # "Were there other reconnect storms like that one?": others of a kind, like it.
    r"(?:other|another|more)\s+(?:[\w-]+\s+){1,3}?like\s+(?:that|this|it|those|these)\b|"
    # "anything similar at Google?", "has GitHub had something like that?"
    r"(?:anything|something|anyone|others?)\s+(?:else\s+)?(?:similar|like\s+(?:this|that|it))|"
    # "had that happened before somewhere?", "a repeat of something elsewhere?": the
    # same thing at someone else is a search, not a field of this record.
    r"(?:happen\w*|seen|repeat\w*|hit|bit(?:e|ten)?)\b.*?\b(?:somewhere|anywhere|elsewhere|"
    r"other\s+compan(?:y|ies)|anyone\s+else|anybody\s+else))\b"
    # "Did any other companies write up how that outage hit them?": other companies'
    # incidents are records of their own (other customers, services or regions are
    # parts of this one).
    r"|\b(?:other|else's)\s+(?:compan(?:y|ies)|firms?|organi[sz]ations?|businesses|vendors?|"
    r"providers?)\b",
    re.IGNORECASE,
)
# "any other incident where the database couldn't promote a primary?": others
# with what the question describes, not a detail of this one.
_OTHERS_WHERE_RE = re.compile(
    r"\b(?:other|another)\s+(?:[a-z-]+\s+){0,2}?"
    r"(?:incidents?|outages?|cases?|times?|ones?|compan(?:y|ies))\s+"
    r"(?:where|when|with|that|in\s+which|like)\b"
    # "What other times has that resolver been down?", "were there other occasions…":
    # other occurrences asked for, which a search finds, not this record.
    r"|\b(?:what|which|any|were\s+there|was\s+there|how\s+many|list|name)\s+(?:\w+\s+)?"
    r"other\s+(?:times?|occasions?|instances?)\b"
    # "Any other wraparound outages in the history besides that one?": all but it.
    r"|\b(?:other|more|else)\b[^?.!]*\b(?:besides|apart\s+from|aside\s+from|other\s+than|"
    r"except(?:\s+for)?)\s+(?:that|this|it|the)\b",
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
    r"\b(?:which|what)\b.*?\b(?P<word>"
    + "|".join(sorted(SUPERLATIVES, key=len, reverse=True)).replace(" ", r"\s+")
    + r")\b",
    re.IGNORECASE,
)
_ORDINALS = {"first": 0, "second": 1, "third": 2, "fourth": 3, "fifth": 4, "last": -1}
_ORDINALS.update({"1st": 0, "2nd": 1, "3rd": 2, "4th": 3, "5th": 4})
_ORDINAL_RE = re.compile(
    r"\b(?:the\s+(?P<n>first|second|third|fourth|fifth|last|1st|2nd|3rd|4th|5th)\b|"
    r"(?P<m>first|second|third|fourth|fifth|last|1st|2nd|3rd|4th|5th)\s+(?:one|incident|outage)\b)"
    r"|(?:#|\bno\.?\s*|\bnumber\s+)(?P<d>[1-5])\b",
    re.IGNORECASE,
)
_NAMED_AS = (
    r"(?P<name>[\w.-]+(?:\s+[\w.-]+){0,2})\s+"
    r"(?:one|incident|outage|thing|issue|problem|mess|case|story|example|event)\b"
)
_NAME_RE = re.compile(rf"\bthe\s+{_NAMED_AS}", re.I)  # "the Heroku one"
_TERSE_NAME_RE = re.compile(rf"^\W*{_NAMED_AS}", re.I)  # "basecamp one fix"
_MONTH_NAMES = [name.capitalize() for name in qp.MONTHS]
# What to do about it, rather than what happened: answered from documents.
_PROCEDURE_RE = re.compile(
    r"\b(?:should\s+(?:we|i|they|you)\s+(?:have|do)|in\s+place|prevent\w*|avoid\w*|"
    r"guard\w*\s+against|lessons?|best\s+practices?|how\s+(?:do|should|can|would)\s+(?:we|i)|"
    r"what\s+(?:do|should|can)\s+(?:we|i)\s+do|next\s+time|what\s+now|checklist|"
    r"standard\s+(?:response|procedure|practice))\b",
    re.IGNORECASE,
)
_DOCUMENT_RE = re.compile(
    r"\b(?:runbooks?|playbooks?|docs?|documents?|documentation|known[\s-]+issues?|write-?ups?|"
    r"procedures?|checklists?|guides?|guidance|guidelines?|polic(?:y|ies)|architecture)\b",
    re.IGNORECASE,
)
# How a document is said to relate to its subject: "a note that covers it".
_DOCUMENT_VERBS_RE = re.compile(
    r"\b(?:notes?|wiki|covers?|covering|covered|mentions?|describes?|explains?|"
    r"addresses|talks?\s+about|applies|applying)\b",
    re.IGNORECASE,
)
# A document pointed at ("that known issue", "the runbook", "this doc").
_POINTED_DOCUMENT_RE = re.compile(
    rf"\b(?:that|this|those|these|the|your)\s+(?:{_DOCUMENT_RE.pattern})(?:\s+(?:{_DOCUMENT_RE.pattern}))?",
    re.IGNORECASE,
)


# What "which …" may name when it compares the incidents shown: the incidents
# themselves, or what tells them apart (the company, the application). Any other
# noun ("which sender type took longest?", "which region was hit worst?") is a
# part of one incident: a detail of the record in focus, not a comparison.
_COMPARED_NOUNS = frozenset(
    {
        "one", "ones", "of", "among", "incident", "incidents", "outage", "outages", "event",
        "events", "issue", "issues", "problem", "problems", "case", "cases", "failure",
        "failures", "company", "companies", "vendor", "vendors", "provider", "providers",
        "app", "apps", "application", "applications", "service", "services", "product",
        "products", "platform", "platforms",
    }
)  # fmt: skip
_WHICH_NOUN_RE = re.compile(r"\b(?:which|what)\s+(?P<word>[a-z][\w-]*)", re.IGNORECASE)
# Words that start a clause rather than a noun phrase: "which lasted longest?".
_CLAUSE_STARTS = frozenset(
    {
        "was", "were", "is", "are", "s", "did", "does", "do", "had", "has", "have", "lasted",
        "last", "took", "take", "caused", "went", "hit", "affected", "would", "could",
        "the", "a", "an", "here", "there", "came", "happened", "impacted", "ran", "got",
    }
)  # fmt: skip


def _compares_incidents(question: str) -> bool:
    match = _WHICH_NOUN_RE.search(question)
    if match is None:
        return True
    word = match.group("word").lower()
    return word in _COMPARED_NOUNS or word in _CLAUSE_STARTS


# What the incident's own write-up says ("what did the postmortem recommend?",
# "according to their report…"): a detail of the record, not a request for documents.
_OWN_REPORT_RE = re.compile(
    r"\b(?:the|its|their|that)\s+(?:post-?mortem|write-?up|report|rca|retro(?:spective)?|review)"
    r"\s+(?:say|says|said|recommend\w*|conclude\w*|find|found|mention\w*|suggest\w*|"
    r"call\w*\s+for|blame\w*|propos\w*|admit\w*|list\w*)\b"
    r"|\b(?:according\s+to|in)\s+(?:the|its|their)\s+(?:post-?mortem|write-?up|report|rca)\b",
    re.IGNORECASE,
)


# What the incident's own write-up committed to: its follow-ups, action items and the
# lessons its team drew ("what lessons were learned?"), which its record tells; what
# *we* should learn is for documents.
ITS_FOLLOW_UPS_RE = re.compile(
    r"\b(?:follow[- ]?ups?|follow[- ]up\s+actions?|action\s+items?|remediation\s+items?|"
    r"post-?incident\s+actions?|lessons?\s+(?:were\s+|did\s+they\s+|they\s+)?(?:learn(?:ed|t)?|drawn)|"
    r"what\s+did\s+they\s+(?:learn|commit\s+to|promise|plan))\b",
    re.IGNORECASE,
)
_FIRST_PERSON_RE = re.compile(r"\b(?:we|us|our|ours|i|my)\b", re.IGNORECASE)
# What they did after it, asked by who, what and when in any order ("what changes
# did they make after that?", "were they gonna do anything differently next time?",
# "how did they stop it from happening again?"): all three in one sentence. Not
# "did they have outages after that?" (no action of theirs: a recurrence).
_THEIR_SIDE_RE = re.compile(r"\b(?:they|the\s+(?:team|company|vendor|provider|engineers))\b", re.I)
_THEIR_ACTION_RE = re.compile(
    r"\b(?:chang\w*|make|made|making|ship\w*|add\w*|put|implement\w*|stop\w*|prevent\w*|"
    r"plann?\w*|intend\w*|gonna|going\s+to|doing|do\s+(?:anything|something|differently)|"
    r"(?:did|do)(?=\s+(?:afterwards?|after|next|since)\b))\b",
    re.IGNORECASE,
)
_AFTERWARDS_RE = re.compile(
    r"\b(?:next\s+time|differently|going\s+forward|from\s+now\s+on|in\s+(?:the\s+)?future|"
    r"afterwards?|after\s+(?:that|it|this)|since\s+then|from\s+(?:happening|recurring)|"
    r"(?:happening|recurring)\s+again|(?:does|doesn't|doesnt|won't|wont|wouldn't|wouldnt|"
    r"never|not)\s+(?:happen|recur|repeat)\w*)",
    re.IGNORECASE,
)


def _asks_what_they_did_after(question: str) -> bool:
    return any(
        _THEIR_SIDE_RE.search(sentence)
        and _THEIR_ACTION_RE.search(sentence)
        and _AFTERWARDS_RE.search(sentence)
        for sentence in re.split(r"[.?!;]+", question)
    )


# "Anything we could steal from how they fixed it?", "what can we learn from the way
# the team handled it?": their handling, for us to borrow, is the record's to tell,
# whatever document of ours it is meant for.
THEIR_WAY_RE = re.compile(
    r"\b(?:from|of|like)\s+(?:how|what|the\s+way)\s+(?:they|the\s+(?:team|company|vendor|"
    r"provider|engineers))\s+(?:\w+\s+){0,2}?(?:did|fix\w*|handl\w*|recover\w*|resolv\w*|"
    r"mitigat\w*|chang\w*|respond\w*|dealt|deal\w*|got|clean\w*|manag\w*|approach\w*)\b",
    re.IGNORECASE,
)


def asks_their_way(question: str) -> bool:
    return bool(THEIR_WAY_RE.search(question))


def asks_its_follow_ups(question: str) -> bool:
    """ "Any follow-up actions?", "what lessons were learned?", "what did they change
    afterwards?": the record's own."""
    asked = ITS_FOLLOW_UPS_RE.search(question) or _asks_what_they_did_after(question)
    return bool(asked) and not _FIRST_PERSON_RE.search(question)


def asks_its_own_report(question: str) -> bool:
    return bool(_OWN_REPORT_RE.search(question))


# After documents: whether what they describe has happened ("has that bitten anyone
# before?", "which incidents does it draw on?", "did one ever break something for real?").
_OCCURRED_RE = re.compile(
    r"\b(?:bit(?:e|ten)?|burn(?:ed|t)?|hit|happen\w*|seen|occurr\w*|incidents?|outages?|"
    r"examples?|in\s+practice|in\s+the\s+wild|for\s+real|real[- ]world|draw\w*\s+on|"
    r"based\s+on|break\w*|broke|"
    # "Has that actually caused data loss somewhere?": a place it happened.
    r"somewhere|anywhere|elsewhere|in\s+prod(?:uction)?)\b",
    re.IGNORECASE,
)
# "Has a status page actually gone dark in a real outage in our records?": whether
# it happened, asked of the records.
_PAST_OR_WHICH_RE = re.compile(
    r"\b(?:ever|before|anyone|anybody|which|any|who|actually|really|on\s+record|"
    r"in\s+(?:our|the)\s+records?)\b",
    re.I,
)
# Incidents asked for in words; the document may then be only the pointer.
_INCIDENTS_ASKED_RE = re.compile(
    r"\b(?:any|which|what|some|list|name|show)\s+(?:(?:real|actual|past|other)\s+)?"
    r"(?:incidents?|outages?)\b",
    re.IGNORECASE,
)
_DOCUMENT_TITLE_PREFIX_RE = re.compile(r"^\s*[\w ]{2,20}:\s+")


def asks_incidents_of_documents(question: str, state: ConversationState) -> bool:
    """The latest turn showed documents, and this asks whether what they describe
    has happened: incidents, not the documents' own words."""
    if not state.documents or describes_one_shown(question, state):
        return False
    if _INCIDENTS_ASKED_RE.search(question):  # "any incidents where that doc would have helped?"
        return True
    # "Did that known issue ever bite anyone?": the document pointed at is the "it"
    # whose happening is asked about, not a document asked for.
    question = _POINTED_DOCUMENT_RE.sub(" it ", question)
    if _DOCUMENT_RE.search(question) or _PROCEDURE_RE.search(question):
        return False
    pointed = has_reference(question) or _PAST_OR_WHICH_RE.search(question)
    return bool(pointed and _OCCURRED_RE.search(question))


# What a document was written from: "which incidents is it based on?", "what incident
# is behind that doc?", "where does that come from?".
_SOURCES_RE = re.compile(
    r"\b(?:based\s+on|drawn\s+from|draws?\s+on|drew\s+on|written\s+(?:up\s+)?(?:from|after)|"
    r"comes?\s+from|came\s+from|derived\s+from|sources?|cites?|cited|references?|referenced|"
    r"refers?\s+to|behind\s+(?:it|that|this|the)|inspired|prompted|"
    # "Which incident is it mentioning?", "which incident is it from?", "which outage
    # does it use as an example?"
    r"mention(?:s|ed|ing)?|(?:is|was)\s+(?:it|that|this)\s+from|examples?|"
    # "the sydney incident in it": an incident the document tells of.
    r"(?:incidents?|outages?|cases?)\s+(?:in|from)\s+(?:it|that|this|there|the\s+(?:doc|"
    r"document|runbook|note|write-?up)))\b",
    re.IGNORECASE,
)
# "Which outage was it seen in?", "who ran into this in production?": the cases the
# document names, unless others are asked for ("has anyone else run into it since?").
_MET_IN_RE = re.compile(
    r"\b(?:(?:seen|observed|spotted|reported)\s+(?:in|at|during|by)|(?:ran|run|running)\s+into)\b",
    re.IGNORECASE,
)
_BEYOND_RE = re.compile(r"\b(?:else|other|another|since|again|recently|lately)\b", re.I)
SOURCES_LIMIT = 5


def asks_sources_of_documents(question: str, state: ConversationState) -> bool:
    """The latest turn showed documents that name the incidents they draw on, and
    this asks for those ("which incident was that write-up based on?") or points at
    one of them by its year ("what set off the 2021 one?")."""
    if not state.documents or not state.documents[0].related:
        return False
    met = _MET_IN_RE.search(question) and not _BEYOND_RE.search(question)
    return bool(_SOURCES_RE.search(question) or met) or _dated_source(question, state) is not None


def _dated_source(question: str, state: ConversationState) -> str | None:
    """ "The 2021 one": the only incident of that year the document draws on."""
    match = _MONTH_YEAR_RE.search(question)
    if match is None or match.group("month"):
        return None
    found = [i for i in state.documents[0].related if i[4:8] == match.group("year")]
    return found[0] if len(found) == 1 else None


def sources_of_documents(question: str, state: ConversationState) -> list[Route]:
    """Each incident the first document draws on, read by id (the one pointed at by
    its year, when one is)."""
    dated = _dated_source(question, state)
    ids = [dated] if dated else state.documents[0].related[:SOURCES_LIMIT]
    return [Route("lookup_incident_by_id", {"incident_id": i}, "its sources") for i in ids]


def incidents_of_documents(question: str, state: ConversationState) -> list[Route]:
    """Incidents like the first document's subject ("Known issue: RabbitMQ consumer
    acknowledgement timeout…" → its words without the kind of document)."""
    subject = _DOCUMENT_TITLE_PREFIX_RE.sub("", state.documents[0].title)
    own = _own_subject(_OCCURRED_RE.sub(" ", question))
    if len(own.split()) >= OWN_STORY_WORDS:
        # "Which outage had the status page stuck green for hours?" tells the story
        # it wants; the document only said who owns the comms. "Did that limit
        # cause a production outage?" tells it of the document's subject.
        pointed = _points_at_it(question) or _echoes_without_a_story(question, own, state)
        subject = f"{own} {subject}" if pointed else own
    limit = DEFAULT_LIMITS["search_similar_incidents"]
    return [Route("search_similar_incidents", {"query": subject, "limit": limit}, "its incidents")]


# "that limit", "this setting", "behind it": the document's subject, pointed at.
_POINTS_AT_IT_RE = re.compile(r"\b(?:that|this|these|those)\s+\w+|\b(?:it|its|they|them)\b", re.I)
# "…had a canary that caught the bad config?": a relative "that" after a noun starts
# the story's clause; it points at nothing.
_RELATIVE_THAT_RE = re.compile(r"\b(?:a|an|the|any|some|one)\s+[\w-]+\s+that\s+\w+", re.I)


def _points_at_it(question: str) -> bool:
    return bool(_POINTS_AT_IT_RE.search(_RELATIVE_THAT_RE.sub(" ", question)))


_DEFINITE_RE = re.compile(r"\bthe\s+([\w-]+(?:\s+[\w-]+){0,2})", re.IGNORECASE)


def _echoes_without_a_story(question: str, own: str, state: ConversationState) -> bool:
    """ "Which outage actually used the truncate trick?" after "runbook truncate
    tables to free xids": a definite phrase in the words the documents were asked
    in points at their subject, unless the rest tells a story of its own ("…had a
    canary that caught the bad config but couldn't stop the push?")."""
    titles = " ".join(document.title for document in state.documents[:1])
    said = _own_stems(f"{state.documents_question} {titles}")
    echoed = {
        stem for m in _DEFINITE_RE.finditer(question) for stem in _own_stems(m.group(1)) & said
    }
    story = [w for w in own.split() if qp.word_stem(w) not in echoed]
    return bool(echoed) and len(story) < OWN_STORY_WORDS


# Words of its own from which a question after documents describes the incident it
# wants, rather than asking whether the documents' subject ever happened.
OWN_STORY_WORDS = 4


def superlative(question: str) -> tuple[str, str] | None:
    """ "Which one lasted longest?" → ("longest", "duration"); None for a question
    about a part of one incident ("which sender type took longest?")."""
    match = _SUPERLATIVE_RE.search(question)
    if match is None or not _compares_incidents(question):
        return None
    word = " ".join(match.group("word").split())
    return word, SUPERLATIVES[word.lower()]


def _lookup(item: Remembered, reason: str) -> Route:
    return Route("lookup_incident_by_id", {"incident_id": item.incident_id}, reason)


def _knowledge_follow_up(question: str, state: ConversationState) -> list[Route]:
    """Documents about what the conversation is on: the question's own words ("runbook
    for power/cooling events?") plus the incident in focus ("...for that?")."""
    own = _own_subject(question)
    query = f"{own} {state.topic}" if own else state.topic
    named = (
        selected_item(question, state.focus, state.listed, state.seen)
        if named_item(question)
        else None
    )
    if named is not None:
        # "The CircleCI one sounds like ours. Is there a known issue for it?": the
        # documents about that result, whatever else the story says.
        query = named.title
    elif len(own.split()) >= OWN_STORY_WORDS and not _points_at_it(question):
        # "Our checklist for communicating when the status page is down like that?"
        # says what the document is about; the incident's title would outweigh it.
        # "A doc on the setting behind it I can send the customer?" points at it.
        query = own
    doc_type = document_type(question)
    if _PROCEDURE_RE.search(question) or doc_type == "runbook":
        # The ask goes with the topic, so the documents are quoted for their steps.
        query = f"what to do about {query}"
    arguments: dict[str, Any] = {"query": query, "limit": DEFAULT_LIMITS["search_knowledge"]}
    if doc_type:
        arguments["type_filter"] = doc_type
    return [Route("search_knowledge", arguments, "knowledge follow-up")]


def _own_subject(question: str) -> str:
    """What a document follow-up names beyond the pointer and the kind of document:
    "power/cooling events" in "runbook for power/cooling events?", nothing in "is
    there a runbook for that kind of thing?"."""
    text = _DOCUMENT_VERBS_RE.sub(" ", _DOCUMENT_RE.sub(" ", _PROCEDURE_RE.sub(" ", question)))
    skip = _POINTER_WORDS | _CONTRACTION_STUBS
    return " ".join(w for w in content_words(text) if len(w) > 1 and w not in skip)


# What is left of "didn't", "wasn't" once the apostrophe splits the word.
_CONTRACTION_STUBS = frozenset(
    {"didn", "doesn", "don", "wasn", "weren", "isn", "aren", "hasn", "haven", "hadn", "wouldn",
     "couldn", "shouldn", "won", "can"}
)  # fmt: skip


# Words that point back or ask whether something exists, not what it is about.
_POINTER_WORDS = frozenset(
    {
        "this", "those", "these", "them", "they", "kind", "sort", "type", "like", "same",
        "similar", "thing", "things", "one", "ones", "case", "cases", "got", "exist",
        "exists", "anything", "something", "should", "would", "could", "need", "else",
        "anyone", "other", "others", "more", "incidents", "outages",
        # ...all but the one shown, and where they are kept: "…in the history besides that one"
        "besides", "except", "apart", "aside", "history", "record", "records", "log",
    }
)  # fmt: skip


# "Didn't they have another outage before that?": the company in focus is the
# subject; "has it hit anyone else?" asks past it.
_THEY_RE = re.compile(r"\b(?:they|their|them)\b", re.IGNORECASE)
_ANYONE_ELSE_RE = re.compile(
    r"\b(?:any(?:one|body|where)|some(?:one|body|where)|else(?:where)?|other\s+\w+)\b", re.I
)


def _same_company(question: str) -> bool:
    return bool(_THEY_RE.search(question)) and not _ANYONE_ELSE_RE.search(question)


def company(item: Remembered) -> str:
    """ "Strava uploads" → "Strava": whose incident it was, as its title opens."""
    words = item.application.split()
    return re.sub(r"'s$", "", words[0]) if words else ""


def searched_title(item: Remembered, question: str) -> str:
    """The title to search others by. Its company is left out unless the question
    asks about that company ("did they…"): a title naming an application verbatim
    makes the search keep to that application, and "has it hit anyone since?" asks
    about the failure wherever it happened."""
    if _same_company(question):
        return item.title
    application = re.sub(r"\s*\(.*?\)", "", item.application).strip()
    title = item.title
    for name in filter(None, (application, company(item))):
        title = re.sub(rf"(?<!\w){re.escape(name)}(?:'s)?(?!\w)", " ", title, flags=re.I)
    return " ".join(title.split()) or item.title


def _recurrence_follow_up(question: str, state: ConversationState) -> list[Route]:
    """Later incidents like the one in focus: its title, from its month on."""
    item = state.focus[0]
    query = searched_title(item, question)
    if item.occurred_at[:7].count("-") == 1:
        year, month = item.occurred_at[:7].split("-")
        query += f" since {_MONTH_NAMES[int(month) - 1]} {year}"
    limit = DEFAULT_LIMITS["search_similar_incidents"] + 1  # the focus itself comes back too
    return [Route("search_similar_incidents", {"query": query, "limit": limit}, "recurrence")]


def _similar_follow_up(question: str, state: ConversationState) -> list[Route]:
    """More incidents like the one in focus, from any time; where the question names
    more ("…at Google?"), those words are searched too."""
    limit = DEFAULT_LIMITS["search_similar_incidents"] + 1  # the focus itself comes back too
    described = _OTHERS_WHERE_RE.search(question)
    said = question[described.end() :].strip(" ?.!") if described else ""
    if len(_own_stems(said)) >= 2:  # what the others share is said: that alone is searched
        query = _demonstrative_named(said, state.focus[0])
        return [Route("search_similar_incidents", {"query": query, "limit": limit}, "others where")]
    own = _own_subject(question)
    title = searched_title(state.focus[0], question)
    query = f"{title} {own}" if own else title
    return [Route("search_similar_incidents", {"query": query, "limit": limit}, "more like this")]


_THAT_NOUN_RE = re.compile(r"\b(?:that|this)\s+(?P<noun>[a-z][\w-]*)\b", re.IGNORECASE)


def _demonstrative_named(text: str, item: Remembered) -> str:
    """ "has that resolver been down" → "Cloudflare 1.1.1.1 public DNS resolver been
    down": the thing pointed at, as the incident's application names it (up to the
    noun), so the others searched are of that thing."""
    pointed = _THAT_NOUN_RE.search(text)
    application = re.sub(r"\s*\(.*?\)", "", item.application)
    if pointed is None:
        return text
    named = re.search(rf"^.*?\b{re.escape(pointed.group('noun'))}\b", application, re.I)
    return text.replace(pointed.group(0), named.group(0)) if named else text


def _around_follow_up(question: str, state: ConversationState) -> list[Route]:
    """Another incident in a window around the one in focus ("the one before that",
    "anything else the same day?"): what the question describes, else the focus's
    title, searched in that window."""
    focus = state.focus[0]
    around = around_focus(question, focus)
    if around is None:
        return _similar_follow_up(question, state)
    rest = question.replace(around.said, " ")
    own = _own_subject(rest)
    described = len(_own_stems(rest)) >= DESCRIBED_WORDS
    if described and _same_company(question):
        own = f"{company(focus)} {own}"
    query = own if described else f"{searched_title(focus, question)} {own}".strip()
    limit = DEFAULT_LIMITS["search_similar_incidents"] + 1  # the focus itself may come back
    arguments = {"query": f"{query} {around.as_query()}", "limit": limit}
    return [Route("search_similar_incidents", arguments, f"{around.said} {focus.incident_id}")]


# Own words enough to search by alone ("…where one auto-generated rule crashed
# their routers"); fewer (a company, "global") qualify the focus's title.
DESCRIBED_WORDS = 3


def _select_many_follow_up(question: str, state: ConversationState) -> list[Route]:
    """Re-read each remembered incident; the answer keeps those that fit."""
    return [_lookup(item, "which of those") for item in state.focus[:SELECT_MANY_LIMIT]]


def _one_follow_up(question: str, state: ConversationState) -> list[Route]:
    """The item pointed at; a name none of them carries is searched for instead."""
    item = selected_item(question, state.focus, state.listed, state.seen)
    if item is not None:
        return [_lookup(item, "follow-up")]
    # The name plus the application under discussion; the earlier question's
    # own filters (a category, a window) could hide the named incident.
    application = re.sub(r"\s*\(.*?\)", "", state.focus[0].application)
    query = f"{named_item(question)} {application}".strip()
    limit = DEFAULT_LIMITS["search_similar_incidents"]
    return [Route("search_similar_incidents", {"query": query, "limit": limit}, "named")]


def _names_one_shown(question: str, state: ConversationState) -> bool:
    """ "The compute-heavy query one later that day": an incident already shown, by name."""
    return bool(named_item(question)) and (
        selected_item(question, state.focus, state.listed, state.seen) is not None
    )


def named_item(question: str) -> str:
    """ "the Mandrill one" → "Mandrill"; "" when no item is named."""
    named = _NAME_RE.search(question)
    if named is None:
        # Typed tersely without "the", only a name may stand there ("which one",
        # "any incident", "first one" name nothing).
        named = _TERSE_NAME_RE.search(question)
        words = set(named.group("name").lower().split()) if named else set()
        if words & qp.MENTION_FILLER.union(_ORDINALS, _NOT_NAMES):
            return ""
    if named is None or named.group("name").lower() in _NOT_NAMES:
        return ""
    if _POINTING_WORDS.intersection(named.group("name").lower().split()):
        return ""  # "the reason in that case": a pointer, not a name
    return named.group("name")


_POINTING_WORDS = frozenset({"that", "this", "those", "these", "it", "its", "in", "of", "for"})
# Words in a name's place that say how much or which of the same incident, not
# which incident: "the full outage", "the whole incident", "the same one".
_NOT_NAMES = frozenset(
    {*_ORDINALS, "full", "whole", "entire", "actual", "initial", "original", "main", "total",
     "overall", "complete", "same", "very", "real", "other"}
)  # fmt: skip


_OTHER_ONE_RE = re.compile(r"\bthe\s+other\s+(?:one|incident|outage)\b", re.IGNORECASE)


def selected_item(
    question: str,
    focus: Sequence[Remembered],
    listed: Sequence[Remembered] = (),
    seen: Sequence[Remembered] = (),
) -> Remembered | None:
    """The item a follow-up points at: by ordinal, by name (None if no item has
    it), else the first. An ordinal or a name the focus cannot answer is read
    against the listing before it (`listed`), when there was one; a name, also
    against every incident the conversation showed (`seen`).

    A clause that points first ("the 2019 one, when did the second degradation
    start?") is the whole pointer: an ordinal in the ask after it is a part of
    the incident, not an item of the list."""
    question = pointer_clause(question) or question
    if _OTHER_ONE_RE.search(question):
        # "the other one": of the two shown, the one not in focus.
        others = [i for i in (*focus, *listed) if i.incident_id != focus[0].incident_id]
        if others:
            return others[0]
    ordinal = _ORDINAL_RE.search(question)
    if ordinal:
        digit = ordinal.group("d")
        index = (
            int(digit) - 1
            if digit
            else _ORDINALS[(ordinal.group("n") or ordinal.group("m")).lower()]
        )
        for items in (focus, listed):
            if -len(items) <= index < len(items):
                return items[index]
    dated = _DATED_POINTER_RE.search(question)
    if dated:
        items = listed or focus
        if dated.group("of_two"):
            # "The earlier one" compares two: the two shown first (an incident and the
            # one found before it), not the oldest of everything the search returned.
            return _newest_or_oldest(dated.group("of_two").lower(), items[:2])
        return _newest_or_oldest(dated.group("which").lower(), items)
    name = named_item(question).lower()
    if not name:
        return (
            _by_demonstrative(question, (*focus, *listed, *seen))
            or _by_date(question, focus)
            or _by_described_words(question, focus)
            or _by_description(question, focus)
            or focus[0]
        )
    # A whole word: "the CI one" is not about a "deCIsion" in some record's text,
    # but it is about "CircleCI" (a word of a compound name).
    said = _whole_word(name)
    for items in (focus, listed, seen):
        for fields in (lambda i: f"{i.title} {i.application}", lambda i: i.text):
            found = [item for item in items if said.search(_compounds_split(fields(item)))]
            if found:
                return found[0]
    return (
        _by_date(question, focus)
        or _by_name_words(name, (*focus, *listed, *seen))
        or _by_likeness(name, listed or focus)
    )


# "That heroku one", "this settlement thing": as people point in chat. Unlike "the
# Redis one", which may name an incident not shown yet, a demonstrative points at one
# already shown; so its words count as a name only where a shown title or
# application says them ("this kind of thing" names nothing).
_DEMONSTRATIVE_NAME_RE = re.compile(
    r"\b(?:that|this)\s+(?P<name>[\w.-]+(?:\s+[\w.-]+){0,2})\s+(?:one|incident|outage|thing|issue|"
    r"problem|mess)\b",
    re.I,
)


def _by_demonstrative(question: str, items: Sequence[Remembered]) -> Remembered | None:
    pointed = _DEMONSTRATIVE_NAME_RE.search(question)
    if pointed is None:
        return None
    said = _whole_word(pointed.group("name").lower())
    return next(
        (i for i in items if said.search(_compounds_split(f"{i.title} {i.application}"))), None
    )


def _whole_word(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w]){re.escape(name)}(?![\w])")


def _compounds_split(text: str) -> str:
    """ "CircleCI's PagerDuty" → "circleci circle ci's pagerduty pager duty": each
    compound name also as its words, for names that are one of them."""
    parts = _CAMEL_RE.sub(" ", text)
    return f"{text} {parts}".lower() if parts != text else text.lower()


_CAMEL_RE = re.compile(r"(?<=[a-z])(?=[A-Z])")


def _by_name_words(name: str, items: Sequence[Remembered]) -> Remembered | None:
    """ "The broken downloads one" for "downloads broken by a bad URL": every word of
    the name in one item's record, in any order or inflection."""
    words = _own_stems(name)
    if not words:
        return None
    return next((item for item in items if _overlap(words, item) == 1.0), None)


# "The most recent one", "the oldest of those", and between two "the older one", "the
# more recent one": by date, whatever order it was shown in ("the latest incident" may
# start a new question; "was there an earlier one?" asks for another incident; "the
# later one" is left to mean a recurrence, as "later" does elsewhere).
_DATED_POINTER_RE = re.compile(
    r"\b(?:the\s+)?(?P<which>most\s+recent|latest|newest|oldest|earliest)\s+"
    r"(?:one|of\s+(?:those|them|these))\b"
    r"|\bthe\s+(?P<of_two>more\s+recent|newer|older|earlier)\s+"
    r"(?:one|of\s+(?:those|them|these|the\s+two))\b",
    re.IGNORECASE,
)
_NEWER = frozenset({"latest", "newest", "newer"})


def dated_pointer(question: str) -> bool:
    return bool(_DATED_POINTER_RE.search(question))


def _newest_or_oldest(which: str, items: Sequence[Remembered]) -> Remembered:
    newest = which in _NEWER or which.startswith(("most", "more"))
    by_date = sorted(items, key=lambda item: item.occurred_at, reverse=newest)
    return by_date[0]


_MONTH_YEAR_RE = re.compile(
    rf"\b(?:(?P<month>{'|'.join(qp.MONTHS)}|{'|'.join(m[:3] for m in qp.MONTHS)})\.?\s+)?"
    r"(?P<year>(?:19|20)\d\d)\b",
    re.IGNORECASE,
)


def dates_one_shown(question: str, state: ConversationState) -> bool:
    """ "For the total outage in July 2023, what did they do to recover?" after a
    listing: a month or year only one listed incident falls in points at it, unless
    the question asks for incidents of that time ("any other outages in 2023?")."""
    if len(state.focus) < 2 or _ELSEWHERE_RE.search(question) or _MANY_RE.search(question):
        return False
    return _by_date(question, state.focus) is not None


_MANY_RE = re.compile(
    r"\b(?:incidents|outages|problems|issues|ones|anything|everything|what\s+else)\b", re.I
)


def _by_date(question: str, focus: Sequence[Remembered]) -> Remembered | None:
    """ "the March 2025 one", "the 2019 outage": the only item of that month or year."""
    match = _MONTH_YEAR_RE.search(question)
    if match is None:
        return None
    prefix = match.group("year")
    if match.group("month"):
        month = next(
            n for m, n in qp.MONTHS.items() if m.startswith(match.group("month")[:3].lower())
        )
        prefix += f"-{month:02d}"
    found = [item for item in focus if item.occurred_at.startswith(prefix)]
    return found[0] if len(found) == 1 else None


# A name in other words ("the crash-loop one" for "app repeatedly crashes on a
# poison-pill message") picks the shown item it reads most like, when it reads like
# it at all and clearly more than like any other (the margin a description needs);
# else it is searched for.
LIKENESS_FLOOR = 0.3


def _by_likeness(name: str, items: Sequence[Remembered]) -> Remembered | None:
    if len(items) < 2:
        return None
    similarity = similarities(name, [f"{i.title}. {i.text}" for i in items])
    second, best = similarity.argsort()[-2:]
    fits = similarity[best] >= LIKENESS_FLOOR
    return (
        items[best] if fits and similarity[best] - similarity[second] > DESCRIPTION_MARGIN else None
    )


# A description picks an item only when it fits that item clearly better than
# the first (MiniLM cosine); a bare "how long did it last?" fits none of them.
DESCRIPTION_MARGIN = 0.08


def _by_description(question: str, focus: Sequence[Remembered]) -> Remembered | None:
    """ "the one where their database provider went down": the item it describes."""
    description = _description(question)
    if len(focus) < 2 or not description:
        return None
    texts = [f"{i.title}. {i.text}" for i in focus]
    similarity = similarities(description, texts)
    best = int(similarity.argmax())
    return focus[best] if similarity[best] - similarity[0] > DESCRIPTION_MARGIN else None


_DESCRIBES_RE = re.compile(
    r"\b(?:the|that)\s+(?:one|incident|outage)\s+(?:where|when|with|about|that|which|in\s+which)\b",
    re.IGNORECASE,
)


def _description(question: str) -> str:
    """ "the one where their database provider went down — how long did it last?" →
    the description alone ("how long did it last?" after it fits every item)."""
    described = _DESCRIBES_RE.search(question)
    if described is None:
        return ""
    return re.split(r"\s[\u2013\u2014-]+\s|[,;?]", question[described.end() :])[0]


def describes_one_shown(question: str, state: ConversationState) -> bool:
    """ "The one that broke Actions and Pages - …?" after documents shown with
    incidents: it describes one of those incidents in their records' words."""
    return _by_described_words(question, state.focus) is not None


def _by_described_words(question: str, items: Sequence[Remembered]) -> Remembered | None:
    """The one item whose record says the most of the description's words, if half
    or more of them: names ("Actions and Pages") are matched as written."""
    words = _own_stems(_description(question))
    if not words or not items:
        return None
    # Its title first: another record may tell of the same products in passing.
    titles = [f"{item.title} {item.application}" for item in items]
    for texts in (titles, [f"{item.title} {item.text}" for item in items]):
        shares = [_share_said(words, text) for text in texts]
        best = max(shares)
        if best >= 0.5 and shares.count(best) == 1:
            return items[shares.index(best)]
    return None


_FOLLOW_UPS: dict[str, Callable[[str, ConversationState], list[Route]]] = {
    "knowledge": _knowledge_follow_up,
    "around": _around_follow_up,
    "similar": _similar_follow_up,
    "recurrence": _recurrence_follow_up,
    "superlative": _select_many_follow_up,
    "select_many": _select_many_follow_up,
    "one": _one_follow_up,
}


def follow_up_kind(question: str, state: ConversationState, *, about_documents: bool) -> str:
    """How a follow-up refers back: knowledge | around | similar | recurrence |
    superlative | select_many | one."""
    asks_documents = _DOCUMENT_RE.search(question) or _PROCEDURE_RE.search(question)
    if (asks_its_follow_ups(question) or asks_their_way(question)) and not about_documents:
        return "one"
    if about_documents or (asks_documents and not asks_its_own_report(question)):
        return "knowledge"
    if around_focus(question, state.focus[0]) is not None and not _names_one_shown(question, state):
        return "around"
    if _SIMILAR_RE.search(question) or _OTHERS_WHERE_RE.search(question):
        return "similar"
    if asks_recurrence(question):
        return "recurrence"
    if superlative(question):
        return "superlative"
    if _SELECT_MANY_RE.search(question):
        return "select_many"
    return "one"


# Words of asking for a detail, not of what it is about.
_DETAIL_WORDS = frozenset(
    {
        "many", "much", "long", "time", "actually", "exactly", "just", "really", "potentially",
        "ok", "okay", "but", "so", "then", "level", "get", "got", "make", "made", "take",
        "took", "know", "say", "said", "mean", "happen", "come", "came", "back", "up",
        # How much of it: "at worst, what percentage…", "roughly what share…".
        "worst", "percentage", "percent", "proportion", "fraction", "roughly", "approximately",
        "overall", "total",
    }
)  # fmt: skip


def _own_stems(text: str) -> frozenset[str]:
    skip = _POINTER_WORDS | _DETAIL_WORDS | _CONTRACTION_STUBS
    return frozenset(qp.word_stem(w) for w in content_words(text) if w not in skip)


def _overlap(words: frozenset[str], item: Remembered) -> float:
    """The share of `words` that the item's record says."""
    return _share_said(words, f"{item.title} {item.text}")


def _share_said(words: frozenset[str], text: str) -> float:
    said = {qp.word_stem(w) for w in content_words(text)}
    return len(words & said) / len(words)


# Words that ask whether or when something happened, not what about.
_OCCURRENCE_STEMS = frozenset(
    qp.word_stem(w) for w in ("before", "again", "ever", "seen", "bitten", "happened", "occurred")
)


def says_nothing_of_its_own(question: str) -> bool:
    """A pointer and no subject of its own ("has that happened before?"): it can only
    be about what was shown, whatever the model leans to."""
    return has_reference(question) and not (_own_stems(question) - _OCCURRENCE_STEMS)


def speaks_of_the_focus(question: str, state: ConversationState) -> bool:
    """A question in the words of the record in focus ("what share of writes to the
    job service failed?" after reading the job-service outage), asking for no
    other incidents: it asks about that record without pointing at it."""
    words = _own_stems(question) - _OCCURRENCE_STEMS
    if len(words) < 2 or not state.focus or _ELSEWHERE_RE.search(question):
        return False
    return _overlap(words, state.focus[0]) >= FOCUS_WORDS_SHARE


def focus_says(words: Sequence[str], state: ConversationState) -> bool:
    """Whether a record in focus says any of `words` (by stem)."""
    stems = frozenset(qp.word_stem(w.casefold()) for w in words)
    return any(_overlap(stems, item) for item in state.focus) if stems else False


FOCUS_WORDS_SHARE = 0.75  # of the question's own words, said by the record in focus
_ELSEWHERE_RE = re.compile(
    r"\b(?:other|another|else|elsewhere|similar|ever|before|anyone|anybody|any\s+incidents?)\b",
    re.IGNORECASE,
)


def has_reference(question: str) -> bool:
    """Points back at something ("it", "those", "the second one", "the Mandrill one")."""
    return bool(_REFERENCE_RE.search(question) or _ORDINAL_RE.search(question))


_POINTER_RE = re.compile(
    r"\b(?:(?:for|about|on|of|like|with|behind|from)\s+(?:that|this|it|those|these)\s*(?:one\s*)?[?.!]*$"
    r"|(?:that|this|the)\s+one\b|(?:any|which|some|all|none|each|either)\s+of\s+(?:those|them|these)\b"
    r"|which\s+ones?\b|\btell\s+me\s+more\b|\bmore\s+(?:details|detail|info)\b|\belaborate\b"
    r"|\bgo\s+on\b|\bexpand\s+on\b)",
    re.IGNORECASE,
)


# "That outage", "this failure mode", "that same bug": a demonstrative before a word
# for an event points at one already shown (the relative "a doc that covers errors"
# puts a verb between them).
_DEMONSTRATIVE_EVENT_RE = re.compile(
    r"\b(?:that|this|those|these)\s+(?:(?:same|whole|particular|specific|exact|big)\s+)?"
    r"(?:outages?|incidents?|failures?|bugs?|errors?|crash(?:es)?|breakages?|events?|"
    r"disruptions?|degradations?|meltdowns?|fiasco|mess|behaviou?r|failure\s+(?:mode|pattern)s?|"
    r"patterns?)\b",
    re.IGNORECASE,
)


def points_back(question: str) -> bool:
    """An unmistakable pointer at earlier results: an ordinal, "the Mandrill one",
    "which of those", "a runbook for that?", "that outage"."""
    return bool(
        _ORDINAL_RE.search(question)
        or _DEMONSTRATIVE_EVENT_RE.search(question)
        or _DATED_POINTER_RE.search(question)
        or _POINTER_RE.search(question)
        or (named_item(question) and _NAME_RE.search(question))
        or superlative(question)
        or places_another_in_time(question)
        or _SIMILAR_RE.search(question)
        or _OTHERS_WHERE_RE.search(question)
        or (asks_recurrence(question) and has_reference(question))
    )


def follow_up_routes(kind: str, question: str, state: ConversationState) -> list[Route]:
    return _FOLLOW_UPS[kind](question, state)
