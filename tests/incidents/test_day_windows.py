"""Windows bounded to the day ("between 2025-09-05 and 2025-12-04", "before
2025-12-05"), the form the copilot writes when it places one incident against
another in time; people type them too."""

import datetime as dt

import pytest

from incidents import query_parsing as qp

TODAY = dt.date(2026, 1, 10)


@pytest.mark.parametrize(
    ("text", "start", "end", "rest"),
    [
        ("dns failures between 2025-09-05 and 2025-12-04", dt.date(2025, 9, 5),
         dt.date(2025, 12, 4), "dns failures"),
        ("checkout errors from March 3 to March 10", dt.date(2025, 3, 3), dt.date(2025, 3, 10),
         "checkout errors"),
        ("between 3 May 2024 and 9 May 2024, any cert expiry?", dt.date(2024, 5, 3),
         dt.date(2024, 5, 9), ", any cert expiry?"),
        ("outages before 2025-12-05", None, dt.date(2025, 12, 4), "outages"),
        ("anything until June 12th, 2024", None, dt.date(2024, 6, 12), "anything"),
        ("queue backlog prior to 12/01/2023", None, dt.date(2023, 11, 30), "queue backlog"),
    ],
)  # fmt: skip
def test_day_bounds_become_the_window(
    text: str, start: dt.date | None, end: dt.date, rest: str
) -> None:
    window, left = qp.parse_time_window(text, TODAY)
    assert window is not None
    assert (window.start, window.end) == (start, end)
    assert left == rest


@pytest.mark.parametrize(
    "text",
    [
        "errors before 2.1 upgrade",  # a version, not a day
        "what changed before 10.4 shipped",
        "between 2025-12-04 and 2025-09-05 outages",  # ends before it starts
    ],
)
def test_numbers_that_are_no_day_leave_no_window(text: str) -> None:
    assert qp.parse_time_window(text, TODAY) == (None, text)
