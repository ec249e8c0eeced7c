"""PLAYBOOK: sourced causes and actions, runbooks that fit, an internal owner team."""

from __future__ import annotations

import pytest

from copilot.intake.playbook import (
    GENERIC_ACTIONS,
    LOGS_UNAVAILABLE,
    ROLLBACK_ACTION,
    as_instruction,
    fits,
    owner_team,
    playbook_for,
)
from knowledge.models import KnowledgeDocument
from knowledge.selectors import KnowledgeHit

INCIDENT = {"service": "Checkout Gateway", "error_codes": ["HTTP 502"]}
SIMILAR = [
    {"incident_id": "INC-2024-11-04-001", "root_cause": "Keep-alive mismatch. More text.",
     "mitigation": "Rolled back the chart. Then pinned it.", "accountable_party": "Vendor: Acme",
     "score": 0.03},
    {"incident_id": "INC-2025-11-28-001", "root_cause": "Autoscaler at max.", "mitigation": "",
     "accountable_party": "Checkout Team", "score": 0.02},
]  # fmt: skip


def runbook(services: list[str], body: str, doc_type: str = "runbook") -> KnowledgeHit:
    document = KnowledgeDocument(
        doc_id="KB-RB-042", title="Gateway errors", type=doc_type, services=services, body=body
    )
    return KnowledgeHit(document, 1.0, "")


def test_a_runbook_fits_when_it_is_for_the_service_and_names_the_error() -> None:
    steps = "## Steps\n1. Check the 502 rate.\n2. Roll back."
    assert fits(runbook(["Checkout Gateway"], steps), INCIDENT)
    assert not fits(runbook(["Payout Service"], steps), INCIDENT)
    assert not fits(runbook(["Checkout Gateway"], "1. Rotate the key if you see 403s."), INCIDENT)
    assert not fits(runbook(["Checkout Gateway"], steps, "architecture"), INCIDENT)
    assert fits(runbook(["Checkout Gateway"], "1. Anything."), {"service": "Checkout Gateway"})


def test_actions_cite_their_sources_and_causes_come_from_root_causes() -> None:
    steps = "## Steps\n1. Check the 502 rate.\n2. Roll back.\n3. Watch.\n4. Not this one."
    result = playbook_for(
        SIMILAR, [runbook(["Checkout Gateway"], steps)], INCIDENT, logs_searchable=True
    )
    assert [(a.text, a.source) for a in result.actions] == [
        ("Check the 502 rate.", "KB-RB-042"),
        ("Roll back.", "KB-RB-042"),
        ("Watch.", "KB-RB-042"),
        ("Roll back the chart.", "INC-2024-11-04-001"),  # what was done, as a next step
    ]
    assert [(c.text, c.source) for c in result.causes] == [
        ("Keep-alive mismatch.", "INC-2024-11-04-001"),
        ("Autoscaler at max.", "INC-2025-11-28-001"),
    ]


def test_the_owner_team_is_internal() -> None:
    assert owner_team(SIMILAR) == "Checkout Team"  # the vendor ranked first cannot own it
    assert owner_team([]) == ""


def test_with_nothing_similar_the_first_moves_of_on_call_are_proposed() -> None:
    result = playbook_for([], [], INCIDENT, logs_searchable=True)
    assert [a.text for a in result.actions] == list(GENERIC_ACTIONS)
    assert {a.source for a in result.actions} == {"severity rules"}


@pytest.mark.parametrize(
    ("mitigation", "instruction"),
    [
        ("Raised maxReplicas to 80.", "Raise maxReplicas to 80."),
        ("Engineers reattached replicas.", "Reattach replicas."),
        ("Reverted the change and restored service.", "Revert the change and restore service."),
        ("Traffic was shifted away.", "Past fix: Traffic was shifted away."),  # passive: as is
        ("A vendor patch arrived.", "Past fix: A vendor patch arrived."),
    ],
)
def test_past_fixes_are_offered_as_next_steps(mitigation: str, instruction: str) -> None:
    assert as_instruction(mitigation) == instruction


def test_a_report_after_a_deploy_offers_rollback_first() -> None:
    after_deploy = INCIDENT | {"description": "502s on checkout since the deploy at 14:00"}
    first = playbook_for(SIMILAR, [], after_deploy, logs_searchable=True).actions[0]
    assert (first.text, first.source) == (ROLLBACK_ACTION, "change rule")
    assert playbook_for(SIMILAR, [], INCIDENT, logs_searchable=True).actions[0].source != (
        "change rule"
    )


def test_without_a_log_search_the_playbook_says_logs_were_not_checked() -> None:
    last = playbook_for(SIMILAR, [], INCIDENT).actions[-1]
    assert (last.text, last.source) == (LOGS_UNAVAILABLE, "log search")
    with_logs = playbook_for(SIMILAR, [], INCIDENT, logs_searchable=True)
    assert LOGS_UNAVAILABLE not in [a.text for a in with_logs.actions]
