"""The offline engine's understanding: a question and the dialogue state → tool calls.

Incident ids win outright. Otherwise the intent model (`intents`) says what
is asked, with a confidence; slots fill the tool's arguments (a time window
and the subject beside it, an application named loosely, a document type).
When the model is unsure between two tools, the slots or both searches'
evidence decide (`_decide`), and the reason is kept for the trace.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from copilot.chat_models.offline import follow_ups
from copilot.chat_models.offline.intents import (
    CLAUSE_END_RE,
    IntentGuess,
    guess_intent,
    last_sentence,
)
from copilot.chat_models.offline.routes import (
    DEFAULT_LIMITS,
    LISTING_LIMIT,
    Route,
    document_asked,
    document_type,
    limit_for,
    listing_limit,
    search_limit,
)
from copilot.chat_models.offline.spelling import respell_asks
from copilot.chat_models.offline.state import ConversationState, Remembered
from incidentdesk.embeddings import common_words
from incidents import query_parsing as qp
from incidents import spelling
from incidents.parsing import find_incident_ids

__all__ = [
    "DEFAULT_LIMITS",
    "LISTING_LIMIT",
    "ConversationState",
    "Remembered",
    "Route",
    "Understanding",
    "plan",
    "route",
    "understand",
]

SEARCH_INTENTS = ("by_application", "recent", "similar", "knowledge")
# Below this confidence the two likeliest intents are weighed on evidence.
# Chosen on the bank's leave-one-style-out cross-validation, among the four
# search intents: at 0.8 and above the model was right 98-99% of the time,
# between 0.5 and 0.8 only 61-73% (`manage.py evaluate --bank`).
UNSURE_BELOW = 0.8
# Evidence weighs the runner-up only from this probability: below it the
# first intent was right 79-91% of the time and the runner-up 4-18% (same
# cross-validation), so evidence there would mostly flip right answers.
EVIDENCE_FROM = 0.25
PAST_FIXES_LIMIT = 3
FIXING_RE = re.compile(
    r"\b(?:fix\w*|resolv\w*|troubleshoot\w*|debug\w*|mitigat\w*|recover\w*|errors?|"
    r"fail\w*|outage|down|timeouts?|[45]\d\d)\b",
    re.IGNORECASE,
)
# The similarity of a search's nearest match for a route (the engine's evidence).
Probe = Callable[[Route], float]


@dataclass(frozen=True)
class Understanding:
    """What the engine understood, for the tool calls and the trace."""

    intent: str
    confidence: float
    routes: tuple[Route, ...]
    considered: str = ""  # the alternatives and why one won

    def explain(self) -> str:
        """Intent, confidence, the tools with their slots, and what was weighed."""
        tools = ", ".join(f"{r.tool}({_slots(r)}) [{r.reason}]" for r in self.routes) or "no tool"
        return f"{self.intent} {self.confidence:.2f} → {tools}" + (
            f" | {self.considered}" if self.considered else ""
        )


def _slots(route: Route) -> str:
    """The arguments that are not the question itself (application, days, filters)."""
    return ", ".join(f"{k}={v!r}" for k, v in route.arguments.items() if k != "query")


def understand(
    question: str,
    *,
    state: ConversationState,
    catalog: Sequence[qp.ApplicationEntry],
    today: dt.date,
    probe: Probe | None = None,
    chat: bool = True,
    topics: frozenset[str] | None = None,
) -> Understanding:
    """The intent, its confidence and the tool calls for `question`.

    `topics` are the words incidents are about (`incident_topic_words`): with
    them, a time window plus words that name no topic is a plain listing.
    """
    question = respell_asks(question)  # "wat now", "whcih setting": the ask as meant
    if topics:  # "herkou incidents": a name one slip from the titles' words, as they write it
        question = spelling.respell(question, common_words(), topics)
    ids = find_incident_ids(question)
    if ids:
        routes = [Route("lookup_incident_by_id", {"incident_id": i}, "incident id") for i in ids]
        return Understanding("lookup", 1.0, tuple(routes[:5]))
    guess = guess_intent(question).among(_allowed(state, chat=chat))
    if follow_ups.asks_sources_of_documents(question, state):
        routes = follow_ups.sources_of_documents(question, state)
        return Understanding("follow_up", guess.confidence, tuple(routes), "refers back: sources")
    if follow_ups.asks_incidents_of_documents(question, state):
        routes = follow_ups.incidents_of_documents(question, state)
        return Understanding("follow_up", guess.confidence, tuple(routes), "refers back: documents")
    kind = _follow_up_kind(question, guess, state, today, catalog)
    detail, documents = detail_then_document(question) if kind == "knowledge" else ("", "")
    if detail:
        # "what did they ship to fix it, and is there a doc for cert expiry?": the
        # record first, then the documents, as asked.
        routes = follow_ups.follow_up_routes("one", detail, state)
        routes += follow_ups.follow_up_routes("knowledge", documents, state)
        return Understanding("follow_up", guess.confidence, tuple(routes), "refers back: both")
    if kind is not None:
        routes = follow_ups.follow_up_routes(kind, question, state)
        return Understanding("follow_up", guess.confidence, tuple(routes), f"refers back: {kind}")
    if guess.is_greeting and document_asked(question) is None:
        # "list postmortems" is terse, not a greeting: it names what it wants.
        return Understanding("chit_chat", guess.confidence, ())
    intent, considered = _decide(question, guess.among(SEARCH_INTENTS), catalog, today, probe)
    routers = _ROUTERS | {
        "recent": functools.partial(_recent, topics=topics),
        "by_application": functools.partial(_by_application, topics=topics),
    }
    # A listing is read from the sentence that asks for it, not the story before it
    # ("…since last year. Can you pull every incident that affected Jira?").
    asking = (listing_clause(question, catalog) if intent == "by_application" else "") or question
    routes = routers[intent](asking, catalog, today)
    if intent == "similar" and _asks_incidents_then_documents(question):
        routes += _knowledge(question, catalog, today)[:1]  # the document asked second
    if isinstance(considered, Evidence):
        # Weighed on evidence, so shown with it: the other search's best results too.
        routes += [
            r for r in _runner_up(question, intent, guess, catalog, today) if r not in routes
        ]
    return Understanding(intent, guess.confidence, tuple(routes), str(considered))


class Evidence(str):
    """Why a decision was made, when both searches' nearest matches made it."""

    __slots__ = ()


def _allowed(state: ConversationState, *, chat: bool) -> tuple[str, ...]:
    """A follow-up needs something to follow; chit-chat only in a chat."""
    return (
        SEARCH_INTENTS + (("follow_up",) if state.focus else ()) + (("chit_chat",) if chat else ())
    )


def plan(
    question: str,
    *,
    state: ConversationState,
    catalog: Sequence[qp.ApplicationEntry],
    today: dt.date,
    probe: Probe | None = None,
) -> list[Route]:
    """The tool calls for `question` (none for a greeting)."""
    understood = understand(question, state=state, catalog=catalog, today=today, probe=probe)
    return list(understood.routes)


def route(
    question: str,
    *,
    catalog: Sequence[qp.ApplicationEntry],
    today: dt.date,
    probe: Probe | None = None,
    topics: frozenset[str] | None = None,
) -> Route:
    """The first tool a good agent would call for a question that stands alone."""
    understood = understand(
        question,
        state=ConversationState(),
        catalog=catalog,
        today=today,
        probe=probe,
        chat=False,
        topics=topics,
    )
    return understood.routes[0]


# --- follow-ups --------------------------------------------------------------------


