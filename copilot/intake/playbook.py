"""PLAYBOOK: likely causes, next actions and an owner team, from what retrieval found.

Every item cites its source (an incident id or a document id), so the user
can check it. Text from sources is quoted, trimmed and never acted on.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from knowledge.selectors import KnowledgeHit

MAX_CAUSES = 3
MAX_ACTIONS = 6
STEPS_PER_DOCUMENT = 3
ITEM_MAX_CHARS = 300
PLAYBOOK_TYPES = ("runbook", "known_issue")
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+")
_NUMBERED_STEP_RE = re.compile(r"^\s*\d+[.)]\s+(?P<step>.+)$", re.MULTILINE)
# When nothing similar is known, the first moves every on-call makes.
GENERIC_ACTIONS = (
    "Check what changed just before the start (deploys, config pushes, key rotations) "
    "and roll back the most recent one if it lines up.",
    "Confirm the blast radius: error rate and share of affected requests per region.",
    "Page the owning team and open a status page update if customers are affected.",
)


@dataclass(frozen=True)
class PlaybookItem:
    text: str
    source: str  # an incident id, a document id, or "severity rules"

    def as_dict(self) -> dict[str, str]:
        return {"text": self.text, "source": self.source}


@dataclass(frozen=True)
class Playbook:
    causes: list[PlaybookItem]
    actions: list[PlaybookItem]
    owner_team: str


def playbook_for(
    similar: Sequence[dict[str, Any]], documents: Sequence[KnowledgeHit], incident: dict[str, Any]
) -> Playbook:
    """Causes from similar incidents' root causes; actions from the steps of a runbook
    for the service and from their mitigations; the team most accountable for them."""
    causes = [
        PlaybookItem(_first_sentence(item["root_cause"]), item["incident_id"])
        for item in similar[:MAX_CAUSES]
        if item.get("root_cause")
    ]
    actions = _document_actions(documents, incident) + _incident_actions(similar)
    if not actions:
        actions = [PlaybookItem(text, "severity rules") for text in GENERIC_ACTIONS]
    return Playbook(causes, _unique(actions)[:MAX_ACTIONS], owner_team(similar))


def _incident_actions(similar: Sequence[dict[str, Any]]) -> list[PlaybookItem]:
    return [
        PlaybookItem(_first_sentence(item["mitigation"]), item["incident_id"])
        for item in similar[:MAX_CAUSES]
        if item.get("mitigation")
    ]


def _document_actions(
    documents: Sequence[KnowledgeHit], incident: dict[str, Any]
) -> list[PlaybookItem]:
    """The first numbered steps of the best matching runbook or known issue that fits."""
    for hit in documents:
        if not fits(hit, incident):
            continue
        steps = [m.group("step") for m in _NUMBERED_STEP_RE.finditer(hit.document.body)]
        if steps:
            return [
                PlaybookItem(_trim(step), hit.document.doc_id)
                for step in steps[:STEPS_PER_DOCUMENT]
            ]
    return []


def fits(hit: KnowledgeHit, incident: dict[str, Any]) -> bool:
    """A runbook of the incident's service that names its error codes, if it has any.

    Close words are not enough: a 403 key-rotation runbook for the same gateway
    is noise when the gateway returns 502s.
    """
    document = hit.document
    services = {name.lower() for name in document.services}
    if (
        document.type not in PLAYBOOK_TYPES
        or str(incident.get("service", "")).lower() not in services
    ):
        return False
    codes = [code.lower().removeprefix("http ") for code in incident.get("error_codes") or []]
    text = " ".join([document.title, *document.tags, document.body]).lower()
    return not codes or any(code in text for code in codes)


def owner_team(similar: Sequence[dict[str, Any]]) -> str:
    """The internal team accountable for most of the similar incidents, by score.

    Vendors ("Vendor: SMSly") are left out: a vendor cannot own our ticket.
    """
    weights: dict[str, float] = defaultdict(float)
    for rank, item in enumerate(similar):
        party = str(item.get("accountable_party") or "").strip()
        if party and not party.lower().startswith("vendor"):
            weights[party] += float(item.get("score") or 0.0) + 1.0 / (rank + 1)
    return max(weights, key=lambda party: weights[party]) if weights else ""


def _first_sentence(text: str) -> str:
    return _trim(_SENTENCE_RE.split(" ".join(text.split()), maxsplit=1)[0])


def _trim(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= ITEM_MAX_CHARS else flat[: ITEM_MAX_CHARS - 1].rstrip() + "…"


def _unique(items: list[PlaybookItem]) -> list[PlaybookItem]:
    seen: set[str] = set()
    kept = []
    for item in items:
        if item.text.lower() not in seen:
            seen.add(item.text.lower())
            kept.append(item)
    return kept
