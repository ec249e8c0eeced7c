"""The planner: turn kinds (intake never takes a past-incident question) and plans."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from copilot.intake import rules
from copilot.intake.planner import Step, build_plan, classify, plan_turn
from copilot.intake.state import IntakeState, TicketProposal

PAST_QUESTIONS = [
    "How do I fix HTTP 403 errors in PayU?",
    "What happened in the last 7 days?",
    "Look up INC-2017-01-31-001",
    "Look up INC-2017-01-31-001.",
    "Show me all incidents that affected Checkout Gateway",
    "Has PayU Core had any incidents?",
    "Is there a runbook for expired TLS certificates?",
    "Checkout Gateway 502s - has this happened before?",
    "Any SEV1 incidents this year?",
    "Which incidents were caused by a bad deploy?",
    "What was the root cause of INC-2025-08-24-001?",
    "Can you open incident INC-2026-02-02-001 and tell me which services were affected?",
    "Merchants get HTTP 403 after we rotated the API key",
    "Database connection pool exhausted in PayU Core",
    "summary of INC-2016-07-20-001 please",
    "What did the postmortem of the August key rotation say?",
]
REPORTS = [
    "Checkout API returns 502 after the 14:00 deploy",
    "I want to report a new incident: payouts are stuck",
    "PayU Core is down for all merchants",
    "We're seeing 30% of payments fail with invalid_api_key",
    "Settlement reports are late again today",
    "Checkout Gateway 503s right now, please file a ticket",
]


# A reported incident with a ticket offered and not yet confirmed.
PROPOSED = IntakeState(incident={"title": "Checkout 502s"}, proposal=TicketProposal("create"))


def kind(text: str, *, image: bool = False, state: IntakeState | None = None) -> str:
    return classify(text=text, has_image=image, state=state or IntakeState()).kind


def dev_questions(eval_dir: Path) -> list[str]:
    questions: list[str] = []
    for line in (eval_dir / "queries_dev.jsonl").read_text().splitlines():
        query = json.loads(line)["query"]
        questions += query if isinstance(query, list) else [query]
    return questions


@pytest.mark.parametrize("question", PAST_QUESTIONS)
def test_past_incident_questions_stay_with_the_agent(question: str) -> None:
    assert kind(question) == "query_past"
    if rules.is_question(question):
        assert kind(question, image=True) == "query_past"


@pytest.mark.eval
def test_every_evaluation_question_stays_with_the_agent(eval_dir: Path) -> None:
    """All 121 dev questions (every turn of the multi-turn ones), with and without a
    current incident in the conversation."""
    state = PROPOSED
    stolen = [
        question
        for question in dev_questions(eval_dir)
        for current in (IntakeState(), state)
        if kind(question, state=current) != "query_past"
    ]
    assert stolen == []


@pytest.mark.parametrize(
    "text",
    [
        # What might happen, however much it says "tonight", is nobody's report...
        "if the primary database dies tonight during the migration, what do we do",
        "in case our cert expires this morning before renewal kicks in - which runbook",
        "if the primary database dies tonight we lose every queued payout",
        # ...and an ask for what to do anywhere in a message makes it a question.
        "someone announcing our prefixes tonight whats the play",
    ],
)
def test_a_hypothetical_or_an_ask_for_what_to_do_is_no_report(text: str) -> None:
    assert kind(text) == "query_past"


@pytest.mark.parametrize("report", REPORTS)
def test_reports_are_new_incidents(report: str) -> None:
    assert kind(report) == "new_incident"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # When a thing started is how past incidents are told too: with the model
        # reading a question, it is one...
        ("new VMs created after 10:05 get no DHCP lease, older ones are fine", "query_past"),
        ("card authorisations declined from 14:20 UTC in one region, the others fine",
         "query_past"),
        # ...while "since" says it is still going on, and the model's report stands.
        ("payout webhooks timing out since 09:12 UTC for merchants on the legacy cluster",
         "new_incident"),
        ("payout webhooks timing out from 09:12 UTC for merchants on the legacy cluster only",
         "new_incident"),
    ],
)  # fmt: skip
def test_a_start_time_alone_does_not_make_a_question_a_report(text: str, expected: str) -> None:
    assert kind(text) == expected


def test_a_screenshot_with_a_statement_is_a_report_but_not_with_a_question() -> None:
    assert kind("Checkout is throwing this", image=True) == "new_incident"
    assert kind("Checkout is throwing this") == "query_past"
    assert kind("Have we seen this error before?", image=True) == "query_past"


def test_follow_ups_need_a_current_incident() -> None:
    state = PROPOSED
    assert kind("add a comment: rolled back the deploy", state=state) == "add_comment"
    assert kind("We decided to keep the flag off", state=state) == "add_comment"
    assert kind("Summary please", state=state) == "ask_summary"
    assert kind("what did we decide?", state=state) == "ask_summary"
    assert kind("what did we decide?") == "ask_summary"  # answered from an empty ledger
    assert kind("add a comment: rolled back the deploy") == "query_past"
    assert kind("yes, file it") == "chit_chat"  # nothing to confirm: a reply, not a report


def test_confirmations_and_ticket_requests_come_only_from_the_users_words() -> None:
    state = PROPOSED
    yes = classify(text="yes, file it", has_image=False, state=state)
    assert (yes.kind, yes.confirms) == ("new_incident", True)
    assert classify(text="no, not yet", has_image=False, state=state).confirms is False
    asked = classify(
        text="Checkout 502s right now, please file a ticket", has_image=False, state=IntakeState()
    )
    assert asked.wants_ticket and not asked.confirms
    anyway = classify(text="create a new ticket anyway", has_image=False, state=state)
    assert anyway.confirms and anyway.new_ticket_anyway


@pytest.mark.parametrize(
    "text",
    [
        "Checkout API returns 502 after the 14:00 deploy, don't open a ticket yet",
        "Checkout API returns 502 after the 14:00 deploy, no need to file a ticket",
        "Checkout API returns 502 after the 14:00 deploy. Should I open a ticket?",
        "Checkout 502s right now. Do we need to raise a Jira issue?",
        "Did we open a ticket for the checkout 502s?",
    ],
)
def test_a_ticket_refused_or_asked_about_is_not_requested(text: str) -> None:
    # Each of these filed a ticket at once: the ticket words were found, the "don't"
    # or the question before them was not read.
    assert not classify(text=text, has_image=False, state=IntakeState()).wants_ticket


@pytest.mark.parametrize(
    "text",
    [
        "Checkout 502s right now, can you open a ticket?",
        "Checkout 502s right now, could you please raise a Jira issue?",
        "Checkout 502s right now. Don't panic, but please file a ticket",
        "Checkout 502s right now, don't forget to open a ticket",
        "Checkout fails and I don't know why — please open a ticket",
    ],
)
def test_a_ticket_asked_for_as_a_question_is_requested(text: str) -> None:
    assert classify(text=text, has_image=False, state=IntakeState()).wants_ticket


def test_refusing_the_proposed_ticket_does_not_confirm_it() -> None:
    # "file it" with a proposal pending confirmed it, "don't" or not.
    state = PROPOSED
    for text in ("no, don't file it", "do not file it yet", "should we file it?"):
        assert not classify(text=text, has_image=False, state=state).confirms, text
    assert classify(text="ok, file it", has_image=False, state=state).confirms


def test_plans() -> None:
    report = rules.TurnDecision("new_incident")
    assert build_plan(report, has_image=False).steps == (
        Step.INGESTION, Step.INCIDENT_CLASSIFICATION, Step.MEMORY_RETRIEVAL, Step.PLAYBOOK,
        Step.DUPLICATE_CHECK, Step.TICKET_CREATE, Step.MEMORY_WRITE,
    )  # fmt: skip
    assert Step.VISION_ANALYSIS in build_plan(report, has_image=True).steps
    assert build_plan(rules.TurnDecision("add_comment"), has_image=False).steps == (
        Step.COMMENT_DRAFT,
        Step.TICKET_ADD_COMMENT,
    )
    assert build_plan(rules.TurnDecision("ask_summary"), has_image=False).steps == (Step.SUMMARY,)
    confirm = rules.TurnDecision("new_incident", confirms=True)
    assert build_plan(confirm, has_image=False).steps == (Step.TICKET_CREATE,)


def test_a_turn_sent_to_intake_is_a_report_even_when_worded_as_a_question() -> None:
    plan = plan_turn(text="Is checkout down?", has_image=False, state=IntakeState())
    assert plan.kind == "new_incident" and plan.steps[0] == Step.INGESTION
