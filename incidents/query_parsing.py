"""Query understanding: time windows, repeats, severity, category, application.

Pure text in, small frozen dataclasses out; no ORM. The selectors turn the
result into filters, and the copilot's router uses it to pick a tool.
"""

from __future__ import annotations

import bisect
import datetime as dt
import itertools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache

import snowballstemmer

from incidentdesk.embeddings import is_common_word

NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "eighteen": 18, "twenty": 20,
    "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
    "ninety": 90, "hundred": 100, "couple": 2, "few": 3, "several": 3,
}  # fmt: skip
UNIT_DAYS = {"hour": 1 / 24, "day": 1, "week": 7, "fortnight": 14, "month": 30, "quarter": 91,
             "year": 365}  # fmt: skip
MONTHS = {name: i for i, name in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"], start=1)}  # fmt: skip
# A month's name or abbreviation, as a regular expression's alternatives.
MONTH_PATTERN = "|".join(list(MONTHS) + [m[:3] for m in MONTHS if m != "may"])
_MONTH_RE = MONTH_PATTERN
# A number word is a whole word: "last and" is no "last an d(ay)".
_NUMBER_RE = r"\d+|(?:" + "|".join(NUMBER_WORDS) + r")\b"


@dataclass(frozen=True)
class TimeWindow:
    """Inclusive date range; None on a side means open."""

    start: dt.date | None
    end: dt.date | None
    label: str

    @property
    def days(self) -> int | None:
        if self.start is None or self.end is None:
            return None
        return (self.end - self.start).days


def _number(word: str) -> int:
    return int(word) if word.isdigit() else NUMBER_WORDS[word]


def _month_start(year: int, month_name: str) -> dt.date:
    month = next(n for name, n in MONTHS.items() if name.startswith(month_name[:3]))
    return dt.date(year, month, 1)


# Units as people type them: "6 wks", "3 mos", "30d", "2 yrs" (never a bare "m": minutes?).
_UNIT = (
    r"(?P<unit>hours?|hrs?|h|days?|d|weeks?|wks?|w|fortnights?|months?|mos?|mths?|"
    r"quarters?|qtrs?|years?|yrs?|y)"
)
_RELATIVE_RES: tuple[re.Pattern[str], ...] = (
    # "in the last 30 days", "past 3 mos", "last 30d", "the last several weeks"
    re.compile(
        rf"\b(?:in\s+|over\s+|during\s+|within\s+)?(?:the\s+)?(?:last|past|previous|recent|"
        rf"trailing|rolling)\s+"
        rf"(?:(?P<n>{_NUMBER_RE})\s*(?:of\s+)?)?{_UNIT}\b",
        re.IGNORECASE,
    ),
    # "the 20 days up to today", "in the two weeks leading up to now", "30 days to date"
    re.compile(
        rf"\b(?:in\s+|over\s+|during\s+)?(?:the\s+)?(?P<n>{_NUMBER_RE})\s*{_UNIT}\s+"
        r"(?:up\s+(?:to|until|till)|until|till|leading\s+up\s+to|before|through)\s+(?:today|now)\b"
        rf"|\b(?:in\s+|over\s+)?(?:the\s+)?(?P<n2>{_NUMBER_RE})\s*(?P<unit2>days?|weeks?|months?)\s+to\s+date\b",
        re.IGNORECASE,
    ),
    # Not "within 2 hours" or "a year ago": in a story those tell how long or when
    # something happened ("recovered within 2 hours", "provisioned a yr ago").
)
_HALF_YEAR_RE = re.compile(
    r"\b(?:in\s+|over\s+|during\s+)?(?:the\s+)?(?:last|past|previous)\s+half[- ](?:a\s+)?year\b",
    re.IGNORECASE,
)
_UNIT_BY_LETTER = {"h": "hour", "d": "day", "w": "week", "f": "fortnight", "m": "month",
                   "q": "quarter", "y": "year"}  # fmt: skip
_THIS_RE = re.compile(r"\bthis\s+(?P<unit>week|wk|month|mo|mth|year|yr)\b", re.IGNORECASE)
_THIS_UNITS = {"wk": "week", "mo": "month", "mth": "month", "yr": "year"}
_DAY_RE = re.compile(r"\b(?P<word>yesterday|today|tonight|last night|overnight)\b", re.IGNORECASE)
_IN_YEAR_RE = re.compile(r"\b(?:in|during|from)\s+(?P<year>(?:19|20)\d\d)\b", re.IGNORECASE)
_SINCE_RE = re.compile(
    rf"\b(?P<op>since|after|before|until|prior to)\s+(?:(?P<month>{_MONTH_RE})[a-z]*\s+)?"
    rf"(?P<year>(?:19|20)\d\d)\b",
    re.IGNORECASE,
)


DEFAULT_RECENT_DAYS = 30
_RECENT_RE = re.compile(r"\b(?:recent(?:ly)?|latest|lately|newest)\b", re.IGNORECASE)


def asked_time_window(text: str, today: dt.date) -> tuple[TimeWindow | None, str]:
    """The time window of what a message asks, and the text without it.

    A window said in the story ("the instance was created before 2014", "after
    yesterday's upgrade consumers drop") tells when something of ours happened, not
    which incidents to search: when some sentences ask (end with "?") and others
    tell, only the asking ones are read for a window.
    """
    sentences = [s for s in _SENTENCE_SPLIT_RE.split(text.strip()) if s]
    asking = [s for s in sentences if s.rstrip().endswith("?")]
    if len(asking) == len(sentences) or not asking:
        return parse_time_window(text, today)
    for sentence in asking:
        window, rest = parse_time_window(sentence, today)
        if window is not None:
            return window, text.replace(sentence, rest)
    return None, text


_SENTENCE_SPLIT_RE = re.compile(r"(?<=[.?!])\s+")


def parse_time_window(text: str, today: dt.date) -> tuple[TimeWindow | None, str]:
    """The first time window in `text`, and the text without it.

    A bare "recent" means the last 30 days.
    """
    parsers = (
        _dates_window, _between_window, _year_range_window, _relative_window, _period_start_window,
        _this_window, _day_window, _weekend_window, _quarter_window, _half_window,
        _season_window, _month_window, _month_year_window, _year_window, _since_date_window,
        _since_window,
        _since_weekday_window, _recent_window,
    )  # fmt: skip
    asked = _without_quoted_messages(text)
    for parser in parsers:
        found = parser(asked, today)
        if found is not None:
            window, match = found
            return _up_to_today(window, today), _cut(text, match)
    return None, text


# A message quoted whole ('Hi, I signed up last year and got the mail 23 times'):
# its times are the story's, not the asker's window. Opening and closing quotes
# stand outside words, so "I've" inside it closes nothing.
# Found by a scan over the quote marks rather than one regular expression: a lazy
# match from every opening mark to its close is quadratic in a long question full
# of apostrophes (2 s for 8,000 characters, several times per question).
_OPENING_QUOTE_RE = re.compile(r"(?<!\w)[\"'\u201c\u2018]")
_CLOSING_QUOTE_RE = re.compile(r"[\"'\u201d\u2019](?!\w)")
QUOTED_MESSAGE_MIN_CHARS = 12
QUOTED_MESSAGE_WORDS = 4  # fewer is a name or a title ("the 'Registration Now Open' mail")


@lru_cache(maxsize=256)
def _without_quoted_messages(text: str) -> str:
    """`text` with each quoted message blanked, same length (match positions hold),
    unless nothing stands outside the quotes."""
    blanked = list(text)
    for start, end in _quoted_spans(text):
        if len(text[start:end].split()) >= QUOTED_MESSAGE_WORDS:
            blanked[start:end] = " " * (end - start)
    joined = "".join(blanked)
    return joined if joined.strip() else text


def _quoted_spans(text: str) -> Iterator[tuple[int, int]]:
    """Each quoted stretch, left to right: from an opening mark to the first closing
    mark at least QUOTED_MESSAGE_MIN_CHARS on, unless its own mark closes sooner
    (then that mark opened nothing)."""
    closes = [m.start() for m in _CLOSING_QUOTE_RE.finditer(text)]
    own_closes = {
        mark: [m.start() for m in re.finditer(rf"{mark}(?!\w)", text)] for mark in "\"'\u201c\u2018"
    }
    done = 0
    for opening in _OPENING_QUOTE_RE.finditer(text):
        said = opening.end()
        if opening.start() < done:
            continue
        close = _first_at_or_after(closes, said + QUOTED_MESSAGE_MIN_CHARS)
        own = _first_at_or_after(own_closes[opening.group()], said)
        if close is not None and (own is None or own >= close):
            done = close + 1
            yield opening.start(), done


def _first_at_or_after(positions: list[int], start: int) -> int | None:
    index = bisect.bisect_left(positions, start)
    return positions[index] if index < len(positions) else None


def _up_to_today(window: TimeWindow, today: dt.date) -> TimeWindow:
    """Nothing has happened after today: "in 2026" asked in March is "since January"."""
    if window.end is None or window.end <= today:
        return window
    if window.start is not None and window.start > today:
        return window  # wholly ahead ("next month"): left as said, it finds nothing
    return TimeWindow(window.start, today, window.label)


def _cut(text: str, match: re.Match[str]) -> str:
    rest = re.sub(r"\(\s*\)", " ", text[: match.start()] + " " + text[match.end() :])
    return re.sub(r"\s{2,}", " ", rest).strip()


def _relative_window(text: str, today: dt.date) -> tuple[TimeWindow, re.Match[str]] | None:
    half = _HALF_YEAR_RE.search(text)
    match = half or next((m for r in _RELATIVE_RES if (m := r.search(text))), None)
    if not match:
        return None
    if half:
        days = UNIT_DAYS["year"] // 2
    else:
        said = match.groupdict()
        number = said.get("n") or said.get("n2")
        count = _number(number.lower()) if number else 1
        unit = _UNIT_BY_LETTER[(said.get("unit") or said["unit2"])[0].lower()]
        days = max(round(count * UNIT_DAYS[unit]), 1)
    return TimeWindow(today - dt.timedelta(days=days), today, f"last {days} days"), match


def _recent_window(text: str, today: dt.date) -> tuple[TimeWindow, re.Match[str]] | None:
    match = _RECENT_RE.search(text)
    if not match:
        return None
    start = today - dt.timedelta(days=DEFAULT_RECENT_DAYS)
    return TimeWindow(start, today, f"last {DEFAULT_RECENT_DAYS} days"), match


def _this_window(text: str, today: dt.date) -> tuple[TimeWindow, re.Match[str]] | None:
    """ "this month": since the month began, as people count it (not the last 30 days)."""
    match = _THIS_RE.search(text)
    if not match:
        return None
    unit = match.group("unit").lower()
    start = _period_start(_THIS_UNITS.get(unit, unit), today)
    return TimeWindow(start, today, f"since {start.isoformat()}"), match


def _day_window(text: str, today: dt.date) -> tuple[TimeWindow, re.Match[str]] | None:
    match = _DAY_RE.search(text)
    if not match:
        return None
    days = 0 if match.group("word").lower() in {"today", "tonight"} else 1
    return TimeWindow(today - dt.timedelta(days=days), today, match.group("word").lower()), match


_WEEKEND_RE = re.compile(r"\b(?:over|during|on|at|this|last|past)\s+(?:the\s+)?weekend\b", re.I)


def _weekend_window(text: str, today: dt.date) -> tuple[TimeWindow, re.Match[str]] | None:
    """ "over the weekend": the latest Saturday and Sunday (today, if it is one)."""
    match = _WEEKEND_RE.search(text)
    if not match:
        return None
    saturday = today - dt.timedelta(days=(today.weekday() - 5) % 7)
    end = min(saturday + dt.timedelta(days=1), today)
    return TimeWindow(saturday, end, f"the weekend of {saturday:%d %B}"), match


_YEAR_RANGE_RE = re.compile(
    r"\b(?:(?:from|between|in|during)\s+)?(?P<y1>(?:19|20)\d\d)\s*"
    r"(?:-|\u2013|\u2014|to|through|thru|until|and)\s*(?P<y2>(?:19|20)\d\d)\b",
    re.IGNORECASE,
)


def _year_range_window(text: str, today: dt.date) -> tuple[TimeWindow, re.Match[str]] | None:
    """ "2019-2023", "from 2021 through 2025": whole years, both ends included."""
    match = _YEAR_RANGE_RE.search(text)
    if not match or int(match.group("y1")) > int(match.group("y2")):
        return None
    start = dt.date(int(match.group("y1")), 1, 1)
    end = min(dt.date(int(match.group("y2")), 12, 31), today)
    return TimeWindow(start, end, f"{start.year} to {end.year}"), match


def _year_window(text: str, today: dt.date) -> tuple[TimeWindow, re.Match[str]] | None:
    match = _IN_YEAR_RE.search(text)
    if not match:
        return None
    year = int(match.group("year"))
    return TimeWindow(dt.date(year, 1, 1), dt.date(year, 12, 31), f"in {year}"), match


def _since_window(text: str, today: dt.date) -> tuple[TimeWindow, re.Match[str]] | None:
    match = _SINCE_RE.search(text)
    if not match:
        return None
    year = int(match.group("year"))
    month = match.group("month")
    start = _month_start(year, month.lower()) if month else dt.date(year, 1, 1)
    label = f"{match.group('op').lower()} {month + ' ' if month else ''}{year}"
    if match.group("op").lower() == "after":
        # After a month or a year begins once it has ended.
        return TimeWindow(_shift(start, 1 if month else 12), today, label), match
    if match.group("op").lower() == "since":
        return TimeWindow(start, today, label), match
    return TimeWindow(None, start - dt.timedelta(days=1), label), match


_PERIOD_START_RE = re.compile(
    r"\b(?:since\s+)?(?:the\s+)?(?:start|beginning)\s+of\s+(?:the\s+|this\s+)?"
    r"(?P<unit>week|month|quarter|year)\b|\b(?P<short>week|month|quarter|year)[- ]to[- ]date\b"
    r"|\b(?P<abbr>[mqy]td)\b|\bsince\s+the\s+(?:1st|first)\b(?!\s+of)"
    # "since new year's", "since the new year": the start of this year.
    r"|\bsince\s+(?:the\s+)?(?P<new_year>new\s+year(?:['\u2019]s)?(?:\s+day)?)"
    rf"|\b(?:since\s+)?(?:the\s+)?(?:start|beginning)\s+of\s+(?:(?P<month>{_MONTH_RE})[a-z]*"
    r"|q(?P<q>[1-4]))\b",
    re.IGNORECASE,
)
_QUARTER_RE = re.compile(
    r"\b(?:in\s+|during\s+)?(?:(?P<which>this|last|previous)\s+quarter"
    r"|q(?P<q>[1-4])(?:\s+(?:of\s+)?(?P<year>(?:19|20)\d\d))?)\b",
    re.IGNORECASE,
)
SEASONS = {
    "spring": (3, 5),
    "summer": (6, 8),
    "autumn": (9, 11),
    "fall": (9, 11),
    "winter": (12, 2),
}
_HALF_RE = re.compile(
    r"\b(?:in\s+|during\s+|over\s+)?(?:the\s+)?(?:(?P<which>first|second|1st|2nd)\s+half"
    r"|h(?P<h>[12]))(?:\s+(?:of\s+)?(?:the\s+year\s+)?(?P<year>(?:19|20)\d\d))?\b",
    re.IGNORECASE,
)
_SEASON_RE = re.compile(
    r"\b(?:over|during|in|through(?:out)?)?\s*(?:the\s+|this\s+|last\s+|past\s+)?"
    r"(?P<season>spring|summer|autumn|fall|winter)(?:\s+(?:of\s+)?(?P<year>(?:19|20)\d\d))?\b",
    re.IGNORECASE,
)
_MONTH_WINDOW_RE = re.compile(
    rf"\b(?P<op>since|after|in|during|from|throughout)\s+(?:(?:early|mid|late)[- ])?"
    rf"(?P<month>{_MONTH_RE})[a-z]*\b(?:\s*,?\s*(?P<year>(?:19|20)\d\d))?(?!\s+\d)",
    re.IGNORECASE,
)
# "June 2021 cdn meltdown", "outage, may 2021": a month and its year need no "in";
# after "the" or "that" they name one event ("the March 2024 outage").
_MONTH_YEAR_RE = re.compile(
    rf"(?<![\d/-])(?<!\d\s)(?<!\bthe\s)(?<!\bthat\s)\b(?P<month>{_MONTH_RE}|may)[a-z]*\.?\s*,?\s*"
    r"(?P<year>(?:19|20)\d\d)\b(?!\s*[-/]\d)",
    re.IGNORECASE,
)
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_SINCE_WEEKDAY_RE = re.compile(
    rf"\b(?:since|after|from)\s+(?:last\s+)?(?P<day>{'|'.join(WEEKDAYS)}|"
    rf"{'|'.join(d[:3] for d in WEEKDAYS)})\b",
    re.IGNORECASE,
)
# One day written as people write it: "2024-05-01", "3/5", "March 3rd, 2024", "3 March".
_NAMED_DATE = (
    rf"(?:(?:{_MONTH_RE})[a-z]*\.?\s+\d{{1,2}}(?:st|nd|rd|th)?(?:,?\s+\d{{4}})?)"
    rf"|(?:\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?(?:{_MONTH_RE})[a-z]*(?:,?\s+\d{{4}})?)"
)
_DATE_PHRASE = rf"(?:\d{{1,4}}[-/.]\d{{1,2}}(?:[-/.]\d{{1,4}})?)|{_NAMED_DATE}"
# Dates the rules above do not cover ("since March 3rd", "after 2024-05-01"),
# read by dateparser relative to `today`.
_SINCE_DATE_RE = re.compile(
    rf"\b(?P<op>since|after|from)\s+(?P<date>{_DATE_PHRASE})", re.IGNORECASE
)
# Day-level bounds: "between 2025-09-05 and 2025-12-04", "from March 3 to March 10",
# "before 2025-12-05", "until June 12th". Numbers alone count only with their year,
# so "before 2.1" (a version) is no date.
_FULL_DATE_PHRASE = rf"(?:\d{{4}}-\d{{1,2}}-\d{{1,2}}|\d{{1,2}}/\d{{1,2}}/\d{{2,4}})|{_NAMED_DATE}"
_DATES_RE = re.compile(
    rf"\b(?:between|from)\s+(?P<start>{_FULL_DATE_PHRASE})\s+(?:and|to|until|through|-)\s+"
    rf"(?P<end>{_FULL_DATE_PHRASE})(?![\d/.-])"
    rf"|\b(?P<op>before|until|till|prior\s+to)\s+(?P<bound>{_FULL_DATE_PHRASE})(?![\d/.-])",
    re.IGNORECASE,
)


_BETWEEN_RE = re.compile(
    rf"\b(?:between|from)\s+(?P<m1>{_MONTH_RE})[a-z]*(?:\s+(?P<y1>(?:19|20)\d\d))?\s+"
    rf"(?:and|to|until|through|-)\s+(?P<m2>{_MONTH_RE})[a-z]*(?:\s+(?P<y2>(?:19|20)\d\d))?\b",
    re.IGNORECASE,
)


def _between_window(text: str, today: dt.date) -> tuple[TimeWindow, re.Match[str]] | None:
    """ "between June and December 2025", "from March to May"."""
    match = _BETWEEN_RE.search(text)
    if not match:
        return None
    end_month = _month_start(2000, match.group("m2").lower()).month
    end_year = _latest_start(end_month, today, match.group("y2"))
    start_month = _month_start(2000, match.group("m1").lower()).month
    start_year = int(match.group("y1") or (end_year if start_month <= end_month else end_year - 1))
    start = dt.date(start_year, start_month, 1)
    end = min(_month_end(dt.date(end_year, end_month, 1), 1), today)
    return TimeWindow(start, end, f"{start:%B %Y} to {end:%B %Y}"), match


def _period_start(unit: str, today: dt.date) -> dt.date:
    if unit == "week":
        return today - dt.timedelta(days=today.weekday())
    if unit == "month":
        return today.replace(day=1)
    if unit == "quarter":
        return dt.date(today.year, 3 * ((today.month - 1) // 3) + 1, 1)
    return dt.date(today.year, 1, 1)


def _period_start_window(text: str, today: dt.date) -> tuple[TimeWindow, re.Match[str]] | None:
    """ "since the start of the month", "year to date", "QTD"."""
    match = _PERIOD_START_RE.search(text)
    if not match:
        return None
    if match.group("month") or match.group("q"):
        # "since the start of October", "since the beginning of Q3": the latest one begun.
        month = (
            _month_start(2000, match.group("month").lower()).month
            if match.group("month")
            else 3 * int(match.group("q")) - 2
        )
        start = dt.date(_latest_start(month, today, None), month, 1)
        return TimeWindow(start, today, f"since {start.isoformat()}"), match
    abbreviation = "ytd" if match.group("new_year") else (match.group("abbr") or "").lower()
    # "since the 1st" is the first of this month.
    unit = match.group("unit") or match.group("short") or _PERIOD_ABBREVIATIONS.get(abbreviation)
    unit = unit or "month"
    start = _period_start(unit.lower(), today)
    return TimeWindow(start, today, f"since {start.isoformat()}"), match


_PERIOD_ABBREVIATIONS = {"mtd": "month", "qtd": "quarter", "ytd": "year"}


def _latest_start(month: int, today: dt.date, year: str | None) -> int:
    """The year of the latest `month` that has begun by `today` (unless one is given)."""
    if year:
        return int(year)
    return today.year if month <= today.month else today.year - 1


def _month_end(start: dt.date, months: int) -> dt.date:
    month = start.month - 1 + months
    return dt.date(start.year + month // 12, month % 12 + 1, 1) - dt.timedelta(days=1)


def _quarter_window(text: str, today: dt.date) -> tuple[TimeWindow, re.Match[str]] | None:
    match = _QUARTER_RE.search(text)
    if not match:
        return None
    current = _period_start("quarter", today)
    if match.group("which"):
        start = current if match.group("which").lower() == "this" else _shift(current, -3)
    else:
        first_month = 3 * (int(match.group("q")) - 1) + 1
        start = dt.date(_latest_start(first_month, today, match.group("year")), first_month, 1)
    end = min(_month_end(start, 3), today)
    return TimeWindow(start, end, f"{start.isoformat()} to {end.isoformat()}"), match


def _half_window(text: str, today: dt.date) -> tuple[TimeWindow, re.Match[str]] | None:
    """ "the first half of 2025", "H2 2024" (this year's when no year is named)."""
    match = _HALF_RE.search(text)
    if not match or not (match.group("year") or match.group("which")):
        return None  # a bare "h1" is more likely a heading or a host than a half-year
    second = (match.group("which") or "").lower() in {"second", "2nd"} or match.group("h") == "2"
    start = dt.date(int(match.group("year") or today.year), 7 if second else 1, 1)
    if start > today:
        return None
    end = min(_month_end(start, 6), today)
    return TimeWindow(start, end, f"{start.isoformat()} to {end.isoformat()}"), match


def _shift(start: dt.date, months: int) -> dt.date:
    month = start.month - 1 + months
    return dt.date(start.year + month // 12, month % 12 + 1, 1)


def _season_window(text: str, today: dt.date) -> tuple[TimeWindow, re.Match[str]] | None:
    """ "over the summer": the latest such season that has begun (northern seasons)."""
    match = _SEASON_RE.search(text)
    if not match:
        return None
    first, last = SEASONS[match.group("season").lower()]
    year = _latest_start(first, today, match.group("year"))
    start = dt.date(year, first, 1)
    end = min(_month_end(start, (last - first) % 12 + 1), today)  # winter spans a new year
    return TimeWindow(start, end, f"{match.group('season').lower()} {year}"), match


def _month_window(text: str, today: dt.date) -> tuple[TimeWindow, re.Match[str]] | None:
    """ "since May" (up to today), "in March 2024" (that month)."""
    match = _MONTH_WINDOW_RE.search(text)
    if not match:
        return None
    start = _month_start(2000, match.group("month").lower())
    start = start.replace(year=_latest_start(start.month, today, match.group("year")))
    if match.group("op").lower() == "after":
        start = _shift(start, 1)  # "after June": once June has ended
    if match.group("op").lower() in {"since", "after", "from"}:
        return TimeWindow(start, today, f"since {start:%B %Y}"), match
    return TimeWindow(start, min(_month_end(start, 1), today), f"in {start:%B %Y}"), match


def _month_year_window(text: str, today: dt.date) -> tuple[TimeWindow, re.Match[str]] | None:
    match = _MONTH_YEAR_RE.search(text)
    if not match:
        return None
    start = _month_start(int(match.group("year")), match.group("month").lower())
    return TimeWindow(start, min(_month_end(start, 1), today), f"in {start:%B %Y}"), match


def _since_weekday_window(text: str, today: dt.date) -> tuple[TimeWindow, re.Match[str]] | None:
    """ "since Monday": the latest such day before today."""
    match = _SINCE_WEEKDAY_RE.search(text)
    if not match:
        return None
    weekday = next(
        i for i, d in enumerate(WEEKDAYS) if d.startswith(match.group("day")[:3].lower())
    )
    back = (today.weekday() - weekday) % 7 or 7
    start = today - dt.timedelta(days=back)
    return TimeWindow(start, today, f"since {start:%A %d %B}"), match


def _since_date_window(text: str, today: dt.date) -> tuple[TimeWindow, re.Match[str]] | None:
    match = _SINCE_DATE_RE.search(text)
    if not match:
        return None
    start = parse_date_phrase(match.group("date"), today)
    if start is None or start > today:
        return None
    return TimeWindow(start, today, f"since {start.isoformat()}"), match


def _dates_window(text: str, today: dt.date) -> tuple[TimeWindow, re.Match[str]] | None:
    """Bounds given to the day: "between 2025-09-05 and 2025-12-04", "before 2025-12-05"."""
    match = _DATES_RE.search(text)
    if not match:
        return None
    if match.group("bound"):
        window = _bounded_window(match.group("op"), match.group("bound"), today)
        return (window, match) if window else None
    start = parse_date_phrase(match.group("start"), today)
    end = parse_date_phrase(match.group("end"), today)
    if start is None or end is None or end < start:
        return None
    return TimeWindow(start, end, f"{start.isoformat()} to {end.isoformat()}"), match


def _bounded_window(op: str, phrase: str, today: dt.date) -> TimeWindow | None:
    """ "before 2025-12-05" ends the day before; "until June 12th" ends on it."""
    bound = parse_date_phrase(phrase, today)
    if bound is None:
        return None
    op = " ".join(op.lower().split())
    end = bound if op in {"until", "till"} else bound - dt.timedelta(days=1)
    return TimeWindow(None, end, f"{op} {bound.isoformat()}")


def parse_date_phrase(phrase: str, today: dt.date) -> dt.date | None:
    """One date phrase ("March 3rd", "3/5", "2024-05-01") by dateparser, in the past."""
    try:  # the form the copilot writes itself needs no parser
        return dt.date.fromisoformat(phrase)
    except ValueError:
        pass
    import dateparser  # a heavy import (~0.3 s): only when a date phrase is present

    base = dt.datetime.combine(today, dt.time(12), tzinfo=dt.UTC)
    found = dateparser.parse(
        phrase,
        languages=["en"],
        settings={
            "RELATIVE_BASE": base,
            "PREFER_DATES_FROM": "past",
            "RETURN_AS_TIMEZONE_AWARE": True,
        },
    )
    return found.date() if found else None


# --- other filters ----------------------------------------------------------------

# Ways of asking what to do, one vocabulary: the router reads them as the whole
# closing clause of a symptom ("…, what now?") and asks documents; knowledge
# search reads them anywhere and quotes a document's steps, not its background.
WHAT_TO_DO_ASKS = (
    r"what\s+now|now\s+what|next\s+steps?|what\s+(?:do|should|can)\s+(?:i|we|you)\s+do(?:\s+now)?|"
    r"what\s+(?:do|should|can)\s+(?:i|we)\s+check(?:\s+first)?|where\s+do\s+(?:i|we)\s+start|"
    # "first thing to check when…", "what to look at first"
    r"(?:the\s+)?first\s+(?:things?|steps?)\s+to\s+(?:check|do|look\s+at|try)|"
    r"what\s+to\s+(?:check|look\s+at|do)\s+first|"
    r"(?:any\s+)?(?:advice|ideas|pointers|suggestions|tips)|"
    # Politely, as non-native speakers often write it: "kindly advise the steps".
    r"(?:(?:kindly|please|pls)|request\s+you\s+to)\s+(?:advise|suggest|guide|share)|"
    r"(?:advise|suggest)\s+(?:the\s+)?(?:steps|procedure)|"
    # ...and the fix or the routine asked for by name ("whats the drill", "quick fix?").
    r"what(?:'?s|\s+is)\s+the\s+(?:drill|play|move|plan|fix|process|standard\s+response)|"
    r"(?:(?:any|a|the|known|quick|easy|simple|standard|usual|proper|real|permanent|"
    r"temporary)\s+){0,2}(?:fix|fixes|workarounds?|remed(?:y|ies)|mitigations?)|"
    # ...or the written routine itself: "…lost power in one hall, checklist?".
    r"(?:(?:any|a|the|our)\s+)?(?:checklists?|steps|procedures?|runbooks?|playbooks?|sops?)"
)


_REPEAT_RE = re.compile(
    r"\b(?:repeat(?:ed)?\s+incidents?|repeats?\b|recurr(?:ing|ence|ences|ed)|happened\s+again"
    r"|flagged\s+as\s+(?:a\s+)?repeat)",
    re.IGNORECASE,
)
_SEVERITY_RE = re.compile(
    r"\b(?:sev(?:erity)?\s*-?\s*(?P<sev>[1-4])|p(?P<p>[1-4]))s?\b"
    # "critical" is a severity only as a kind of incident ("critical outages"),
    # not in a description ("the critical path was slow").
    r"|\b(?P<critical>critical)\s+(?=(?:incidents?|outages?|issues?|ones)\b)",
    re.IGNORECASE,
)
# "<category> incidents", "<category>-related incidents": explicit listings only,
# so a symptom that merely mentions a database is not filtered by category.
CATEGORY_WORDS = {
    "certificate": "certificate", "cert": "certificate", "tls": "certificate", "ssl": "certificate",
    "database": "database", "db": "database", "dns": "dns", "network": "network",
    "networking": "network", "config": "config", "configuration": "config", "deploy": "deploy",
    "deployment": "deploy", "security": "security", "hardware": "hardware", "power": "hardware",
    "capacity": "capacity", "dependency": "dependency", "third-party": "dependency",
    "human-error": "human-error", "time": "time", "software-bug": "software-bug",
    "bug": "software-bug",
}  # fmt: skip
_CATEGORY_RE = re.compile(
    # "config-change incidents", "deploy-related outages": the category and a word of its kind.
    rf"\b(?P<word>{'|'.join(re.escape(w) for w in CATEGORY_WORDS)})"
    r"(?:[- ](?:related|change|changes|push|pushes|rollout|expiry|expiries))?\s+"
    r"(?:incidents?|outages?|issues|problems|failures)\b",
    re.IGNORECASE,
)


def parse_repeat(text: str) -> bool | None:
    return True if _REPEAT_RE.search(text) else None


def parse_severity(text: str) -> str | None:
    match = _SEVERITY_RE.search(text)
    if not match:
        return None
    return f"SEV{match.group('sev') or match.group('p') or 1}"


def parse_category(text: str) -> str | None:
    match = _CATEGORY_RE.search(text)
    return CATEGORY_WORDS[match.group("word").lower()] if match else None


def is_category_phrase(subject: str) -> bool:
    words = re.sub(r"[- ]related$", "", subject.strip().lower())
    return words in CATEGORY_WORDS


def strip_filter_words(text: str) -> str:
    """The question without its repeat, severity and category phrases."""
    for pattern in (_REPEAT_RE, _SEVERITY_RE, _CATEGORY_RE):
        text = pattern.sub(" ", text)
    return re.sub(r"\s{2,}", " ", text).strip()


# --- applications ---------------------------------------------------------------

# Common abbreviations engineers type; expanded before matching names.
APPLICATION_ALIASES = {
    "gce": "google compute engine", "gke": "google kubernetes engine",
    "gcs": "google cloud storage", "gcp": "google cloud", "aws": "amazon web services",
    "ec2": "amazon ec2", "ebs": "amazon ebs", "rds": "amazon rds", "elb": "elastic load balancing",
    "aks": "azure kubernetes service", "gh": "github", "k8s": "kubernetes",
}  # fmt: skip
_GENERIC_WORDS = {
    "the", "our", "platform", "service", "services", "system", "systems", "product",
    "products", "app", "application", "website", "site", "on", "record", "file", "we", "have",
    "any", "all", "every", "incidents", "incident", "outages", "outage",
}  # fmt: skip
# Words that point at other things, never part of what a name is: "other services".
_POINTING_WORDS = frozenset(
    {"other", "others", "another", "else", "same", "different", "remaining", "rest", "such"}
)
_LISTING_PATTERNS = [
    r"^(?:(?:what|which|any|list|show|find|get)\s+)?(?:me\s+)?(?:all\s+|every\s+|the\s+)?"
    r"(?:past\s+)?(?:incidents?|outages?)\s+(?:that\s+)?(?:have\s+|has\s+)?"
    r"(?:for|with|affecting|affected|impacted|impacting|hit|hitting|involving|of|on|in|at)\s+"
    r"(?P<app>.+)$",
    r"^(?:anything|any\s+incidents?|any\s+outages?)\s+(?:affecting|with|for|on|involving|in)\s+"
    r"(?P<app>.+)$",
    r"^has\s+(?P<app>.+?)\s+(?:had|seen)\s+any\b.*$",
    r"^(?:(?:show|list|get|find|give)\s+(?:me\s+)?)?(?:all\s+|every\s+|any\s+)?(?:the\s+)?"
    r"(?P<app>.+?)\s+(?:incidents?|outages?|failures?)\b(?:\s+(?:we\s+have\s+)?on\s+"
    r"(?:record|file))?(?:\s+we\s+have\s+on\s+file)?$",
]
_LISTING_RES = [re.compile(p, re.IGNORECASE) for p in _LISTING_PATTERNS]
_LEADING_RE = re.compile(r"^(?:please\s+)?(?:can\s+you\s+)?(?:show|list)\s+(?:me\s+)?", re.I)


def listing_subject(text: str) -> str | None:
    """The thing a listing question is about: "Incidents for Honeycomb" → "Honeycomb"."""
    cleaned = re.sub(r"[?!.]+$", "", text.strip()).strip()
    cleaned = _LEADING_RE.sub("", cleaned)
    for pattern in _LISTING_RES:
        match = pattern.match(cleaned)
        if match:
            subject = re.sub(r"\s+(?:on\s+record|we\s+have\s+on\s+file)$", "", match.group("app"))
            subject = subject.strip(" ,")
            if subject and len(subject.split()) <= 6:
                return subject
    return None


def _words(text: str) -> set[str]:
    """Words of a name, with dotted names both whole and split (GitHub.com), and
    hyphenated ones also without the hyphen ("e-mail" is "email")."""
    tokens = re.findall(r"[a-z0-9][a-z0-9.&'+-]*[a-z0-9]|[a-z0-9]", text.lower())
    split = {part for token in tokens for part in re.split(r"[.\-]", token) if part}
    unhyphenated = {token.replace("-", "") for token in tokens if "-" in token}
    return set(tokens) | split | unhyphenated


def application_terms(subject: str, aliases: dict[str, str] | None = None) -> list[str]:
    """Lower-case tokens to match, with aliases expanded and generic words dropped."""
    aliases = APPLICATION_ALIASES if aliases is None else aliases
    expanded = " ".join(aliases.get(t, t) for t in subject.lower().split())
    tokens = re.findall(r"[a-z0-9][a-z0-9.&'+-]*[a-z0-9]|[a-z0-9]", expanded)
    return [t for t in tokens if t not in _GENERIC_WORDS]


@dataclass(frozen=True)
class ApplicationEntry:
    """One known (impacted_application, company) pair."""

    application: str
    company: str = ""
    words: frozenset[str] = field(default_factory=frozenset)
    company_words: frozenset[str] = field(default_factory=frozenset)
    stems: frozenset[str] = field(default_factory=frozenset)  # "balanc" of "Balancing"
    head_words: frozenset[str] = field(default_factory=frozenset)  # outside the parentheses

    @classmethod
    def of(cls, application: str, company: str = "") -> ApplicationEntry:
        words = _words(application)
        stems = frozenset(word_stem(w) for w in words if w.isalpha() and len(w) >= 4)
        head = frozenset(_words(re.sub(r"\s*\(.*?\)", "", application)))
        return cls(application, company, frozenset(words), frozenset(_words(company)), stems, head)

    def has_word(self, term: str) -> bool:
        """A word of the name, as written or inflected otherwise ("load balancers")."""
        return (
            term in self.words
            or term.replace("-", "") in self.words
            or (len(term) >= 4 and word_stem(term) in self.stems)
        )


@dataclass(frozen=True)
class ApplicationMatch:
    applications: tuple[str, ...]
    how: str  # exact | partial


# Suites sold under one name that a catalog names product by product: people know
# "google workspace" is Gmail, Docs, Drive..., no incident name says so. Each: the
# suite's name, its vendor's word (a word of the owning companies' names) and its
# products.
_Family = tuple[re.Pattern[str], str, tuple[str, ...]]
PRODUCT_FAMILIES: tuple[_Family, ...] = (
    (
        re.compile(r"\b(?:g[ -]?suite|workspace)\b"),
        "google",
        ("gmail", "calendar", "drive", "docs", "sheets", "slides", "meet", "chat", "forms"),
    ),
    (
        re.compile(r"\b(?:(?:microsoft|office|ms)[ -]?365|[mo]365)\b"),
        "microsoft",
        ("outlook", "teams", "sharepoint", "onedrive"),
    ),
)
# Words beside a suite's name that leave it the whole suite ("google's workspace apps").
_FAMILY_WORDS = {"app", "apps", "suite", "tools", "products"}


def match_applications(
    subject: str, catalog: Sequence[ApplicationEntry]
) -> ApplicationMatch | None:
    """Known applications named by `subject`: exact names first, then by words;
    a product suite's name, its products too.

    By words, every term must be a word of the application or of its
    company, and at least one must name the application or the whole
    company: "github actions" matches "GitHub.com (Actions, API, ...)" of
    GitHub. A term that names some company must name this entry's company
    or its product outside parentheses ("elastic" of "AWS Elastic Load
    Balancing"), so "slack" does not match "incident.io (Slack app)".
    """
    return _matched(subject, _catalog_facts(tuple(catalog)))


def _matched(subject: str, facts: _CatalogFacts) -> ApplicationMatch | None:
    """`match_applications` on a catalog's facts (a mention search asks up to 21 runs)."""
    catalog = facts.entries
    wanted = subject.strip().lower()
    exact = list(facts.exact.get(wanted, ()))
    if not exact and " / " in wanted:
        return _any_of(wanted.split(" / "), facts)
    if not exact and (family := _family_named(wanted)) is not None:
        return _family_match(family, catalog)
    # An alias spells a name out ("elb" → "elastic load balancing"), but the
    # catalog also writes it as said ("AWS EC2 / EBS / ELB us-east-1"): both count.
    terms = _terms_naming_products(subject, facts)
    as_said = _terms_naming_products(subject, facts, aliases={})
    spellings = dict.fromkeys((tuple(terms), tuple(as_said)))
    # The company words of a spelling, once (each is a pass over the catalog).
    companies = {terms: _company_terms(terms, facts) for terms in spellings}
    partial = [
        e.application
        for terms in spellings
        for e in catalog
        if _entry_matches(e, list(terms), companies[terms], wanted)
    ]
    found = tuple(dict.fromkeys(exact + partial))
    if not found:
        return None
    if not exact:
        found = _without_others_components(found, terms, catalog)
        found = _the_vendors_own(found, terms, facts)
    found = _with_acronym_siblings(_with_other_names(found, facts), facts)
    if not exact:
        found = _with_coded_siblings(found, terms, facts)
    if not exact:
        found = _with_kinds_by_acronym(found, terms, facts)
    return ApplicationMatch(found, "exact" if exact else "partial")


# Rows of a catalog (indexes into its entries) by (word of the name, company).
_Carriers = dict[tuple[str, str], tuple[int, ...]]


@dataclass(frozen=True)
class _CatalogFacts:
    """What matching asks of a catalog on every call, worked out once per catalog:
    a question tries up to 21 runs of its words, each a pass over every entry (with
    names re-tokenised and a regular expression compiled per entry, ~3 ms a question)."""

    entries: tuple[ApplicationEntry, ...]
    owners: dict[str, str]  # application → company (the last entry's, as a dict keeps it)
    exact: dict[str, tuple[str, ...]]  # lower-case name → the names written so
    companies: tuple[str, ...]
    company_words: frozenset[str]  # every word of every company's name
    words_by_company: dict[str, frozenset[str]]
    name_pairs: frozenset[tuple[str, str]]
    carriers: _Carriers  # a word anywhere in the name ("ELB" of "EC2 / EBS / ELB")
    bracketed_carriers: _Carriers  # a word between "(" and ")" ("R2" of "(Workers, R2)")
    coded: tuple[tuple[int, str], ...]  # rows whose head is one product with a code, and it
    acronym_expansions: tuple[tuple[str, tuple[str, ...]], ...]
    # Words an everyday word may name alone as: a company's, or a name's first word's.
    alone_words: frozenset[str]
    mention_index: _MentionIndex


@lru_cache(maxsize=8)
def _catalog_facts(catalog: tuple[ApplicationEntry, ...]) -> _CatalogFacts:
    words_by_company = _words_by_company(catalog)
    return _CatalogFacts(
        entries=catalog,
        owners={e.application: e.company for e in catalog},
        exact=_exact_names(catalog),
        companies=tuple(words_by_company),
        company_words=frozenset(w for words in words_by_company.values() for w in words),
        words_by_company=words_by_company,
        name_pairs=_name_pairs(catalog),
        carriers=_carriers(catalog, _words_anywhere),
        bracketed_carriers=_carriers(catalog, _words_in_brackets),
        coded=_coded_rows(catalog),
        acronym_expansions=_acronym_expansions(catalog),
        alone_words=_alone_words(catalog),
        mention_index=_mention_index(catalog),
    )


def _words_by_company(catalog: tuple[ApplicationEntry, ...]) -> dict[str, frozenset[str]]:
    words: dict[str, frozenset[str]] = {}
    for e in catalog:
        words[e.company] = words.get(e.company, frozenset()) | e.company_words
    return words


def _alone_words(catalog: tuple[ApplicationEntry, ...]) -> frozenset[str]:
    first_words = {w for e in catalog for first in e.application.split()[:1] for w in _words(first)}
    return frozenset(w for e in catalog for w in e.company_words) | first_words


def _exact_names(catalog: tuple[ApplicationEntry, ...]) -> dict[str, tuple[str, ...]]:
    names: dict[str, tuple[str, ...]] = {}
    for e in catalog:
        names[e.application.lower()] = (*names.get(e.application.lower(), ()), e.application)
    return names


def _carriers(
    catalog: tuple[ApplicationEntry, ...], words_of: Callable[[str], set[str]]
) -> _Carriers:
    rows: dict[tuple[str, str], list[int]] = {}
    for row, e in enumerate(catalog):
        for word in words_of(e.application):
            rows.setdefault((word, e.company), []).append(row)
    return {key: tuple(found) for key, found in rows.items()}


def _words_anywhere(name: str) -> set[str]:
    r"""The words `\bWORD\b` finds in `name`: a word of letters and digits only
    matches there as a whole run of word characters."""
    return set(re.findall(r"\w+", name))


def _words_in_brackets(name: str) -> set[str]:
    r"""The words `\(.*\bWORD\b.*\)` finds: a "(" before and a ")" after them on
    their line (not necessarily one pair: "A (x) B7 (y)" counts B7)."""
    return {
        word.group()
        for line in name.split("\n")
        for word in re.finditer(r"\w+", line)
        if "(" in line[: word.start()] and ")" in line[word.end() :]
    }


def _coded_rows(catalog: tuple[ApplicationEntry, ...]) -> tuple[tuple[int, str], ...]:
    """Rows whose name outside its parentheses is one product (not "AWS EC2 / EBS /
    RDS") with one code ("R2" of "Cloudflare R2 object storage"), with that code."""
    coded = []
    for row, e in enumerate(catalog):
        head = re.sub(r"\s*\(.*?\)", "", e.application)
        own = re.findall(r"\b[A-Z]+[0-9]+\b", head)
        if len(own) == 1 and "/" not in head:
            coded.append((row, own[0]))
    return tuple(coded)


def _terms_naming_products(
    subject: str, facts: _CatalogFacts, aliases: dict[str, str] | None = None
) -> list[str]:
    """The subject's terms, with a generic word kept where it and its neighbour are
    two words of a catalog name ("app engine" of "(Cloud Run, App Engine)"): there it
    is part of the product's own name, not a word about any product. Beside a
    vendor's name, or when nothing has those words, it is generic after all."""
    aliases = APPLICATION_ALIASES if aliases is None else aliases
    terms = application_terms(subject, aliases)
    tokens = _MENTION_TOKEN_RE.findall(subject.lower())
    pairs = facts.name_pairs
    vendors = facts.company_words

    def names_product(first: str, second: str) -> bool:
        # A vendor's name with a generic word is still any of its products ("heroku
        # platform", "slack app"), however one of its entries is called.
        return (first, second) in pairs and not {first, second} & vendors

    kept = [
        t
        for i, t in enumerate(tokens)
        if t not in _GENERIC_WORDS
        or (i > 0 and names_product(tokens[i - 1], t))
        or (i + 1 < len(tokens) and names_product(t, tokens[i + 1]))
    ]
    if len(kept) == len([t for t in tokens if t not in _GENERIC_WORDS]):
        return terms
    if not any(all(e.has_word(t) or t in e.company_words for t in kept) for e in facts.entries):
        return terms
    return [w for t in kept for w in aliases.get(t, t).split()]


@lru_cache(maxsize=8)
def _name_pairs(catalog: tuple[ApplicationEntry, ...]) -> frozenset[tuple[str, str]]:
    """Every two neighbouring words of the catalog's names ("app", "engine")."""
    return frozenset(
        pair
        for e in catalog
        for part in re.split(r"[(),/]", e.application.lower())
        for pair in itertools.pairwise(_MENTION_TOKEN_RE.findall(part))
    )


def _without_others_components(
    found: tuple[str, ...], terms: list[str], catalog: Sequence[ApplicationEntry]
) -> tuple[str, ...]:
    """ "azure" is Microsoft's Azure: where some company's products carry the name in
    their own name, another company's entry that lists it only in parentheses
    ("trivago GitHub organization (Azure AD sync)") names a dependency, not the product.
    The owner's own entries that list it in parentheses stay (its outage hit it)."""
    entries = [e for e in catalog if e.application in found]
    owners = {e.company for e in entries if _names_in_head(e, terms)}
    if not owners:
        return found  # a component of everyone's ("postgres"): every entry listing it
    # One vendor's divisions are the vendor ("Google" of "Google Cloud"'s App Engine).
    vendors = {_vendor(c) for c in owners}
    kept = {
        e.application for e in entries if _vendor(e.company) in vendors or _names_in_head(e, terms)
    }
    # An entry that names another owner beside the product runs on that owner's
    # product ("Travis CI Linux builds on Google Compute Engine"): not one of it.
    runs_on = {
        e.application
        for e in entries
        if any(v in e.head_words for v in vendors - {_vendor(e.company)})
        and not vendors - {_vendor(e.company)} & e.company_words
    }
    return tuple(a for a in found if a in kept and a not in runs_on)


def _the_vendors_own(
    found: tuple[str, ...], terms: list[str], facts: _CatalogFacts
) -> tuple[str, ...]:
    """A vendor's name ("aws", "amazon") means its own entries: others' that mention
    it as what they run on ("Elastic Cloud (AWS eu-west-1)") are theirs."""
    companies = facts.owners
    named = {
        _vendor(company)
        for company in facts.companies
        if terms and terms == company.lower().split()[: len(terms)]
    }
    if not named or not any(_vendor(companies[a]) in named for a in found):
        return found
    return tuple(a for a in found if _vendor(companies[a]) in named)


def _vendor(company: str) -> str:
    """A company's first word, which its divisions share ("google" of "Google Cloud")."""
    words = company.lower().split()
    return words[0] if words else ""


def _names_in_head(entry: ApplicationEntry, terms: list[str]) -> bool:
    """Whether the terms that are no company word are words of the name outside its
    parentheses (inflected too: "balancers" of "Load Balancing")."""
    own = [t for t in terms if t not in entry.company_words]
    stems = {word_stem(w) for w in entry.head_words}
    return bool(own) and all(t in entry.head_words or word_stem(t) in stems for t in own)


def _family_named(wanted: str) -> _Family | None:
    """The suite `wanted` names as a whole ("google workspace", "office 365 apps");
    None when it names more ("workspace gmail")."""
    for family in PRODUCT_FAMILIES:
        pattern, vendor, _ = family
        if pattern.search(wanted):
            rest = set(application_terms(pattern.sub(" ", wanted))) - _FAMILY_WORDS - {vendor}
            return None if rest else family
    return None


def _family_match(family: _Family, catalog: Sequence[ApplicationEntry]) -> ApplicationMatch | None:
    """The vendor's entries that name the suite itself ("Workspace APIs") or any of
    its products."""
    pattern, vendor, products = family
    theirs = [e for e in catalog if vendor in e.company_words]
    itself = [e.application for e in theirs if pattern.search(e.application.lower())]
    named = [a for p in products if (m := match_applications(p, theirs)) for a in m.applications]
    found = tuple(dict.fromkeys(itself + named))
    return ApplicationMatch(found, "partial") if found else None


def _company_terms(terms: Sequence[str], facts: _CatalogFacts) -> set[str]:
    return {t for t in terms if t in facts.company_words}


def _any_of(names: Sequence[str], facts: _CatalogFacts) -> ApplicationMatch | None:
    """The applications any of `names` matches ("aws load balancers / elb / nlb"):
    other names of the first one's company's products, as `find_application_mention`
    writes them ("alb" of another company is not meant), and the products of any
    company a name names ("heroku / travis ci")."""
    named = [(name, m) for name in names if (m := _matched(name, facts)) is not None]
    if not named:
        return None
    matches = [m for _, m in named]
    owners = facts.owners
    first = {owners[a] for a in matches[0].applications}
    companies = _listed_companies(first, [(n, m.applications) for n, m in named], facts.entries)
    found = tuple(
        dict.fromkeys(a for m in matches for a in m.applications if owners[a] in companies)
    )
    return ApplicationMatch(found, "partial")


def _with_other_names(found: tuple[str, ...], facts: _CatalogFacts) -> tuple[str, ...]:
    """A name given as "A / B" says A and B are one product: the company's entries
    that name B ("Stack Exchange network (SQL Server)") are A's too."""
    companies = facts.owners
    aliases = {
        (part.strip().lower(), companies.get(name, ""))
        for name in found
        if _names_itself_twice(name)
        for part in re.sub(r"\s*\(.*?\)", "", name).split(" / ")
    }
    more = [
        e.application
        for e in facts.entries
        if aliases
        and any(
            alias in e.application.lower() and company == e.company for alias, company in aliases
        )
    ]
    return tuple(dict.fromkeys((*found, *more)))


def _with_acronym_siblings(found: tuple[str, ...], facts: _CatalogFacts) -> tuple[str, ...]:
    """A product's acronym names it too: "AWS Elastic Load Balancing us-east-1" is
    the ELB that "AWS EC2 / EBS / RDS / ELB us-east-1" lists, so "aws load
    balancers" finds both (within the company)."""
    acronyms = {
        (acronym, facts.owners.get(name, "")) for name in found for acronym in _head_acronyms(name)
    }
    return _with_carriers(found, acronyms, facts.carriers, facts)


@lru_cache(maxsize=4096)
def _head_acronyms(name: str) -> tuple[str, ...]:
    """The acronyms of a name outside its parentheses, as written ("ELB")."""
    return tuple(a.upper() for a, _ in _inner_acronyms(re.sub(r"\s*\(.*?\)", "", name)))


def _with_coded_siblings(
    found: tuple[str, ...], terms: list[str], facts: _CatalogFacts
) -> tuple[str, ...]:
    """A product's code in its own name ("R2" of "Cloudflare R2 object storage") names
    it where its company lists it in another entry's parentheses ("Cloudflare
    Access service tokens (Workers, R2, Images)"): that outage hit it too. Only an
    entry that is the product asked for, outside its parentheses, and one product
    (not "AWS EC2 / EBS / RDS"), says what its code is."""
    codes = {
        (code, entry.company)
        for row, code in facts.coded
        if (entry := facts.entries[row]).application in found and _names_in_head(entry, terms)
    }
    return _with_carriers(found, codes, facts.bracketed_carriers, facts)


def _with_kinds_by_acronym(
    found: tuple[str, ...], terms: list[str], facts: _CatalogFacts
) -> tuple[str, ...]:
    """Products of the same company that a catalog acronym says are of the kind asked
    for: "aws load balancers" is also the NLB that "Amazon DynamoDB (and EC2, NLB)"
    lists, because another name spells NLB out as "Network Load Balancer". The kind
    must end the spelt-out name: a network load balancer is a load balancer, not a
    network."""
    companies = {facts.owners.get(name, "") for name in found}
    company_words = {w for c in companies for w in facts.words_by_company.get(c, ())}
    kind = [word_stem(t) for t in terms if t not in company_words]
    acronyms = [
        acronym.upper()
        for acronym, stems in facts.acronym_expansions
        if kind and stems[-len(kind) :] == tuple(kind)
    ]
    pairs = {(acronym, company) for acronym in acronyms for company in companies}
    return _with_carriers(found, pairs, facts.carriers, facts)


def _with_carriers(
    found: tuple[str, ...], wanted: set[tuple[str, str]], carriers: _Carriers, facts: _CatalogFacts
) -> tuple[str, ...]:
    """`found` and, in catalog order, every entry of a company whose name carries a
    word said of that company: the company's other entries for the same product."""
    rows = sorted({row for key in wanted for row in carriers.get(key, ())})
    return tuple(dict.fromkeys((*found, *(facts.entries[row].application for row in rows))))


@lru_cache(maxsize=8)
def _acronym_expansions(
    catalog: tuple[ApplicationEntry, ...],
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Every acronym of the catalog's names with the stems of the words it stands for
    ("nlb", ("network", "load", "balanc"))."""
    names = sorted({e.application for e in catalog})
    runs = {pair for name in names for pair in _inner_acronyms(re.sub(r"[()]", ",", name))}
    return tuple(sorted((a, tuple(word_stem(w) for w in run.split())) for a, run in runs))


def _names_itself_twice(name: str) -> bool:
    """ "Stack Overflow / Stack Exchange network" is one product by two names;
    "AWS EC2 / EBS / RDS / ELB us-east-1" is a list of products (one-word items;
    a region or version is no word of a name)."""
    parts = re.sub(r"\s*\(.*?\)", "", name).split(" / ")
    return len(parts) >= 2 and all(len(_name_words(part)) >= 2 for part in parts)


def _name_words(part: str) -> list[str]:
    return [w for w in part.split() if not any(c.isdigit() for c in w)]


def _entry_matches(
    entry: ApplicationEntry, terms: list[str], company_terms: set[str], wanted: str
) -> bool:
    if not terms or not all(entry.has_word(t) or t in entry.company_words for t in terms):
        return False
    # Another company's name fits only as a word of this product's own name, with its
    # own company named too: "aws elastic load balancing", not "elastic" alone, "google
    # compute engine" for Travis CI's builds on it, or "slack" for "incident.io (Slack app)".
    foreign = [t for t in company_terms if t not in entry.company_words]
    if any(t not in entry.head_words for t in foreign):
        return False
    if foreign and not (company_terms - set(foreign)):
        return False
    # The company's name, or its opening words ("amazon" of "Amazon Web Services"):
    # the vendor's own entries, "AWS EC2" as much as "Amazon S3".
    company = entry.company.lower().split()
    names_company = entry.company.lower() == wanted or terms == company[: len(terms)]
    return names_company or any(entry.has_word(t) for t in terms)


# --- application mentions in free text ---------------------------------------------

# Words of questions about incidents, never part of a product's name.
MENTION_FILLER = frozenset(
    {
        "a", "about", "across", "affect", "affected", "affecting", "after", "all", "also", "an",
        "and", "any", "anything", "are", "as", "at", "be", "been", "before", "broke", "broken",
        "by",
        # How incidents relate to what they name: "incidents involving BigQuery".
        "concerning", "hitting", "impacted", "impacting", "involved", "involving", "regarding",
        "can", "could", "did", "do", "does", "down", "downtime", "ever", "every", "everything",
        "failure", "failures", "for", "from", "get", "give", "go", "got", "had", "happen",
        "happened", "happening", "has", "have", "history", "hit", "hits", "how", "i", "in",
        "incident", "incidents", "info", "is", "issue", "issues", "it", "its", "know", "last",
        "lately", "let", "list", "listing", "look", "me", "more", "much", "my", "need", "of", "on",
        "or", "our", "out", "outage", "outages", "over", "overview", "past", "please", "problem",
        "problems", "pull", "recent", "recently", "record", "records", "related", "report",
        "reports", "see", "seen", "show", "since", "so", "some", "summary", "tell", "than", "that",
        "the", "their", "them", "there", "these", "they", "thing", "things", "this", "those",
        "timeline", "times", "to", "up", "us", "was", "we", "went", "were", "what", "whats", "when",
        "where", "which", "who", "why", "will", "with", "would", "wrong", "yet", "you", "your",
    }
)  # fmt: skip
_MENTION_TOKEN_RE = re.compile(r"[a-z0-9][a-z0-9.&'+-]*[a-z0-9]|[a-z0-9]")
_ACRONYM_SKIP = {"of", "the", "and", "for", "&"}
FUZZY_CUTOFF = 85  # rapidfuzz ratio: "cloudfare" → "cloudflare", not "pages" → "packages"
# A catalog word at least this long written as two ("cloud flare"): shorter ones are
# too often two words of a question that happen to spell one ("on" + "ce").
JOINED_MIN_LENGTH = 6
FUZZY_MIN_LENGTH = 5  # shorter words are too often other words ("slow" is not "SLO")


@dataclass(frozen=True)
class ApplicationMention:
    """The words of a question that name known applications, and what they match."""

    subject: str
    match: ApplicationMatch
    fuzzy: bool = False
    said: tuple[str, ...] = ()  # the question's own words that named it, as typed

    @property
    def names_a_component(self) -> bool:
        """Only named inside the parentheses of the matches ("Postgres" of
        "incident.io on GKE (Postgres, Memcached)"): a technology, not a product."""
        terms = application_terms(self.subject)
        heads = [_head_words(a) for a in self.match.applications]
        return all(not any(t in head for t in terms) for head in heads)


@lru_cache(maxsize=4096)
def _head_words(name: str) -> frozenset[str]:
    """The words of a name outside its parentheses (asked of the same few names often)."""
    return frozenset(_words(re.sub(r"\s*\(.*?\)", "", name)))


def normalise_mention_text(text: str) -> str:
    """Lower case; "GitHub's Pages" → "github pages", "we've" → "we"; "foo dot com" → "foo.com",
    "incident dot io" → "incident.io"."""
    text = re.sub(r"(\w)['\u2019](?:s|ve|re|ll|d)\b", r"\1", text.lower())  # "we've" → "we"
    return re.sub(r"(?<=\w)\s+dot\s+(?=[a-z]{2,6}\b)", ".", text)


@dataclass(frozen=True)
class _MentionIndex:
    vocabulary: tuple[str, ...]
    words: frozenset[str]
    acronyms: dict[str, str]
    stems: dict[str, str]  # English stem → the catalog's word ("balanc" → "balancing")
    joined: dict[str, str]  # two name words written as one → both ("stackoverflow")
    spelt_out: frozenset[str]  # the catalog's own acronyms, for "elastic block store" → EBS
    # Typo corrections found so far (None: no close word), kept with the index they
    # were found in: the fuzzy search over the vocabulary cost ~25 us a word, for
    # every content word of every question (the same few words, again and again).
    fuzzy_found: dict[str, str | None] = field(default_factory=dict, compare=False)


FUZZY_FOUND_MAX = 4096  # words kept per index before it starts afresh


_STEMMER = snowballstemmer.stemmer("english")


@lru_cache(maxsize=65536)
def word_stem(word: str) -> str:
    """The English (Snowball) stem PostgreSQL's full text uses too (kept per word: a
    mention search asks for the same few words' stems against every catalog entry)."""
    return str(_STEMMER.stemWord(word))


@lru_cache(maxsize=4)
def _mention_index(catalog: tuple[ApplicationEntry, ...]) -> _MentionIndex:
    """Words of every name, acronyms of multi-word names ("GCE", "AWS"), their
    stems, names written joined ("stackoverflow") and the names' own acronyms."""
    words = {w for e in catalog for w in (*e.words, *e.company_words)}
    acronyms: dict[str, str] = {}
    for name in sorted({n for e in catalog for n in (e.application, e.company)}):
        base = re.sub(r"\s*\(.*?\)", "", name)
        parts = [w for w in re.findall(r"[A-Za-z0-9]+", base) if w.lower() not in _ACRONYM_SKIP]
        named = [("".join(p[0] for p in parts).lower(), base.lower())] if len(parts) >= 2 else []
        camel = _camel_acronyms(base)
        for acronym, run in named + _inner_acronyms(re.sub(r"[()]", ",", name)) + camel:
            # "air" or "cast" in a question is a word, not an abbreviation.
            if acronym not in words and not is_common_word(acronym):
                acronyms.setdefault(acronym, run)
    vocabulary = tuple(sorted(words))
    stems = {word_stem(w): w for w in reversed(vocabulary) if w.isalpha() and len(w) >= 4}
    return _MentionIndex(
        vocabulary, frozenset(words), acronyms, stems, _joined_names(catalog, words),
        _own_acronyms(catalog),
    )  # fmt: skip


def _joined_names(catalog: tuple[ApplicationEntry, ...], words: set[str]) -> dict[str, str]:
    """Two consecutive words of a name as people also write them, as one word or
    hyphenated: "stackoverflow", "pagerduty", "travis-ci". Only where the joined word
    is no word of the catalog itself."""
    joined: dict[str, str] = {}
    for name in sorted({n for e in catalog for n in (e.application, e.company)}):
        parts = re.findall(r"[a-z]{2,}", name.lower())
        for first, second in itertools.pairwise(parts):
            for together in (first + second, f"{first}-{second}"):
                if together not in words:
                    joined.setdefault(together, f"{first} {second}")
    return joined


def _own_acronyms(catalog: tuple[ApplicationEntry, ...]) -> frozenset[str]:
    """Words a catalog name writes in capitals ("EBS", "GFE", "NLB"): people
    spell them out too ("elastic block store")."""
    names = {n for e in catalog for n in (e.application, e.company)}
    return frozenset(w.lower() for n in names for w in re.findall(r"\b[A-Z]{3,5}\b", n))


def _camel_acronyms(name: str) -> list[tuple[str, str]]:
    """The capitals of one word written in camel case ("BigQuery" → BQ, "DynamoDB" →
    DDB), as people abbreviate it."""
    found = []
    for word in re.findall(r"\b[A-Z][a-z]+(?:[A-Z][A-Za-z]*)+\b", name):
        capitals = "".join(c for c in word if c.isupper()).lower()
        if len(capitals) >= 2:
            found.append((capitals, word.lower()))
    return found


def _inner_acronyms(name: str) -> list[tuple[str, str]]:
    """Acronyms of the capitalised runs inside a name, each with its words
    (acronym first):
    "AWS Elastic Load Balancing us-east-1" → ELB; "Google Cloud Load
    Balancing - Cloud Run" → GCLB, CLB. People abbreviate the product, not
    the regions and qualifiers a catalog name carries."""
    found = []
    for segment in re.split(r"\s+[-\u2013\u2014]\s+|,", name):
        capitalised = re.findall(r"\b[A-Z][A-Za-z0-9]*", segment)
        for size in range(2, min(len(capitalised), 4) + 1):
            for start in range(len(capitalised) - size + 1):
                run = capitalised[start : start + size]
                if " ".join(run) in segment:  # consecutive words, not scattered
                    words = " ".join(run).lower()
                    found.append(("".join(w[0] for w in run).lower(), words))
                    # Capitals inside a word count too: "GitHub Actions" is "GHA".
                    capitals = "".join(c for w in run for c in w if c.isupper()).lower()
                    found.append((capitals, words))
    return [(acronym, run) for acronym, run in found if len(acronym) >= 3]


def _corrected(token: str, index: _MentionIndex) -> tuple[str, bool]:
    """A token as the catalog spells it: acronyms expanded, typos and plurals fixed."""
    if token in index.words or token in APPLICATION_ALIASES:
        return token, False
    if token in index.acronyms:
        return index.acronyms[token], False
    singular = token.removesuffix("s")
    if singular in index.words:
        return singular, False
    if token in index.joined:
        return index.joined[token], False
    stemmed = index.stems.get(word_stem(token)) if len(token) >= 4 else None
    if stemmed is not None:  # "balancers" of "Load Balancing", "networks" of "Network"
        return stemmed, False
    if len(token) >= FUZZY_MIN_LENGTH:
        found = _fuzzy_found(token, index)
        if found is not None:
            return found, True
    return token, False


def _fuzzy_found(token: str, index: _MentionIndex) -> str | None:
    """The vocabulary's word closest to `token`, if close enough."""
    if token not in index.fuzzy_found:
        from rapidfuzz import fuzz, process  # C extension; loaded on first fuzzy need

        found = process.extractOne(token, index.vocabulary, scorer=fuzz.ratio,
                                   score_cutoff=FUZZY_CUTOFF)  # fmt: skip
        if len(index.fuzzy_found) >= FUZZY_FOUND_MAX:
            index.fuzzy_found.clear()
        index.fuzzy_found[token] = None if found is None else str(found[0])
    return index.fuzzy_found[token]


def _may_name(word: str, index: _MentionIndex) -> bool:
    """Whether `word` (as corrected) can be part of a catalog name."""
    terms = application_terms(word) or [word]
    return all(t.replace("-", "") in index.words or t in _GENERIC_WORDS for t in terms)


def _may_name_alone(word: str, facts: _CatalogFacts, known: frozenset[str] = frozenset()) -> bool:
    """Whether one word can be a whole mention. Not a category ("dns"), a generic word or
    a letter; and an everyday word ("new", "customers") only as a company's name or the
    first word of an application's ("Slack", "Fastly"), not from inside one ("India NEW
    power grid", "Dyn DNS (and customers such as …)") unless it is `known` to name one."""
    if word in CATEGORY_WORDS or word in _GENERIC_WORDS or len(word) < 2:
        return False
    if word in known or not _is_everyday(word):
        return True
    return word in facts.alone_words


def _is_everyday(word: str) -> bool:
    """An English word, plurals ("alerts") and hyphenated compounds ("on-call") too."""
    parts = word.split("-")
    return all(is_common_word(p) or is_common_word(p.removesuffix("s")) for p in parts)


def find_application_mention(
    text: str, catalog: Sequence[ApplicationEntry]
) -> ApplicationMention | None:
    """The longest run of the question's content words that names known applications.

    Filler words are dropped, tokens are spelt as the catalog spells them
    (acronyms, plurals, typos by rapidfuzz), then runs are tried longest and
    earliest first against `match_applications`. A lone category word
    ("dns", "database") is a category, not an application.
    """
    if not catalog:
        return None
    facts = _catalog_facts(tuple(catalog))
    whole = _mention_in(text, facts, _proper_names(text, facts))
    return whole and _with_alternatives(text, whole, facts)


# A capitalised word inside a sentence: "Anything affecting Lambda?", "did Pages break?".
_PROPER_RE = re.compile(r"(?<![.?!]\s)(?<!^)(?<![\w'])[A-Z][a-z]{2,}\b")


def _proper_names(text: str, facts: _CatalogFacts) -> frozenset[str]:
    """Everyday words written as names ("Lambda", "Pages") that a catalog name has:
    they may name an application alone, as "lambda" in lower case may not."""
    said = {m.group(0).lower() for m in _PROPER_RE.finditer(text.strip())}
    return frozenset(said & facts.mention_index.words) - _GENERIC_WORDS


# Names given as alternatives or listed together: "aws load balancers (elb/nlb)", "GCLB
# or GFE", "codespaces and copilot", "gmail, drive, docs". A "&" or "+" only between
# spaces: "AT&T" and "Google+" are names.
_ALTERNATIVES_RE = re.compile(r"\s*[/,]\s*|\s*[()]\s*|\s+(?:or|and|[&+])\s+", re.IGNORECASE)


def _with_alternatives(
    text: str, whole: ApplicationMention, facts: _CatalogFacts
) -> ApplicationMention:
    """Every name the question gives as an alternative of the same company's
    product, not only what all their words name together (one entry, if any)."""
    parts = [p for p in _ALTERNATIVES_RE.split(text) if p and p.strip()]
    if len(parts) < 2:
        return whole
    catalog = facts.entries
    companies = {e.company for e in catalog if e.application in whole.match.applications}
    # Beside a product of theirs, an everyday word names another ("github actions and pages").
    their_words = frozenset(w for e in catalog if e.company in companies for w in e.words)
    named = [m for part in parts if (m := _mention_in(part, facts, their_words)) is not None]
    listed = [(m.subject, m.match.applications) for m in named]
    companies = _listed_companies(companies, listed, catalog)
    ours = {e.application for e in catalog if e.company in companies}
    found = [
        m
        for m in named
        if ours.intersection(m.match.applications) and not _qualifies_another(m, named, facts)
    ]
    applications = tuple(dict.fromkeys(a for m in found for a in m.match.applications if a in ours))
    if len(found) < 2 or set(applications) <= set(whole.match.applications):
        return whole
    return ApplicationMention(
        " / ".join(m.subject for m in found),
        ApplicationMatch(applications, "partial"),
        any(m.fuzzy for m in found),
        tuple(w for m in found for w in m.said),
    )


def names_only_a_company(mention: ApplicationMention, catalog: Sequence[ApplicationEntry]) -> bool:
    """ "Mozilla outages": the words name a company (its applications may not say it)."""
    return _names_only_a_company(mention, _catalog_facts(tuple(catalog)))


def _names_only_a_company(mention: ApplicationMention, facts: _CatalogFacts) -> bool:
    terms = application_terms(mention.subject)
    return bool(terms) and all(t in facts.company_words for t in terms)


def _qualifies_another(
    mention: ApplicationMention,
    named: list[ApplicationMention],
    facts: _CatalogFacts,
) -> bool:
    """ "queue (aws side)": a company named beside one of its products qualifies that
    product; it is no alternative. Beside another company's ("heroku and travis ci")
    it is one."""
    if not _names_only_a_company(mention, facts):
        return False
    owners = facts.owners
    its = {owners[a] for a in mention.match.applications}
    return any(
        not _names_only_a_company(other, facts)
        and its.intersection(owners[a] for a in other.match.applications)
        for other in named
        if other is not mention
    )


def _listed_companies(
    companies: set[str],
    listed: Sequence[tuple[str, Sequence[str]]],
    catalog: Sequence[ApplicationEntry],
) -> set[str]:
    """`companies` and those a list of names adds (each name with what it matched).
    A name adds another company when it names that company ("heroku and travis ci"),
    not by a product's name ("alb" of another cloud), and only when it is no word of
    the companies' so far: "npm" beside "github packages" is GitHub's npm registry."""
    owners = {e.application: e.company for e in catalog}
    found = set(companies)
    for subject, applications in listed:
        terms = set(application_terms(subject))
        theirs = {w for e in catalog if e.company in found for w in e.words}
        if not terms & theirs:
            found |= {
                owners[a]
                for a in applications
                if any(terms & e.company_words for e in catalog if e.application == a)
            }
    return found


def _mention_in(
    text: str, facts: _CatalogFacts, known: frozenset[str] = frozenset()
) -> ApplicationMention | None:
    """The longest run of `text`'s content words that names applications; a word of
    `known` may name one alone even if it is an everyday word."""
    index = facts.mention_index
    tokens = [t.strip(".'-") for t in _MENTION_TOKEN_RE.findall(normalise_mention_text(text))]
    tokens = _host_labels(tokens, index)
    spaced: dict[str, str] = {}
    content = [t for t in _dotted(tokens, index, spaced) if t and t not in MENTION_FILLER]
    spelt = _spelt(content, index)
    # Asked once per word, not once per run it is in (21 runs of 6 words).
    nameable = [_may_name(word.word, index) for word in spelt]
    for size in range(min(len(spelt), 6), 0, -1):
        for start in range(len(spelt) - size + 1):
            run = spelt[start : start + size]
            if not all(nameable[start : start + size]):
                continue  # a word no name has: no entry can match (and matching costs)
            subject = " ".join(word.word for word in run)
            if size == 1 and not _may_name_alone(subject, facts, known):
                continue
            if all(w.word in _GENERIC_WORDS | _POINTING_WORDS for w in run):
                continue  # "which other services were hit?" names none, whatever a name says
            match = _matched(subject, facts)
            if match is not None:
                said = tuple(spaced.get(word.said, word.said) for word in run)
                return ApplicationMention(subject, match, any(w.fuzzy for w in run), said)
    return None


# A host name's labels name what it serves ("api.stripe.com", "app.circleci.com",
# "dynamodb.us-east-1.amazonaws.com"); its top-level domain and "www" name nothing.
_HOST_RE = re.compile(r"[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:com|io|net|org|co|dev|app|cloud|ai)")
_HOST_NOISE = frozenset({"www", "com", "io", "net", "org", "co", "dev", "app", "cloud", "ai"})


def _host_labels(tokens: list[str], index: _MentionIndex) -> list[str]:
    """Each host name the catalog does not spell as it is ("incident.io" it does)
    as its labels."""
    out: list[str] = []
    for token in tokens:
        out.extend([token] if token in index.words else host_labels(token))
    return out


def host_labels(token: str) -> list[str]:
    """ "api.stripe.com" → ["api", "stripe"]; a word that is no host name as it is."""
    if not _HOST_RE.fullmatch(token):
        return [token]
    return [label for label in token.split(".") if label not in _HOST_NOISE]


def _dotted(tokens: list[str], index: _MentionIndex, spaced: dict[str, str]) -> list[str]:
    """Two words that are a catalog name with its dot ("incident io" of "incident.io")
    are that name where one is a question's word ("incident") that would be dropped;
    elsewhere both words name it already. `spaced` gets each such name as typed."""
    out: list[str] = []
    start = 0
    while start < len(tokens):
        two = tokens[start : start + 2]
        pair = ".".join(two)
        if len(two) == 2 and pair in index.words and set(two) & MENTION_FILLER:
            spaced[pair] = " ".join(two)
            out.append(pair)
            start += 2
        else:
            out.append(tokens[start])
            start += 1
    return out


@dataclass(frozen=True)
class _SpeltWord:
    said: str  # as typed (one word, or the words an acronym was spelt out in)
    word: str  # as the catalog spells it
    fuzzy: bool = False


def _spelt(content: list[str], index: _MentionIndex) -> list[_SpeltWord]:
    """The question's content words as the catalog spells them; a catalog
    acronym spelt out ("elastic block store") becomes the acronym, and a name
    written in two words ("pager duty", "git lab") the one word."""
    spelt: list[_SpeltWord] = []
    start = 0
    while start < len(content):
        joined = "".join(content[start : start + 2])
        if start + 1 < len(content) and len(joined) >= JOINED_MIN_LENGTH and joined in index.words:
            spelt.append(_SpeltWord(" ".join(content[start : start + 2]), joined))
            start += 2
            continue
        size = _spelt_out_size(content, start, index)
        if size:
            run = content[start : start + size]
            spelt.append(_SpeltWord(" ".join(run), "".join(w[0] for w in run)))
            start += size
            continue
        word, fuzzy = _corrected(content[start], index)
        spelt.append(_SpeltWord(content[start], word, fuzzy))
        start += 1
    return spelt


def _spelt_out_size(content: list[str], start: int, index: _MentionIndex) -> int:
    """How many words from `start` spell out one of the catalog's acronyms (0: none)."""
    for size in (4, 3):
        run = content[start : start + size]
        words = len(run) == size and all(w.isalpha() and len(w) >= 3 for w in run)
        if words and "".join(w[0] for w in run) in index.spelt_out:
            return size
    return 0
