"""The offline engine's routing decisions."""

import datetime as dt

import pytest

from copilot.router import route
from incidents import query_parsing as qp

CATALOG = [
    qp.ApplicationEntry.of("PayU Core", "PayU"),
    qp.ApplicationEntry.of("Settlement & Reporting", "PayU"),
    qp.ApplicationEntry.of("GitHub Codespaces", "GitHub"),
]
TODAY = dt.date(2026, 1, 10)


@pytest.mark.parametrize(
    ("question", "tool", "arguments"),
    [
        ("What caused INC\u20112025\u201108\u201124\u2011001?", "lookup_incident_by_id",
         {"incident_id": "INC-2025-08-24-001"}),
        ("Is there a runbook for rotating API keys?", "search_knowledge",
         {"query": "Is there a runbook for rotating API keys?", "limit": 10,
          "type_filter": "runbook"}),
        ("Known issue with secret caches?", "search_knowledge",
         {"query": "Known issue with secret caches?", "limit": 10, "type_filter": "known_issue"}),
        ("What broke in the last 2 weeks?", "get_recent_incidents", {"days": 14, "limit": 10}),
        ("PayU Core incidents in the last 30 days", "search_similar_incidents",
         {"query": "PayU Core incidents in the last 30 days", "limit": 5}),
        ("Show me all incidents that affected GitHub Codespaces.", "get_incidents_by_application",
         {"app_name": "GitHub Codespaces", "limit": 25}),
        ("settlement & reporting", "get_incidents_by_application",
         {"app_name": "settlement & reporting", "limit": 5}),
        ("Merchants get 403 after we rotated keys", "search_similar_incidents",
         {"query": "Merchants get 403 after we rotated keys", "limit": 5}),
        ("An operator following a playbook mistyped a command", "search_similar_incidents",
         {"query": "An operator following a playbook mistyped a command", "limit": 5}),
    ],
)  # fmt: skip
def test_questions_are_routed_to_the_right_tool(question, tool, arguments) -> None:
    decision = route(question, catalog=CATALOG, today=TODAY)
    assert (decision.tool, decision.arguments) == (tool, arguments)
