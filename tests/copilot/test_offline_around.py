"""Another incident placed in time against the one in focus: "the one before
that", "anything else the same day?", "a few weeks later?"."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from copilot.chat_models.offline.around import around_focus, places_another_in_time
from copilot.chat_models.offline.follow_ups import follow_up_kind
from copilot.chat_models.offline.state import ConversationState, Remembered
from copilot.chat_models.offline.writing import write_answer
from copilot.services import conversation_create
from tests.copilot.test_offline_understanding import ask, done_of, tools_of
from tests.copilot.test_offline_writing import POOL, Row, search
from tests.factories import incident_row, incidents_import

FOCUS = Remembered("INC-2025-06-10-001", "Queue workers stalled", "Jobs", "2025-06-10")


@pytest.mark.parametrize(
    ("question", "start", "end"),
    [
        ("and the incident before that one?", None, dt.date(2025, 6, 9)),
        ("anything like it a few weeks earlier?", dt.date(2025, 4, 26), dt.date(2025, 6, 9)),
        ("was there another outage shortly before?", dt.date(2025, 3, 10), dt.date(2025, 6, 9)),
        ("did something else fail the same day?", dt.date(2025, 6, 9), dt.date(2025, 6, 11)),
        ("any other incidents that week", dt.date(2025, 6, 3), dt.date(2025, 6, 17)),
        ("one a month later at the same vendor?", dt.date(2025, 6, 11), dt.date(2025, 7, 25)),
        ("were there others earlier that year?", dt.date(2025, 1, 1), dt.date(2025, 6, 10)),
    ],
)
def test_the_window_is_placed_against_the_focus_date(
    question: str, start: dt.date | None, end: dt.date
) -> None:
    around = around_focus(question, FOCUS)
    assert around is not None
    assert (around.start, around.end) == (start, end)


@pytest.mark.parametrize(
    "question",
    [
        "what happened right before that?",  # a moment of this incident
        "who was paged that day?",
        "what did they deploy just before it broke?",
        "has this happened before?",  # any time before: a plain search, as before
    ],
)
def test_a_moment_of_the_same_incident_is_no_other_incident(question: str) -> None:
    assert not places_another_in_time(question)
    assert around_focus(question, FOCUS) is None


EARLY = Row(
    "INC-2025-09-20-001", "Checkout latency from slow pool", occurred_at=dt.date(2025, 9, 20)
)
LONG_BEFORE = Row("INC-2023-01-04-001", "Checkout pool exhausted", occurred_at=dt.date(2023, 1, 4))
STATE = ConversationState(
    (Remembered(POOL.incident_id, POOL.title, POOL.impacted_application, "2025-10-02"),),
    "Checkout is slow",
)


def test_the_answer_keeps_only_incidents_inside_the_window() -> None:
    found = search(POOL, LONG_BEFORE, EARLY)
    answer = write_answer("was there another one like it shortly before?", found, STATE)
    assert answer.startswith(
        "The closest match in the 92 days before **INC-2025-10-02-001** (2025-10-02) is "
        "**INC-2025-09-20-001**"
    )
    assert "INC-2023-01-04-001" not in answer


@pytest.mark.parametrize(
    ("question", "said"),
    [
        ("anything like it shortly before?", "in the 92 days before"),
        ("were there others earlier that year?", "in the 160 days before"),
        ("any others later that month?", "in the 31 days after"),
        ("and the incident before that one?", "before"),
        ("anything else the same week?", "within 7 days of"),
    ],
)
def test_the_window_is_described_against_the_focus(question: str, said: str) -> None:
    around = around_focus(question, FOCUS)
    assert around is not None
    assert around.described() == said


def test_nothing_in_the_window_is_said_plainly() -> None:
    answer = write_answer("anything else go down the same day?", search(POOL, EARLY), STATE)
    assert answer == (
        "I found no other incident like it within 1 day of **INC-2025-10-02-001** (2025-10-02)."
    )


PEAK = incident_row(
    "INC-2025-11-28-001",
    title="Checkout 503s at the sales peak after the autoscaler hit its maximum",
    root_cause="The autoscaler's maximum replica count was too low for the peak.",
    body="Checkout returned HTTP 503 for 35 minutes at the sales peak.",
    occurred_at="2025-11-28",
)
SAME_DAY = incident_row(
    "INC-2025-11-28-002",
    title="Receipt e-mails delayed by provider throttling",
    impacted_application="Notifications Hub",
    root_cause="The e-mail provider throttled the peak's sending rate.",
    body="Receipt e-mails arrived up to two hours late.",
    occurred_at="2025-11-28",
)
MONTH_BEFORE = incident_row(
    "INC-2025-10-30-001",
    title="Checkout 503s during a load test after pods ran out of CPU",
    root_cause="Pods hit their CPU limit and the autoscaler reacted too slowly.",
    body="Checkout returned HTTP 503 for 10 minutes during a load test.",
    occurred_at="2025-10-30",
)
CERT = incident_row(
    "INC-2025-02-25-001",
    title="Expired TLS certificate on the checkout API endpoint",
    root_cause="Nobody renewed the certificate of the checkout API.",
    body="Clients failed TLS handshakes with the checkout API for an hour.",
    occurred_at="2025-02-25",
    tags=["certificate"],
)
RELAY = incident_row(
    "INC-2025-10-07-001",
    title="Receipt e-mails queued after the SMTP relay certificate expired",
    impacted_application="Notifications Hub",
    root_cause="The SMTP relay's certificate expired and sending stopped.",
    body="Receipt e-mails queued for three hours.",
    occurred_at="2025-10-07",
    tags=["certificate"],
)


@pytest.fixture
def timeline(db: None, tmp_path: Path) -> None:
    """Incidents whose dates matter: two on one day, others weeks or months apart."""
    incidents_import(
        tmp_path / "incidents.jsonl", [PEAK, SAME_DAY, MONTH_BEFORE, CERT, RELAY], activate=True
    )


PEAK_ASKED = "checkout threw 503s at the sales peak, autoscaler maxed out"


@pytest.mark.usefixtures("timeline")
@pytest.mark.parametrize(
    ("opening", "follow_up", "window", "found"),
    [
        # That day only: the other incident of the same day, whatever it was about.
        (PEAK_ASKED, "did anything else go wrong that same day?",
         "between 2025-11-27 and 2025-11-29", "INC-2025-11-28-002"),
        # Any time before, searched by what the question describes.
        ("receipt e-mails are stuck because the SMTP relay cert expired",
         "and the one before that where a cert expired on the checkout API?",
         "before 2025-10-07", "INC-2025-02-25-001"),
        # The weeks before, searched by the focus's own title.
        (PEAK_ASKED, "any outage like it shortly before?",
         "between 2025-08-28 and 2025-11-27", "INC-2025-10-30-001"),
    ],
)  # fmt: skip
def test_another_incident_is_searched_in_its_window(
    alice: User, opening: str, follow_up: str, window: str, found: str
) -> None:
    conversation = conversation_create(owner=alice)
    ask(conversation, alice, opening)
    events = ask(conversation, alice, follow_up)
    (tool, arguments), *_ = tools_of(events)
    assert (tool, arguments["query"].endswith(window)) == ("search_similar_incidents", True)
    assert f") is **{found}**" in done_of(events).content


PEAK_SEEN = Remembered(PEAK["incident_id"], PEAK["title"], "Checkout Gateway", "2025-11-28")
SAME_DAY_SEEN = Remembered(
    SAME_DAY["incident_id"], SAME_DAY["title"], "Notifications Hub", "2025-11-28"
)
LISTED = ConversationState((PEAK_SEEN,), "peak incidents", listed=(PEAK_SEEN, SAME_DAY_SEEN))


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        # The time words belong to the clause naming an incident already listed.
        ("the provider throttling one that same week, who was accountable?", "one"),
        ("the provider throttling one from the same day - how long did it last?", "one"),
        # Nothing shown has that name: another incident is asked for.
        ("anything else break later that day?", "around"),
    ],
)
def test_a_name_of_an_incident_shown_points_at_it_not_around_it(question: str, kind: str) -> None:
    assert follow_up_kind(question, LISTED, about_documents=False) == kind
