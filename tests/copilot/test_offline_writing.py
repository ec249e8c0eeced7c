"""The offline engine's answers, written only from tool messages (no database)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

import pytest

from copilot.chat_models.offline.golden import VerifiedAnswer, lead_with_verified
from copilot.chat_models.offline.reading import ToolOutcome, parse_records
from copilot.chat_models.offline.state import (
    ConversationState,
    Remembered,
    RememberedDocument,
)
from copilot.chat_models.offline.writing import write_answer
from incidents.rendering import incident_text, incidents_text


@dataclass
class Row:
    incident_id: str
    title: str
    body: str = ""
    impacted_application: str = "Checkout Gateway"
    root_cause: str = "A slow query held connections."
    mitigation: str = "Added an index."
    accountable_party: str = ""
    category: str = ""
    occurred_at: dt.date = dt.date(2025, 10, 2)
    source_system: str = ""
    repeat_incident: bool = False
    severity: str = ""
    status: str = ""
    source_url: str = ""
    review_status: str = "reviewed"


POOL = Row(
    "INC-2025-10-02-001",
    "Checkout latency from exhausted pool",
    body="Checkout was slow for 25 minutes. About 300 payments failed.",
)
VENDOR = Row(
    "INC-2025-11-05-001",
    "Card scheme outage",
    accountable_party="Card network vendor",
    occurred_at=dt.date(2025, 11, 5),
    body="Authorisations failed for 3 hours.",
)
LATER = Row(
    "INC-2026-01-09-001", "Checkout latency again from pool", occurred_at=dt.date(2026, 1, 9)
)
STATE = ConversationState(
    tuple(Remembered(r.incident_id, r.title, r.impacted_application, r.occurred_at.isoformat())
          for r in (POOL, VENDOR)),
    "Checkout is slow",
)  # fmt: skip


def lookups(*rows: Row) -> list[ToolOutcome]:
    texts = ["Found 1 incident:\n\n" + incident_text(row) for row in rows]
    return [ToolOutcome("lookup_incident_by_id", "{}", t, parse_records(t)) for t in texts]


def search(*rows: Row) -> list[ToolOutcome]:
    text = incidents_text(list(rows), heading="Found incidents similar to: x")
    return [ToolOutcome("search_similar_incidents", "{}", text, parse_records(text))]


def test_a_field_follow_up_answers_that_field_first_and_cites_the_incident() -> None:
    answer = write_answer("What was the mitigation?", lookups(POOL), STATE)
    assert answer.startswith("> Mitigation: Added an index.")
    assert "**INC-2025-10-02-001**" in answer
    assert answer.count("Mitigation:") == 1  # not repeated below the direct answer


def test_how_long_picks_the_sentence_with_the_duration() -> None:
    answer = write_answer("How long did it last?", lookups(POOL), STATE)
    assert answer.startswith("> Checkout was slow for 25 minutes.")


@pytest.mark.parametrize(
    "span",
    [
        "from 09:12 to 10:05 UTC",
        "between 09:12 and 10:05 UTC",
        "09:12-10:05 UTC",
        "from 9:12 PDT until 10:05 PDT",
    ],
)
def test_how_long_counts_a_span_of_clock_times_as_a_duration(span: str) -> None:
    """Records often give an outage as a span of times, not as "53 minutes"; the
    words that point at the record must not pull the answer to its cause."""
    queue = Row(
        "INC-2025-03-14-001",
        "Queue consumers stall",
        body=f"On 14 March 2025 {span} every consumer was stalled. "
        "A lock held by the scheduler kept consumers waiting, taking everything down.",
    )
    question = "the one with the scheduler lock — how long was everything down?"
    answer = write_answer(question, lookups(queue), STATE)
    assert answer.startswith(f"> On 14 March 2025 {span} every consumer was stalled.")


def test_how_many_picks_the_sentence_with_a_count_not_the_duration() -> None:
    crash = Row(
        "INC-2024-07-19-001",
        "Sensor update crashes Windows hosts",
        body="The update was pulled after 78 minutes. About 8.5 million devices crashed.",
    )
    answer = write_answer("and roughly how many machines?", lookups(crash), STATE)
    assert answer.startswith("> About 8.5 million devices crashed.")


def test_a_repeat_is_answered_with_the_sentence_that_tells_of_the_earlier_one() -> None:
    again = Row(
        "INC-2014-10-16-001",
        "Message servers crash",
        repeat_incident=True,
        body="Servers crashed two days after an earlier outage of that kind. Users reconnected.",
    )
    answer = write_answer("was that a repeat of something?", lookups(again), STATE)
    assert answer.startswith("Yes: INC-2014-10-16-001 is recorded as a repeat")
    assert "> Servers crashed two days after an earlier outage" in answer


def test_which_of_those_keeps_incidents_an_outside_party_caused() -> None:
    answer = write_answer("Which of those were caused by a vendor?", lookups(POOL, VENDOR), STATE)
    assert answer.startswith("1 of those 2 incidents:")
    assert "INC-2025-11-05-001" in answer and "INC-2025-10-02-001" not in answer


def test_which_one_lasted_longest_compares_the_durations_written() -> None:
    answer = write_answer("Which one lasted longest?", lookups(POOL, VENDOR), STATE)
    assert answer.startswith("**INC-2025-11-05-001** — Card scheme outage")
    assert "is the longest of these" in answer


def test_did_it_happen_again_lists_only_later_incidents() -> None:
    answer = write_answer("Did it happen again later?", search(POOL, LATER), STATE)
    assert answer.startswith("Yes. The closest later one is **INC-2026-01-09-001**")


def test_nothing_found_is_said_plainly() -> None:
    answer = write_answer("Disk full on the ledger?", search(), ConversationState())
    assert answer == "I found nothing matching “Disk full on the ledger?”."


def documents(*docs: tuple[str, str, float]) -> list[ToolOutcome]:
    blocks = [
        f"Document ID: {doc_id}\nTitle: {title}\nType: runbook\nServices: api\n"
        f"Relevance: {relevance:.2f}\nExcerpt: Actions: Roll back first."
        for doc_id, title, relevance in docs
    ]
    text = "Knowledge documents for: x\nGroups: {}\n\n" + "\n\n---\n\n".join(blocks)
    return [ToolOutcome("search_knowledge", "{}", text, parse_records(text))]


def test_only_documents_close_to_the_best_are_also_listed() -> None:
    found = documents(
        ("KB-RB-009", "Failed deployment rollback", 1.0),
        ("KB-RB-008", "Bad configuration pushed globally", 0.62),
        ("KB-RB-001", "TLS certificate expiry", 0.31),
    )
    answer = write_answer("how do I roll back a bad deploy?", found, ConversationState())
    assert "KB-RB-008" in answer
    assert "KB-RB-001" not in answer


def test_a_document_is_tied_to_the_last_incident_only_when_asked_about_it() -> None:
    found = documents(("KB-RB-009", "Failed deployment rollback", 1.0))
    about_it = write_answer("is there a runbook for that?", found, STATE)
    unrelated = write_answer("how do I roll back a bad deploy?", found, STATE)
    assert "It applies to what we were looking at: **INC-2025-10-02-001**" in about_it
    assert "applies to" not in unrelated


def test_a_filter_that_found_nothing_is_named_before_the_nearest_results() -> None:
    text = incidents_text(
        [POOL],
        heading="Found 1 incident(s) similar to: sev1 checkout\nNo incident matched severity "
        "SEV1, so they were loosened: these are the nearest without them.",
    )
    loosened = [ToolOutcome("search_similar_incidents", "{}", text, parse_records(text))]
    answer = write_answer("sev1 checkout incidents", loosened, STATE)
    assert answer.startswith("**No incident matched severity SEV1.** The nearest matches")
    assert "INC-2025-10-02-001" in answer


QUEUE = Row(
    "INC-2025-08-14-001",
    "Order queue stalls after broker upgrade",
    impacted_application="Order pipeline (and invoicing, shipping labels)",
    mitigation="The broker was downgraded.",
    body=(
        "From 09:12 to 11:40 UTC on 14 August orders stopped flowing to the warehouse. "
        "Merchants in Europe and two marketplace partners were affected and saw late shipments. "
        "The team drained the stuck consumers by hand before downgrading the broker."
    ),
)


def test_who_got_hit_names_the_impacted_services_not_who_was_at_fault() -> None:
    answer = write_answer("who else got hit?", lookups(QUEUE), STATE)
    lead = answer.split("\n\nFrom ")[0]
    assert "Order pipeline (and invoicing, shipping labels)" in lead
    assert "Merchants in Europe" in lead
    assert "accountable" not in lead.lower()


def test_when_did_it_start_quotes_the_time_of_day_not_only_the_date() -> None:
    answer = write_answer("when did it start?", lookups(QUEUE), STATE)
    assert "09:12" in answer.split("\n\nFrom ")[0]


def test_two_asks_in_one_message_are_each_answered() -> None:
    answer = write_answer("when did it start and who was affected?", lookups(QUEUE), STATE)
    lead = answer.split("\n\nFrom ")[0]
    assert "09:12" in lead and "Merchants in Europe" in lead
    assert lead.count("From 09:12") == 1  # a sentence that answers both is quoted once


def test_the_resolution_adds_how_it_was_done_in_practice() -> None:
    answer = write_answer("what was the resolution?", lookups(QUEUE), STATE)
    lead = answer.split("\n\nFrom ")[0]
    assert lead.startswith("> Mitigation: The broker was downgraded.")
    assert "by hand" in lead


def test_a_search_that_also_asks_a_detail_answers_it_for_the_closest_match() -> None:
    answer = write_answer("the order queue stall - who was affected?", search(QUEUE, POOL), STATE)
    assert "About **INC-2025-08-14-001**" in answer
    assert "Merchants in Europe" in answer
    plain = write_answer("the order queue stall", search(QUEUE, POOL), STATE)
    assert "About **" not in plain


def test_nothing_matched_is_said_before_a_verified_answer() -> None:
    golden = VerifiedAnswer("sev1 checkout?", "Checkout broke when the pool ran dry.")
    answer = "**No incident matched severity SEV1.** The nearest matches without that filter:\n- x"
    led = lead_with_verified(golden, answer, [])
    assert led.startswith("**No incident matched severity SEV1.**\n\n### Verified answer")
    assert "### From the records\n\nThe nearest matches without that filter:" in led


NIGHTLY = Row(
    "INC-2025-06-03-001",
    "Ledger writes fail when the id column fills up",
    body="At 02:40 UTC on 3 June 2025 every ledger write started failing. "
    "The team paused the importers and widened the column on a replica. "
    "The backlog was drained by 11:30 the same morning.",
)


@pytest.mark.parametrize(
    ("question", "expected"),
    [("what time did it kick off?", "> At 02:40 UTC"),
     ("when did it start?", "> At 02:40 UTC"),
     ("what time was everything back to normal?", "> The backlog was drained by 11:30")],
)  # fmt: skip
def test_what_time_quotes_the_phase_asked_about(question: str, expected: str) -> None:
    """Onset and recovery both carry a time of day; the ask says which one."""
    answer = write_answer(question, lookups(NIGHTLY), STATE)
    assert expected in answer
    other = "11:30" if "02:40" in expected else "02:40"
    assert f"> {other}" not in answer and other not in answer.split("From **")[0]


RESTARTED = Row(
    "INC-2025-07-21-001",
    "Session store failover leaves the API half up",
    body="At 14:01 UTC on 21 July 2025 the session store's primary went offline. "
    "By 14:57 the API looked healthy, but at 15:41 users started seeing errors again. "
    "Engineers restarted the entire service at 16:07. "
    "Error rates were normal after the caches warmed at 16:40.",
)


@pytest.mark.parametrize(
    ("question", "expected"),
    [# The moment asked for in the question's own words, whatever its phase...
     ("what time did they restart the whole service?", "> Engineers restarted the entire service"),
     ("when were error rates back to normal?", "> Error rates were normal after the caches warmed"),
     # ...and a moment asked with "when" as much as with "what time".
     ("For the July 2025 one, when was it back to normal?", "> Error rates were normal"),
     ("when did the primary go offline?", "> At 14:01 UTC")],
)  # fmt: skip
def test_a_moment_asked_for_quotes_the_sentence_that_tells_of_it(question, expected) -> None:
    answer = write_answer(question, lookups(RESTARTED), STATE)
    assert expected in answer.split("From **")[0]


def test_which_of_those_keeps_the_best_fitting_first_and_drops_passing_mentions() -> None:
    ledger = Row(
        "INC-2025-06-03-001",
        "Ledger writes fail when the id column fills up",
        body="The integer id column ran out of values and every write failed.",
    )
    partition = Row(
        "INC-2025-05-01-001",
        "Network partition delays processing",
        body="Processing was delayed while the cluster was running split.",
    )
    answer = write_answer("Were any of them caused by an integer column running out of values?",
                          lookups(partition, ledger), STATE)  # fmt: skip
    assert answer.startswith("1 of those 2 incidents:\n\n**INC-2025-06-03-001**")


WIPED = Row(
    "INC-2024-02-11-001",
    "Sync client deletes a user's files",
    root_cause="An install script removed a path built from an empty variable.",
    body="On 11 February 2024 a user reported that after moving the sync folder to a second disk "
    "and linking it back, starting the client deleted every file they owned. "
    "Support said the same bug had been reported before without being looked at.",
)


@pytest.mark.parametrize(
    "question",
    ["what were they doing right before it happened?",
     "what led up to it?",
     "what was the user doing just prior to the wipe?"],
)  # fmt: skip
def test_what_came_just_before_quotes_the_circumstances(question: str) -> None:
    answer = write_answer(question, lookups(WIPED), STATE)
    assert answer.startswith("> On 11 February 2024 a user reported that after moving")


def test_a_record_not_marked_a_repeat_still_quotes_an_earlier_occurrence() -> None:
    answer = write_answer("had it happened before?", lookups(WIPED), STATE)
    assert answer.startswith(f"No: {WIPED.incident_id} is not recorded as a repeat incident")
    assert "> Support said the same bug had been reported before" in answer
    quiet = write_answer("had it happened before?", lookups(POOL), STATE)
    assert quiet.startswith(f"No: {POOL.incident_id} is not recorded as a repeat incident.\n")


def test_a_repeat_quotes_the_earlier_occurrence_over_a_second_wave_within_it() -> None:
    """ "Again" also tells of a second wave inside one incident; "an earlier outage"
    is what makes it a repeat."""
    twice = Row(
        "INC-2024-03-02-001",
        "Chat servers crash after a TLS update",
        repeat_incident=True,
        body="Chat servers crashed on 2 March, three days after an earlier outage. "
        "Clients reconnected at once and overwhelmed the databases again.",
    )
    answer = write_answer("was it a repeat?", lookups(twice), STATE)
    assert "> Chat servers crashed on 2 March, three days after an earlier outage." in answer
    assert "overwhelmed the databases again" not in answer.split("From **")[0]


PUBLISHED = Row(
    "INC-2018-07-12-001",
    "Malicious package versions published from a compromised maintainer account",
    impacted_application="Package registry (installs, publishing, status site)",
    mitigation="The packages were unpublished within three hours; the registry revoked all "
    "tokens created before 12:30 UTC and a clean release was published.",
    body="On 12 July 2018 an attacker published scope-lib 3.7.2 and config-lib 5.0.2 from a "
    "compromised account. The install script sent the user's tokens to the attacker. "
    "About 4% of installs that day fetched the bad versions. "
    "The status site ran on the same hosts and showed no incident for hours.",
)


@pytest.mark.parametrize(
    ("question", "expected"),
    [# A version number answers "which versions", a share "what share", a time "what time"...
     ("which versions of it were bad?", "scope-lib 3.7.2"),
     ("what share of installs got the bad versions?", "About 4% of installs"),
     # ...wherever the record says it: here in the mitigation, not the body.
     ("tokens created before what time got revoked?", "before 12:30 UTC"),
     # Words count by their stem: "showing" is what "showed" says.
     ("and what was their status site showing?", "showed no incident")],
)  # fmt: skip
def test_the_sentence_of_the_shape_asked_for_answers(question: str, expected: str) -> None:
    answer = write_answer(question, lookups(PUBLISHED), STATE)
    assert expected in answer.split("From **")[0]


def test_how_they_noticed_is_answered_by_what_was_seen() -> None:
    drifted = Row(
        "INC-2013-03-07-001", "Chat replicas diverge from the primary",
        body="The primary and the replicas had silently diverged for weeks in order numbers. "
        "On 7 March every replica stopped replicating with 'Duplicate entry' failures. "
        "The team repaired the data the same day.",
    )  # fmt: skip
    for question in ["how did they first notice?", "what tipped them off?"]:
        answer = write_answer(question, lookups(drifted), STATE).split("From **")[0]
        assert "stopped replicating" in answer and "silently" not in answer, question


OUTAGE = Row(
    "INC-2023-03-14-001",
    "Storefront down after a cache node fills its disk",
    body="A cache node's disk filled with debug logs and the node stopped answering. "
    "From 09:12 to 10:05 UTC every storefront page returned errors. "
    "The team cleared the logs and turned debug logging off.",
)


@pytest.mark.parametrize(
    "question",
    ["what was the window they were completely down?", "from when to when was it broken?"],
)
def test_a_window_asked_for_quotes_the_span_of_times(question: str) -> None:
    answer = write_answer(question, lookups(OUTAGE), STATE)
    assert "From 09:12 to 10:05 UTC" in answer.split("From **")[0]


@pytest.mark.parametrize(
    "question", ["was that the first time that happened to them?", "a one-off, or had it before?"]
)
def test_the_first_time_asks_whether_it_was_a_repeat(question: str) -> None:
    again = Row(
        "INC-2019-05-21-001",
        "Login latency as the token store saturates",
        repeat_incident=True,
        body="Logins slowed for an hour, repeating a similar outage on 14 May. "
        "More token-store capacity was added.",
    )
    answer = write_answer(question, lookups(again), STATE)
    assert answer.startswith("Yes: INC-2019-05-21-001 is recorded as a repeat")
    assert "repeating a similar outage on 14 May" in answer


def test_the_incidents_a_document_draws_on_are_named_as_its_sources() -> None:
    document = RememberedDocument(
        "KB-RB-004",
        "Runbook: Connection exhaustion",
        "runbook",
        (POOL.incident_id, LATER.incident_id),
    )
    state = ConversationState((), "pool exhausted?", documents=(document,))
    answer = write_answer("which incidents is that runbook based on?", lookups(POOL, LATER), state)
    assert answer.startswith("**KB-RB-004** (Runbook: Connection exhaustion) draws on 2 incidents:")
    assert "**INC-2025-10-02-001**" in answer and "**INC-2026-01-09-001**" in answer
    # One of them pointed at and asked about: that record's answer.
    answer = write_answer("What set off the 2025 one?", lookups(POOL), state)
    assert (
        "draws on 2 incidents; this one:\n\n> Root Cause: A slow query held connections." in answer
    )


def test_follow_ups_quote_what_the_write_up_committed_to() -> None:
    committed = Row(
        "INC-2025-10-02-001", "Checkout latency from exhausted pool",
        body="Checkout was slow for 25 minutes. The team planned to add pool alerts.",
    )  # fmt: skip
    state = ConversationState(STATE.focus[:1], "details on INC-2025-10-02-001")
    for question in [
        "Any follow-up actions?",
        "were they gonna do anything differently next time?",
    ]:
        answer = write_answer(question, lookups(committed), state)
        assert answer.startswith("> The team planned to add pool alerts."), question
    answer = write_answer("Any follow-up actions?", lookups(POOL), state)
    assert answer.startswith("The record of INC-2025-10-02-001 names no follow-ups.")


def test_documents_and_whether_it_happened_are_both_answered() -> None:
    found = documents(("KB-RB-009", "Failed deployment rollback", 1.0)) + search(POOL)
    question = "Is there a runbook for bad deploys, and has one ever taken checkout down?"
    answer = write_answer(question, found, ConversationState())
    assert answer.index("KB-RB-009") < answer.index("Where something like it happened:")
    assert "INC-2025-10-02-001" in answer
    fixing = write_answer("how do I fix a bad deploy?", found, ConversationState())
    assert "How it was fixed before:" in fixing


def test_incidents_asked_first_are_answered_first_then_the_document() -> None:
    found = search(POOL) + documents(("KB-RB-022", "Queue backlog drain", 1.0))
    question = "what incidents do we have where the pool ran out, and is there a runbook for it?"
    answer = write_answer(question, found, ConversationState())
    assert answer.startswith("The closest match is **INC-2025-10-02-001**")
    assert "The runbook you asked about: **KB-RB-022** — Queue backlog drain." in answer


def test_a_detail_then_a_document_answers_the_detail_then_quotes_the_document() -> None:
    found = lookups(POOL) + documents(("KB-RB-004", "Connection exhaustion", 1.0))
    question = "what did they change to fix it, and is there a runbook for pool exhaustion?"
    answer = write_answer(question, found, ConversationState(STATE.focus[:1], "checkout slow"))
    assert answer.index("INC-2025-10-02-001") < answer.index(
        "The runbook you asked about: **KB-RB-004** — Connection exhaustion."
    )
