"""The shared hybrid ranking: its SQL fusion agrees with reciprocal rank fusion
computed the plain way, and its hand-written scope is the ORM's."""

from pathlib import Path

import pytest

from incidentdesk.embeddings import embed_query_literal
from incidents.models import DatasetVersion, IncidentChunk
from incidents.ranking import (
    EXACT_DISTANCE,
    RRF_K,
    ChunkScope,
    _fused_winners,
    fetch_rows,
)
from incidents.selectors import chunk_scope, scope_version_ids
from tests.factories import incident_row, incidents_import

pytestmark = pytest.mark.django_db

TITLES = [
    "HTTP 403 errors after API key rotation",
    "Settlement report missing rows",
    "Checkout timeouts when the connection pool ran dry",
    "Refund webhooks failing with 500",
    "DNS resolution failures in the payments cluster",
    "Gateway returned 403 for rotated merchant keys",
]


@pytest.fixture
def six_incidents(tmp_path: Path) -> DatasetVersion:
    rows = [
        incident_row(
            f"INC-2025-08-{day:02d}-001",
            title=title,
            root_cause=f"Cause {day}: {title.lower()}.",
            mitigation=f"Fixed what broke: {title.lower()}.",
        )
        for day, title in enumerate(TITLES, start=1)
    ]
    return incidents_import(tmp_path / "six.jsonl", rows, dataset_name="six", activate=True)


def plain_fusion(
    vector_hits: list[tuple[int, int]], text_hits: list[tuple[int, int]]
) -> list[tuple[int, int, float]]:
    """Reciprocal rank fusion as the papers write it: (parent, chunk, score), best first."""
    scores: dict[int, float] = {}
    best_chunk: dict[int, int] = {}
    for hits in (vector_hits, text_hits):
        for rank, (parent_id, chunk_id) in enumerate(hits, start=1):
            scores[parent_id] = scores.get(parent_id, 0.0) + 1.0 / (RRF_K + rank)
            best_chunk.setdefault(parent_id, chunk_id)
    ordered = sorted(scores.items(), key=lambda item: -item[1])
    return [(parent_id, best_chunk[parent_id], score) for parent_id, score in ordered]


def test_the_sql_fusion_matches_reciprocal_rank_fusion(six_incidents: DatasetVersion) -> None:
    literal = embed_query_literal("forbidden after rotating the merchant api key")
    rows = fetch_rows(
        f"SELECT incident_id, id FROM incidents_incidentchunk WHERE version_id = %s"  # noqa: S608 - ours
        f" ORDER BY {EXACT_DISTANCE}, id",
        [six_incidents.pk, literal],
    )
    nearest: dict[int, int] = {}  # each parent's nearest chunk, nearest parent first
    farthest: dict[int, int] = {}
    for parent, chunk in rows:
        nearest.setdefault(parent, chunk)
        farthest[parent] = chunk
    vector_hits = list(nearest.items())
    # A text list in another order, naming other chunks of the same parents.
    text_hits = list(reversed(farthest.items()))[:4]
    scope = ChunkScope.in_versions(IncidentChunk, [six_incidents.pk])

    fused = _fused_winners(scope, "incident", literal, True, text_hits, limit=5)

    expected = plain_fusion(vector_hits, text_hits)[:5]
    assert [(r.parent.pk, r.score) for r in fused] == [(p, s) for p, _, s in expected]
    chunk_texts = dict(IncidentChunk.objects.values_list("id", "text"))
    assert [r.chunk_text for r in fused] == [chunk_texts[c] for _, c, _ in expected]
    assert all(r.parent.title in TITLES for r in fused)


def test_the_written_scope_is_the_sql_the_orm_compiles(six_incidents: DatasetVersion) -> None:
    ids = scope_version_ids()
    assert ChunkScope.in_versions(IncidentChunk, ids) == ChunkScope.of(chunk_scope())
    assert ChunkScope.in_versions(IncidentChunk, []) == ChunkScope.of(
        IncidentChunk.objects.filter(version_id__in=[])
    )
