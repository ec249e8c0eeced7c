"""Extractive answers to detail questions about one record.

The record (as the lookup tool printed it) is split into candidates: each
field as a sentence ("Root Cause: …") and each body sentence. They are
ranked against the follow-up by meaning (MiniLM cosine, the query vector is
cached), shared words, and field names the question points at (trigger,
duration, affected, accountable, repeat…). The best one or two are quoted;
when nothing ranks well enough, the answer says the record does not say.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from copilot.chat_models.offline.reading import Record
from incidentdesk.embeddings import embed_query, embed_sentences
from incidents import query_parsing as qp

_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_WORD_RE = re.compile(r"[a-z0-9][a-z0-9'-]*")
# A figure: a number that is not part of a date ("25 minutes", "1,200", "40%").
_NUMBER_RE = re.compile(r"(?<![\d-])\d+(?:[.,]\d+)*(?![\d-])")
_FIGURES_RE = re.compile(
    r"\bhow\s+(?:long|much|many|big|bad)\b|\bduration\b|\blast(?:ed)?\b|\bnumber\s+of\b",
    re.IGNORECASE,
)
# "How long" wants a duration; "how many" a count, which a duration is not.
_COUNT_RE = re.compile(r"\bhow\s+(?:many|much|big)\b|\bnumber\s+of\b", re.IGNORECASE)
_COUNT_WORDS_RE = re.compile(
    r"\d\s*%|\bper\s*cent\b|\b(?:hundred|thousand|million|billion)s?\b", re.IGNORECASE
)
# Which field a question points at, by the words people use for it.
FIELD_CUES: dict[str, re.Pattern[str]] = {
    "Root Cause": re.compile(
        r"\b(?:caus\w*|why|trigger\w*|root|reason|behind|broke|wrong|setting|config\w*|"
        r"what\s+happened|set\s+(?:it\s+)?off|started\s+it)\b", re.I),
    "Mitigation": re.compile(
        r"\b(?:fix\w*|resolv\w*|resolution|mitigat\w*|recover\w*|restor\w*|workaround|"
        r"solution|solved|stop(?:ped)?|remed\w*|do\s+about)\b", re.I),
    "Accountable Party": re.compile(
        r"\b(?:accountable|responsib\w*|blame\w*|fault|owner|owned|on\s+the\s+hook)\b", re.I),
    "Occurred At": re.compile(r"\b(?:when|date|what\s+day|what\s+year|start(?:ed)?|began)\b", re.I),
    "Repeat Incident": re.compile(r"\b(?:repeat\w*|recurr\w*|first\s+time|happened\s+before)\b",
                                  re.I),
    "Impacted Application": re.compile(
        r"\bwhich\s+(?:service|system|app|product|part)\b|\baffect\w*|\bimpact\w*|\bhit\b", re.I),
    # What was going on just before: the circumstances, which the body tells, not
    # the cause field ("what were they doing right before it happened?").
    "Circumstances": re.compile(
        r"\b(?:right|just|shortly|immediately)\s+(?:before|prior)\b|\blead(?:ing)?\s+up\b|"
        r"\bled\s+up\b|\bpreced\w*|\bwhat\s+(?:were|was)\s+(?:they|you|we|he|she|the\s+\w+)\s+"
        r"(?:doing|trying|working\s+on)\b|\bwhat\s+set\s+(?:it|this|that)\s+off\b", re.I),
}  # fmt: skip
# "Who got hit?", "which customers were affected?", "what was the blast radius?".
AFFECTED_RE = re.compile(
    r"\b(?:who|which\s+\w+|what\s+\w+)\s+(?:else\s+)?(?:got|was|were|did|had)\s+"
    r"(?:hit|affected|impacted|hurt|disrupted)\b|\b(?:affected|impacted)\s+(?:who|which|what)\b|"
    r"\bblast\s+radius\b|\bwho\s+(?:else\s+)?(?:felt|noticed|suffered)\b",
    re.IGNORECASE,
)
# "When did it start?", "what time did it begin?" (a date alone says less than "from 21:38").
# Any moment of it, too: "when was it back to normal?", "what time did they restart it?".
WHEN_RE = re.compile(
    r"\bwhen\s+(?:did|was|were|had)\s+(?:it|this|that|they|we|the\s+\w+)\s+(?:start|begin|began|"
    r"kick\w*|first|happen|back|over|fixed|restored|recovered|resolved|normal|up|end|finish\w*|"
    r"restart\w*|roll\w*|revert\w*)|\b(?:what|which)\s+time\b|\bat\s+what\s+(?:time|hour)\b|"
    r"\b(?:start|onset|end|recovery)\s+time\b",
    re.IGNORECASE,
)
_CLOCK_RE = re.compile(r"\b\d{1,2}:\d{2}\b|\b\d{1,2}\s*(?:am|pm)\b", re.IGNORECASE)
_FIELDS = (*FIELD_CUES, "Title", "Category", "Severity")
# How a body sentence speaks to a field when the record's own field is terse
# ("Repeat Incident: Yes" says less than "two days after an earlier outage").
_SAYS: dict[str, re.Pattern[str]] = {
    "Repeat Incident": re.compile(
        r"\b(?:earlier|previous\w*|again|recurr\w*|repeat\w*|second\s+time|same\s+\w+\s+as|"
        r"(?:had|has|have)\s+(?:\w+\s+){0,3}before|(?:done|seen|happened|surfaced)\s+before)\b",
        re.I,
    ),
    "Accountable Party": re.compile(
        r"\b(?:vendor|provider|supplier|contractor|third[- ]party)\b", re.I
    ),
    "Impacted Application": re.compile(
        r"\b(?:affect\w*|disrupt\w*|impact\w*|customers?|users?|clients?|along\s+with)\b", re.I
    ),
    "Occurred At": _CLOCK_RE,
    "Circumstances": re.compile(
        r"\b(?:after|when|while|during|following|as\s+soon\s+as|once)\b", re.I
    ),
    "Mitigation": re.compile(
        r"\b(?:fix\w*|restor\w*|recover\w*|revert\w*|roll\w*\s*back|pulled|by\s+hand|manual\w*|"
        r"workaround|reboot\w*|restart\w*|resolv\w*)\b",
        re.I,
    ),
    # What the write-up committed to ("planned to review other regexes", "committed
    # to understanding why testing missed the bug", "is adding regional failover").
    "Follow-ups": re.compile(
        r"\b(?:committed|commit(?:s|ting)?\s+to|planned|plans?\s+to|planning|will|"
        r"(?:is|are|was|were)\s+(?:adding|moving|building|working|redesigning)|follow[- ]?ups?|"
        r"action\s+items?|promised|intends?|prioriti[sz]ed|audit\w*|going\s+forward)\b",
        re.I,
    ),
}
FOLLOW_UPS_RE = _SAYS["Follow-ups"]
_NEVER = re.compile(r"(?!)")
# The shape an answer takes where the question says: a version number, a time of
# day, a share. A sentence of that shape answers it over one that only resembles it
# ("which versions were bad?": "…published eslint-scope 3.7.2 and …").
ANSWER_SHAPES: tuple[tuple[re.Pattern[str], re.Pattern[str]], ...] = (
    (re.compile(r"\bversions?\b", re.I), re.compile(r"\b\d+\.\d+(?:\.\d+)*\b|\bv\d+\b")),
    (re.compile(r"\b(?:what|which)\s+(?:time|hour)\b", re.I), _CLOCK_RE),
    # "What was the window they were down?", "what hours?": from one time to another.
    (
        re.compile(r"\b(?:window|time\s*frame|time\s+span|what\s+hours|from\s+when)\b", re.I),
        re.compile(r"\b\d{1,2}:\d{2}\b[^.;]{0,20}?\b(?:to|until|till|and|-)\s*\d{1,2}:\d{2}\b"),
    ),
    (
        re.compile(r"\bwhat\s+(?:share|percent\w*|proportion|fraction|portion)\b", re.I),
        re.compile(r"\d\s*%|\bper\s*cent\b|\b(?:half|third|quarter)\b", re.I),
    ),
    # "How did they first notice?", "what tipped them off?": the sentence of what was
    # seen or what raised the alarm, not the closest in words.
    (
        re.compile(
            r"\bhow\s+(?:did|was|were|do|does)\s+(?:they|it|that|this|anyone|we|the\s+\w+)\s+"
            r"(?:first\s+)?(?:get\s+)?(?:notic\w*|detect\w*|discover\w*|spot\w*|find\s+out|"
            r"found\s+out|realis\w*|realiz\w*|caught|catch)|\bwhat\s+(?:tipped|alerted|clued)\b|"
            r"\bfirst\s+(?:sign|symptom|clue|alert)s?\b",
            re.I,
        ),
        re.compile(
            r"\b(?:notic\w*|detect\w*|discover\w*|spott\w*|alert\w*|alarm\w*|paged|monitor\w*|"
            r"reported|complain\w*|flagged|tipped|errors?|first\s+signs?|fail\w*|stopp\w*|"
            r"crash\w*|timeouts?|timed\s+out)\b",
            re.I,
        ),
    ),
)
FIELD_BONUS = 0.25  # a field the question names outranks a body sentence that only resembles it
WORD_WEIGHT = 0.08  # per shared word: names and figures the embedding blurs
FIGURE_BONUS = 0.15  # "how long", "how many": sentences with numbers
DURATION_BONUS = 0.4  # above a field's bonus: "how long till recovery" is not "how it recovered"
_DURATION_RE = re.compile(
    r"\b\d+(?:[.,]\d+)?\s*(?:minutes?|mins?|hours?|hrs?|days?|weeks?|seconds?)\b"
    r"|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|several|many)\s+"
    r"(?:minutes?|hours?|days?|weeks?)\b"
    # A span of clock times says how long as well: "from 13:40 to 14:48 UTC",
    # "between 08:35 and 08:53", "21:16-23:16".
    r"|\b\d{1,2}:\d{2}(?:\s*[A-Z]{2,4})?\s*(?:[-\u2013]|to|until|till|and)\s*\d{1,2}:\d{2}\b",
    re.IGNORECASE,
)
# Below this the best candidate does not answer the question (MiniLM cosine
# of unrelated sentences sits around 0.1-0.25).
ANSWERS_FROM = 0.35
SECOND_WITHIN = 0.08  # a second sentence is quoted when it ranks this close
_FILLER = frozenset(
    "a an and are as at be by did do does for from had has have how in is it its of on "  # noqa: SIM905 - a word list reads better as prose
    "or the that this to was were what when which who why with before".split()
)


@dataclass(frozen=True)
class Candidate:
    text: str
    field: str = ""  # "" for a body sentence
    score: float = 0.0


def candidates(record: Record) -> list[Candidate]:
    fields = [
        Candidate(f"{name}: {record.get(name)}", name)
        for name in _FIELDS
        if record.get(name) and record.get(name) != "not recorded"
    ]
    body = [Candidate(s.strip()) for s in _SENTENCE_RE.split(record.body) if len(s.split()) > 2]
    return fields + body


def _words(text: str) -> set[str]:
    """Content words by stem: "showing" and "showed" are one word."""
    return {qp.word_stem(w) for w in _WORD_RE.findall(text.lower()) if w not in _FILLER}


# The clause that points at a record before the ask: "the one with the mysql
# deadlock — how long…", "and the CI one, how long…", "the 2025 one: what…".
_POINTER_CLAUSE_RE = re.compile(
    r"^\s*(?:(?:and|ok|so|now)\s+)?(?:what\s+about\s+)?(?:the|that|this)\b[^\u2014\u2013:,;?]{0,80}?"
    r"\bone\b[^\u2014\u2013:,;?]{0,80}?\s*(?:[\u2014\u2013:,;]|\s-)\s*",
    re.IGNORECASE,
)


def pointer_clause(question: str) -> str:
    """The clause that points at a record before the ask ("the 2019 one,"), or ""."""
    match = _POINTER_CLAUSE_RE.match(question)
    return match.group(0) if match else ""


# A pointer inside the ask: "what set off the 2021 one?", "how did the Mandrill one end?".
_INNER_POINTER_RE = re.compile(r"\b(?:the|that|this)\s+[\w.-]+(?:\s+[\w.-]+)?\s+one\b", re.I)


def the_ask(question: str) -> str:
    """The question without the clause pointing at the record: the pointer's words
    (the cause that names it, its year) must not pull the answer to them."""
    ask = _INNER_POINTER_RE.sub(" ", _POINTER_CLAUSE_RE.sub("", question, count=1))
    return ask if len(ask.split()) >= 2 else question


def ranked(question: str, record: Record) -> list[Candidate]:
    """Every candidate of `record`, best answer to `question` first."""
    question = the_ask(question)
    found = candidates(record)
    if not found:
        return []
    wanted = np.asarray(embed_query(question), dtype=np.float32)
    similarity = embed_sentences([c.text for c in found]) @ wanted
    words = _words(question)
    figures = "count" if _COUNT_RE.search(question) else bool(_FIGURES_RE.search(question))
    cued = {name for name, cue in FIELD_CUES.items() if cue.search(question)}
    shapes = [shape for asked, shape in ANSWER_SHAPES if asked.search(question)]
    scored = [
        Candidate(
            c.text,
            c.field,
            float(sim) + _bonus(c, words, figures, cued) + _shape_bonus(c.text, shapes),
        )
        for c, sim in zip(found, similarity, strict=True)
    ]
    return sorted(scored, key=lambda c: -c.score)


def _shape_bonus(text: str, shapes: list[re.Pattern[str]]) -> float:
    return SHAPE_BONUS if any(shape.search(text) for shape in shapes) else 0.0


# The shape asked for works as a filter: a sentence without a version number
# cannot say which versions, however close its words ("…fetched the bad versions").
SHAPE_BONUS = 1.0


def _bonus(candidate: Candidate, words: set[str], figures: bool | str, cued: set[str]) -> float:
    shared = len(words & _words(candidate.text)) * WORD_WEIGHT
    if figures == "count":
        counted = _COUNT_WORDS_RE.search(candidate.text) and not candidate.field
        return shared + (DURATION_BONUS if counted else 0.0)
    if figures and _DURATION_RE.search(candidate.text):
        return shared + DURATION_BONUS  # "how long…": a stated duration answers it
    field = FIELD_BONUS if candidate.field in cued else 0.0
    if not candidate.field and any(_SAYS.get(name, _NEVER).search(candidate.text) for name in cued):
        field = FIELD_BONUS  # a body sentence that speaks to the field asked about
    has_figure = not candidate.field and _NUMBER_RE.search(candidate.text)
    numbers = FIGURE_BONUS if figures and has_figure else 0.0
    return shared + field + numbers


def best_answer(question: str, record: Record) -> tuple[list[str], bool]:
    """The one or two sentences that answer `question`, and whether they do.

    When the best candidate ranks below ANSWERS_FROM the sentences are the
    closest the record has, and the second value is False.
    """
    order = ranked(question, record)
    if not order:
        return [], False
    best = [order[0]]
    if len(order) > 1 and order[0].score - order[1].score <= SECOND_WITHIN:
        best.append(order[1])
    return [_quoted(c) for c in best], _speaks_to_cue(order[0], question) or (
        order[0].score >= ANSWERS_FROM
    )


def _speaks_to_cue(candidate: Candidate, question: str) -> bool:
    """The candidate is the field the question names, or a body sentence that
    speaks to it ("what led up to it?": "after moving the folder, …")."""
    if candidate.field:
        return bool(FIELD_CUES.get(candidate.field, _NEVER).search(question))
    cued = (name for name, cue in FIELD_CUES.items() if cue.search(question))
    return any(_SAYS.get(name, _NEVER).search(candidate.text) for name in cued)


def _quoted(candidate: Candidate) -> str:
    if not candidate.field:
        return candidate.text
    value = candidate.text.split(": ", 1)[1]
    return f"{candidate.field}: {value}"


def best_body_sentences(question: str, record: Record) -> list[str]:
    """The body sentences (one or two) that best answer `question`, if any answers
    well enough, in the record's order."""
    body = [c for c in ranked(question, record) if not c.field]
    if not body or body[0].score < ANSWERS_FROM:
        return []
    best = [c for c in body[:2] if body[0].score - c.score <= SECOND_WITHIN]
    order = [c.text for c in candidates(record)]
    return sorted((c.text for c in best), key=order.index)