def _follow_up_kind(
    question: str,
    guess: IntentGuess,
    state: ConversationState,
    today: dt.date,
    catalog: Sequence[qp.ApplicationEntry] = (),
) -> str | None:
    """How `question` refers back to the last results, or None if it stands alone."""
    if not state.focus:
        return None
    # A new time window starts a new listing, unless it only points at one of the
    # results ("the second one, October 2017: what kicked it off?").
    # "The most recent one" is a pointer by date, not a window; so is a month only
    # one listed incident falls in ("for the July 2023 outage, how did they recover?").
    window, rest = qp.parse_time_window(question, today)
    pointer = follow_ups.points_back(rest) or follow_ups.named_item(rest)
    # "How would we handle that today?": today as against then, not a listing's window.
    nowadays = window is not None and window.label in _NOWADAYS and follow_ups.has_reference(rest)
    dated = follow_ups.dated_pointer(question) or follow_ups.dates_one_shown(question, state)
    if window is not None and not (pointer or nowadays or dated):
        return None
    # A pointer that only makes sense against earlier results ("the second
    # one", "which of those", "for that?") follows up whatever the model
    # says; a bare pronoun needs the model to lean that way too.
    # "Any guidance on this kind of thing?": a document about what "this" is, when
    # the model itself leans to documents (among search intents alone, a detail
    # question such as "what set it off?" leans anywhere).
    # Naming a kind of document ("is that a known issue?") leans there in words.
    # A detail of what happened asked in the past ("How much data did they lose? I
    # need something to tell the customer") is the record's, however the model leans.
    leans_to_documents = guess.intent == "knowledge" and not _PAST_DETAIL_RE.search(question)
    asks_for_documents = not (
        follow_ups.asks_its_own_report(question) or follow_ups.asks_their_way(question)
    ) and (leans_to_documents or document_asked(question) is not None)
    documents_about_it = asks_for_documents and follow_ups.has_reference(question)
    referring = (
        nowadays  # the model reads "today" as a window; the pronoun points back
        or follow_ups.says_nothing_of_its_own(question)
        or follow_ups.points_back(question)
        or dated
        or documents_about_it
        or (len(state.focus) == 1 and follow_ups.asks_its_follow_ups(question))
        or follow_ups.asks_their_way(question)
        or (_leans_back(question, guess, state) and not _stands_apart(question, state, catalog))
    )
    if not referring:
        return None
    # Documents only when asked for in words: the model's "knowledge" leans on
    # words like "recovery" that detail questions share ("how long till recovery?").
    return follow_ups.follow_up_kind(question, state, about_documents=documents_about_it)


_NOWADAYS = frozenset({"today", "tonight"})
_PAST_DETAIL_RE = re.compile(
    r"\b(?:how\s+(?:much|many|long|far|bad)|what|when|who|which|why|where)\b[^.?!]{0,40}?"
    r"\b(?:did|was|were|had)\s+(?:they|it|that|this|them)\b",
    re.IGNORECASE,
)


def _leans_back(question: str, guess: IntentGuess, state: ConversationState) -> bool:
    """The model reads `question` as a follow-up, or half does and its words say so."""
    if guess.intent == "follow_up":
        return True
    if len(state.focus) == 1 and follow_ups.speaks_of_the_focus(question, state):
        # One incident read in detail, asked about in its own words ("at worst, what
        # percentage of server-side SDK connections failed?"), whatever the model says.
        return True
    return guess.probability("follow_up") >= 0.2 and (
        follow_ups.has_reference(question) or follow_ups.speaks_of_the_focus(question, state)
    )


def _stands_apart(
    question: str, state: ConversationState, catalog: Sequence[qp.ApplicationEntry]
) -> bool:
    """A new subject the model alone took for a follow-up: no pointer, and it names an
    application the results were not about ("Settlement report missing rows" after
    Checkout Gateway's timeouts). Terse new questions read like detail questions to
    the model. (Words of its own the records do not say are no sign: detail
    questions have them too, "what was the user doing just prior to the wipe?".)"""
    if not catalog or follow_ups.has_reference(question):
        return False
    mention = qp.find_application_mention(question, catalog)
    if mention is None or not _spelt_as_named(mention) or mention.names_a_component:
        return False
    shown = {item.application.casefold() for item in state.focus}
    if shown & {name.casefold() for name in mention.match.applications}:
        return False
    # A word that also names some application ("which game update shipped the bug?",
    # "which resolver?") is a detail question's when the record in focus says it.
    return not follow_ups.focus_says(mention.said, state)


def _spelt_as_named(mention: qp.ApplicationMention) -> bool:
    """Every word the question named it by is a word of a matched name as spelt there:
    "window" (of "exact outage window?") only stands for "Windows Azure" loosely."""
    named = {w.casefold() for name in mention.match.applications for w in _WORD_RE.findall(name)}
    return not mention.fuzzy and all(w.casefold() in named for w in mention.said)


_WORD_RE = re.compile(r"[\w.]+")


def follow_up_kind(
    question: str,
    state: ConversationState,
    today: dt.date,
    catalog: Sequence[qp.ApplicationEntry] = (),
) -> str | None:
    """The same decision `understand` makes, for the writer of the answer."""
    question = respell_asks(question)
    if not state.focus or find_incident_ids(question):
        return None
    guess = guess_intent(question).among(_allowed(state, chat=True))
    return _follow_up_kind(question, guess, state, today, catalog)


# --- deciding between tools ----------------------------------------------------------


