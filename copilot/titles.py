"""Conversation titles: 2-4 words, from the first question."""

from __future__ import annotations

import re

from copilot.chat_models.base import ChatModel, collect_text, runs_offline
from copilot.prompts import TITLE_PROMPT
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
# Small talk: a conversation that so far only says these has no subject to name.
_SMALL_TALK = frozenset(
    {
    "hi", "hello", "hey", "hiya", "yo", "thanks", "thank", "thx", "cheers", "ok", "okay",
    "great", "cool", "nice", "bye", "good", "morning", "afternoon", "evening", "day", "there",
    "team", "copilot", "incidentdesk", "perfect", "awesome", "sure", "yes", "no", "lot",
    }
)  # fmt: skip


def worth_a_title(question: str) -> bool:
    """Whether the question has a subject to title the conversation by: a greeting
    or a thank-you leaves the conversation untitled until a real question comes."""
    words = {w.lower().strip(".-/") for w in _WORD_RE.findall(question)}
    return bool(words - _FILLER - _SMALL_TALK - {""})


def heuristic_title(question: str) -> str:
    """The question's first few meaningful words, or its incident id."""
    ids = find_incident_ids(question)
    if ids:
        return f"Incident {ids[0]}"
    words = [w.strip(".-/") for w in _WORD_RE.findall(question) if w.lower() not in _FILLER]
    words = [w for w in words if w][:MAX_WORDS]
    if not words:
        return "New conversation"
    return " ".join(w if w.isupper() or not w.islower() else w.capitalize() for w in words)


def clean_title(raw: str) -> str:
    """A model's title cut to 2-4 plain words; empty if unusable."""
    words = _WORD_RE.findall(raw.splitlines()[0] if raw.strip() else "")
    return " ".join(words[:MAX_WORDS]) if len(words) >= 1 else ""


def conversation_title(question: str, model: ChatModel) -> str:
    """A cheap side call to an online model; the heuristic offline or on failure."""
    if runs_offline(model):
        return heuristic_title(question)
    messages = [
        {"role": "system", "content": TITLE_PROMPT},
        {"role": "user", "content": question[:1000]},
    ]
    return clean_title(collect_text(model.stream(messages, []))) or heuristic_title(question)
