"""The agent loop: one for every chat model.

A turn: store the question, ask the model with the tool specs, run the tool
calls it makes (each kept as a message and traced), ask again, until it
answers without tools or runs out of rounds; then check the citations,
store the answer and close the trace. Every step streams an event.

The steps are written together rather than one transaction each: before
the loop waits on a model over the network, and otherwise with the answer
(the offline engine writes a whole answer in milliseconds), or with the
run's end when it fails or is stopped.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from copilot import selectors, services, titles
from copilot.chat_models import configured_model
from copilot.chat_models.base import (
    ChatMessage,
    ChatModel,
    End,
    ModelFailure,
    TextDelta,
    ToolCallRequest,
    Usage,
    runs_offline,
)
from copilot.citations import check_citations, cited_ids
from copilot.events import (
    DoneEvent,
    ErrorEvent,
    Event,
    StatusEvent,
    TitleEvent,
    TokenEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from copilot.models import AgentRun, Conversation, Message, ToolCall
from copilot.prompts import FINAL_ROUND_NOTE, system_prompt
from copilot.runs import AnswerRun, Cancelled
from copilot.steplog import step_log
from copilot.tools import (
    ANALYZING,
    TITLING,
    TOOL_ERROR_PREFIX,
    WRAPPING_UP,
    ToolContext,
    ToolResult,
    parse_arguments,
    run_tool,
    status_before,
    statuses_after,
    tool_specs,
)
from incidentdesk.db import derived_writes
from knowledge.selectors import knowledge_stale_ids

PARTIAL_SAVE_SECONDS = 0.3  # how often a streaming answer is written for reloads
CANCEL_CHECK_SECONDS = 0.25  # how often the stop button is looked for while streaming
_TITLE_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="copilot-title")


@dataclass
class _Turn:
    """One streamed model turn."""

    text: str = ""
    calls: list[ToolCallRequest] = field(default_factory=list)
    failure: str = ""
    message: Message | None = None


@dataclass
class _UnsavedSteps:
    """Tool steps built as they ran, for `services.agent_rows_write`."""

    messages: list[Message] = field(default_factory=list)
    calls: list[ToolCall] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.messages or self.calls)

    def write(self) -> None:
        """Store them, once: a failed write is not tried again at the run's end."""
        messages, calls = self.messages, self.calls
        self.messages, self.calls = [], []
        services.agent_rows_write(messages=messages, tool_calls=calls)


def reply(
    *,
    conversation: Conversation,
    text: str,
    model: ChatModel | None = None,
    context: ToolContext | None = None,
) -> Iterator[Event]:
    """Answer `text` in `conversation`; see copilot.replies.conversation_reply."""
    return _Run(conversation, model or configured_model(), context or ToolContext()).events(text)