# "Again" also says a thing happened twice within one incident ("again overwhelming
# the databases"); an earlier or previous one says it happened before.
_BEFORE_SAID_RE = re.compile(r"\b(?:earlier|previous\w*|before|prior|recurr\w*)\b", re.I)


def earlier_occurrences(question: str, record: Record, *, recorded: bool) -> list[str]:
    """The body sentence that tells of the same thing happening before: the best
    one when the record is marked a repeat; when it is not, only one that answers
    well enough."""
    says = _SAYS["Repeat Incident"]
    body = [c for c in ranked(question, record) if not c.field and says.search(c.text)]
    body.sort(key=lambda c: not _BEFORE_SAID_RE.search(c.text))
    return [c.text for c in body[:1] if recorded or c.score >= ANSWERS_FROM]


def sentences_saying(question: str, record: Record, field: str) -> list[str]:
    """The body sentence (one, or two as close) that speaks to `field`, best for
    `question` first; none when no sentence does."""
    says = _SAYS[field]
    body = [c for c in ranked(question, record) if not c.field and says.search(c.text)]
    return [c.text for c in body[:2] if body[0].score - c.score <= SECOND_WITHIN]


# The phase of an incident a "what time…" asks about, and the words a sentence
# uses for it: "what time did it kick off?" is the onset ("At 15:10 every upload
# started failing"), "what time were PUTs working again?" the recovery.
_RECOVERY_ASKED_RE = re.compile(
    r"\b(?:again|back|recover\w*|restor\w*|fixed|resolv\w*|end(?:ed)?|over|clear\w*|normal|"
    r"stop(?:ped)?|finish\w*)\b",
    re.IGNORECASE,
)
_ONSET_SAID_RE = re.compile(
    r"\b(?:start\w*|began|begin\w*|onset|first|from|kicked\s+off|broke|went\s+down)\b", re.I
)
_RECOVERY_SAID_RE = re.compile(
    r"\b(?:again|back|recover\w*|restor\w*|resolv\w*|ended|until|by|clear\w*|normal|fixed|"
    r"processed|complet\w*)\b",
    re.IGNORECASE,
)


