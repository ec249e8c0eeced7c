"""The offline engine: a chat model that needs no network and no weights.

It behaves as a model does: given the conversation, it either asks for tool
calls (decided by `router`) or, once the tool results are in, writes
the answer from them alone (`writing`). Deterministic,
so tests and the evaluation can rely on it.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import re
import time
from collections.abc import Iterator, Sequence
from itertools import count

from django.utils import timezone

from copilot.chat_models.base import (
    ChatMessage,
    End,
    ModelEvent,
    TextDelta,
    ToolCallRequest,
    ToolSpec,
    Usage,
)
from copilot.chat_models.offline import router
from copilot.chat_models.offline.golden import golden_lookups, lead_with_verified, verified_answers
from copilot.chat_models.offline.reading import conversation_state, last_user_index, turn_outcomes
from copilot.chat_models.offline.spelling import respell_asks
from copilot.chat_models.offline.state import ConversationState
from copilot.chat_models.offline.writing import write_answer
from incidents import selectors as incident_selectors
from incidents.models import DatasetVersion
from knowledge import selectors as knowledge_selectors

logger = logging.getLogger(__name__)

_CHAT_ONLY_RE = re.compile(
    r"^\s*(?:thanks?(?:\s+you)?|thank\s+you|hi|hello|hey|ok(?:ay)?|great|cool|nice|bye)\b[\s!.]*$",
    re.IGNORECASE,
)
# The answer streams a few words at a time: still a live stream to read, at a
# quarter of the events a word at a time cost (each passes through the agent
# loop, the trace and the socket).
_PIECE_RE = re.compile(r"(?:\S+\s*){1,4}|\s+")
# Pacing (OFFLINE_STREAM_PACE_MS) never adds more than this to one answer: long
# answers stream faster instead, so a person still sees them arrive and the
# time to `done` stays bounded.
OFFLINE_STREAM_PACE_TOTAL_SECONDS = 1.5
CHARS_PER_TOKEN = 4
_call_numbers = count(1)


class OfflineChatModel:
    """Deterministic tool routing and extractive answers."""

    name = "offline"
    is_offline = True

    def __init__(
        self,
        *,
        today: dt.date | None = None,
        incident_version: DatasetVersion | None = None,
        knowledge_version: DatasetVersion | None = None,
        pace_seconds: float = 0.0,
    ) -> None:
        self.today = today
        self.incident_version = incident_version
        self.knowledge_version = knowledge_version
        self.pace_seconds = pace_seconds  # between word groups; 0 for tests and benches
        self._state_read: tuple[list[ChatMessage], int, ConversationState] | None = None

    def stream(self, messages: list[ChatMessage], tools: list[ToolSpec]) -> Iterator[ModelEvent]:
        """Tool calls when the question has no results yet, else the written answer."""
        start = last_user_index(messages)
        # Respelt once for the router and the writer alike ("wat now" asks what to do).
        question = respell_asks(messages[start]["content"] or "")
        outcomes = turn_outcomes(messages, start)
        golden = verified_answers(messages)
        if tools and not outcomes and not _CHAT_ONLY_RE.match(question):
            routes = self.understand(question, messages).routes
            if routes:
                yield from _tool_calls(routes)
                return
        # The verified answer's incidents the searches did not return are looked up
        # (one more round), so its ids are re-verified like any citation.
        lookups = golden_lookups(golden, outcomes) if tools and outcomes else []
        if lookups:
            yield from _tool_calls(lookups)
            return
        catalog = incident_selectors.application_catalog(self.incident_version)
        answer = write_answer(question, outcomes, self._state(messages), catalog)
        if golden:
            answer = lead_with_verified(golden[0], answer, outcomes)
        for piece in _paced(_PIECE_RE.findall(answer), self.pace_seconds):
            yield TextDelta(piece)
        prompt_chars = sum(len(str(m.get("content") or "")) for m in messages)
        yield Usage(prompt_chars // CHARS_PER_TOKEN, len(answer) // CHARS_PER_TOKEN)
        yield End("stop")

    def understand(
        self, question: str, messages: list[ChatMessage], *, chat: bool = True
    ) -> router.Understanding:
        """How the engine reads `question`; `chat=False` for one standing alone
        (the evaluation's), where a greeting is not an answer."""
        understood = router.understand(
            question,
            state=self._state(messages),
            catalog=incident_selectors.application_catalog(self.incident_version),
            today=self.today or timezone.localdate(),
            probe=self.probe,
            chat=chat,
            topics=incident_selectors.incident_topic_words(self.incident_version),
        )
        logger.debug("offline engine: %s", understood.explain())
        return understood

    def _state(self, messages: list[ChatMessage]) -> ConversationState:
        """`conversation_state`, read once per question: it reads only the turns before
        the question, which the rounds of one answer leave alone (they append to the
        same list). The router and the writer both ask for it (~0.6 ms a reading)."""
        current = last_user_index(messages)
        read = self._state_read
        if read is None or read[0] is not messages or read[1] != current:
            read = self._state_read = (messages, current, conversation_state(messages))
        return read[2]

    def probe(self, route: router.Route) -> float:
        """Evidence for the router: how close the nearest match of a search is."""
        query = str(route.arguments.get("query", ""))
        if route.tool == "search_knowledge":
            return knowledge_selectors.knowledge_best_similarity(
                query=query, version=self.knowledge_version
            )
        return incident_selectors.incident_best_similarity(
            query=query, version=self.incident_version
        )


def _paced(pieces: list[str], pace: float) -> Iterator[str]:
    """The pieces, `pace` seconds apart (less when the answer is long: see the cap)."""
    gap = min(pace, OFFLINE_STREAM_PACE_TOTAL_SECONDS / max(len(pieces) - 1, 1))
    for index, piece in enumerate(pieces):
        if index and gap > 0:
            time.sleep(gap)
        yield piece


def _tool_calls(routes: Sequence[router.Route]) -> Iterator[ModelEvent]:
    for route in routes:
        yield ToolCallRequest(f"offline-{next(_call_numbers)}", route.tool, _json(route))
    yield End("tool_calls")


def _json(route: router.Route) -> str:
    return json.dumps(route.arguments, ensure_ascii=False)