class _Run(AnswerRun):
    """One agent answer: its messages, rounds, tokens and citations (the lifecycle
    it shares with intake is `AnswerRun`'s)."""

    label = "agent"

    def __init__(self, conversation: Conversation, model: ChatModel, context: ToolContext) -> None:
        super().__init__(conversation)
        self.model = model
        self.context = context
        self.rounds = 0
        self.tokens = [0, 0]  # prompt, completion
        self.steps: list[dict[str, Any]] = []
        self.returned: set[str] = set()  # ids tools returned in this conversation (citable)
        self.new_title = ""  # generated for an untitled conversation, not stored yet
        self.question = ""
        self.unsaved = _UnsavedSteps()
        # A run that just started has not been stopped: the first look is due
        # CANCEL_CHECK_SECONDS from now, which most offline answers never reach.
        self.last_cancel_check = time.monotonic()

    def model_name(self) -> str:
        return self.model.name

    # --- the turn -------------------------------------------------------------------

    def answer(self, text: str, question: Message) -> Iterator[Event]:
        """Rounds of model + tools, bounded; then the checked, stored answer."""
        self.question = text
        title = self._start_title(text)
        messages = self._prompt(text)
        turn = _Turn()
        for round_number in range(1, settings.COPILOT_MAX_TOOL_ROUNDS + 2):
            final = round_number > settings.COPILOT_MAX_TOOL_ROUNDS
            if final:
                messages.append({"role": "system", "content": FINAL_ROUND_NOTE})
            turn = yield from self._model_turn(messages, [] if final else tool_specs())
            if turn.failure or not turn.calls or final:
                break
            if round_number == 1:  # the model decided to work on it (a greeting does not)
                yield StatusEvent(ANALYZING)
            self.rounds = round_number
            yield from self._run_tools(turn, messages)
        yield from self._title_event(title)
        if turn.failure:
            yield from self._fail(turn)
            return
        yield from self._done(turn)

    def _prompt(self, text: str) -> list[ChatMessage]:
        """System prompt (with golden examples), then the history within budget."""
        golden = selectors.golden_example_list_nearest(question=text)
        self.run.golden_examples = [g.question for g in golden]
        history, self.returned = selectors.conversation_memory(
            conversation=self.conversation, token_budget=settings.COPILOT_HISTORY_TOKENS
        )
        return [{"role": "system", "content": system_prompt(golden)}] + [
            _as_chat_message(m) for m in history
        ]

    # --- one model turn ---------------------------------------------------------------

    def _model_turn(
        self, messages: list[ChatMessage], tools: list[dict[str, Any]]
    ) -> Generator[Event, None, _Turn]:
        turn = _Turn()
        if self.unsaved and not runs_offline(self.model):
            with derived_writes():  # a reload while the model thinks shows the steps
                self.unsaved.write()
        last_save = time.monotonic()
        for event in self.model.stream(messages, tools):
            if isinstance(event, TextDelta) and event.text:
                turn.text += event.text
                yield TokenEvent(event.text)
                last_save = self._save_partial(turn, last_save)
            elif isinstance(event, ToolCallRequest):
                turn.calls.append(event)
            elif isinstance(event, Usage):
                self.tokens[0] += event.prompt_tokens
                self.tokens[1] += event.completion_tokens
            elif isinstance(event, ModelFailure):
                turn.failure = event.message
            elif isinstance(event, End):
                break
            self._check_cancel()
        return turn

    def _save_partial(self, turn: _Turn, last_save: float) -> float:
        """Write the answer so far now and then, so a reload can show it."""
        if time.monotonic() - last_save < PARTIAL_SAVE_SECONDS:
            return last_save
        with derived_writes():
            self.unsaved.write()
            if turn.message is None:
                turn.message = services.conversation_message_append(
                    conversation=self.conversation,
                    role=Message.Role.ASSISTANT,
                    run=self.run,
                    is_complete=False,
                )
            Message.objects.filter(pk=turn.message.pk).update(content=turn.text)
        return time.monotonic()

    def _check_cancel(self) -> None:
        """Between steps and while tokens stream, looked up a few times a second
        at most: a query per step was a tenth of an offline answer's queries."""
        if time.monotonic() - self.last_cancel_check < CANCEL_CHECK_SECONDS:
            return
        self.last_cancel_check = time.monotonic()
        if selectors.agent_run_cancel_requested(run_id=self.run.pk):
            raise Cancelled

    # --- tools ------------------------------------------------------------------------

    def _run_tools(self, turn: _Turn, messages: list[ChatMessage]) -> Iterator[Event]:
        """Run each call, stream each result; the calls and results are
        kept in `self.unsaved` until they are written together."""
        calls = [_call_dict(call) for call in turn.calls]
        self.unsaved.messages.append(self._assistant_message(turn, tool_calls=calls))
        messages.append(_as_chat_message(self.unsaved.messages[-1]))
        for call in calls:
            yield StatusEvent(status_before(call["name"], call["arguments"]))
            yield ToolCallEvent(call["id"], call["name"], call["arguments"])
            result, latency_ms = self._call_tool(call)
            messages.append(_as_chat_message(self._tool_step(call, result, latency_ms)))
            yield ToolResultEvent(
                call["id"], call["name"], result.count, latency_ms, result.data, result.error
            )
            after = statuses_after(call["name"], call["arguments"], result)
            yield from (StatusEvent(text) for text in after)
            self._check_cancel()

    def _call_tool(self, call: dict[str, Any]) -> tuple[ToolResult, int]:
        started = time.perf_counter()
        result = run_tool(call["name"], call["raw"], self.context)
        latency_ms = round((time.perf_counter() - started) * 1000)
        self.returned.update(result.ids)
        step_log(
            run=self.run.pk,
            step=call["name"],
            outcome=_outcome(result),
            ms=latency_ms,
            round=self.rounds,
            count=result.count,
            **({"error": result.error} if result.error else {}),
        )
        self.steps.append(
            {"tool": call["name"], "arguments": call["arguments"], "count": result.count,
             "ms": latency_ms, "error": result.error}
        )  # fmt: skip
        return result, latency_ms

    def _tool_step(self, call: dict[str, Any], result: ToolResult, latency_ms: int) -> Message:
        """The tool message (memory) and its trace row."""
        self.unsaved.calls.append(services.tool_call_build(
            run=self.run, round=self.rounds, call=call, result=result, latency_ms=latency_ms
        ))  # fmt: skip
        message = services.message_build(
            conversation=self.conversation,
            role=Message.Role.TOOL,
            content=result.text,
            tool_call_id=call["id"],
            tool_name=call["name"],
            data=result.data,
            citations=list(result.ids),
            run=self.run,
        )
        self.unsaved.messages.append(message)
        return message

    def _assistant_message(self, turn: _Turn, **fields: Any) -> Message:
        """The turn's assistant message: the streamed one completed, or a new
        one; not stored yet."""
        if turn.message is None:
            return services.message_build(
                conversation=self.conversation,
                role=Message.Role.ASSISTANT,
                content=turn.text,
                run=self.run,
                **fields,
            )
        for name, value in {"content": turn.text, "is_complete": True, **fields}.items():
            setattr(turn.message, name, value)
        return turn.message

    def _store_assistant(self, turn: _Turn, **fields: Any) -> Message:
        message = self._assistant_message(turn, **fields)
        services.agent_rows_write(messages=[message])
        return message

    # --- endings ----------------------------------------------------------------------

    def _done(self, turn: _Turn) -> Iterator[Event]:
        """Check citations, store the answer, close the trace."""
        yield StatusEvent(WRAPPING_UP)
        text = turn.text.strip() or "I could not put an answer together from what I found."
        checked = check_citations(text, self._verifiable(text), typed=self.question)
        turn.text = checked.text + _staleness_note(checked.kept)
        message = self._assistant_message(turn, citations=checked.kept)
        self.unsaved.messages.append(message)  # one INSERT with the tool steps' messages
        with derived_writes():
            self.unsaved.write()
            services.conversation_touch(conversation=self.conversation, title=self.new_title)
            self.finish(
                AgentRun.Status.DONE,
                citations_kept=checked.kept,
                citations_dropped=checked.dropped,
            )
        yield DoneEvent(
            conversation_id=self.conversation.pk,
            message_id=message.pk,
            run_id=self.run.pk,
            content=turn.text,
            citations=checked.kept,
            dropped_citations=checked.dropped,
            steps=self.steps,
        )

    def _verifiable(self, text: str) -> set[str]:
        """What the tools returned, and the other ids `text` writes that name a record
        the user may see (an incident a runbook quotes): an id nothing has stays out."""
        unseen = cited_ids(text) - self.returned
        return self.returned | selectors.citable_ids_existing(
            ids=unseen,
            incident_version=self.context.incident_version,
            knowledge_version=self.context.knowledge_version,
        )

    def _fail(self, turn: _Turn) -> Iterator[Event]:
        """The model failed: keep what it wrote, say why."""
        self.unsaved.write()
        if turn.text:
            turn.text += "\n\n_(The answer was interrupted.)_"
            self._store_assistant(turn)
        if self.new_title:
            services.conversation_touch(conversation=self.conversation, title=self.new_title)
        self.finish(AgentRun.Status.FAILED, turn.failure)
        yield ErrorEvent(turn.failure, code="model_unavailable")

    def stop(self) -> Iterator[Event]:
        """The user pressed stop: keep what was written, mark the run cancelled."""
        partial = Message.objects.filter(run=self.run, is_complete=False).first()
        if partial is not None:
            partial.content = (partial.content + "\n\n_(Stopped.)_").strip()
            partial.is_complete = True
            partial.save(update_fields=["content", "is_complete"])
        yield from super().stop()

    def finish(self, status: str, error: str = "", **figures: Any) -> None:
        """Close the trace, after the steps not written yet (a stop, a failure)."""
        self.unsaved.write()
        super().finish(
            status,
            error,
            rounds=self.rounds,
            prompt_tokens=self.tokens[0],
            completion_tokens=self.tokens[1],
            **figures,
        )

    # --- title ------------------------------------------------------------------------

    def _start_title(self, text: str) -> Future[str] | None:
        """Written alongside the answer (a side call with an online model)."""
        if self.conversation.title or not titles.worth_a_title(text):
            return None
        if runs_offline(self.model):  # a heuristic: no thread needed
            done: Future[str] = Future()
            done.set_result(titles.heuristic_title(text))
            return done
        return _TITLE_POOL.submit(titles.conversation_title, text, self.model)

    def _title_event(self, title: Future[str] | None) -> Iterator[Event]:
        if title is None or not title.result():  # a greeting is titled by the next question
            return
        yield StatusEvent(TITLING)
        self.new_title = title.result()[: services.TITLE_MAX_CHARS]
        self.conversation.title = self.new_title  # stored with the answer (_done, _fail)
        yield TitleEvent(self.conversation.pk, self.new_title)


