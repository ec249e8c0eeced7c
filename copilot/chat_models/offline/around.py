"""Incidents placed in time against the one in focus.

"The one before that", "anything like it shortly before?", "did anything else go
down the same day?", "a few weeks later?": another incident, found by search but
only in a window around the focused incident's date. The window is written into
the search's query ("between 2025-09-05 and 2025-12-04"), which the search tool
reads as a filter like any other date range.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from copilot.chat_models.offline.state import Remembered


def _near(n: int) -> str:
    """ "shortly", "a few weeks", "the month": how close, as groups numbered `n`."""
    return (
        rf"(?P<near{n}>shortly|just|right|soon|not\s+long"
        rf"|(?:a\s+)?(?:few|couple(?:\s+of)?)\s+(?P<few{n}>day|week|month)s?"
        rf"|(?:a|the|one)\s+(?P<unit{n}>day|week|month|year))"
    )


_AROUND_RE = re.compile(
    # "the one before that", "a week before it", "prior to this"
    rf"\b(?:{_near(1)}\s+)?(?P<before>before|prior\s+to)\s+(?:that|this|it|then)\b"
    # "shortly before", "a few weeks earlier", "just after", "a month later"
    rf"|\b{_near(2)}\s+(?P<side>before|earlier|after|later)\b"
    # "the same day", "that same week", "that day", "around the same time"
    r"|\b(?:that|the)\s+same\s+(?P<same>day|week|month)\b|\bthat\s+(?P<that>day|week)\b"
    r"|\baround\s+the\s+same\s+(?P<time>time)\b"
    # "earlier that year", "later the same month"
    r"|\b(?P<inside>earlier|later)\s+(?:that|the\s+same)\s+(?P<period>day|week|month|year)\b",
    re.IGNORECASE,
)
# Another incident is asked for, not a moment of this one ("what happened right
# before that?" reads the record).
_ANOTHER_RE = re.compile(
    r"\b(?:one|ones|another|other|others|anything|something|anyone|incidents?|outages?|"
    r"similar|else|like\s+(?:it|that|this))\b",
    re.IGNORECASE,
)
# How far "a few weeks", "shortly", "the month" reach, in days.
_SPANS = {"day": 2, "week": 10, "month": 45, "year": 366}
_FEW_SPANS = {"day": 10, "week": 45, "month": 183}
_NEAR_SPAN = 92
_SAME_SPANS = {"day": 1, "week": 7, "month": 31, "time": 31}


@dataclass(frozen=True)
class Around:
    """A window placed against the focused incident's date, and the words that set it."""

    start: dt.date | None
    end: dt.date
    day: dt.date  # the focused incident's
    said: str

    def as_query(self) -> str:
        """The window in words the search tool reads as a filter."""
        if self.start is None:
            return f"before {(self.end + dt.timedelta(days=1)).isoformat()}"
        return f"between {self.start.isoformat()} and {self.end.isoformat()}"

    def described(self) -> str:
        """ "before", "in the 92 days before", "within 1 day of": the window against the day."""
        if self.start is None:
            return "before"
        if self.end <= self.day:
            return f"in the {(self.day - self.start).days} days before"
        if self.start >= self.day:
            return f"in the {(self.end - self.day).days} days after"
        return f"within {_days((self.end - self.day).days)} of"

    def holds(self, occurred_at: str) -> bool:
        day = _day(occurred_at)
        return day is not None and (self.start is None or self.start <= day) and day <= self.end


def places_another_in_time(question: str) -> bool:
    """Asks for another incident by when it happened against this one."""
    return bool(_AROUND_RE.search(question) and _ANOTHER_RE.search(question))


def around_focus(question: str, focus: Remembered) -> Around | None:
    """The window a follow-up places another incident in, or None if it places none."""
    match = _AROUND_RE.search(question)
    day = _day(focus.occurred_at)
    if match is None or day is None or not _ANOTHER_RE.search(question):
        return None
    start, end = _window(match, day)
    return Around(start, end, day, match.group(0))


def _window(match: re.Match[str], day: dt.date) -> tuple[dt.date | None, dt.date]:
    group = match.groupdict()
    if group["same"] or group["that"] or group["time"]:
        reach = dt.timedelta(days=_SAME_SPANS[(group["same"] or group["that"] or "time").lower()])
        return day - reach, day + reach
    if group["inside"]:
        return _inside(group["inside"].lower(), group["period"].lower(), day)
    reach = dt.timedelta(days=_reach(group))
    if group["before"] or (group["side"] or "").lower() in {"before", "earlier"}:
        return (day - reach if reach else None), day - dt.timedelta(days=1)
    return day + dt.timedelta(days=1), day + reach


def _reach(group: dict[str, str | None]) -> int:
    """Days a "shortly", "a few weeks" or "the month" reaches; 0 for a bare "before that"."""
    few, unit = group["few1"] or group["few2"], group["unit1"] or group["unit2"]
    if few:
        return _FEW_SPANS[few.lower()]
    if unit:
        return _SPANS[unit.lower()]
    return _NEAR_SPAN if group["near1"] or group["near2"] else 0


def _inside(direction: str, period: str, day: dt.date) -> tuple[dt.date, dt.date]:
    """ "Earlier that year": from the year's start to the day; "later that month" on."""
    if period == "year":
        first, last = dt.date(day.year, 1, 1), dt.date(day.year, 12, 31)
    else:
        reach = dt.timedelta(days=_SAME_SPANS[period])
        first, last = day - reach, day + reach
    return (first, day) if direction == "earlier" else (day, last)


def _days(n: int) -> str:
    return "1 day" if n == 1 else f"{n} days"


def _day(occurred_at: str) -> dt.date | None:
    try:
        return dt.date.fromisoformat(occurred_at[:10])
    except ValueError:
        return None
