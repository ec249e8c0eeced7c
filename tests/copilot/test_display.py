"""What the chat page is sent: the intake card rendered (escaped) by the server, and the
sources panel's titles and snippets taken from the turn's own tool results."""

from __future__ import annotations

from copilot.display import citations, event_message
from copilot.events import StatusEvent, ToolResultEvent
from copilot.models import Message

CARD = {
    "kind": "new_incident",
    "incident": {
        "title": "Checkout <script>alert(1)</script> 502s",
        "severity": "SEV2",
        "severity_reason": "checkout is down",
        "service": "Checkout Gateway",
        "impact": "payments fail",
        "components": ["checkout-api"],
        "tags": ["deploy"],
        "incident_id": "INC-2026-03-02-001",
    },
    "description": "Checkout returns 502",
    "similar_incidents": [],
    "actions": [{"text": "Roll back the deploy", "source": "severity rules"}],
    "owner_team": "payments",
    "ticket": None,
    "ticket_error": "",
    "ticket_proposal": {"action": "create", "ticket_key": ""},
    "decisions": [],
    "steps": [{"name": "INGESTION", "outcome": "ok", "ms": 3, "error": ""}],
}


def test_the_intake_result_comes_with_its_card_rendered_and_escaped() -> None:
    message = event_message(ToolResultEvent("intake-1", "incident_intake", 0, 12, CARD))
    assert message["type"] == "tool_result" and message["data"] == CARD
    html = message["html"]
    assert 'class="intake-card"' in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html and "<script>" not in html
    assert "reply “yes, file it”" in html


def test_other_events_are_sent_as_they_are() -> None:
    event = StatusEvent("Searching for Similar Incidents...")
    assert event_message(event) == event.to_message()
    search = ToolResultEvent("call-1", "search_similar_incidents", 0, 5, {"results": []})
    assert "html" not in event_message(search)


def test_citations_carry_the_title_and_a_snippet_from_the_tool_results() -> None:
    tool = Message(
        role="tool",
        data={
            "groups": {
                "runbooks": [
                    {"id": "KB-RB-007", "title": "Gateway 403s", "preview": "Rotate  the\nkey."}
                ]
            },
            "results": [{"incident_id": "INC-2026-03-02-001", "title": "Checkout 502s",
                         "root_cause": "x" * 400}],
        },
    )  # fmt: skip
    answer = Message(role="assistant", citations=["INC-2026-03-02-001", "KB-RB-007", "KB-X-1"])
    found = {c.id: c for c in citations(answer, [tool])}
    assert found["KB-RB-007"].title == "Gateway 403s"
    assert found["KB-RB-007"].snippet == "Rotate the key."
    assert found["INC-2026-03-02-001"].kind == "incident"
    assert len(found["INC-2026-03-02-001"].snippet) == 220
    assert (found["KB-X-1"].title, found["KB-X-1"].snippet) == ("", "")
