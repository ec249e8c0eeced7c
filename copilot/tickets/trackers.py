"""The tracker that holds a ticket, or the configured one.

Apart from `base.py` because both trackers import that module's interface:
picking one there took an import inside a function to break the cycle.
"""

from __future__ import annotations

from django.conf import settings

from copilot.tickets.base import Tracker, TrackerError
from copilot.tickets.builtin import BuiltinTracker
from copilot.tickets.jira import JiraTracker


def get_tracker(name: str | None = None) -> Tracker:
    """The tracker holding tickets named `name`, else the configured one.

    JIRA_URL switches Jira on (settings then require the rest); without it
    tickets stay in the built-in tracker.
    """
    wanted = name or ("jira" if settings.JIRA_URL else "builtin")
    if wanted == "builtin":
        return BuiltinTracker()
    if not settings.JIRA_URL:
        raise TrackerError("This ticket is in Jira, and Jira is no longer configured.")
    return JiraTracker.from_settings()
