"""Tokens written faster than a frame is worth are merged; slow ones are not."""

from __future__ import annotations

import time
from collections.abc import Iterator

from copilot.events import DoneEvent, Event, StatusEvent, TokenEvent
from copilot.streaming import merged_tokens


def _stream(pause: float) -> Iterator[Event]:
    yield StatusEvent("Analyzing your request... please hold on.")
    for word in ["The ", "key ", "was ", "stale."]:
        time.sleep(pause)
        yield TokenEvent(word)
    yield DoneEvent(1, 2, 3, "The key was stale.")


def test_fast_tokens_share_frames_and_keep_their_text_and_order() -> None:
    events = list(merged_tokens(_stream(0), window=10))
    assert [e.type for e in events] == ["status", "token", "token", "done"]
    assert "".join(e.text for e in events if isinstance(e, TokenEvent)) == "The key was stale."


def test_slow_tokens_are_sent_one_by_one() -> None:
    events = list(merged_tokens(_stream(0.03), window=0.01))
    assert [e.type for e in events] == ["status", "token", "token", "token", "token", "done"]


def test_a_trailing_token_is_not_lost() -> None:
    events = list(merged_tokens(iter([TokenEvent("a"), TokenEvent("b")]), window=10))
    assert [e.text for e in events if isinstance(e, TokenEvent)] == ["a", "b"]
