"""The shapes intake keeps between turns, and the kinds a turn can be. No ORM.

The state lives as JSON in `Conversation.state["intake"]`, written by
`conversation_intake_state_set` and read by `intake_state`. Here it is frozen
dataclasses: a step that changes it builds a new one (`dataclasses.replace`)
and puts it on the turn's context, so what a turn changed is an assignment to
find, not an edit to a shared dict. `from_json` and `to_json` keep the stored
JSON exactly as the earlier dicts wrote it (no migration): `{}` until the
first report, then `proposal` and `ticket` always (null when there is none)
and `incident` once one was classified. `from_json` reads any of those, with
missing keys as empty.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Literal


class TurnKind(StrEnum):
    """What a turn is; a StrEnum, so it is stored and sent as the plain string."""

    NEW_INCIDENT = "new_incident"
    ADD_COMMENT = "add_comment"
    ASK_SUMMARY = "ask_summary"
    QUERY_PAST = "query_past"  # the agent's
    CHIT_CHAT = "chit_chat"  # the agent's


# Intake answers these; the rest go to the agent.
INTAKE_KINDS = frozenset({TurnKind.NEW_INCIDENT, TurnKind.ADD_COMMENT, TurnKind.ASK_SUMMARY})


@dataclass(frozen=True)
class TicketProposal:
    """A ticket offered and awaiting "yes": a new one, or a comment on a duplicate's."""

    action: Literal["create", "comment"]
    ticket_key: str = ""  # the duplicate's ticket when action is "comment", else ""

    @classmethod
    def from_json(cls, data: object) -> TicketProposal | None:
        """A stored proposal; anything but "comment" files a new ticket, as before."""
        if not isinstance(data, dict) or not data:
            return None
        action: Literal["create", "comment"] = (
            "comment" if data.get("action") == "comment" else "create"
        )
        return cls(action=action, ticket_key=str(data.get("ticket_key") or ""))

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "ticket_key": self.ticket_key}


@dataclass(frozen=True)
class RememberedTicket:
    """The ticket filed (or commented on) for the current incident."""

    key: str
    url: str = ""
    status: str = ""

    @classmethod
    def from_json(cls, data: object) -> RememberedTicket | None:
        if not isinstance(data, dict) or not data.get("key"):
            return None
        return cls(
            key=str(data["key"]),
            url=str(data.get("url") or ""),
            status=str(data.get("status") or ""),
        )

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "url": self.url, "status": self.status}


def _read_only(incident: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(incident))


@dataclass(frozen=True)
class IntakeState:
    """`Conversation.state["intake"]`: the current incident and its ticket.

    A conversation that never reported anything has the empty state; a new
    report starts with neither `proposal` nor `ticket`. `incident` is the
    report as remembered for follow-ups (`rendering.STATE_FIELDS` plus
    owner_team), held read-only: a turn works on its own copy.
    """

    incident: Mapping[str, Any] = field(default_factory=dict)
    proposal: TicketProposal | None = None
    ticket: RememberedTicket | None = None

    def __post_init__(self) -> None:
        # Frozen all the way to the incident's keys: a step cannot change the
        # remembered report behind the executor's back.
        object.__setattr__(self, "incident", _read_only(self.incident))

    @classmethod
    def from_json(cls, data: object) -> IntakeState:
        """The stored state; a missing or malformed one is the empty state."""
        if not isinstance(data, dict):
            return cls()
        incident = data.get("incident")
        return cls(
            incident=incident if isinstance(incident, dict) else {},
            proposal=TicketProposal.from_json(data.get("proposal")),
            ticket=RememberedTicket.from_json(data.get("ticket")),
        )

    def to_json(self) -> dict[str, Any]:
        """The JSON the earlier dicts stored (see the module docstring)."""
        if not (self.incident or self.proposal or self.ticket):
            return {}
        stored: dict[str, Any] = {"incident": dict(self.incident)} if self.incident else {}
        return stored | {
            "proposal": self.proposal.to_json() if self.proposal else None,
            "ticket": self.ticket.to_json() if self.ticket else None,
        }
