#!/usr/bin/env python
"""Time-window phrasings: the hand rules, dateparser alone, and both in order.

The phrasings are ours (written for this bench, not taken from any evaluation
set), each with the window a person means, relative to a fixed day. A parser
is right when its start and end are both within TOLERANCE_DAYS of that
window (a month counted as 30 days is still "the last month"). dateparser
finds dates, not windows, so "dateparser alone" takes the first date that
`search_dates` finds as the start and today as the end, which is how it
would be used for a window.

Usage: python bench/window_parsers.py [--failures]
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from incidents import query_parsing as qp

TODAY = dt.date(2026, 11, 24)  # a Tuesday
TOLERANCE_DAYS = 2
D = dt.date
Window = tuple[dt.date | None, dt.date | None]

PHRASES: list[tuple[str, Window]] = [
    ("outages in the last 30 days", (D(2026, 10, 25), TODAY)),
    ("anything break in the past fortnight?", (D(2026, 11, 10), TODAY)),
    ("what broke since Monday", (D(2026, 11, 23), TODAY)),
    ("incidents since the start of the month", (D(2026, 11, 1), TODAY)),
    ("dns problems this year", (D(2026, 1, 1), TODAY)),
    ("payment errors since May", (D(2026, 5, 1), TODAY)),
    ("cert expiries in 2023", (D(2023, 1, 1), D(2023, 12, 31))),
    ("what went wrong over the summer", (D(2026, 6, 1), D(2026, 8, 31))),
    ("checkout timeouts (past 90 days)", (D(2026, 8, 26), TODAY)),
    ("yesterday's incidents", (D(2026, 11, 23), D(2026, 11, 23))),
    ("between March and June 2025", (D(2025, 3, 1), D(2025, 6, 30))),
    ("since March 3rd", (D(2026, 3, 3), TODAY)),
    ("database issues in Q1 2025", (D(2025, 1, 1), D(2025, 3, 31))),
    ("during 2019", (D(2019, 1, 1), D(2019, 12, 31))),
    ("everything since 2024", (D(2024, 1, 1), TODAY)),
    ("anything before 2010", (None, D(2009, 12, 31))),
    ("what happened last week", (D(2026, 11, 17), TODAY)),
    ("over the past couple of weeks", (D(2026, 11, 10), TODAY)),
    ("in the last 48 hours", (D(2026, 11, 22), TODAY)),
    ("outages this month", (D(2026, 11, 1), TODAY)),
    ("so far this year", (D(2026, 1, 1), TODAY)),
    ("since the beginning of the year", (D(2026, 1, 1), TODAY)),
    ("incidents in October", (D(2026, 10, 1), D(2026, 10, 31))),
    ("since 1 Sep", (D(2026, 9, 1), TODAY)),
    ("since 2025-02-01", (D(2025, 2, 1), TODAY)),
    ("in the first half of 2025", (D(2025, 1, 1), D(2025, 6, 30))),
    ("over the winter", (D(2025, 12, 1), D(2026, 2, 28))),
    ("these past few days", (D(2026, 11, 21), TODAY)),
    ("since last Friday", (D(2026, 11, 20), TODAY)),
    ("over the last six months", (D(2026, 5, 28), TODAY)),
    ("in the past year", (D(2025, 11, 24), TODAY)),
    ("anything recently?", (D(2026, 10, 25), TODAY)),
    ("since Christmas", (D(2025, 12, 25), TODAY)),
    ("in spring 2024", (D(2024, 3, 1), D(2024, 5, 31))),
    ("last night", (D(2026, 11, 23), D(2026, 11, 23))),
    ("the past 3 months", (D(2026, 8, 26), TODAY)),
    ("since Nov 2", (D(2026, 11, 2), TODAY)),
    ("after June 2025", (D(2025, 7, 1), TODAY)),
    ("any sev1s in the previous 60 days", (D(2026, 9, 25), TODAY)),
    ("from 12 August", (D(2026, 8, 12), TODAY)),
]


def hand_rules(text: str) -> Window | None:
    """The shipped parser (its rules, and dateparser for a date phrase after "since")."""
    window, _ = qp.parse_time_window(text, TODAY)
    return (window.start, window.end) if window else None


def dateparser_alone(text: str) -> Window | None:
    from dateparser.search import search_dates  # deferred, as in query_parsing: ~0.3 s

    base = dt.datetime.combine(TODAY, dt.time(12), tzinfo=dt.UTC)
    settings = {"RELATIVE_BASE": base, "PREFER_DATES_FROM": "past"}
    found = search_dates(text, languages=["en"], settings=settings)  # type: ignore[arg-type]
    return (found[0][1].date(), TODAY) if found else None


def _close(got: dt.date | None, wanted: dt.date | None) -> bool:
    if got is None or wanted is None:
        return got is wanted
    return abs((got - wanted).days) <= TOLERANCE_DAYS


def right(found: Window | None, wanted: Window) -> bool:
    return found is not None and _close(found[0], wanted[0]) and _close(found[1], wanted[1])


def measure(name: str, parser: Callable[[str], Window | None], show: bool) -> None:
    parser(PHRASES[0][0])  # the first call imports dateparser
    started = time.perf_counter()
    results = [(text, wanted, parser(text)) for text, wanted in PHRASES]
    per_phrase = (time.perf_counter() - started) / len(PHRASES) * 1000
    correct = sum(right(found, wanted) for _, wanted, found in results)
    print(f"{name:<18} {correct:>3} / {len(PHRASES)}  {per_phrase:7.2f} ms a phrase")
    for text, wanted, found in results if show else []:
        if not right(found, wanted):
            print(f"    {text!r}: wanted {wanted}, got {found}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--failures", action="store_true", help="list the phrases each misses")
    show = parser.parse_args().failures
    print(f"{len(PHRASES)} window phrasings, today {TODAY}, tolerance {TOLERANCE_DAYS} days")
    measure("hand rules", hand_rules, show)
    measure("dateparser alone", dateparser_alone, show)


if __name__ == "__main__":
    main()
