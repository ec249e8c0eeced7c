"""Writes for intake, and `turn_kind`.

`copilot.intake.executor.intake_reply` answers a turn the planner routes to
intake (a new report, a comment, "what did we decide?"); past-incident
questions stay with the agent (`copilot.replies.conversation_reply` asks
`turn_kind` first). The run calls the writes here, never the other way round.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.core.files.base import ContentFile
from django.db import transaction
from django.utils import timezone

from copilot.intake import media, planner, rules
from copilot.intake.selectors import intake_state
from copilot.intake.state import IntakeState, TurnKind
from copilot.models import (
    Conversation,
    Decision,
    Message,
    ReportScreenshot,
    Ticket,
    TicketComment,
)
from incidentdesk.errors import ValidationError
from incidents.importers import SourceRow
from incidents.importing import INCIDENT_SPEC
from incidents.models import Dataset, Incident
from incidents.services import dataset_import_rows, incident_mark_reported

if TYPE_CHECKING:
    from copilot.intake.steps import IntakeContext

REPORTED_DATASET = "reported"
INTAKE_TOOL_NAME = "incident_intake"  # the tool result the web card and the API read
REPORT_SOURCE = "incidentdesk-intake"
MAX_TEXT_CHARS = 8000


# --- entry points -------------------------------------------------------------------


def turn_kind(conversation: Conversation, text: str, has_image: bool) -> TurnKind:
    """new_incident, add_comment, ask_summary or query_past (the agent's)."""
    state = intake_state(conversation)
    return planner.classify(text=text, has_image=has_image, state=state).kind


# --- state ----------------------------------------------------------------------------


def conversation_intake_state_set(*, conversation: Conversation, state: IntakeState) -> None:
    """Replace `state["intake"]` only, under a row lock: other keys are left as they are."""
    with transaction.atomic():
        locked = Conversation.objects.select_for_update().get(pk=conversation.pk)
        locked.state = {**(locked.state or {}), "intake": state.to_json()}
        locked.save(update_fields=["state", "updated_at"])
    conversation.state = locked.state


# --- the screenshot -------------------------------------------------------------------


def report_screenshot_store(*, message: Message, screenshot: media.Screenshot) -> None:
    """Keep the validated screenshot with the report's message (its ticket shows it)."""
    extension = "png" if screenshot.format == "PNG" else "jpg"
    row = ReportScreenshot(
        message=message,
        content_type=screenshot.content_type,
        width=screenshot.width,
        height=screenshot.height,
    )
    row.image.save(f"message-{message.pk}.{extension}", ContentFile(screenshot.data), save=False)
    row.full_clean()
    row.save()


# --- memory -----------------------------------------------------------------------------


def reported_incident_row(
    *, incident: dict[str, Any], owner_team: str, conversation: Conversation, ticket_key: str = ""
) -> dict[str, Any]:
    """The report in the import schema; unknown columns (the conversation, the
    reporter, the ticket's key) land in the incident's `extra`."""
    body = "\n".join(
        part
        for part in (
            incident.get("description", ""),
            f"Impact: {incident.get('impact', '')}",
            f"Components: {', '.join(incident.get('components', []))}",
        )
        if part
    )
    return {
        "incident_id": incident["incident_id"],
        "title": incident["title"],
        "impacted_application": incident.get("service", ""),
        "accountable_party": owner_team,
        "source_system": REPORT_SOURCE,
        "severity": incident.get("severity", ""),
        "status": "open",
        "occurred_at": incident["reported_at"][:10],
        "tags": incident.get("tags", []),
        "body": body,
        "conversation_id": conversation.pk,
        "reported_by": incident.get("reported_by", ""),
        "ticket_key": ticket_key,
    }


@transaction.atomic
def reported_incident_store(
    *,
    incident: dict[str, Any],
    owner_team: str,
    user: AbstractBaseUser,
    conversation: Conversation,
    ticket_key: str = "",
    dataset_name: str = "",
) -> None:
    """Upsert the report into the active version of the "reported" dataset (embedded),
    so the next search, and the next duplicate check, find it, marked `reported`
    until staff review it.

    A `dataset_name` of its own (the evaluation's) is never activated: its
    reports stay out of live search.
    """
    row = reported_incident_row(
        incident=incident, owner_team=owner_team, conversation=conversation, ticket_key=ticket_key
    )
    version, result = dataset_import_rows(
        spec=INCIDENT_SPEC,
        kind=Dataset.Kind.INCIDENTS,
        rows=[SourceRow(1, row)],
        dataset_name=dataset_name or REPORTED_DATASET,
        activate=not dataset_name,
    )
    if result.failed:
        reasons = "; ".join(str(error) for error in result.errors)
        raise ValidationError(f"The incident could not be stored: {reasons}")
    incident_mark_reported(version=version, incident_id=row["incident_id"])


def reported_incident_ticket_set(
    *, incident_id: str, ticket_key: str, dataset_name: str = ""
) -> int:
    """Write the ticket's key on a report stored before it was filed (the user
    confirmed later); return how many rows changed (0: the report was not stored).
    `dataset_name`: as for `reported_incident_store`."""
    reported = Incident.objects.filter(
        incident_id=incident_id, version__dataset__name=dataset_name or REPORTED_DATASET
    )
    changed = 0
    for row in reported:
        if row.extra.get("ticket_key") != ticket_key:
            row.extra = {**row.extra, "ticket_key": ticket_key}
            row.save(update_fields=["extra"])
            changed += 1
    return changed


# --- the decision ledger --------------------------------------------------------------------


def decisions_record(
    *,
    ctx: IntakeContext,
    entries: Sequence[rules.LedgerEntry],
    ticket: Ticket | None,
    comment: TicketComment | None,
) -> list[Decision]:
    """One ledger row per decision or action, with who, when and where it was said."""
    said_by = ctx.user.get_username()
    rows = []
    for entry in entries:
        decision = Decision(
            conversation=ctx.conversation,
            ticket=ticket,
            kind=entry.kind,
            what=entry.what[:2000],
            who=(entry.who or said_by)[:200],
            decided_by_id=ctx.user.pk,
            decided_at=timezone.now(),
            source_message=ctx.user_message,
            ticket_comment=comment,
        )
        decision.full_clean()
        decision.save()
        rows.append(decision)
    return rows
