"""search_knowledge filters take one value or several, through the tool (snake_case
or the design's camelCase names) and REST (repeated or comma-separated)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rest_framework.test import APIClient

from copilot.tools import ToolContext, run_tool
from tests.factories import (
    documents_import,
    key_rotation_runbook,
    payment_flow_architecture,
    secret_cache_known_issue,
)

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("documents", "roomy_api_rates")]


@pytest.fixture
def documents(tmp_path: Path) -> None:
    architecture = payment_flow_architecture(
        services=["Settlement"], body="## Overview\nCheckout calls fraud scoring, then settlement."
    )
    rows = [key_rotation_runbook(), secret_cache_known_issue(), architecture]
    documents_import(tmp_path / "kb.jsonl", rows, activate=True)


def tool(arguments: dict[str, Any]) -> Any:
    return run_tool("search_knowledge", json.dumps(arguments), ToolContext())


def test_the_tool_takes_a_list_for_each_filter() -> None:
    result = tool(
        {"type_filter": ["runbook", "known_issue"], "service_filter": ["payu", "checkout"]}
    )
    assert result.error == ""
    assert sorted(result.ids) == ["KB-KI-001", "KB-RB-001"]
    assert result.data["filters"] == {"type": "runbook, known_issue", "service": "payu, checkout"}


def test_the_tool_takes_the_designs_camel_case_names() -> None:
    result = tool({"query": "", "typeFilter": "known_issue", "tagFilter": ["secrets", "403"]})
    assert result.error == "" and result.ids == ("KB-KI-001",)
    both = tool({"type_filter": "runbook", "typeFilter": "runbook"})
    assert "not both" in both.error


def test_the_tool_still_rejects_what_it_cannot_use() -> None:
    assert "one of runbook" in tool({"type_filter": ["runbook", "recipe"]}).error
    assert "string or a list of strings" in tool({"tag_filter": [1, 2]}).error


def test_the_models_json_groups_known_issues_under_the_designs_key() -> None:
    result = tool({"query": "secret cache keys", "type_filter": "known_issue"})
    assert list(result.data["groups"]) == ["runbooks", "postmortems", "architecture", "knownIssues"]
    assert result.data["groups"]["knownIssues"][0]["id"] == "KB-KI-001"
    assert 'Groups: {"knownIssues": ["KB-KI-001"]}' in result.text


def test_rest_takes_repeated_and_comma_separated_values(api_client: APIClient, alice: Any) -> None:
    api_client.force_authenticate(alice)
    url = "/api/knowledge/search/"
    repeated = api_client.get(f"{url}?query=&type_filter=runbook&type_filter=known_issue").json()
    commas = api_client.get(url, {"query": "", "type_filter": "runbook,known_issue"}).json()
    for body in (repeated, commas):
        assert body["filters"] == {"type": "runbook, known_issue"}
        assert [d["id"] for d in body["results"]["runbooks"]] == ["KB-RB-001"]
        assert [d["id"] for d in body["results"]["known_issues"]] == ["KB-KI-001"]
    tags = api_client.get(f"{url}?query=&tag_filter=secrets,architecture&tag_filter=403").json()
    assert sum(len(group) for group in tags["results"].values()) == 3
    bad = api_client.get(url, {"query": "", "type_filter": "runbook,recipe"})
    assert bad.status_code == 400


def test_the_schema_documents_filters_as_lists(api_client: APIClient, alice: Any) -> None:
    api_client.force_login(alice)
    schema = api_client.get("/api/schema/?format=json").json()
    parameters = {
        p["name"]: p for p in schema["paths"]["/api/knowledge/search/"]["get"]["parameters"]
    }
    for name in ("type_filter", "service_filter", "tag_filter"):
        assert parameters[name]["schema"]["type"] == "array"
        assert "separate values with commas" in parameters[name]["description"]
    assert parameters["type_filter"]["schema"]["items"]["enum"] == [
        "runbook", "postmortem", "architecture", "known_issue",
    ]  # fmt: skip


def test_rest_takes_the_designs_camel_case_names(api_client: APIClient, alice: Any) -> None:
    # Ignored, typeFilter listed every document as if no filter had been given.
    api_client.force_authenticate(alice)
    url = "/api/knowledge/search/"
    camel = api_client.get(f"{url}?query=&typeFilter=runbook&typeFilter=known_issue").json()
    assert camel["filters"] == {"type": "runbook, known_issue"}
    assert sum(len(group) for group in camel["results"].values()) == 2
    tags = api_client.get(url, {"query": "", "tagFilter": "secrets,403"}).json()
    assert tags["filters"] == {"tag": "secrets, 403"}
    both = api_client.get(url, {"query": "", "type_filter": "runbook", "typeFilter": "runbook"})
    assert both.status_code == 400
    assert "not both" in json.dumps(both.json())
