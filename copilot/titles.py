"""Conversation titles: 2-4 words, from the first question."""

from __future__ import annotations

import re

from django.utils import timezone

from copilot.chat_models.base import ChatModel, collect_text, runs_offline
from copilot.chat_models.offline.intents import guess_intent
from copilot.prompts import TITLE_PROMPT
from incidents import query_parsing as qp
from incidents.parsing import find_incident_ids

MAX_WORDS = 4
# Words that say nothing about the subject of a question.
_FILLER = frozenset(
    {
    "a", "about", "after", "all", "an", "and", "any", "anything", "are", "as", "at", "be",
    "been", "before", "by", "can", "could", "did", "do", "does", "ever", "every", "for", "from",
    "get", "give", "had", "has", "have", "how", "i", "in", "incident", "incidents", "is", "it",
    "its", "know", "let", "me", "my", "of", "on", "or", "our", "please", "show", "so", "tell",
    "that", "the", "their", "there", "these", "this", "those", "to", "us", "was", "we", "were",
    "what", "when", "where", "which", "who", "why", "will", "with", "would", "you", "your",
    "happened", "find", "look", "up", "open", "list", "see", "seen", "anyone", "got",
    }
)  # fmt: skip
_WORD_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+/_-]*")


def worth_a_title(question: str) -> bool:
    """Whether the question has a subject to title the conversation by: a greeting
    or a thank-you (as the intent model reads it) leaves it untitled until a real
    question comes."""
    if find_incident_ids(question):
        return True
    return not guess_intent(question).is_greeting


# Verbs and chat words that make word salad of a title ("Payments Gettin 403 For").
_NOT_A_SUBJECT = frozenset(
    {
    "getting", "gettin", "seeing", "having", "keeps", "keep", "going", "started", "starting",
    "broke", "broken", "failing", "fails", "failed", "down", "again", "now", "right", "still",
    "just", "really", "since", "like", "some", "something", "issue", "issues", "problem",
    "problems", "error", "errors", "hey", "hi", "hello", "thanks", "pls", "plz", "help", "need",
    "want", "should", "check", "first", "then", "after", "when", "today", "yesterday",
    }
)  # fmt: skip
MIN_WORDS = 2


def heuristic_title(question: str) -> str:
    """2-4 words of the question's key phrase, its incident id, or "" for a greeting.

    The key phrase: the words left once filler, chat verbs and the time window
    are gone, in the question's order; one word alone gets "incidents".
    """
    ids = find_incident_ids(question)
    if ids:
        return f"Incident {ids[0]}"
    if not worth_a_title(question):
        return ""  # a greeting is not what the conversation is about; the next turn names it
    _, rest = qp.parse_time_window(question, timezone.localdate())
    words = [w.strip(".-/") for w in _WORD_RE.findall(rest)]
    words = [w for w in dict.fromkeys(words) if w and not _is_filler(w)][:MAX_WORDS]
    if not words:
        return ""
    title = " ".join(w if w.isupper() or not w.islower() else w.capitalize() for w in words)
    return title if len(words) >= MIN_WORDS else f"{title} incidents"


def _is_filler(word: str) -> bool:
    lower = word.lower()
    return lower in _FILLER or lower in _NOT_A_SUBJECT or lower in qp.MENTION_FILLER


def clean_title(raw: str) -> str:
    """A model's title cut to 2-4 plain words; empty if unusable."""
    words = _WORD_RE.findall(raw.splitlines()[0] if raw.strip() else "")
    return " ".join(words[:MAX_WORDS]) if len(words) >= MIN_WORDS else ""


def conversation_title(question: str, model: ChatModel) -> str:
    """A cheap side call to an online model; the heuristic offline or on failure."""
    if runs_offline(model):
        return heuristic_title(question)
    messages = [
        {"role": "system", "content": TITLE_PROMPT},
        {"role": "user", "content": question[:1000]},
    ]
    return clean_title(collect_text(model.stream(messages, []))) or heuristic_title(question)
