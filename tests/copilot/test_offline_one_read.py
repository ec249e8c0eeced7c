"""One incident read in detail, then asked about in its own words without
pointing at it ("at worst what percentage of server-side sdk connections
failed"): a detail of that record, whichever intent the model leans to."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User

from copilot.services import conversation_create
from tests.copilot.test_offline_understanding import ask, done_of, tools_of
from tests.factories import incident_row, incidents_import

FLAGS = incident_row(
    "INC-2025-06-02-001",
    title="Flag delivery and streaming SDKs fail after the upstream cloud outage",
    impacted_application="Flag Service",
    root_cause="Cold caches on a legacy routing path and aggressive SDK retries overwhelmed "
    "the streaming load balancer.",
    mitigation="Streaming was restored region by region and SDKs fell back to polling.",
    body="Server-side SDK connections failed at about 98% globally for a time. Europe "
    "recovered by mid-afternoon.",
    occurred_at="2025-06-02",
)
DISK = incident_row(
    "INC-2025-03-11-001",
    title="Ledger exports stopped when the volume filled up",
    impacted_application="Ledger",
    root_cause="Export logs were never rotated and filled the volume.",
    body="Nightly ledger exports failed with 'no space left on device' for six hours.",
    occurred_at="2025-03-11",
)
OPENING = "Need a summary of INC-2025-06-02-001 for leadership"


@pytest.fixture
def flags(db: None, tmp_path: Path) -> None:
    incidents_import(tmp_path / "incidents.jsonl", [FLAGS, DISK], activate=True)


@pytest.mark.usefixtures("flags")
def test_the_record_read_is_asked_about_in_its_own_words(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    ask(conversation, alice, OPENING)
    follow_up = ask(
        conversation, alice, "at worst what percentage of server-side sdk connections failed"
    )
    assert tools_of(follow_up) == [("lookup_incident_by_id", {"incident_id": "INC-2025-06-02-001"})]
    assert "98%" in done_of(follow_up).content


@pytest.mark.usefixtures("flags")
def test_a_new_story_after_it_is_still_searched(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    ask(conversation, alice, OPENING)
    follow_up = ask(conversation, alice, "ledger exports failing with no space left on device")
    (tool, _), *_ = tools_of(follow_up)
    assert tool == "search_similar_incidents"
    assert "INC-2025-03-11-001" in done_of(follow_up).citations
