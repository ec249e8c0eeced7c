"""Incidents as text for the model (the original design's format) and as data.

Reads attributes only: no queries, so callers control select_related.
"""

from __future__ import annotations

from typing import Any, Protocol


class IncidentLike(Protocol):
    incident_id: str
    title: str
    impacted_application: str
    root_cause: str
    mitigation: str
    accountable_party: str
    source_system: str
    repeat_incident: bool
    severity: str
    status: str
    category: str
    source_url: str
    body: str
    review_status: str

    @property
    def occurred_at(self) -> Any: ...


BODY_HEADING = "Details and Actions Taken and Steps and Fixes:"
REPORTED_BADGE = "reported, not reviewed"  # the words pages, chat and the model all show


def incident_text(incident: IncidentLike, *, brief: bool = False) -> str:
    """The block the model reads; ids first so it can cite them.

    `brief` leaves out the details, for long listings: they would crowd the
    conversation's history, and one lookup brings them back.
    """
    fields = [
        ("Incident ID", incident.incident_id),
        ("Title", incident.title),
        ("Impacted Application", incident.impacted_application),
        ("Occurred At", incident.occurred_at.isoformat() if incident.occurred_at else "unknown"),
        ("Severity", incident.severity),
        ("Category", incident.category),
        ("Repeat Incident", "Yes" if incident.repeat_incident else "No"),
        ("Root Cause", incident.root_cause),
        ("Mitigation", incident.mitigation or "not recorded"),
        ("Accountable Party", incident.accountable_party),
        ("Source", incident.source_url),
        ("Review", REPORTED_BADGE if incident.review_status == "reported" else ""),
    ]
    lines = [f"{name}: {value}" for name, value in fields if value]
    if not brief:
        lines += [BODY_HEADING, incident.body or "(none recorded)"]
    return "\n".join(lines)


def incident_data(incident: IncidentLike, **extra: Any) -> dict[str, Any]:
    """JSON-ready fields for the UI and the API."""
    return {
        "incident_id": incident.incident_id,
        "title": incident.title,
        "impacted_application": incident.impacted_application,
        "occurred_at": incident.occurred_at.isoformat() if incident.occurred_at else None,
        "severity": incident.severity,
        "status": incident.status,
        "category": incident.category,
        "repeat_incident": incident.repeat_incident,
        "root_cause": incident.root_cause,
        "mitigation": incident.mitigation,
        "accountable_party": incident.accountable_party,
        "source_url": incident.source_url,
        "review_status": incident.review_status,
        **extra,
    }


def incidents_text(incidents: list[IncidentLike], *, heading: str, brief: bool = False) -> str:
    if not incidents:
        return f"{heading}\nNo incidents found."
    blocks = [incident_text(incident, brief=brief) for incident in incidents]
    return f"{heading}\n\n" + "\n\n---\n\n".join(blocks)