def times_of_phase(question: str, record: Record) -> list[str]:
    """The sentences giving a time of day, those of the phase asked about (onset
    or recovery) first."""
    # Fields too: "npm revoked all tokens created before 12:30 UTC" is the mitigation's.
    timed = [c.text for c in ranked(question, record) if _CLOCK_RE.search(c.text)]
    phase = _RECOVERY_SAID_RE if _RECOVERY_ASKED_RE.search(question) else _ONSET_SAID_RE
    # What happened at that moment, in the question's own words, decides before the
    # phase: "what time did they restart the whole service?" → "restarted … at 16:07".
    own = _words(question) - _MOMENT_WORDS
    return sorted(
        timed, key=lambda sentence: (not own & _words(sentence), not phase.search(sentence))
    )[:1]


# Words of asking for a moment, and the dates a question points with ("the January
# 2021 one"), which every dated sentence shares.
_MOMENT_WORDS = frozenset(
    qp.word_stem(w)
    for w in (
        "time", "start", "started", "begin", "began", "end", "ended", "hour", "exact", "exactly",
        "roughly", "one", "incident", "outage", *qp.MONTHS, *(m[:3] for m in qp.MONTHS),
    )
) | frozenset(str(year) for year in range(1960, 2100))  # fmt: skip


# Where one message asks two things ("when did it start and how long did it last?").
_ASK_SPLIT_RE = re.compile(
    r"\?\s+|\s*[;,]?\s+and\s+(?=(?:how|what|when|who|whom|why|which|where|was|were|is|did|"
    r"does)\b)",
    re.IGNORECASE,
)


def separate_asks(question: str) -> list[str]:
    """The questions in a message, each with a few words at least; one when it asks one."""
    asks = [a.strip() for a in _ASK_SPLIT_RE.split(question.strip()) if len(a.split()) >= 2]
    return asks or [question]
