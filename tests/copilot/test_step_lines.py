"""The step log as a log pipeline reads it: the process's own logging set-up prints
each step as one JSON object a line, with nothing before it; other loggers keep
the plain format."""

from __future__ import annotations

import json
import subprocess
import sys

from django.conf import settings

EMIT = """
import logging, django
django.setup()
from copilot.steplog import step_log
logging.getLogger("copilot.agent").warning("a plain line")
step_log(run=7, step="PLAN", outcome="new_incident", ms=0, steps=["INGESTION"])
step_log(run=7, step="INGESTION", outcome="ok", ms=3)
"""


def test_each_step_is_printed_as_one_json_line() -> None:
    env = {"PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "incidentdesk.settings"}
    ran = subprocess.run(  # noqa: S603 - our own interpreter and script
        [sys.executable, "-c", EMIT],
        env=env,
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        check=True,
    )
    lines = ran.stderr.splitlines()
    assert lines[0].endswith("WARNING copilot.agent: a plain line")
    steps = [json.loads(line) for line in lines[1:]]
    assert [(s["run"], s["step"], s["outcome"], s["ms"]) for s in steps] == [
        (7, "PLAN", "new_incident", 0),
        (7, "INGESTION", "ok", 3),
    ]
    assert steps[0]["steps"] == ["INGESTION"]
    assert all(s["at"].endswith("Z") for s in steps)  # when, as the plain lines say it