def _decide(
    question: str,
    guess: IntentGuess,
    catalog: Sequence[qp.ApplicationEntry],
    today: dt.date,
    probe: Probe | None,
) -> tuple[str, str]:
    """The intent to act on, and why, when the model is unsure."""
    (first, p1), (second, p2) = guess.ranked[0], guess.ranked[1]
    unfit = _listing_without_slot(question, first, catalog, today)
    if unfit.startswith(ONE_EVENT_OF) and not document_asked(question):
        # One event of a named application is what a search finds, whatever the
        # model leaned to after the listing.
        return "similar", f"{first} {p1:.2f} but {unfit}"
    if unfit:
        return _decided_without(
            question, guess, first, f"{first} {p1:.2f} but {unfit}", catalog, today, probe
        )
    clause = listing_clause(question, catalog) if first != "lookup" else ""
    if clause:
        # "…a vendor review on Friday. What incidents do we have for Cloudflare's R2?":
        # the story around it is context; the sentence that asks is a listing.
        listed = _only_names_an_application(clause, catalog)
        return "by_application", f"{first} {p1:.2f}, but a sentence asks for {listed}'s incidents"
    asked = document_asked(question)
    if asked and _asks_incidents_then_documents(question):
        return "similar", f"{first} {p1:.2f}, but asks for incidents first, then a {asked}"
    if first != "knowledge" and asked and _is_request(question):
        # The user names the kind of document they want ("Known issue with X?").
        return "knowledge", f"{first} {p1:.2f}, but asks for a {asked}"
    if first == "similar" and _GENERAL_CAUSE_RE.search(question):
        # "Why do X tend to…?", "what causes split brain?": how things work in general
        # (known issues, architecture, reviews), not which past event it was.
        return "knowledge", f"similar {p1:.2f}, but asks why things happen in general"
    if first != "lookup" and _ASKS_HOW_IT_WORKS_RE.search(question):
        # "Does X guarantee Y after Z?", "is X=Y safe for Z?", "how is that even
        # possible?": how a system behaves, which documents say, whatever else
        # the story holds (a time of day, a product's name).
        return "knowledge", f"{first} {p1:.2f}, but asks how the system behaves"
    if first != "lookup" and _HOW_TO_FIX_RE.search(question):
        # "How do I fix 403s in PayU?": opening with how to fix it asks for the
        # procedure, whatever application or symptom it names.
        return "knowledge", f"{first} {p1:.2f}, but opens asking how to fix it"
    if _PREPARES_RE.search(question):
        # "Leap second coming up, anything to watch for?": how to get ready is what
        # runbooks and known issues say (the past fixes come with them).
        return "knowledge", f"{first} {p1:.2f}, but asks what to prepare for or learn"
    if first in {"similar", "knowledge", "recent"} and (
        _pleads_what_to_do(question)
        or _ENDS_ASKING_WHAT_TO_DO_RE.search(question)
        or _OPENS_WITH_ASK_RE.search(question)
        or _asks_what_we_do(last_sentence(question))
        or _asks_why_alone(question)
    ):
        # "<symptom>. help" / "…, what now?": the last clause is the ask, and it asks
        # what to do, which documents answer (the past fixes come with them), however
        # close a past incident reads, or whatever time it names ("tonight").
        return "knowledge", f"{first} {p1:.2f}, but the last words ask what to do"
    if first in {"similar", "knowledge"} and _asks_if_it_happened(question) and not asked:
        # "Has a durability setting ever lost transactions in a failover?": whether it
        # happened is the ask, which past incidents answer, however close a document
        # on the topic reads.
        return "similar", f"{first} {p1:.2f}, but asks whether it ever happened"
    if first in {"similar", "knowledge"} and not asked and _only_tells_what_happened(question):
        # "Inserts into our biggest table fail on managed mysql, plenty of disk free":
        # what was seen, and no ask at all. Past incidents are what it is matched
        # against, however close a document reads; a document needs something asked.
        return "similar", f"{first} {p1:.2f}, and only tells what happened"
    if first in {"similar", "knowledge"} and "by_application" in dict(guess.ranked):
        subject = _only_names_an_application(question, catalog)
        if subject:
            # "gce persistent disk outages": a name and listing words, nothing to search.
            return "by_application", f"{first} {p1:.2f}, but names only {subject}"
    if p1 >= UNSURE_BELOW or p2 < EVIDENCE_FROM:
        return _slots_agree(question, first, guess, catalog, today, sure=p1 >= UNSURE_BELOW)
    considered = f"{first} {p1:.2f} vs {second} {p2:.2f}"
    pair = {first, second}
    for weigh in (_by_window, _by_document_type, _by_application_named):
        decided = weigh(question, pair, catalog, today)
        if decided is None:
            continue
        if weigh is _by_application_named and decided[0] != "by_application":
            # Not a listing after all: the others are weighed as if it had not been
            # offered, not left to whichever came second.
            why = f"{considered}: {decided[1]}"
            return _decided_without(question, guess, "by_application", why, catalog, today, probe)
        return decided[0], f"{considered}: {decided[1]}"
    if pair == {"similar", "knowledge"} and probe is not None:
        return _by_evidence(question, catalog, today, probe, considered)
    return first, considered


def _decided_without(
    question: str,
    guess: IntentGuess,
    intent: str,
    reason: str,
    catalog: Sequence[qp.ApplicationEntry],
    today: dt.date,
    probe: Probe | None,
) -> tuple[str, str]:
    """Decide again as if `intent` had not been offered: the runner-up alone would
    skip the evidence a close call between the others deserves."""
    rest = guess.among(tuple(name for name, _ in guess.ranked if name != intent))
    decided, why = _decide(question, rest, catalog, today, probe)
    reason = reason + (f"; {why}" if why else "")
    return decided, Evidence(reason) if isinstance(why, Evidence) else reason


Weighing = tuple[str, str] | None


ONE_EVENT_OF = "names one event of"


def _listing_without_slot(
    question: str, intent: str, catalog: Sequence[qp.ApplicationEntry], today: dt.date
) -> str:
    """Why a listing cannot run ("no application named"), or "" when it can."""
    if intent == "by_application":
        mention = qp.find_application_mention(question, catalog)
        if mention is None:
            return "no application named"
        if _names_one_event(question, mention):
            return f"{ONE_EVENT_OF} {mention.subject}, not a listing"
    if intent == "recent" and qp.parse_time_window(question, today)[0] is None:
        return "no time window"
    if intent == "recent":
        # "the CrowdStrike thing from July 2024": one event, dated, is searched for.
        mention = qp.find_application_mention(question, catalog)
        if mention is not None and _DEFINITE_EVENT_RE.search(question):
            return f"{ONE_EVENT_OF} {mention.subject}, not a listing"
    return ""


def _slots_agree(
    question: str,
    intent: str,
    guess: IntentGuess,
    catalog: Sequence[qp.ApplicationEntry],
    today: dt.date,
    *,
    sure: bool = True,
) -> tuple[str, str]:
    """A listing whose slot is there (`_listing_without_slot` ran first) can still
    be the wrong one: a component name ("S3" of Amazon S3) with more to search, or
    an unsure listing where the question holds more than the name."""
    if intent != "by_application":
        return intent, ""
    mention = qp.find_application_mention(question, catalog)
    # The next intent that can run: a listing by time with no window in the
    # question ("Jira outages") would list the last week, which nobody asked.
    runner_up = next(
        (
            name
            for name, _ in guess.ranked[1:]
            if not _listing_without_slot(question, name, catalog, today)
        ),
        "similar",
    )
    # "Mozilla outages": a company whose applications' names do not say it is no
    # component of them.
    if (
        mention is not None
        and mention.names_a_component
        and not qp.names_only_a_company(mention, catalog)
    ):
        if not sure:
            return runner_up, f"by_application {guess.confidence:.2f}, a component only"
        if _words_beside(question, mention) > 1:
            return runner_up, f"{mention.subject} is a component, and there is more to search"
        if _ABOUT_A_TOPIC_RE.search(question):
            # "Find incidents about Redis": a technology asked about, wherever it ran,
            # not the one product whose name mentions it in parentheses.
            return "similar", f"{mention.subject} is a component, asked about as a topic"
    if not sure:
        decided = _by_application_named(question, {intent, runner_up}, catalog, today)
        if decided is not None:
            return decided
    return intent, ""


_ABOUT_A_TOPIC_RE = re.compile(
    r"\b(?:about|involving|regarding|concerning|related\s+to|to\s+do\s+with)\b", re.IGNORECASE
)


def _by_window(
    question: str, pair: set[str], catalog: Sequence[qp.ApplicationEntry], today: dt.date
) -> Weighing:
    """A listing by time needs a time expression."""
    if "recent" not in pair:
        return None
    if qp.parse_time_window(question, today)[0] is not None:
        return "recent", "a time window"
    return (pair - {"recent"}).pop(), "no time window"


def _by_document_type(
    question: str, pair: set[str], catalog: Sequence[qp.ApplicationEntry], today: dt.date
) -> Weighing:
    """Asking for a kind of document ("any known issue…?", "give me the runbook") asks
    for one; a playbook mentioned in a story does not."""
    asked = document_asked(question)
    if "knowledge" in pair and asked and _is_request(question):
        return "knowledge", f"names a {asked}"
    return None


_REQUEST_RE = re.compile(
    r"^\s*(?:give|show|send|find|link|point|need|get|pull|share|where|is\s+there|any|"
    r"what(?:'?s|\s+is|\s+are))\b",
    re.IGNORECASE,
)


