"""One JSON line per agent or intake step, for log pipelines (no ORM here).

Every line has `run` (the AgentRun id), `step` (a tool name, an intake step or
PLAN), `outcome` and `ms`; a few details may follow, and `at` (UTC) ends it. The trace rows hold the
same facts for the admin; these lines are for grep and log search.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from typing import Any

logger = logging.getLogger("copilot.steps")


def step_log(*, run: int, step: str, outcome: str, ms: int, **details: Any) -> None:
    # `at`: the console prints these lines bare (incidentdesk/logformat.py), so
    # each says when itself.
    at = dt.datetime.now(dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    line = {"run": run, "step": step, "outcome": outcome, "ms": ms, **details, "at": at}
    logger.info(json.dumps(line, ensure_ascii=False, default=str))
