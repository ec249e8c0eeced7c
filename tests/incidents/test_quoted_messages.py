"""A message quoted whole (a customer's e-mail, a chat line forwarded by support)
tells a story: its times are not the asker's window."""

import datetime as dt

import pytest

from incidents import query_parsing as qp

TODAY = dt.date(2026, 3, 1)


@pytest.mark.parametrize(
    "text",
    [
        "Forwarded from support: 'Hi, I bought a plan last month and today I've been charged "
        "four times for it.' Two other customers say the same.",
        'A merchant writes: "since Monday none of our refunds go through, please help". Seen this?',
        "ticket says \u201cour dashboard has been blank since yesterday evening\u201d, any idea?",
    ],
)
def test_times_inside_a_quoted_message_are_no_window(text: str) -> None:
    assert qp.parse_time_window(text, TODAY) == (None, text)


@pytest.mark.parametrize(
    ("text", "label"),
    [
        # The asker's own window beside a quoted message still counts...
        ('customer wrote "the page shows nothing at all" - what broke last week?', "last 7 days"),
        # ...a quoted name or title is no message...
        ("is the 'since Monday' filter of the report broken?", "since Monday 23 February"),
        # ...and a question quoted whole is still the question.
        ('"any incidents last week?"', "last 7 days"),
    ],
)
def test_the_askers_own_window_still_counts(text: str, label: str) -> None:
    window, _ = qp.parse_time_window(text, TODAY)
    assert window is not None and window.label == label


def test_a_long_question_full_of_apostrophes_keeps_its_window() -> None:
    """Many opening marks that never close (a scan, not a lazy match from each):
    nothing is blanked, and the window after them is still found."""
    text = "logs show " + "'err " * 1500 + "outage in the last 3 weeks"
    window, _ = qp.parse_time_window(text, TODAY)
    assert window is not None and window.label == "last 21 days"


def test_a_quote_closed_by_its_own_mark_too_soon_opens_nothing() -> None:
    # 'ok' closes after two characters: a word in quotes, not a message, so the
    # next mark opens the message whose window is the story's.
    text = "he said 'ok' then wrote 'we were down since yesterday for everyone' - last week?"
    window, _ = qp.parse_time_window(text, TODAY)
    assert window is not None and window.label == "last 7 days"
