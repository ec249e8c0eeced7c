"""The rules a chat question passes before the copilot answers it.

The payload is checked, the user's question rate is counted, and the
conversation is claimed so that only one answer is written into it at a
time. Counters and claims live in the shared cache (Redis), so every daphne
process sees the same ones. `answer_question` runs all of it, and the
answer, on a worker thread for the chat websocket.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.cache import cache
from django.db import close_old_connections

from copilot import display, replies, selectors, streaming
from copilot.events import ErrorEvent, Event, StatusEvent
from incidentdesk import owners
from incidentdesk.errors import (
    ConflictError,
    IncidentDeskError,
    NotFoundError,
    RateLimitedError,
    ValidationError,
)
from incidentdesk.unavailable import is_unavailable

logger = logging.getLogger(__name__)
RATE_WINDOW_SECONDS = 60
# Room for the longest question with every character escaped (\u0001 is 6
# bytes for 1), so only a frame that could never be a question is refused.
MAX_FRAME_BYTES = 8 * settings.CHAT_MAX_QUESTION_BYTES
# A question is one flat object; deeper is an attack on the parser.
MAX_FRAME_DEPTH = 8


class FrameRejected(ValidationError):
    """A frame no client of ours sends: answered with an error, then the socket closes
    with `close_code` (RFC 6455), instead of a 1011 and a traceback."""

    def __init__(self, message: str, close_code: int) -> None:
        super().__init__(message)
        self.close_code = close_code


ERROR_CODES: dict[type[IncidentDeskError], str] = {
    FrameRejected: "invalid",
    ValidationError: "invalid",
    RateLimitedError: "rate_limited",
    ConflictError: "busy",
    NotFoundError: "not_found",
}


UNEXPECTED_FAILURE = "Something went wrong while answering."


def error_event(exc: IncidentDeskError) -> ErrorEvent:
    """The `error` event for a refused question, with a code the browser can act on."""
    return ErrorEvent(exc.message, ERROR_CODES.get(type(exc), "error"))


def frame_payload(text_data: str | None, bytes_data: bytes | None) -> Any:
    """The JSON in a websocket frame (None when it is not JSON, which ask_text answers),
    or FrameRejected for a binary, oversized or deeply nested frame."""
    if text_data is None:
        raise FrameRejected("Send text frames; binary frames are not understood.", 1003)
    if len(text_data) > MAX_FRAME_BYTES:
        limit_kb = MAX_FRAME_BYTES // 1024
        raise FrameRejected(f"The message is larger than {limit_kb} KB.", 1009)
    if _nesting_exceeds(text_data, MAX_FRAME_DEPTH):
        raise FrameRejected("The message is nested too deeply.", 1007)
    try:
        return json.loads(text_data)
    except ValueError:
        return None


def _nesting_exceeds(text: str, limit: int) -> bool:
    """True when brackets outside strings nest deeper than `limit`: checked before
    json.loads, whose recursion a 10k-deep array would exhaust."""
    depth, in_string, escaped = 0, False, False
    for char in text:
        if in_string:
            escaped, in_string = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return True
        elif char in "]}":
            depth -= 1
    return False


def ask_text(payload: Any) -> str:
    """The question in `{"type": "ask", "text": ...}`, or ValidationError saying what is wrong."""
    if not isinstance(payload, dict):
        raise ValidationError('Send a JSON object such as {"type": "ask", "text": "..."}.')
    if payload.get("type") != "ask":
        raise ValidationError('Unknown message type; only "ask" is understood.')
    unknown = sorted(set(payload) - {"type", "text"})
    if unknown:
        raise ValidationError(f"Unknown field(s): {', '.join(unknown)}.")
    text = payload.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ValidationError("The question is empty.")
    if "\x00" in text:  # PostgreSQL cannot store it; it crashed the answer thread
        raise ValidationError("The question contains a NUL character; remove it and send again.")
    if len(text.encode()) > settings.CHAT_MAX_QUESTION_BYTES:
        limit_kb = settings.CHAT_MAX_QUESTION_BYTES // 1024
        raise ValidationError(f"The question is longer than {limit_kb} KB.")
    return text.strip()


def _rate_key(user_id: int) -> str:
    return f"chat-rate:{user_id}:{int(time.time() // RATE_WINDOW_SECONDS)}"


def _claim_key(conversation_id: int) -> str:
    return f"chat-run:{conversation_id}"


def _redis() -> Any:
    backend: Any = cache  # incidentdesk.cache's Redis cache (settings.CACHES)
    return backend.client()


def _redis_pipeline() -> Any:
    backend: Any = cache  # incidentdesk.cache's Redis cache (settings.CACHES)
    return backend.pipeline()


@contextmanager
def question_admitted(*, user_id: int, conversation_id: int) -> Iterator[bool]:
    """Count the user's question and hold the conversation for its answer;
    yields whether another socket listens to the conversation.

    RateLimitedError past CHAT_QUESTIONS_PER_MINUTE, ConflictError while
    another answer is being written there. The claim expires on its own
    (CHAT_RUN_LOCK_SECONDS) should the process die. One Redis round trip
    for all three: they were six, at every question.
    """
    rate_key, claim_key = cache.make_key(_rate_key(user_id)), _claim_key(conversation_id)
    with _redis_pipeline() as pipe:
        pipe.set(rate_key, 0, ex=RATE_WINDOW_SECONDS * 2, nx=True)
        pipe.incr(rate_key)
        pipe.set(cache.make_key(claim_key), 1, ex=settings.CHAT_RUN_LOCK_SECONDS, nx=True)
        pipe.hlen(cache.make_key(_listeners_key(conversation_id)))
        _, count, claimed, listeners = pipe.execute()
    try:
        _check_rate(count)
        if not claimed:
            raise ConflictError("An answer is already being written in this conversation.")
        yield int(listeners or 0) > 1
    finally:
        if claimed:
            cache.delete(claim_key)


def conversation_claims_release(*, conversation_ids: list[int]) -> None:
    """Free conversations whose answer's process died (`manage.py recover`): the
    claim would otherwise answer "busy" until CHAT_RUN_LOCK_SECONDS pass."""
    cache.delete_many([_claim_key(pk) for pk in conversation_ids])


def _check_rate(count: int) -> None:
    if count > settings.CHAT_QUESTIONS_PER_MINUTE:
        retry_after = RATE_WINDOW_SECONDS - int(time.time()) % RATE_WINDOW_SECONDS
        raise RateLimitedError(
            f"You have asked {settings.CHAT_QUESTIONS_PER_MINUTE} questions this minute; "
            f"try again in {retry_after} s.",
            {"retry_after": retry_after},
        )


# --- one running answer per user ---------------------------------------------------------
# Answers run on a few threads per process (CHAT_ANSWER_THREADS). Ten questions
# from one user in ten tabs took them all, and another user's first event waited
# behind her answers (issue 17: 30.5 s). A user now has one answer running at a
# time, across tabs and daphne processes; her next question waits for it on the
# event loop, holding no thread, so other users' questions find one free.
USER_TURN_POLL_SECONDS = 0.1
WAITING_FOR_TURN = "Waiting for your answer in another conversation to finish..."


def _turn_key(user_id: int) -> str:
    return f"chat-user-turn:{user_id}"


def user_turn_take(*, user_id: int, token: str) -> bool:
    """Whether the user's turn was free and is now `token`'s; it expires on its own
    (CHAT_RUN_LOCK_SECONDS) should the process die."""
    return bool(cache.add(_turn_key(user_id), token, timeout=settings.CHAT_RUN_LOCK_SECONDS))


def user_turn_release(*, user_id: int, token: str) -> None:
    """End `token`'s turn; a turn that expired meanwhile and went to another
    question is left alone."""
    if cache.get(_turn_key(user_id)) == token:
        cache.delete(_turn_key(user_id))


def user_turn_token() -> str:
    """A question's claim on its user's turn: unique, and naming this process
    (`host:pid`) so that `manage.py recover` can free the turn of a process that died."""
    return f"{owners.current()} {uuid.uuid4().hex}"


def user_turns_release_orphaned(*, at_startup: bool = False) -> list[int]:
    """Free the turns whose process is gone; return their users' ids.

    A daphne killed mid-answer left its user's turn taken, so her next question
    was told "waiting" until CHAT_RUN_LOCK_SECONDS passed. At start-up, before
    any worker runs, a turn naming no process (taken before owners were
    recorded) is freed too; a turn of another host is left to its own server.
    """
    released = []
    for user_id in _users_with_turns():
        token = cache.get(_turn_key(user_id))
        if isinstance(token, str) and _turn_is_orphaned(token, at_startup=at_startup):
            user_turn_release(user_id=user_id, token=token)
            released.append(user_id)
    return released


def _users_with_turns() -> list[int]:
    backend: Any = cache  # incidentdesk.cache's Redis cache (settings.CACHES)
    keys = backend.keys_matching(_turn_key(0).removesuffix("0") + "*")
    return sorted({int(key.rpartition(":")[2]) for key in keys})


def _turn_is_orphaned(token: str, *, at_startup: bool) -> bool:
    owner, _, _ = token.rpartition(" ")
    return owners.is_gone(owner) if owner else at_startup


_take_turn = sync_to_async(user_turn_take, thread_sensitive=False)
_release_turn = sync_to_async(user_turn_release, thread_sensitive=False)


@asynccontextmanager
async def user_turn(
    *, user_id: int, payload: Any, waiting: Callable[[dict[str, Any]], Awaitable[None]]
) -> AsyncIterator[None]:
    """Hold the user's one running answer while a question is answered.

    A question asked while another of hers runs is kept (not stored yet: it
    is stored when its turn comes) and `waiting` is told so once. A frame
    that is no question does not wait: it is refused at once.
    """
    if not _is_question(payload):
        yield
        return
    token = user_turn_token()
    if not await _take_turn(user_id=user_id, token=token):
        await waiting(StatusEvent(WAITING_FOR_TURN).to_message())
        while not await _take_turn(user_id=user_id, token=token):
            await asyncio.sleep(USER_TURN_POLL_SECONDS)
    try:
        yield
    finally:
        await _release_turn(user_id=user_id, token=token)


# --- the same rules over HTTP --------------------------------------------------------------
# POST /api/chat/ and POST /api/incident run the copilot too; without these, a
# script could hold every answering thread the websocket's rules protect. A
# request cannot wait on the event loop as a socket does: it is refused with
# 429 and Retry-After instead (the API's handler for RateLimitedError).
USER_TURN_RETRY_SECONDS = 5


class QuestionTurn:
    """A question asked over HTTP, under the websocket's per-user rules: one running
    answer per user (across tabs, sockets and requests) and CHAT_QUESTIONS_PER_MINUTE.

    `with QuestionTurn(user_id=...)` raises RateLimitedError or holds the turn
    until the block ends; `holding(events)` hands it to a stream instead, which
    frees it when the stream ends or is closed, even before its first event (a
    client that left before the stream started; see incidentdesk/asgi_http.py).
    """

    def __init__(self, *, user_id: int) -> None:
        self.user_id, self.token, self.handed_over = user_id, user_turn_token(), False

    def __enter__(self) -> QuestionTurn:
        if not user_turn_take(user_id=self.user_id, token=self.token):
            raise RateLimitedError(
                "Another answer of yours is still being written (another tab or request); "
                f"try again in {USER_TURN_RETRY_SECONDS} s.",
                {"retry_after": USER_TURN_RETRY_SECONDS},
            )
        try:
            _check_rate(_question_count(self.user_id))
        except RateLimitedError:
            self.release()
            raise
        return self

    def __exit__(self, *exc_info: object) -> None:
        if not self.handed_over:
            self.release()

    def holding(self, events: Iterator[Event]) -> Iterator[Event]:
        self.handed_over = True
        return _Held(events, self)

    def release(self) -> None:
        user_turn_release(user_id=self.user_id, token=self.token)


class _Held(Iterator[Event]):
    """`events` holding a turn, freed when they end, fail or are closed.

    Not a generator: closing a generator that never started runs none of its
    `finally`, so a stream dropped before its first event kept the turn until it
    expired (CHAT_RUN_LOCK_SECONDS).
    """

    def __init__(self, events: Iterator[Event], turn: QuestionTurn) -> None:
        self._events, self._turn, self._held = events, turn, True

    def __next__(self) -> Event:
        try:
            return next(self._events)
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        try:
            close = getattr(self._events, "close", None)
            if close:
                close()  # the agent stops and records why
        finally:
            if self._held:
                self._held = False
                self._turn.release()


def _question_count(user_id: int) -> int:
    """Count one more question of the user this minute (the websocket's counter)."""
    rate_key = cache.make_key(_rate_key(user_id))
    with _redis_pipeline() as pipe:
        pipe.set(rate_key, 0, ex=RATE_WINDOW_SECONDS * 2, nx=True)
        pipe.incr(rate_key)
        _, count = pipe.execute()
    return int(count)


def _is_question(payload: Any) -> bool:
    try:
        ask_text(payload)
    except ValidationError:
        return False
    return True


# Sockets open on each conversation. An answer is relayed to the conversation's
# group only when another socket listens (a second tab, a reload mid-answer):
# relaying every event to nobody doubled the time to `done` at 50 clients.
# One hash field per socket (its channel name), valued with its process
# (`host:pid`), not a counter: leaving twice cannot count another socket out,
# and `recover` finds the sockets of a daphne that died with them open.
LISTENERS_TIMEOUT_SECONDS = 24 * 3600


def _listeners_key(conversation_id: int) -> str:
    # Not "chat-listeners:": that was a counter (a string), which Redis may still hold.
    return f"chat-sockets:{conversation_id}"


def conversation_join(
    user: AbstractBaseUser | AnonymousUser, conversation_id: int, socket: str
) -> int | None:
    """The conversation's id, with `socket` counted as listening, if `user` may open it;
    else None."""
    if not user.is_authenticated:
        return None
    try:
        conversation = selectors.conversation_get_for_user(
            conversation_id=conversation_id, user=user
        )
    except NotFoundError:
        return None
    listener_join(conversation_id=conversation.pk, socket=socket)
    return conversation.pk


def listener_join(*, conversation_id: int, socket: str) -> None:
    _leaves_owed_settle()
    key = cache.make_key(_listeners_key(conversation_id))
    with _redis_pipeline() as pipe:
        pipe.hset(key, socket, owners.current())
        pipe.expire(key, LISTENERS_TIMEOUT_SECONDS)
        pipe.execute()


# Leaves that found Redis unreachable (a socket closed *because* Redis went down):
# settled at this process's next join, once Redis is back with its append-only
# file, which still counts those sockets.
_LEAVES_OWED: set[tuple[int, str]] = set()


def listener_leave(*, conversation_id: int, socket: str) -> None:
    """Stop counting `socket`; owed (not raised) while Redis cannot be reached."""
    try:
        _redis().hdel(cache.make_key(_listeners_key(conversation_id)), socket)
    except Exception as exc:
        if not is_unavailable(exc):
            raise
        _LEAVES_OWED.add((conversation_id, socket))


def _leaves_owed_settle() -> None:
    while _LEAVES_OWED:
        conversation_id, socket = _LEAVES_OWED.pop()
        listener_leave(conversation_id=conversation_id, socket=socket)
        if (conversation_id, socket) in _LEAVES_OWED:
            return  # Redis is still down: the join fails next, as it would have


def listener_count(*, conversation_id: int) -> int:
    """How many sockets are open on the conversation, in every daphne process."""
    return int(_redis().hlen(cache.make_key(_listeners_key(conversation_id))))


def others_listening(*, conversation_id: int) -> bool:
    """Whether a socket other than the answering one is open on the conversation."""
    return listener_count(conversation_id=conversation_id) > 1


def listeners_release_orphaned() -> int:
    """Stop counting the sockets of processes that are gone (a daphne killed, or
    restarted, with sockets open); return how many. Other hosts' are left alone."""
    backend: Any = cache  # incidentdesk.cache's Redis cache (settings.CACHES)
    released = 0
    for key in backend.keys_matching(_listeners_key(0).removesuffix("0") + "*"):
        sockets = _redis().hgetall(cache.make_key(key))
        gone = [name for name, owner in sockets.items() if owners.is_gone(owner.decode())]
        if gone:
            released += _redis().hdel(cache.make_key(key), *gone)
    return released


LISTENERS_CHECK_SECONDS = 0.25  # a tab opened mid-answer gets the rest this soon


def listeners_checker(*, conversation_id: int, listening: bool) -> Callable[[], bool]:
    """`others_listening`: `listening` (as read with the question), then asked
    of Redis again at most every LISTENERS_CHECK_SECONDS."""
    checked = [time.monotonic(), listening]

    def check() -> bool:
        if time.monotonic() - checked[0] >= LISTENERS_CHECK_SECONDS:
            checked[:] = [time.monotonic(), others_listening(conversation_id=conversation_id)]
        return bool(checked[1])

    return check


# What the worker thread hands the socket: an event message and whether to
# relay it to the conversation's other sockets; None once the answer ended.
Post = Callable[[dict[str, Any] | None, bool], None]


def answer_question(
    *, user: AbstractBaseUser, conversation_id: int, payload: Any, post: Post
) -> None:
    """Check a websocket question and stream its answer's events to `post`.

    Runs on a worker thread and never waits for the socket: `post` only
    queues, so the answer is written at the speed of the copilot.
    """
    try:
        text = ask_text(payload)
        with question_admitted(user_id=user.pk, conversation_id=conversation_id) as listening:
            # Read at each question: a rename or delete in another tab must count.
            conversation = selectors.conversation_get_for_user(
                conversation_id=conversation_id, user=user
            )
            relay = listeners_checker(conversation_id=conversation.pk, listening=listening)
            events = replies.conversation_reply(conversation=conversation, user=user, text=text)
            for event in streaming.merged_tokens(events):
                post(display.event_message(event), relay())
    except IncidentDeskError as exc:
        post(error_event(exc).to_message(), False)
    except Exception as exc:
        if is_unavailable(exc):
            raise  # not a bug: the socket says "retry in 5 s" and closes (UnavailableWebsocket)
        # A bug must not take the socket down silently: the browser keeps the
        # question in its composer and offers Retry on any `error` event.
        logger.exception("answering in conversation %s failed", conversation_id)
        post(ErrorEvent(UNEXPECTED_FAILURE, "failed").to_message(), False)
    finally:
        # Here, not by the caller: the connection was opened in this call's
        # copy of the context, where a close around the call cannot see it.
        close_old_connections()
        post(None, False)
