"""The console's log format. No Django, no app imports.

Most lines read "time level logger: message". A logger whose messages are
JSON objects (the step log, `copilot.steps`) is printed bare, one object a
line, so a log pipeline parses it without cutting a prefix off first.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable


class ConsoleFormatter(logging.Formatter):
    def __init__(self, *, fmt: str, json_loggers: Iterable[str] = ()) -> None:
        super().__init__(fmt=fmt)
        self.json_loggers = frozenset(json_loggers)

    def format(self, record: logging.LogRecord) -> str:
        if record.name in self.json_loggers:
            return record.getMessage()
        return super().format(record)
