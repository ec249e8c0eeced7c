"""Read-only queries over incidents. Only selectors build queries."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, QuerySet
from pgvector.django import CosineDistance

from incidentdesk.embeddings import embed_query
from incidents.models import Dataset, DatasetVersion, Incident, IncidentChunk

# Enough candidates that `limit` distinct incidents survive de-duplication.
CANDIDATES_PER_RESULT = 8


@dataclass(frozen=True)
class IncidentHit:
    """One incident found by search, with the chunk that matched best."""

    incident: Incident
    chunk_text: str
    score: float


def active_versions() -> QuerySet[DatasetVersion]:
    return DatasetVersion.objects.filter(status=DatasetVersion.Status.ACTIVE)


def incident_list_active() -> QuerySet[Incident]:
    """Incidents in active versions: what users and the copilot may see."""
    return Incident.objects.filter(version__status=DatasetVersion.Status.ACTIVE)


def incident_search_similar(
    *, query: str, limit: int = 5, version: DatasetVersion | None = None
) -> list[IncidentHit]:
    """Nearest incidents to `query` by cosine similarity of their chunks.

    Reads the active versions unless a version is pinned. One hit per
    incident: its best chunk.
    """
    vector = embed_query(query)
    chunks = IncidentChunk.objects.select_related("incident")
    if version is None:
        chunks = chunks.filter(version__status=DatasetVersion.Status.ACTIVE)
    else:
        chunks = chunks.filter(version=version)
    nearest = chunks.annotate(distance=CosineDistance("embedding", vector)).order_by("distance")
    hits: dict[int, IncidentHit] = {}
    for chunk in nearest[: limit * CANDIDATES_PER_RESULT]:
        if chunk.incident_id not in hits:
            hits[chunk.incident_id] = IncidentHit(chunk.incident, chunk.text, 1 - chunk.distance)
    return list(hits.values())[:limit]


@dataclass(frozen=True)
class DatasetStats:
    name: str
    kind: str
    label: str
    rows: int


def active_dataset_stats() -> list[DatasetStats]:
    """What is searchable right now, for the home page."""
    versions = active_versions().select_related("dataset").order_by("dataset__name")
    return [DatasetStats(v.dataset.name, v.dataset.kind, v.label, v.row_count) for v in versions]


def dataset_list_with_counts() -> QuerySet[Dataset]:
    return Dataset.objects.annotate(version_count=Count("versions"))
