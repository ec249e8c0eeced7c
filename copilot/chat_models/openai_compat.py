"""The chat model on any OpenAI-compatible server (OpenAI, vLLM, Ollama, LiteLLM, ...).

Streams chat completions and turns the chunks into the interface's events:
text as it arrives, tool calls once complete, usage, then the end. Trouble
becomes a ModelFailure whose message is meant for the user; nothing raises.

There is one retry policy, this one: the client's own retries are off because
only this class knows whether text already reached the user, and retrying
after that would show it twice.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from django.conf import settings

from copilot.chat_models.base import (
    ChatMessage,
    End,
    ModelEvent,
    ModelFailure,
    TextDelta,
    ToolCallRequest,
    ToolSpec,
    Usage,
)

if TYPE_CHECKING:
    from openai import Stream
    from openai.types.chat import (
        ChatCompletionChunk,
        ChatCompletionMessageParam,
        ChatCompletionToolUnionParam,
    )
    from openai.types.chat.chat_completion_chunk import ChoiceDelta

logger = logging.getLogger(__name__)

# Waiting longer for a rate limit would leave the user looking at a spinner;
# saying so lets them decide to ask again.
MAX_RETRY_AFTER_SECONDS = 10.0
CUT_OFF = "The model's answer was cut off."


@dataclass(frozen=True)
class _Problem:
    """Why an attempt failed. `message` never quotes the server, which may echo the key."""

    message: str
    retryable: bool
    retry_after: float | None = None


@dataclass
class _PartialCall:
    call_id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class _Turn:
    """What one streamed answer has produced so far."""

    calls: dict[int, _PartialCall] = field(default_factory=dict)
    finish_reason: str | None = None
    started: bool = False  # text or a call reached the caller: a retry would repeat it

    def read(self, chunk: ChatCompletionChunk) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        for choice in chunk.choices[:1]:  # we never ask for n > 1
            events += self._read_delta(choice.delta)
            if choice.finish_reason:
                events += self._finish(choice.finish_reason)
        if chunk.usage:
            usage = chunk.usage
            events.append(Usage(usage.prompt_tokens or 0, usage.completion_tokens or 0))
        return events

    def _read_delta(self, delta: ChoiceDelta) -> list[ModelEvent]:
        for part in delta.tool_calls or []:
            # Parallel calls arrive one after another or interleaved: the index says whose
            # piece this is. Id and name come once, the arguments in pieces.
            call = self.calls.setdefault(part.index, _PartialCall())
            call.call_id = call.call_id or part.id or ""
            if part.function:
                call.name = call.name or part.function.name or ""
                call.arguments.append(part.function.arguments or "")
        return [TextDelta(delta.content)] if delta.content else []

    def _finish(self, reason: str) -> list[ModelEvent]:
        """The calls are complete once a finish reason arrives (whatever it says: some
        servers answer "stop" after tool calls)."""
        self.finish_reason = reason
        calls: list[ModelEvent] = [
            ToolCallRequest(call.call_id or f"call_{index}", call.name, "".join(call.arguments))
            for index, call in sorted(self.calls.items())
        ]
        self.calls.clear()
        return calls


class OpenAIChatModel:
    """Streams chat completions from an OpenAI-compatible server, with retries."""

    def __init__(
        self,
        *,
        api_key: str,
        base_url: str | None,
        model: str,
        timeout: float,
        max_retries: int,
        backoff_seconds: float,
    ) -> None:
        from openai import OpenAI  # importing openai takes about a second: offline never pays

        self.name = model
        self._api_key = api_key  # kept only to scrub it from logged server errors
        self._timeout = timeout
        self._max_retries = max_retries
        self._backoff_seconds = backoff_seconds
        self._client = OpenAI(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0)

    @classmethod
    def from_settings(cls) -> OpenAIChatModel:
        return cls(
            api_key=settings.OPENAI_API_KEY,
            base_url=settings.OPENAI_BASE_URL,
            model=settings.COPILOT_MODEL,
            timeout=settings.COPILOT_TIMEOUT_SECONDS,
            max_retries=settings.COPILOT_MAX_RETRIES,
            backoff_seconds=settings.COPILOT_RETRY_BACKOFF_SECONDS,
        )

    def stream(self, messages: list[ChatMessage], tools: list[ToolSpec]) -> Iterator[ModelEvent]:
        for attempt in range(self._max_retries + 1):
            problem = yield from self._attempt(messages, tools)
            if problem is None:
                return
            delay = self._retry_delay(problem, attempt)
            if delay is None:
                yield ModelFailure(_give_up_message(problem, attempt))
                return
            time.sleep(delay)

    def _attempt(
        self, messages: list[ChatMessage], tools: list[ToolSpec]
    ) -> Generator[ModelEvent, None, _Problem | None]:
        """One request. Returns the problem if it failed before anything was yielded."""
        turn, problem = _Turn(), None
        try:
            yield from self._stream_turn(turn, messages, tools)
        # Anything at all: the contract is to never raise, and a server speaking
        # garbage must still end as a message to the user (the log has the rest).
        except Exception as exc:
            problem = _problem_from(exc, self._timeout)
            self._log(problem, exc)
        if not turn.started and turn.finish_reason is None:
            return problem or _Problem(CUT_OFF.removesuffix("."), True)  # nothing to repeat
        # A stream that stops without a finish reason lost the rest of the answer; one
        # that fails after it only lost the usage.
        yield End(turn.finish_reason) if turn.finish_reason else ModelFailure(CUT_OFF)
        return None

    def _stream_turn(
        self, turn: _Turn, messages: list[ChatMessage], tools: list[ToolSpec]
    ) -> Iterator[ModelEvent]:
        with self._open(messages, tools) as chunks:  # closes the connection if we stop early
            for chunk in chunks:
                for event in turn.read(chunk):
                    # Usage may come twice across a retry: both attempts were billed.
                    turn.started = turn.started or not isinstance(event, Usage)
                    yield event

    def _open(
        self, messages: list[ChatMessage], tools: list[ToolSpec]
    ) -> Stream[ChatCompletionChunk]:
        from openai import omit  # deferred, as in `from_settings`: offline never pays

        return self._client.chat.completions.create(
            model=self.name,
            messages=cast("list[ChatCompletionMessageParam]", messages),
            # OpenAI answers 400 to an empty tools list: leave it out instead.
            tools=cast("list[ChatCompletionToolUnionParam]", tools) if tools else omit,
            stream=True,
            stream_options={"include_usage": True},
        )

    def _retry_delay(self, problem: _Problem, attempt: int) -> float | None:
        """Seconds to wait before the next attempt, or None to give up."""
        if not problem.retryable or attempt >= self._max_retries:
            return None
        if problem.retry_after is None:
            return self._backoff_seconds * 2.0**attempt
        return problem.retry_after if problem.retry_after <= MAX_RETRY_AFTER_SECONDS else None

    def _log(self, problem: _Problem, exc: Exception) -> None:
        # The cause tells a refused connection from one dropped mid-answer.
        detail = f"{exc} ({exc.__cause__!r})" if exc.__cause__ else str(exc)
        if self._api_key:
            detail = detail.replace(self._api_key, "***")  # some servers echo the key
        expected = _is_api_error(exc)  # else a traceback: it may be our bug
        logger.warning("%s: %s: %s", self.name, problem.message, detail, exc_info=not expected)


def _problem_from(exc: Exception, timeout: float) -> _Problem:
    import openai  # deferred, as in `from_settings`: offline never pays

    if isinstance(exc, openai.APIStatusError):
        return _status_problem(exc.status_code, exc.response.headers.get("retry-after"))
    if isinstance(exc, openai.APITimeoutError):
        return _Problem(f"The language model did not answer within {timeout:g} s", True)
    if isinstance(exc, openai.APIConnectionError):
        return _Problem("The language model could not be reached", True)
    if isinstance(exc, openai.APIError):  # an error event inside the stream
        return _Problem("The language model reported an error", True)
    return _Problem("The language model's answer could not be read", False)


def _status_problem(status: int, retry_after: str | None) -> _Problem:
    if status == 401:
        return _Problem("The language model refused the API key (HTTP 401)", False)
    if status == 429:
        return _Problem(
            "The language model is rate limited (HTTP 429)", True, _seconds(retry_after)
        )
    if status == 408 or status >= 500:
        return _Problem(
            f"The language model is unavailable (HTTP {status})", True, _seconds(retry_after)
        )
    return _Problem(f"The language model rejected the request (HTTP {status})", False)


def _seconds(retry_after: str | None) -> float | None:
    """Retry-After in seconds; its HTTP-date form is rare enough to fall back to backoff."""
    try:
        seconds = float(retry_after or "")
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _give_up_message(problem: _Problem, attempt: int) -> str:
    if problem.retryable and problem.retry_after and problem.retry_after > MAX_RETRY_AFTER_SECONDS:
        return f"{problem.message}; it asks to wait {problem.retry_after:.0f} s, try again later."
    if not problem.retryable or attempt == 0:
        return f"{problem.message}."
    return f"{problem.message} after {attempt} {'retry' if attempt == 1 else 'retries'}."


def _is_api_error(exc: Exception) -> bool:
    import openai  # deferred, as in `from_settings`: offline never pays

    return isinstance(exc, openai.APIError)
