"""The text rules: severity, structured fields, the decision ledger."""

from __future__ import annotations

import pytest

from copilot.intake import rules
from incidents.query_parsing import ApplicationEntry


@pytest.mark.parametrize(
    ("text", "severity"),
    [
        ("PayU Core is down for all merchants", "SEV1"),
        ("Duplicate payouts: data loss risk, merchants double-charged", "SEV1"),
        ("About 60% of payments fail at checkout", "SEV1"),
        ("Checkout API returns 502 after the 14:00 deploy", "SEV2"),
        ("Payments are failing for Visa cards", "SEV2"),
        ("12% of requests fail with timeouts", "SEV2"),
        ("The dashboard is slow for some users", "SEV3"),
        ("3% of logins fail with 401", "SEV3"),
        ("A typo on the settlement report footer", "SEV4"),
        ("Staging is down after the deploy", "SEV4"),
        ("Something looks off with settlement", "SEV3"),
    ],
)
def test_severity_rules(text: str, severity: str) -> None:
    assert rules.severity_for(text)[0] == severity


def test_every_severity_says_why() -> None:
    for sev, reason, _ in rules.SEVERITY_RULES:
        assert sev in {"SEV1", "SEV2", "SEV3", "SEV4"} and reason


def test_the_title_drops_greetings_report_wording_and_the_ticket_request() -> None:
    text = "Hi! I want to report a new incident: checkout API returns 502. Please file a ticket"
    assert rules.title_for(text) == "Checkout API returns 502"
    long = "word " * 60
    assert len(rules.title_for(long)) <= rules.MAX_TITLE_CHARS


def test_the_description_is_normalised() -> None:
    text = "Checkout\u2011API\x07  returns   502\n\n"
    assert rules.normalise_description(text, "ERR 1") == (
        "Checkout-API returns 502\nScreenshot text: ERR 1"
    )


def test_error_codes_and_components() -> None:
    text = "Checkout API returns 502s; error code invalid_api_key and ORA-00942 in the database"
    assert rules.error_codes(text) == ["HTTP 502", "invalid_api_key", "ORA-00942"]
    assert rules.components_for(text) == ["API", "database", "payments"]
    assert rules.error_codes("500 users cannot log in for 400 ms") == []


def test_the_service_is_the_known_application_named_best() -> None:
    catalog = [
        ApplicationEntry.of("Checkout Gateway"),
        ApplicationEntry.of("PayU Core (Checkout Gateway)"),
        ApplicationEntry.of("PayU Core"),
    ]
    assert rules.service_for("Checkout API returns 502", catalog) == "Checkout Gateway"
    assert rules.service_for("payu core declines everything", catalog) == "PayU Core"
    assert rules.service_for("Our wiki is slow", catalog) == ""


def test_impact_is_the_sentence_naming_who_is_hurt() -> None:
    text = "Checkout returns 502. About 30% of merchants see failures."
    assert rules.impact_for(text, "SEV2") == "About 30% of merchants see failures"
    assert rules.impact_for("Checkout returns 502", "SEV2") == rules.IMPACT_BY_SEVERITY["SEV2"]


def test_decisions_and_actions_in_a_comment() -> None:
    entries = rules.ledger_entries(
        "Update: we rolled back the deploy and decided to keep the flag off. "
        "Bob will watch the error rate. Let's page the Checkout Team. "
        "Action: Carol to write the postmortem"
    )
    assert entries == [
        rules.LedgerEntry("decision", "keep the flag off", ""),
        rules.LedgerEntry("action", "watch the error rate", "Bob"),
        rules.LedgerEntry("decision", "page the Checkout Team", ""),
        rules.LedgerEntry("action", "write the postmortem", "Carol"),
    ]
    assert rules.comment_body("add a comment: rolled back") == "rolled back"


@pytest.mark.parametrize(
    "text",
    ["ddos hitting our edge right now, what's the procedure",
     "checkout is down right now - how do we roll back",
     "payments failing since 10:02. what do we check first"],
)  # fmt: skip
def test_a_last_clause_that_asks_makes_the_message_a_question(text: str) -> None:
    """An ongoing symptom followed by a question asks, and is answered; nothing is filed."""
    assert rules.is_question(text)


def test_an_ongoing_statement_is_no_question() -> None:
    assert not rules.is_question("checkout is down right now, 502s everywhere")