# A cause asked in the simple present, of things in general ("why do our ids skip
# numbers after a failover?"); "why did…", "what caused…" ask about one event.
_GENERAL_CAUSE_RE = re.compile(
    r"^\W*(?:so\s+)?(?:why\s+(?:do|does|would|can|might)|what\s+(?:causes|makes|leads\s+to))\b"
    r"|\bwhy\s+(?:are|is)\b.*\bso\s+(?:common|frequent|often|many|bad|slow)\b",
    re.IGNORECASE,
)
# Asking how a system behaves rather than what happened: a property it promises,
# whether a setting is safe, how something observed can happen at all.
_ASKS_HOW_IT_WORKS_RE = re.compile(
    r"^\W*(?:does|do|will|would|can|is|are)\s+(?:[\w./+-]+\s+){1,4}"
    r"(?:guarantee|promise|ensure|preserve|survive|tolerate|support)s?\b"
    # "Does Consul streaming fall over at very high load?", "can sequences jump after a
    # failover?": how it behaves under a condition (did… asks about one event).
    r"|^\W*(?:does|do|will|would|can|could)\s+(?:[\w./+-]+\s+){1,4}(?:fall\s+over|hold\s+up|"
    r"cope|scale|break|degrade|choke|hang|deadlock|leak|lose|drop|skip|jump|reset|wrap|"
    r"overflow)s?\b[^?]*?\b(?:under|at|when|with|after|during|if|beyond|past|once)\b"
    # "is innodb_flush_log_at_trx_commit=2 safe for…", or typed as a search without "is".
    r"|(?:\bis\s+|^\W*)[\w.]+\s*=\s*[\w.]+\s+(?:safe|ok|okay|fine|risky|dangerous)\b"
    # "Can we rely on sequences being gap-free?", "is it safe to assume…", "are TTLs
    # guaranteed to…": whether a property holds, whatever was just seen.
    r"|^\W*(?:can|could|should|may)\s+(?:we|i|you|one)\s+(?:safely\s+|still\s+)?"
    r"(?:rely|count|depend|bank)\s+on\b"
    r"|^\W*is\s+it\s+(?:safe|ok|okay|fine|reasonable)\s+to\s+(?:assume|rely|expect|trust)\b"
    r"|^\W*(?:is|are)\s+(?:[\w./+-]+\s+){1,4}guaranteed\b"
    r"|\bhow\s+(?:is|was)\s+(?:that|this|it)\s+(?:even\s+)?possible\b"
    # "How does the hub deliver webhooks?": how it works now, not what happened.
    r"|^\W*how\s+(?:does|do)\s+(?!(?:i|we|you|they|it|that|this)\b)[\w.-]+(?:\s+[\w.-]+){0,4}\s+"
    r"(?:work|deliver|handle|route|store|replicate|scale|fail\s*over|recover|retry|process|"
    r"protect|prevent|guarantee|keep|stay|serve)s?\b"
    r"|\bhow\s+(?:can|could|would|does)\s+(?:that|this|it)\s+(?:even\s+)?happen\b",
    re.IGNORECASE,
)
# Opening with how to fix it: what to do, however closely a past incident matches.
_HOW_TO_FIX_RE = re.compile(
    r"^\W*how\s+(?:do|should|can|would|to)\s+(?:i|we|you)?\s*(?:fix|handle|stop|recover|"
    r"mitigate|resolve|deal\s+with|get\s+rid\s+of|troubleshoot|debug|roll\s*back|unblock)\b",
    re.IGNORECASE,
)
# An opening that asks whether such an event ever happened: "Has a <thing> ever…?",
# "Any outages where…?", "Was there ever an incident…?", "Have we seen…?".
_ASKS_IF_IT_HAPPENED_RE = re.compile(
    r"^\W*(?:(?:so|ok|hey|quick\s+(?:one|question))\W+)?(?:"
    r"(?:has|have|did)\s+(?:\w+[\s,]+){0,6}?ever\s+(?!\w+\s+(?:a|an|any|the)\s+(?:runbook|doc\w*|"
    r"procedure|playbook|guide|checklist)s?\b)"
    r"|(?:are\s+there\s+|were\s+there\s+)?any\s+(?:\w+\s+)?(?:outages?|incidents?|cases?|examples?|"
    r"instances?|times?)\s+(?:where|when|in\s+which|that|caused|from|after)\b"
    r"|(?:was|were)\s+there\s+(?:ever\s+)?(?:an?|any)\s+(?:\w+\s+)?(?:outages?|incidents?)\b"
    # "Have there been incidents in which a rollback itself failed?"
    r"|(?:have|has)\s+there\s+(?:ever\s+)?been\s+(?:an?\s+|any\s+)?(?:\w+\s+)?"
    r"(?:outages?|incidents?|cases?)\b"
    r"|(?:have|has)\s+(?:we|you|anyone|anybody|they)\s+(?:ever\s+)?(?:seen|had|hit|run\s+into)\b)",
    re.IGNORECASE,
)
# ...or a story whose last sentence asks for a precedent: "…took every instance out of
# rotation. Do we have a precedent?", "…Seen this before?".
_ASKS_FOR_PRECEDENT_RE = re.compile(
    r"\bprecedents?\b|\bprior\s+(?:incidents?|cases?|occurrences?|outages?|examples?)\b"
    # "…customer LBs got misconfigured. Do we have it?", "Is that one on file?": the
    # record of the story told.
    r"|^\W*(?:do|did)\s+we\s+have\s+(?:it|this|that)(?:\s+one)?(?:\s+(?:on\s+file|on\s+record|"
    r"logged|written\s+up|in\s+there))?\W*$"
    r"|^\W*is\s+(?:it|this|that)(?:\s+one)?\s+(?:on\s+file|on\s+record|logged|in\s+there)\W*$"
    r"|\b(?:happened|seen|had|hit)\s+(?:(?:this|that|it)\s+|(?:anything|something)\s+like\s+"
    r"(?:this|that|it)\s+)?before\W*$",
    re.IGNORECASE,
)


# ...or incidents asked for outright: "Find incidents about Consul.", "show me outages
# involving a leap second".
_ASKS_FOR_INCIDENTS_RE = re.compile(
    r"^\W*(?:please\s+)?(?:find|show|list|search(?:\s+for)?|get|pull(?:\s+up)?|give)\s+(?:me\s+)?"
    r"(?:all\s+|any\s+|the\s+|some\s+)?(?:past\s+|previous\s+|earlier\s+|old\s+)?"
    r"(?:incidents?|outages?)\s+(?:about|involving|with|on|related\s+to|regarding|around|"
    r"where|when|that|caused|from|in\s+which)\b",
    re.IGNORECASE,
)


# "What other certificate expiry outages are on record?", "which DNS incidents do we
# have?": incidents asked for by their noun.
_WHICH_INCIDENTS_RE = re.compile(
    r"^\W*(?:what|which|any)\s+(?:other\s+|more\s+|past\s+|previous\s+)?(?:[\w-]+\s+){0,3}?"
    r"(?:incidents|outages)\s+(?:are|were|do|did|have|has|on|in|from|like)\b",
    re.IGNORECASE,
)


# "Has this happened somewhere before, so we can tell customers what to expect?": the
# last sentence opens asking whether it happened, whatever purpose follows it.
_OPENS_ASKING_IF_IT_HAPPENED_RE = re.compile(
    r"^\W*(?:and\s+|so\s+)?(?:has|have|did)\s+(?:this|that|it|(?:anything|something)\s+like\s+"
    r"(?:this|that|it))\s+(?:ever\s+)?(?:happen\w*|occur\w*|been\s+seen)\s+"
    r"(?:before|somewhere|anywhere|elsewhere|to\s+anyone)\b",
    re.IGNORECASE,
)


