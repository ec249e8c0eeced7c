"""The intake state: frozen between steps, stored as the same JSON the dicts stored."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest
from django.contrib.auth.models import User

from copilot.intake.rendering import STATE_FIELDS
from copilot.intake.selectors import intake_state
from copilot.intake.state import IntakeState, RememberedTicket, TicketProposal
from copilot.models import Conversation, Ticket
from copilot.services import conversation_create
from tests.copilot.intake.conftest import intake_data, say

INCIDENT = {
    "incident_id": "INC-2026-11-20-912345",
    "title": "Checkout Gateway 502 errors",
    "service": "Checkout Gateway",
    "severity": "SEV2",
    "severity_reason": "errors for some customers",
    "impact": "Some checkouts fail",
    "components": ["api"],
    "tags": ["502"],
    "error_codes": ["HTTP 502"],
    "description": "Checkout API returns 502 after the 14:00 deploy",
    "reported_at": "2026-11-20T14:05:00+00:00",
    "reported_by": "alice",
    "owner_team": "Payments Platform",
}
# What the TypedDict-era code stored, turn by turn (STATE_FIELDS plus owner_team).
PROPOSED = {
    "incident": INCIDENT,
    "proposal": {"action": "create", "ticket_key": ""},
    "ticket": None,
}
FILED = {
    "incident": INCIDENT,
    "proposal": None,
    "ticket": {"key": "DESK-1", "url": "/tickets/DESK-1/", "status": "open"},
}
DUPLICATE = {
    "incident": INCIDENT,
    "proposal": {"action": "comment", "ticket_key": "DESK-7"},
    "ticket": None,
}


@pytest.mark.parametrize("stored", [{}, PROPOSED, FILED, DUPLICATE])
def test_stored_states_load_and_are_written_back_unchanged(stored: dict[str, Any]) -> None:
    assert IntakeState.from_json(stored).to_json() == stored


def test_a_stored_state_reads_as_typed_fields() -> None:
    state = IntakeState.from_json(DUPLICATE)
    assert state.proposal == TicketProposal("comment", "DESK-7")
    assert state.ticket is None and state.incident["title"] == INCIDENT["title"]
    filed = IntakeState.from_json(FILED)
    assert filed.ticket == RememberedTicket("DESK-1", "/tickets/DESK-1/", "open")
    assert filed.proposal is None


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        (None, IntakeState()),
        ("not a dict", IntakeState()),
        ({"proposal": {"action": "create"}}, IntakeState(proposal=TicketProposal("create"))),
        ({"proposal": {}, "ticket": {"key": ""}}, IntakeState()),
        ({"incident": None, "ticket": {"key": "D-3"}}, IntakeState(ticket=RememberedTicket("D-3"))),
    ],
)  # fmt: skip
def test_older_or_partial_states_load_with_missing_keys_as_empty(
    stored: object, expected: IntakeState
) -> None:
    assert IntakeState.from_json(stored) == expected


def test_the_state_cannot_be_changed_in_place() -> None:
    state = IntakeState.from_json(PROPOSED)
    with pytest.raises(dataclasses.FrozenInstanceError):
        state.proposal = None  # type: ignore[misc]
    with pytest.raises(TypeError):
        state.incident["title"] = "edited"  # type: ignore[index]
    assert state.to_json() == PROPOSED


def test_the_incident_is_copied_in_so_the_callers_dict_cannot_reach_it() -> None:
    incident = dict(INCIDENT)
    state = IntakeState(incident=incident)
    incident["title"] = "edited"
    assert state.incident["title"] == INCIDENT["title"]


# --- through the real turns ------------------------------------------------------------


def _store(conversation: Conversation, intake: dict[str, Any]) -> None:
    Conversation.objects.filter(pk=conversation.pk).update(state={"intake": intake})
    conversation.refresh_from_db()


@pytest.mark.usefixtures("payments_desk")
def test_a_report_stores_the_shape_the_earlier_dicts_stored(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    say(conversation, alice, "Checkout API returns 502 after the 14:00 deploy")
    conversation.refresh_from_db()
    stored = conversation.state["intake"]
    assert set(stored) == {"incident", "proposal", "ticket"}
    assert (stored["proposal"], stored["ticket"]) == ({"action": "create", "ticket_key": ""}, None)
    assert set(stored["incident"]) == {*STATE_FIELDS, "owner_team"}

    say(conversation, alice, "yes, file it")
    conversation.refresh_from_db()
    ticket = Ticket.objects.get()
    filed = conversation.state["intake"]
    assert filed["proposal"] is None and filed["incident"] == stored["incident"]
    url = f"/tickets/{ticket.key}/"
    assert filed["ticket"] == {"key": ticket.key, "url": url, "status": "open"}


@pytest.mark.django_db
def test_a_proposal_stored_by_the_earlier_code_is_filed_on_yes(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    _store(conversation, PROPOSED)
    data = intake_data(say(conversation, alice, "yes, file it"))
    ticket = Ticket.objects.get()
    assert data["ticket"]["key"] == ticket.key and ticket.incident_id == INCIDENT["incident_id"]
    conversation.refresh_from_db()
    assert conversation.state["intake"] == {
        "incident": INCIDENT,
        "proposal": None,
        "ticket": {"key": ticket.key, "url": f"/tickets/{ticket.key}/", "status": "open"},
    }
    assert intake_state(conversation).ticket == RememberedTicket(
        ticket.key, f"/tickets/{ticket.key}/", "open"
    )


@pytest.mark.django_db
def test_a_follow_up_in_a_conversation_without_a_report_keeps_the_empty_state(
    alice: User,
) -> None:
    conversation = conversation_create(owner=alice)
    say(conversation, alice, "what did we decide?")
    conversation.refresh_from_db()
    assert conversation.state["intake"] == {}
