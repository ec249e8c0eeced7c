"""Vector search over active versions, and proof that it uses the HNSW index."""

import datetime as dt
from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from incidents.models import DatasetVersion, IncidentChunk
from incidents.ranking import ChunkScope, _fused_winners
from incidents.selectors import incident_search_similar
from tests.factories import (
    incident_row,
    incidents_import,
    key_rotation_403,
    settlement_missing_rows,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def two_incidents(tmp_path: Path) -> DatasetVersion:
    rows = [key_rotation_403(), settlement_missing_rows()]
    return incidents_import(tmp_path / "a.jsonl", rows, activate=True)


def test_search_finds_the_incident_by_meaning(two_incidents: DatasetVersion) -> None:
    hits = incident_search_similar(
        query="merchants are getting forbidden after credentials changed"
    ).hits
    assert [h.incident.incident_id for h in hits] == ["INC-2025-08-24-001", "INC-2025-09-01-001"]
    assert hits[0].score > hits[1].score


def test_search_reads_only_active_versions_unless_one_is_pinned(two_incidents, tmp_path) -> None:
    staged = incidents_import(
        tmp_path / "b.jsonl",
        [incident_row("INC-2025-10-01-001", title="403 on key rotation")],
        version_label="next",
    )
    active_ids = {h.incident.incident_id for h in incident_search_similar(query="403").hits}
    pinned_ids = {
        h.incident.incident_id for h in incident_search_similar(query="403", version=staged).hits
    }
    assert active_ids == {"INC-2025-08-24-001", "INC-2025-09-01-001"}
    assert pinned_ids == {"INC-2025-10-01-001"}


def test_the_vector_query_of_search_reaches_the_hnsw_index(two_incidents: DatasetVersion) -> None:
    """The selector's own query: the index is on half-precision vectors, so a
    query with any other distance expression would scan the whole table."""
    with CaptureQueriesContext(connection) as captured:
        scope = ChunkScope.of(IncidentChunk.objects.all())
        vector = str([0.05] * 384)
        _fused_winners(scope, "incident", vector, exact=False, text_hits=[], limit=5)
    statement = captured.captured_queries[-1]["sql"]
    with connection.cursor() as cursor:
        # Two rows make a sequential scan cheaper; forbid it to see the plan
        # the planner picks on a real-sized table.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {statement}")
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "incidents_chunk_embedding_hnsw" in plan


def test_a_window_question_filters_by_window_and_application_and_ranks_the_subject(
    tmp_path: Path,
) -> None:
    """ "PayU Core timeouts in the last 90 days": PayU Core, in the window, by "timeouts"."""
    rows = [
        incident_row("INC-2025-12-01-001", title="Gateway timeouts under load",
                     impacted_application="PayU Core", occurred_at="2025-12-01"),
        incident_row("INC-2025-12-02-001", title="Gateway timeouts under load",
                     impacted_application="Checkout Gateway", occurred_at="2025-12-02"),
        incident_row("INC-2025-06-01-001", title="Gateway timeouts under load",
                     impacted_application="PayU Core", occurred_at="2025-06-01"),
    ]  # fmt: skip
    version = incidents_import(tmp_path / "w.jsonl", rows, dataset_name="w", activate=True)
    found = incident_search_similar(
        query="PayU Core timeouts in the last 90 days",
        limit=5,
        now=dt.date(2026, 1, 10),
        version=version,
    )
    assert found.applied.applications == ("PayU Core",)
    assert found.applied.window is not None and not found.expanded
    assert [h.incident.incident_id for h in found.hits] == ["INC-2025-12-01-001"]