# A second ask, after a document's: "…, and has that ever taken down a cluster?",
# "… Did it ever cause a real outage anywhere?".
_ALSO_HAPPENED_RE = re.compile(
    r"(?:\band\b|[,;]|[.?!]\s)\s*(?:(?:has|have|did|was|were)\s+(?:[\w'-]+\s+){0,10}?"
    r"(?:ever|actually|really|before|somewhere|anywhere|in\s+production|for\s+real)\b"
    # "…, and has anyone ended up with users logged in as someone else?": whether it
    # happened to somebody (not "has anyone written a checklist for it?").
    r"|(?:has|have|did)\s+(?:anyone|anybody|someone|somebody|any\s+(?:other\s+)?"
    r"(?:company|companies|team|teams|site|sites|customers?))\b"
    r"(?![^.?!]*\b(?:runbook|doc\w*|procedure|playbook|guide|checklist|write-?up)s?\b))",
    re.IGNORECASE,
)


def also_asks_if_it_happened(question: str) -> bool:
    """Whether a question that asks for documents also asks if it ever happened."""
    return bool(_ALSO_HAPPENED_RE.search(question))


# How it went for others: what their incidents' records say ("How did others
# reconstruct the data?", "how did this play out for other companies?").
_HOW_OTHERS_FARED_RE = re.compile(
    r"\bhow\s+(?:did|have|has)\s+(?:others|anyone(?:\s+else)?|everyone\s+else|other\s+"
    r"(?:teams|companies|orgs|organi[sz]ations|people|folks|shops|vendors|sites))\b"
    r"|\bplay(?:ed)?\s+out\s+(?:for|at|with|elsewhere)\b",
    re.IGNORECASE,
)


def _asks_if_it_happened(question: str) -> bool:
    sentences = _SENTENCE_END_RE.split(question.strip())
    return bool(
        _ASKS_IF_IT_HAPPENED_RE.search(question)
        or _HOW_OTHERS_FARED_RE.search(question)
        or _ASKS_FOR_INCIDENTS_RE.search(question)
        or _WHICH_INCIDENTS_RE.search(question)
        or _ASKS_FOR_PRECEDENT_RE.search(last_sentence(question))
        # "What's the precedent for a cleanup job deleting base images? It only read…":
        # asked first, the story after it.
        or _ASKS_FOR_PRECEDENT_RE.search(sentences[0])
        or _OPENS_ASKING_IF_IT_HAPPENED_RE.search(sentences[-1])
    )


# Asking how to get ready or what to beware of, before anything has happened.
_PREPARES_RE = re.compile(
    r"\b(?:anything|what|things)\s+(?:(?:do|should)\s+(?:i|we)\s+|to\s+)(?:watch|look)\s+"
    r"(?:out\s+)?for\b|\bgotchas?\b|\bprecautions?\b|\bpitfalls?\b|"
    r"\bhow\s+(?:do|should|can)\s+(?:i|we)\s+prepare\b|\bwhat\s+could\s+go\s+wrong\b|"
    r"\b(?:the\s+)?safe(?:st)?\s+way\s+to\b|\bis\s+it\s+safe\s+to\b|\bbest\s+practices?\b|"
    r"\blessons?\s+(?:learned|learnt)\b|\btakeaways?\b|"
    # How it is prevented: "what should we have had in place to stop…", "how could
    # we have prevented…", "what would avoid…".
    r"\bwhat\s+(?:should|could|would)\s+(?:we|i|they|you)\s+have\s+(?:had|done|put)\b|"
    r"\b(?:how|what)\s+(?:do|does|can|could|should|would|to|is\s+the\s+best\s+way\s+to)\b"
    r"[^.?!]{0,30}\b(?:prevent\w*|avoid\w*)\b",
    re.IGNORECASE,
)
# A closing plea for what to do: the whole of a message's last clause.
_PLEA_RE = re.compile(
    rf"(?:help|next|thoughts|{qp.WHAT_TO_DO_ASKS})(?:\s+(?:pls|please|plz))?[\s?!.]*",
    re.IGNORECASE,
)


# The ask of a message's last clause, as what we are to do or what our process
# says: "…, how to break the loop?", "…, do we still declare an incident?".
_HOW_TO_ACT_RE = re.compile(
    r"^\W*(?:(?:so|and|but|ok(?:ay)?)\W+)?how\s+(?:to|do\s+(?:i|we)|should\s+(?:i|we)|"
    r"can\s+(?:i|we))\s+(?!know\b|tell\b|find\b|say\b|see\b|check\s+if\b)\w+",
    re.IGNORECASE,
)
_OUR_PROCESS_RE = re.compile(
    r"^\W*(?:(?:so|and|but|ok(?:ay)?)\W+)?(?:do|should|must|shall)\s+(?:i|we)\s+"
    r"(?:still\s+|even\s+|also\s+|always\s+|just\s+)?(?:declare|page|escalate|notify|"
    r"open|raise|wake|involve|inform|announce|roll\s*back|fail\s*over|restart|evacuate)\b",
    re.IGNORECASE,
)


# A symptom, then only "why?": why such a thing happens, which known issues say.
_WHY_ALONE_RE = re.compile(
    r"^\W*(?:but\s+|so\s+|any\s+idea\s+)?why(?:\s+(?:tho|though|is\s+that|does\s+that\s+happen))?"
    r"[\s?!.]*$",
    re.IGNORECASE,
)
# Opening with what to do, the symptom after it ("what do I check first when…").
# The same asks closing a message without a clause of their own: "if someone starts
# announcing our prefixes tonight whats the play".
_ENDS_ASKING_WHAT_TO_DO_RE = re.compile(
    r"\b(?:what(?:'?s|\s+is)\s+the\s+(?:drill|play|move|plan|process|standard\s+response)|"
    r"what\s+now|now\s+what|what\s+(?:do|should|can)\s+(?:i|we)\s+do(?:\s+now)?|"
    # "…leaked in public ci logs what to rotate and revoke": what to act on, typed
    # as a search (not what to expect, say or tell, which others' incidents show).
    r"(?:what|which\s+\w+)\s+to\s+(?!expect\b|say\b|tell\b|know\b|think\b)\w+"
    r"(?:\s+(?:and|or|&)\s+\w+)?(?:\s+first)?)[\s?!.]*$",
    re.IGNORECASE,
)
_OPENS_WITH_ASK_RE = re.compile(rf"^\W*(?:{qp.WHAT_TO_DO_ASKS})\b", re.IGNORECASE)


def _asks_what_we_do(clause: str) -> bool:
    return bool(_HOW_TO_ACT_RE.search(clause) or _OUR_PROCESS_RE.search(clause))


def _asks_why_alone(question: str) -> bool:
    parts = [p.strip() for p in CLAUSE_END_RE.split(question.strip()) if p.strip()]
    return len(parts) > 1 and bool(_WHY_ALONE_RE.match(parts[-1]))


def _pleads_what_to_do(question: str) -> bool:
    parts = [p.strip() for p in CLAUSE_END_RE.split(question.strip()) if p.strip()]
    return len(parts) > 1 and bool(_PLEA_RE.fullmatch(parts[-1]))


# A question typed without its mark still opens like one ("is this a known thing").
_QUESTION_OPENING_RE = re.compile(
    r"^\W*(?:is|are|was|were|do|does|did|can|could|should|would|will|has|have)\s+"
    r"(?:this|that|it|there|we|you|anyone|anybody)\b",
    re.IGNORECASE,
)


