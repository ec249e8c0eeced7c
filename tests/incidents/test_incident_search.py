"""Vector search over active versions, and proof that it uses the HNSW index."""

import datetime as dt
from pathlib import Path

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from incidents.models import DatasetVersion, IncidentChunk
from incidents.ranking import ChunkScope, Fusion, _fused_winners, _text_candidates
from incidents.selectors import incident_search_similar, scope_version_ids
from incidents.services import dataset_version_activate
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
        _fused_winners(Fusion(scope, "incident", vector, [], 5))
    statement = captured.captured_queries[-1]["sql"]
    with connection.cursor() as cursor:
        # Two rows make a sequential scan cheaper; forbid it to see the plan
        # the planner picks on a real-sized table.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute(f"EXPLAIN {statement}")
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "incidents_chunk_embedding_hnsw" in plan


def _full_text_ids(query: str) -> set[str]:
    """Incidents the full-text half of an unfiltered search finds, as it runs it."""
    versions = scope_version_ids()
    scope = ChunkScope.in_versions(IncidentChunk, versions)
    hits = _text_candidates(scope, "incident", query, versions)
    found = IncidentChunk.objects.filter(incident_id__in=[hit[0] for hit in hits])
    return set(found.values_list("incident__incident_id", flat=True))


def test_activating_another_version_switches_what_full_text_finds(
    two_incidents: DatasetVersion, tmp_path: Path
) -> None:
    """The full-text index keeps each chunk's version inside it: what it finds must
    follow activation, without touching a chunk."""
    staged = incidents_import(
        tmp_path / "b.jsonl",
        [incident_row("INC-2025-10-01-001", title="Zorblax gateway refused the rotated key")],
        version_label="next",
    )
    assert _full_text_ids("zorblax") == set()
    assert _full_text_ids("settlement") == {"INC-2025-09-01-001"}

    dataset_version_activate(version=staged)

    assert _full_text_ids("zorblax") == {"INC-2025-10-01-001"}
    assert _full_text_ids("settlement") == set()


def test_the_full_text_query_of_search_reaches_the_versioned_index(
    two_incidents: DatasetVersion,
) -> None:
    """The index is on the search vector with the version's lexeme: a query with
    any other expression would read every version's matches from the table."""
    with CaptureQueriesContext(connection) as captured:
        _full_text_ids("settlement rows missing")
    statement = next(q["sql"] for q in captured.captured_queries if "ts_rank" in q["sql"])
    with connection.cursor() as cursor:
        cursor.execute("SET LOCAL enable_seqscan = off")  # as in the HNSW test above
        cursor.execute(f"EXPLAIN {statement}")
        plan = "\n".join(row[0] for row in cursor.fetchall())
    assert "incidents_chunk_fts_ver_gin" in plan


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


def test_a_name_written_in_full_also_searches_the_entries_named_after_it(
    tmp_path: Path,
) -> None:
    """ "PayU Core jobs stuck after a broker upgrade": the entry called just "PayU Core"
    and "PayU Core payouts (RabbitMQ)" are the same product; the search keeps both."""
    rows = [
        incident_row("INC-2025-12-01-001", title="Credentials revoked after a vendor breach",
                     impacted_application="PayU Core", occurred_at="2025-12-01"),
        incident_row("INC-2025-12-02-001", title="Payout jobs stuck after a broker upgrade",
                     impacted_application="PayU Core payouts (RabbitMQ)",
                     occurred_at="2025-12-02"),
        incident_row("INC-2025-12-03-001", title="Payout jobs stuck after a broker upgrade",
                     impacted_application="Checkout Gateway", occurred_at="2025-12-03"),
    ]  # fmt: skip
    version = incidents_import(tmp_path / "v.jsonl", rows, dataset_name="v", activate=True)
    found = incident_search_similar(
        query="PayU Core payout jobs stuck after a broker upgrade", limit=5, version=version
    )
    assert set(found.applied.applications) == {"PayU Core", "PayU Core payouts (RabbitMQ)"}
    assert found.hits[0].incident.incident_id == "INC-2025-12-02-001"
    assert "INC-2025-12-03-001" not in {h.incident.incident_id for h in found.hits}
