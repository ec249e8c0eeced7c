"""Intake logs its plan and every step as one JSON line each (run, step, outcome, ms)."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from django.contrib.auth.models import User

from copilot.events import DoneEvent
from copilot.services import conversation_create
from tests.copilot.conftest import ask

pytestmark = pytest.mark.usefixtures("payments_desk")


def step_lines(caplog: pytest.LogCaptureFixture) -> list[dict[str, Any]]:
    return [json.loads(r.getMessage()) for r in caplog.records if r.name == "copilot.steps"]


def test_the_plan_and_each_step_are_one_json_line(
    alice: User, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="copilot.steps")
    conversation = conversation_create(owner=alice)
    events = ask(conversation, alice, "Checkout API returns 502 after the 14:00 deploy")
    done = events[-1]
    assert isinstance(done, DoneEvent)
    lines = step_lines(caplog)
    plan, steps = lines[0], lines[1:]
    assert plan["step"] == "PLAN" and plan["outcome"] == "new_incident"
    assert plan["run"] == done.run_id
    assert [line["step"] for line in steps] == plan["steps"]
    assert [line["step"] for line in steps] == [step["name"] for step in done.steps]
    for line in steps:
        assert line["run"] == done.run_id
        assert line["outcome"] in {"ok", "failed"}
        assert isinstance(line["ms"], int)