# What makes a message ask something: a question mark, an opening that asks or
# requests, or asking words anywhere ("whats the play", "anything i should read").
_ASKING_OPENING_RE = re.compile(
    r"^\W*(?:(?:so|ok|okay|hey|hi|quick\s+(?:one|q\w*)|question|q)\W+)*(?:how|what|what'?s|why|"
    r"which|who|whom|whose|when|where|whether|is|are|was|were|am|can|could|would|should|shall|"
    r"will|do|does|did|has|have|had|any|anything|anyone|anybody|need|needs|want|looking|"
    r"wondering|tell|show|give|list|explain|help|pls|please|recommend\w*|advice|guidance|tips?|"
    r"ideas?|thoughts|steps|procedure|process|runbook|playbook|checklist|best|how-to|ever|"
    r"docs?|documentation|find|search|get|pull|open|look\s+up|lookup|kindly|advise|suggest)\b",
    re.IGNORECASE,
)
_ASKING_WORDS_RE = re.compile(
    r"\?|\b(?:what'?s|whats|what\s+(?:now|next|do|should|to\s+do|is|are)|how\s+(?:do|to|should|can)|"
    r"any\s+(?:ideas?|advice|tips|docs?|runbooks?)|help|pls|please|advice|guidance|recommend\w*|"
    r"should\s+(?:we|i)|anything\s+(?:i|we)\s+should|safe\s+to|need\s+(?:to|a|the)|"
    r"want\s+(?:to|a|the)|looking\s+for|wondering|anyone\s+know|procedure|playbook|runbook|"
    r"read\s+first|"
    # A question's own word order anywhere: "…drifting to 0. which setting do i change".
    r"(?:which|what|where|how|when|who)\s+(?:\w+\s+){0,2}(?:do|does|should|can|could|must)\s+"
    r"(?:i|we|you)\s+\w+|"
    # "Kindly advise the steps for…", "request you to suggest…": a request, politely.
    r"kindly|advise|suggest|request\s+you|let\s+(?:me|us)\s+know)\b",
    re.IGNORECASE,
)
# A message that tells of an event says what something did or does: a verb's -ed
# or -ing form, or the words symptoms are told in.
_TELLS_RE = re.compile(
    r"\b\w{3,}(?:ed|ing)\b|\b(?:fail\w*|crash\w*|throw\w*|down|stuck|broke\w*|hung|hang\w*|"
    r"spik\w*|time[sd]?\s*out|timeouts?|errors?|lost|deleted?|full|wrong)\b",
    re.IGNORECASE,
)


def _only_tells_what_happened(question: str) -> bool:
    """A statement of what was seen, six words or more, that asks nothing."""
    return (
        len(question.split()) >= 6
        and not _ASKING_OPENING_RE.search(question)
        and not _ASKING_WORDS_RE.search(question)
        and bool(_TELLS_RE.search(question))
    )


def _is_request(question: str) -> bool:
    if _OPENS_WITH_DOCUMENT_RE.search(question):
        return True  # "architecture of the settlement pipeline": a search box's request
    # The last sentence, or the one naming the document: "do we have a known issue
    # writeup on consul streaming? we're on 1.10" asks, then tells.
    naming = [s for s in _SENTENCE_END_RE.split(question) if document_asked(s)]
    return any(_asks(sentence) for sentence in (last_sentence(question), *naming))


def _asks(sentence: str) -> bool:
    return "?" in sentence or bool(
        _REQUEST_RE.search(sentence) or _QUESTION_OPENING_RE.search(sentence)
    )


_SENTENCE_END_RE = re.compile(r"(?<=[?!.])\s+")


_OPENS_WITH_DOCUMENT_RE = re.compile(
    r"^\W*(?:(?:the|our|any|all)\s+)?(?:runbooks?|playbooks?|architecture|post-?mortems?|"
    r"known[- ]issues?|incident\s+reviews?)\b",
    re.IGNORECASE,
)


def _by_application_named(
    question: str, pair: set[str], catalog: Sequence[qp.ApplicationEntry], today: dt.date
) -> Weighing:
    """A listing by application needs a name, and nothing else to search for."""
    if "by_application" not in pair:
        return None
    other = (pair - {"by_application"}).pop()
    mention = qp.find_application_mention(question, catalog)
    if mention is None:
        return other, "no application named"
    if _words_beside(question, mention) > 1:
        return other, f"names {mention.subject} and more"
    return "by_application", f"names {mention.subject}"


# One event said in the singular ("outage", "incident", "meltdown"), not "incident history".
_ONE_EVENT_RE = re.compile(
    r"\b(?:outage|incident|failure|meltdown|mess|disaster|breakage|event|degradation|crash|"
    r"fiasco|debacle|snafu|catastrophe|blow-?up|breach|hack|leak|wipe-?out|screw-?up|"
    r"fire|glitch|blip|thing)\b"
    r"(?!\s+(?:history|list|log|records?|count|summary|overview|reports?|rate|trends?))",
    re.IGNORECASE,
)
# "The CrowdStrike thing", "that Slack outage": one event, pointed at.
_DEFINITE_EVENT_RE = re.compile(
    r"\b(?:the|that|this)\s+(?:[\w.&'-]+\s+){1,3}?(?:outage|incident|thing|meltdown|mess|"
    r"disaster|fiasco|debacle|snafu|catastrophe|blow-?up|breach|hack|leak|wipe-?out)\b",
    re.IGNORECASE,
)
# A day, not a window: "on 12 june 2025", "june 12th", "2025-06-12".
_ONE_DAY_RE = re.compile(
    rf"\b(?:19|20)\d\d-\d\d-\d\d\b|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{qp.MONTH_PATTERN})\b"
    rf"|\b(?:{qp.MONTH_PATTERN})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b(?!\d)",
    re.IGNORECASE,
)
_DEFINITE_RE = re.compile(r"\b(?:the|that|this)\b", re.IGNORECASE)
# Before the event word, these count or list them all: "every CircleCI incident",
# "how many outage has been for crates dot io?" (a count, in a learner's singular).
_EVERY_RE = re.compile(r"\b(?:every|each|all|any|which|how\s+many|number\s+of)\b", re.IGNORECASE)


def _only_names_an_application(question: str, catalog: Sequence[qp.ApplicationEntry]) -> str:
    """The application's name, when the question says nothing else that a search
    could rank by (its other words only list: "outages", "any incidents?")."""
    mention = qp.find_application_mention(question, catalog)
    if mention is None or _names_one_event(question, mention):
        return ""
    return mention.subject if _words_beside(question, mention) == 0 else ""


# Sentences (a pasted alert ends with its line), and clauses joined by ", and" or
# "and also": "Give me all the Sentry incidents, and tell me which was the longest."
_SENTENCE_OR_AND_RE = re.compile(
    r"(?<=[.!?;])\s+|\n+|,\s+and\s+|\s+and\s+also\s+"
    # "list firefox incidents and say which one was a certificate problem"
    r"|\s+and\s+(?=(?:say|tell|show|mark|note|highlight|flag|explain|point\s+out)\b)"
    # "Please list the incidents of Zerodha, is it happened many times before?"
    r"|,\s+(?=(?:is|was|has|have|did|does|do|are|were)\s+(?:it|this|that|there|they)\b)"
)
_ASKS_FOR_A_LIST_RE = re.compile(
    r"\b(?:incidents?|outages?|history|track\s+record|on\s+(?:record|file)|"
    # "Kinesis issues? Please tell me which incidents…": a bare name with its troubles.
    r"issues|problems)\b",
    re.IGNORECASE,
)


def _clauses(question: str) -> list[str]:
    """The sentences and joined clauses of a message (`_SENTENCE_OR_AND_RE`)."""
    return [c for c in _SENTENCE_OR_AND_RE.split(question.strip()) if c.strip()]


def _asks_incidents_then_documents(question: str) -> bool:
    """ "What incidents do we have where a kafka cluster fell over, and is there a
    runbook for queue backlogs?": both are answered, in the order asked."""
    clauses = _clauses(question)
    if len(clauses) < 2 or document_asked(clauses[0]):
        return False
    opening = clauses[0]
    asks_incidents = (
        _ASKS_FOR_INCIDENTS_RE.search(opening)
        or _WHICH_INCIDENTS_RE.search(opening)
        or _ASKS_IF_IT_HAPPENED_RE.search(opening)
    )
    return bool(asks_incidents) and any(document_asked(c) for c in clauses[1:])


