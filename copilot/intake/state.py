"""The shapes intake keeps between turns, and the kinds a turn can be. No ORM.

The state lives as JSON in `Conversation.state["intake"]`, written by
`conversation_intake_state_set` and read by `intake_state`. It stays a plain
dict, typed here as TypedDicts rather than frozen dataclasses, so the stored
JSON is exactly what it was (no migration) while mypy checks every key that
steps, rendering and the planner read or write.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal, TypedDict


class TurnKind(StrEnum):
    """What a turn is; a StrEnum, so it is stored and sent as the plain string."""

    NEW_INCIDENT = "new_incident"
    ADD_COMMENT = "add_comment"
    ASK_SUMMARY = "ask_summary"
    QUERY_PAST = "query_past"  # the agent's
    CHIT_CHAT = "chit_chat"  # the agent's


# Intake answers these; the rest go to the agent.
INTAKE_KINDS = frozenset({TurnKind.NEW_INCIDENT, TurnKind.ADD_COMMENT, TurnKind.ASK_SUMMARY})


class TicketProposal(TypedDict):
    """A ticket offered and awaiting "yes": a new one, or a comment on a duplicate's."""

    action: Literal["create", "comment"]
    ticket_key: str  # the duplicate's ticket when action is "comment", else ""


class RememberedTicket(TypedDict):
    """The ticket filed (or commented on) for the current incident."""

    key: str
    url: str
    status: str


class IntakeState(TypedDict, total=False):
    """`Conversation.state["intake"]`: the current incident and its ticket.

    Every key may be missing (a conversation that never reported anything
    has `{}`); a new report resets `proposal` and `ticket` to None.
    """

    incident: dict[str, Any]  # rendering.STATE_FIELDS plus owner_team
    proposal: TicketProposal | None
    ticket: RememberedTicket | None
