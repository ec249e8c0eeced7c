"""One answer's lifecycle, the same for the agent loop and intake.

A run stores the question and opens its trace row (`AgentRun`) together,
streams the events of its answer (the first one's time is recorded), and
ends exactly once: done (the subclass's answer calls `finish`), failed (an
exception: logged, recorded, and said to the user as an `error` event),
cancelled (the stop button, or a client that stopped listening). The agent
(`copilot.agent`) and intake (`copilot.intake.executor`) only write their
answer in between.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from typing import Any

from django.db import transaction

from copilot import services
from copilot.events import ErrorEvent, Event
from copilot.models import AgentRun, Conversation, Message
from incidentdesk.memory import release_free_memory

logger = logging.getLogger(__name__)


class Cancelled(Exception):
    """The user pressed stop."""


class AnswerRun:
    """The trace row, timings and ending of one answer; subclasses write the answer."""

    label = "answer"  # names the run in the log when it fails
    failure_message = "Something went wrong while answering; your question was saved."

    def __init__(self, conversation: Conversation) -> None:
        self.conversation = conversation
        self.started = time.perf_counter()
        self.first_event_ms: int | None = None
        self.run: AgentRun

    # --- what a subclass provides ---------------------------------------------------

    def model_name(self) -> str:
        raise NotImplementedError

    def question_fields(self) -> dict[str, Any]:
        """Extra fields of the stored question (intake's attachments)."""
        return {}

    def answer(self, text: str, question: Message) -> Iterator[Event]:
        """The answer's events; ends with `finish(DONE, ...)` on success."""
        raise NotImplementedError

    def stop(self) -> Iterator[Event]:
        """The user pressed stop (`Cancelled` raised by the answer)."""
        self.finish(AgentRun.Status.CANCELLED, "stopped by the user")
        yield ErrorEvent("Stopped.", code="cancelled")

    # --- the lifecycle ----------------------------------------------------------------

    def events(self, text: str) -> Iterator[Event]:
        """1. store the question and open the run; 2. answer; 3. end it, once."""
        question = self.start(text)
        try:
            yield from self._stamped(self.answer(text, question))
        except Cancelled:
            yield from self._stamped(self.stop())
        except GeneratorExit:
            self.finish(AgentRun.Status.CANCELLED, "the client stopped listening")
            raise
        except Exception as exc:
            logger.exception("%s run %s failed", self.label, self.run.pk)
            self.finish(AgentRun.Status.FAILED, f"{type(exc).__name__}: {exc}")
            yield ErrorEvent(self.failure_message)
        finally:
            # The answer's rows, records and sentence batches are garbage by now
            # (after its last event went out): hand their pages back, or daphne
            # keeps each thread's peak (issue 19: 303-305 MB, goal 300). ~0.1 ms.
            release_free_memory()

    def start(self, text: str) -> Message:
        """The question and the run's row, written together, before any answer."""
        with transaction.atomic():
            question = services.conversation_message_append(
                conversation=self.conversation,
                role=Message.Role.USER,
                content=text,
                **self.question_fields(),
            )
            services.conversation_touch(conversation=self.conversation)
            self.run = services.agent_run_start(
                conversation=self.conversation, question=question, model=self.model_name()
            )
        return question

    def finish(self, status: str, error: str = "", **figures: Any) -> None:
        """Close the trace row with the run's timings and the caller's figures."""
        services.agent_run_finish(
            run=self.run,
            status=status,
            error=error,
            first_event_ms=self.first_event_ms,
            latency_ms=self.elapsed_ms(),
            **figures,
        )

    def elapsed_ms(self) -> int:
        return round((time.perf_counter() - self.started) * 1000)

    def _stamped(self, events: Iterator[Event]) -> Iterator[Event]:
        for event in events:
            if self.first_event_ms is None:
                self.first_event_ms = self.elapsed_ms()
            yield event