_WH_OPENING_RE = re.compile(r"^\W*(?:what|which|when|who|why|where|how)\b", re.IGNORECASE)


def detail_then_document(question: str) -> tuple[str, str]:
    """A follow-up that asks a detail of the record, then for documents: the two
    clauses, or ("", "")."""
    clauses = _clauses(question)
    first = clauses[0] if clauses else ""
    if len(clauses) < 2 or document_asked(first) or not follow_ups.has_reference(first):
        return "", ""
    if not (_QUESTION_OPENING_RE.search(first) or _WH_OPENING_RE.search(first)):
        return "", ""  # "The CircleCI one sounds like ours. Is there a known issue?": one ask
    rest = " ".join(clauses[1:])
    return (clauses[0], rest) if document_asked(rest) else ("", "")


def listing_clause(question: str, catalog: Sequence[qp.ApplicationEntry]) -> str:
    """The sentence of a longer message that asks to list an application's incidents
    and says nothing else to search ("Can you pull together every CircleCI incident
    we have on file?" after a story of why), or ""."""
    clauses = _clauses(question)
    if len(clauses) < 2:
        return ""
    for clause in reversed(clauses):
        clause = _from_the_request(clause)
        if _ASKS_FOR_A_LIST_RE.search(clause) and _only_names_an_application(clause, catalog):
            return clause
    return ""


# "Before I reply, can you list every CircleCI incident we have": the request starts
# at its verb; what comes before it says when or why.
_REQUEST_VERB_RE = re.compile(
    r",\s*(?=(?:(?:can|could|would|will)\s+you\s+)?(?:please\s+)?(?:list|show|give|pull|get|"
    r"find|tell)\b)",
    re.IGNORECASE,
)


def _from_the_request(clause: str) -> str:
    return _REQUEST_VERB_RE.split(clause, maxsplit=1)[-1]


def _names_one_event(question: str, mention: qp.ApplicationMention) -> bool:
    """ "The big Roblox outage", "Fastly's global outage": one event of the application,
    told apart by a determiner or a describing word, which a search finds; "Roblox
    outages" and "CrowdStrike incident" list the application's incidents."""
    if _ONE_DAY_RE.search(question):
        return True  # "codespaces down on 12 june 2025": one day is one event
    rest = " ".join(_without_name(question, mention))  # the name's own words are not the event
    event = _ONE_EVENT_RE.search(rest)
    if event is None or _EVERY_RE.search(rest[: event.start()]):
        return False  # "every CircleCI incident" lists them all
    before = rest[: event.start()]
    return bool(_DEFINITE_RE.search(before)) or _words_beside(question, mention) >= 1


def _words_beside(question: str, mention: qp.ApplicationMention) -> int:
    """Content words of the question besides the application's name, and besides
    what the list is for ("for the broker review") or how often it failed ("how
    many times has it gone down?"): neither is anything to search for."""
    asked = _HOW_OFTEN_DOWN_RE.sub(" ", _PURPOSE_RE.sub(" ", _ON_RECORD_RE.sub(" ", question)))
    beside = _subject_words(" ".join(_without_name(asked, mention))).split()
    if beside and _ALIASES_RE.search(asked):
        # "EBS (Elastic Block Store, the block volumes) incidents": the parentheses
        # give the name's other names, which leave nothing else to search.
        aside = _without_name(_ALIASES_RE.sub(" ", asked), mention)
        return len(_subject_words(" ".join(aside)).split())
    return len(beside)


# Other names for an application in parentheses after it: "GitHub Packages (ghcr.io /
# container registry)", "ddb (dynamo / dynamodb)".
_ALIASES_RE = re.compile(r"\(\s*[^()]{1,80}\)")


_PURPOSE_RE = re.compile(
    r"\bfor\s+(?:the|our|my|a|an|this|next|tomorrow'?s)?\s*(?:[\w-]+\s+){0,2}?"
    r"(?:review|report|meeting|retro\w*|audit|deck|slides?|summary|qbr|board|boss|manager|"
    r"leadership|execs?|post-?mortem|write-?up|handover|hand-off)\b",
    re.IGNORECASE,
)
# Where the list is kept or how it is gathered: "we have on file", "pull together".
_ON_RECORD_RE = re.compile(
    r"\b(?:in|from)\s+(?:the|your|our)\s+(?:corpus|data\s*set|data|archive|system|database|"
    r"knowledge\s+base|kb|records?|logs?)\b"
    r"|\b(?:on|in)\s+(?:file|record|the\s+(?:log|books))\b|\bpull\s+together\b|\btrack\s+record\b"
    # "What incidents are recorded for gitlab dot com?"
    r"|\b(?:are|were|is|was|been|got|get)\s+(?:recorded|logged|documented|filed|tracked)\b",
    re.IGNORECASE,
)
_HOW_OFTEN_DOWN_RE = re.compile(
    r"\bhow\s+(?:many\s+times|often)\s+(?:has|have|did|does|do|is|was)\s+(?:it|they|that|this)\s+"
    r"(?:gone|go|went|been|broken|broke|failed|fail|crashed|had\s+(?:an?\s+)?(?:outages?|incidents?))"
    r"(?:\s+down)?\b",
    re.IGNORECASE,
)


def _without_name(question: str, mention: qp.ApplicationMention) -> list[str]:
    """The question's words, as the router reads them, without the words that
    named the application, wherever they stand ("lambda issues (aws side)")."""
    said = {w for phrase in mention.said or (mention.subject,) for w in phrase.split()}
    # "salesforce dot com" named by its label: the host name is the name too.
    return [
        w
        for w in _normalised(question).split()
        if w.strip(".'-") not in said and not set(qp.host_labels(w.strip(".'-"))) <= said
    ]


def _normalised(question: str) -> str:
    return " ".join(_corrected_words(question))


def _corrected_words(question: str) -> list[str]:
    return re.findall(r"[\w.&'+-]*\w[\w.&'+-]*", qp.normalise_mention_text(question))


def _by_evidence(
    question: str,
    catalog: Sequence[qp.ApplicationEntry],
    today: dt.date,
    probe: Probe,
    considered: str,
) -> tuple[str, str]:
    """Run both searches' nearest-match query; the closer corpus wins."""
    incidents = probe(_similar(question, catalog, today)[0])
    documents = probe(_knowledge(question, catalog, today)[0])
    winner = "knowledge" if documents >= incidents else "similar"
    return winner, Evidence(
        f"evidence ({considered}): nearest document {documents:.2f}, "
        f"nearest incident {incidents:.2f}"
    )


def _runner_up(
    question: str,
    intent: str,
    guess: IntentGuess,
    catalog: Sequence[qp.ApplicationEntry],
    today: dt.date,
) -> list[Route]:
    """When evidence decided, the other search runs too: the answer shows both."""
    other = "similar" if intent == "knowledge" else "knowledge"
    return _ROUTERS[other](question, catalog, today)[:1]


# --- an intent and its slots → tool calls ---------------------------------------------


def _similar(question: str, catalog: Sequence[qp.ApplicationEntry], today: dt.date) -> list[Route]:
    arguments = {"query": question, "limit": search_limit(question)}
    return [Route("search_similar_incidents", arguments, "similar incidents")]


