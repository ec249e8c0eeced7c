"""Read-only queries for the copilot."""

from __future__ import annotations

from dataclasses import dataclass

from pgvector.django import CosineDistance

from copilot.models import GoldenExample
from incidentdesk.embeddings import embed_query

GOLDEN_MIN_SIMILARITY = 0.6


@dataclass(frozen=True)
class GoldenMatch:
    question: str
    answer: str
    similarity: float


def golden_example_list_nearest(
    *, question: str, limit: int = 2, min_similarity: float = GOLDEN_MIN_SIMILARITY
) -> list[GoldenMatch]:
    """Active golden examples closest to `question` (cosine ≥ min_similarity)."""
    vector = embed_query(question)
    nearest = (
        GoldenExample.objects.filter(is_active=True, embedding__isnull=False)
        .annotate(distance=CosineDistance("embedding", vector))
        .filter(distance__lte=1 - min_similarity)
        .order_by("distance")[:limit]
    )
    return [GoldenMatch(g.question, g.answer, 1 - g.distance) for g in nearest]
