"""Offline answers stream in paced word groups where a person watches them arrive
(OFFLINE_STREAM_PACE_MS), never longer than the cap, and unpaced when read whole."""

from __future__ import annotations

import itertools
import time
from typing import Any

import pytest

from copilot.chat_models import configured_model
from copilot.chat_models.base import TextDelta
from copilot.chat_models.offline.engine import OFFLINE_STREAM_PACE_TOTAL_SECONDS

pytestmark = pytest.mark.django_db
GREETING = [{"role": "user", "content": "Thanks!"}]


def _timed_pieces(pace_ms: int, settings: Any) -> list[tuple[float, str]]:
    settings.OFFLINE_STREAM_PACE_MS = pace_ms
    started = time.monotonic()
    return [
        (time.monotonic() - started, event.text)
        for event in configured_model().stream(GREETING, [])  # type: ignore[arg-type]
        if isinstance(event, TextDelta)
    ]


def test_word_groups_arrive_paced_so_a_person_sees_them(settings: Any) -> None:
    pieces = _timed_pieces(40, settings)
    assert len(pieces) >= 3, pieces
    gaps = [later[0] - earlier[0] for earlier, later in itertools.pairwise(pieces)]
    assert min(gaps) >= 0.035, gaps
    assert all(len(text.split()) <= 4 for _, text in pieces)  # a few words at a time


def test_pacing_adds_at_most_the_cap_to_an_answer(settings: Any) -> None:
    pieces = _timed_pieces(5000, settings)  # a pace nobody should set
    assert pieces[-1][0] <= OFFLINE_STREAM_PACE_TOTAL_SECONDS + 0.3
    assert pieces[-1][0] >= OFFLINE_STREAM_PACE_TOTAL_SECONDS - 0.1  # spread, not dropped


def test_tests_run_unpaced_and_a_whole_read_is_never_paced(settings: Any) -> None:
    assert settings.OFFLINE_STREAM_PACE_MS == 0
    settings.OFFLINE_STREAM_PACE_MS = 5000
    assert configured_model(paced=False).pace_seconds == 0  # type: ignore[attr-defined]
    assert configured_model().pace_seconds == 5  # type: ignore[attr-defined]