def _knowledge(
    question: str, catalog: Sequence[qp.ApplicationEntry], today: dt.date
) -> list[Route]:
    arguments: dict[str, Any] = {"query": question, "limit": DEFAULT_LIMITS["search_knowledge"]}
    doc_type = document_type(question)
    if doc_type:
        arguments["type_filter"] = doc_type
    tags = _TAGGED_RE.findall(question)
    if tags:
        arguments["tag_filter"] = [tag.lower() for tag in tags]
    services = [
        name
        for m in _SERVICE_RE.finditer(question)
        # "go service: we have recover() in main…" labels the question; "we" is no service.
        if (name := m.group("named") or m.group("listed")).lower()
        not in qp.MENTION_FILLER | _NO_SERVICE_NAME
    ]
    if services:
        arguments["service_filter"] = services
    routes = [Route("search_knowledge", arguments, "knowledge")]
    if also_asks_if_it_happened(question):
        # "Is there a known-issue doc for X, and has it ever bitten anyone?": both asks
        # are answered, the documents first.
        happened = {"query": question, "limit": DEFAULT_LIMITS["search_similar_incidents"]}
        routes.append(Route("search_similar_incidents", happened, "has it happened"))
    elif FIXING_RE.search(question):
        # "How do I fix X?": the runbook first, and how X was fixed before.
        past = {"query": question, "limit": PAST_FIXES_LIMIT}
        routes.append(Route("search_similar_incidents", past, "past fixes"))
    return routes


# "runbooks tagged kafka", "docs tagged 'dns' or 'ttl'": the user names the tags.
_TAGGED_RE = re.compile(
    r"(?:\btagged\s+(?:with\s+|as\s+)?|\b(?:or|and)\s+(?=[\"'`]))[\"'`]?([a-z0-9][\w.-]*)",
    re.IGNORECASE,
)


# "docs for the RabbitMQ service", "runbooks, service: MySQL": the user names the
# service a document must list (the search loosens it when none does).
# Not "on internal service-to-service calls" or "for the affected service": words
# that say which service in the story, not a name a document could list.
_SERVICE_RE = re.compile(
    r"\b(?:for|on|about|covering|of)\s+(?:the\s+|our\s+)?(?P<named>[\w.-]+)\s+service(?![\w-])"
    r"|\bservices?\s*[:=]\s*[\"'`]?(?P<listed>[\w.-]+)",
    re.IGNORECASE,
)
_NO_SERVICE_NAME = frozenset(
    {
        "internal", "external", "backend", "frontend", "upstream", "downstream", "same",
        "whole", "entire", "other", "another", "affected", "failing", "broken", "impacted",
        "public", "private", "shared", "dependent", "calling", "called", "target", "new", "old",
    }
)  # fmt: skip


def _by_application(
    question: str,
    catalog: Sequence[qp.ApplicationEntry],
    today: dt.date,
    topics: frozenset[str] | None = None,
) -> list[Route]:
    window, _ = qp.parse_time_window(question, today)
    if window is not None:
        # A window makes it a listing by date of the application (or, with more
        # to search for, a search filtered by both).
        return _recent(question, catalog, today, topics)
    mention = qp.find_application_mention(question, catalog)
    subject = _application_argument(mention) if mention else _subject_words(question)
    if not subject:
        return _similar(question, catalog, today)
    if qp.parse_severity(question) or qp.parse_repeat(question):
        # "sev2 incidents in Payout Service": the listing has no such filter, the
        # search applies it with the application's (and says so when none match).
        return _window_search(question, "application + filters")
    limit = listing_limit(question)
    return [
        Route("get_incidents_by_application", {"app_name": subject, "limit": limit}, "application")
    ]


def _application_argument(mention: qp.ApplicationMention) -> str:
    """One matched application by its catalog name, several by the words that named them."""
    applications = mention.match.applications
    return applications[0] if len(applications) == 1 else mention.subject


def _recent(
    question: str,
    catalog: Sequence[qp.ApplicationEntry],
    today: dt.date,
    topics: frozenset[str] | None = None,
) -> list[Route]:
    window, rest = qp.parse_time_window(question, today)
    if window is None:
        window = qp.TimeWindow(today - dt.timedelta(days=7), today, "last 7 days")
    mention = qp.find_application_mention(rest, catalog)
    beside = _without(rest, mention.subject) if mention else rest
    narrowed = (
        qp.parse_category(beside)
        or qp.parse_repeat(beside)
        or qp.parse_severity(beside)
        or _topic_words(beside, topics)
    )
    if narrowed or window.days is None or window.end != today:
        # Filters beyond the date and the application, or a calendar window: the
        # search applies them together.
        return _window_search(question, "window + filters")
    limit = listing_limit(question)
    arguments: dict[str, Any] = {"days": max(window.days, 1), "limit": limit}
    if mention:
        # "Recent GitHub incidents": the listing by date, of that application only.
        arguments["app_name"] = _application_argument(mention)
    return [Route("get_recent_incidents", arguments, window.label)]


def _without(text: str, subject: str) -> str:
    """`text` as the router reads it, without an application's name."""
    return re.sub(rf"(?<![\w.]){re.escape(subject)}(?![\w.])", " ", _normalised(text))


def _window_search(question: str, reason: str) -> list[Route]:
    arguments = {"query": question, "limit": limit_for(question, "search_similar_incidents")}
    return [Route("search_similar_incidents", arguments, reason)]


# Words that say *what kind* of listing is wanted, not what it is about.
_LISTING_WORDS = qp.MENTION_FILLER | {
    "broke", "breaking", "went", "wrong", "new", "latest", "lately", "anything", "something",
    "stuff", "everything", "summary", "outage", "outages", "events", "any", "kinds",
    # ...and how much of it: the whole history, not a topic.
    "full", "complete", "entire", "whole", "years", "ever", "dump", "rundown", "catalog",
    # ...or which end of the log: "the most recent incidents", "new in the incident log".
    "most", "newest", "log", "logs", "tracker",
}  # fmt: skip
# How anything going wrong is said, whatever it was: no topic for a time window (but
# still words to search beside an application: "403 errors in PayU Core").
_NOT_A_TOPIC = {
    "fail", "failed", "failing", "fails", "error", "errors", "trouble", "troubles", "fire",
    "production", "prod", "customer", "customers", "user", "users", "facing", "service",
    "services", "major", "big", "serious", "bad", "summarise", "summarize", "rundown",
    # ...and how it reached us or was written down, whatever it was about.
    "paged", "page", "pages", "paging", "pager", "alert", "alerts", "alerted", "alerting",
    "on-call", "oncall", "call", "logged", "recorded", "reported", "filed", "raised",
    "declared", "opened", "tracked", "noted", "occurred", "blip", "blips", "hiccup",
    "hiccups", "glitch", "glitches", "disruption", "disruptions", "degradation",
    "degradations", "interruption", "interruptions", "disturbance", "disturbances",
    "postmortem", "postmortems", "retro", "retros", "fires", "sideways", "caught",
}  # fmt: skip


def _subject_words(text: str) -> str:
    """The content words left once filler and listing words are gone ("" if none)."""
    words = _corrected_words(text)
    return " ".join(w for w in words if w not in _LISTING_WORDS and not w.isdigit())


def _topic_words(text: str, topics: frozenset[str] | None) -> str:
    """The subject words that name something incidents are about ("DNS",
    "timeouts"), not how the asker put it ("what blew up", "anything noteworthy").
    Without the vocabulary every content word counts."""
    words = [w for w in _subject_words(text).split() if w not in _NOT_A_TOPIC]
    if topics is not None:
        words = [w for w in words if _singular(w) in topics or w in topics]
    return " ".join(words)


def _singular(word: str) -> str:
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


_ROUTERS: dict[str, Callable[[str, Sequence[qp.ApplicationEntry], dt.date], list[Route]]] = {
    "by_application": _by_application,
    "recent": _recent,
    "similar": _similar,
    "knowledge": _knowledge,
}