# --- helpers -----------------------------------------------------------------------------


def _call_dict(call: ToolCallRequest) -> dict[str, Any]:
    """A call as stored and shown: parsed arguments when they parse, raw kept."""
    try:
        arguments = parse_arguments(call.arguments)
    except ValueError:
        arguments = {"_unparsed": call.arguments[:500]}
    return {"id": call.call_id, "name": call.name, "arguments": arguments, "raw": call.arguments}


def _as_chat_message(message: Message) -> ChatMessage:
    """A stored message in the chat format models read."""
    if message.role == Message.Role.TOOL:
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": message.content}
    chat: ChatMessage = {"role": message.role, "content": message.content}
    if message.tool_calls:
        chat["tool_calls"] = [
            {
                "id": call["id"],
                "type": "function",
                "function": {"name": call["name"], "arguments": call.get("raw") or "{}"},
            }
            for call in message.tool_calls
        ]
    return chat


def _staleness_note(cited: list[str]) -> str:
    """Readers should know when a cited document is past its review date."""
    stale = sorted(knowledge_stale_ids(cited))
    if not stale:
        return ""
    return (
        f"\n\n_Note: {', '.join(stale)} was not validated in the last "
        f"{settings.KNOWLEDGE_STALE_DAYS} days (stale); check it is still current before "
        "acting on it._"
    )


def _outcome(result: ToolResult) -> str:
    """ok, failed (the tool broke: database, timeout, backend) or rejected (bad arguments)."""
    if not result.error:
        return "ok"
    return "failed" if result.error.startswith(TOOL_ERROR_PREFIX) else "rejected"
