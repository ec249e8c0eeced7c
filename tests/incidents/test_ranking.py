"""The shared hybrid ranking: its SQL fusion agrees with min-max score fusion
computed the plain way, its hand-written scope is the ORM's, and a near tie
goes to the parent whose chunks cover more of the question."""

from pathlib import Path

import pytest

from incidentdesk.embeddings import embed_query_literal
from incidents.models import DatasetVersion, Incident, IncidentChunk
from incidents.ranking import (
    EXACT_DISTANCE,
    VECTOR_WEIGHT,
    ChunkScope,
    Fusion,
    RankedParent,
    _covering_first,
    _fused_winners,
    embed_in_background,
    fetch_rows,
    rare_terms,
)
from incidents.selectors import (
    IncidentFilters,
    _any_incident,
    _application_chunks,
    chunk_scope,
    incident_scope,
    scope_version_ids,
)
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


def scaled(scores: dict[int, float]) -> dict[int, float]:
    low, high = min(scores.values()), max(scores.values())
    return {p: (s - low) / (high - low) if high > low else 1.0 for p, s in scores.items()}


def plain_fusion(
    vector_hits: list[tuple[int, int, float]], text_hits: list[tuple[int, int, float]]
) -> list[tuple[int, int, float]]:
    """Min-max scaled scores, weighted and added, as the papers write it:
    (parent, chunk, score), best first; ties go to the vector list's order."""
    scores: dict[int, float] = {}
    best_chunk: dict[int, int] = {}
    listed: dict[int, int] = {}
    for weight, hits in ((VECTOR_WEIGHT, vector_hits), (1 - VECTOR_WEIGHT, text_hits)):
        for parent_id, score in scaled({p: s for p, _, s in hits}).items():
            scores[parent_id] = scores.get(parent_id, 0.0) + weight * score
        for parent_id, chunk_id, _ in hits:
            best_chunk.setdefault(parent_id, chunk_id)
            listed.setdefault(parent_id, len(listed))
    ordered = sorted(scores.items(), key=lambda item: (-round(item[1], 9), listed[item[0]]))
    return [(parent_id, best_chunk[parent_id], score) for parent_id, score in ordered]


def test_the_sql_fusion_matches_score_fusion(six_incidents: DatasetVersion) -> None:
    literal = embed_query_literal("forbidden after rotating the merchant api key")
    rows = fetch_rows(
        f"SELECT incident_id, id, 1 - ({EXACT_DISTANCE}) FROM incidents_incidentchunk"  # noqa: S608 - ours
        f" WHERE version_id = %s ORDER BY {EXACT_DISTANCE}, id",
        [literal, six_incidents.pk, literal],
    )
    nearest: dict[int, tuple[int, float]] = {}  # each parent's nearest chunk, nearest first
    farthest: dict[int, int] = {}
    for parent, chunk, similarity in rows:
        nearest.setdefault(parent, (chunk, similarity))
        farthest[parent] = chunk
    vector_hits = [(p, c, s) for p, (c, s) in nearest.items()]
    # A text list in another order, naming other chunks of the same parents,
    # with scores of its own that differ from the vector list's.
    text_hits = [(p, c, 1.0 / (i + 1)) for i, (p, c) in enumerate(reversed(farthest.items()))][:4]
    scope = ChunkScope.in_versions(IncidentChunk, [six_incidents.pk])

    fused = _fused_winners(Fusion(scope, "incident", literal, text_hits, 5, exact=True))

    expected = plain_fusion(vector_hits, text_hits)[:5]
    assert [r.parent.pk for r in fused] == [p for p, _, _ in expected]
    assert [r.score for r in fused] == pytest.approx([s for _, _, s in expected], abs=1e-3)
    chunk_texts = dict(IncidentChunk.objects.values_list("id", "text"))
    assert [r.chunk_text for r in fused] == [chunk_texts[c] for _, c, _ in expected]
    assert all(r.parent.title in TITLES for r in fused)


def test_a_clear_full_text_winner_outweighs_the_vector_runner_up(
    six_incidents: DatasetVersion,
) -> None:
    """What rank fusion lost: the first two of each list, crossed, tie by places
    (and the vector list's first won); by scores the clear full-text winner does."""
    literal = embed_query_literal("forbidden after rotating the merchant api key")
    scope = ChunkScope.in_versions(IncidentChunk, [six_incidents.pk])
    by_vector = _fused_winners(Fusion(scope, "incident", literal, [], 6, exact=True))
    first, second, last = by_vector[0].parent, by_vector[1].parent, by_vector[-1].parent

    def chunk_of(incident: object) -> int:
        return IncidentChunk.objects.filter(incident=incident).values_list("id", flat=True)[0]

    text_hits = [(p.pk, chunk_of(p), s) for p, s in ((second, 1.0), (first, 0.1), (last, 0.0))]

    fused = _fused_winners(Fusion(scope, "incident", literal, text_hits, 6, exact=True))

    assert fused[0].parent == second


def test_the_written_scope_is_the_sql_the_orm_compiles(six_incidents: DatasetVersion) -> None:
    ids = scope_version_ids()
    assert ChunkScope.in_versions(IncidentChunk, ids) == ChunkScope.of(chunk_scope())
    assert ChunkScope.in_versions(IncidentChunk, []) == ChunkScope.of(
        IncidentChunk.objects.filter(version_id__in=[])
    )


def test_the_written_application_scope_is_the_sql_the_orm_compiles(
    six_incidents: DatasetVersion,
) -> None:
    """incident_search_similar writes the statements of a search filtered by
    applications only; they must be what IncidentFilters.apply compiles to."""
    named = sorted(set(Incident.objects.values_list("impacted_application", flat=True)))[:2]
    for applications in (tuple(named), ("No such application",)):
        filters = IncidentFilters(application=applications[0], applications=applications)
        incidents = filters.apply(incident_scope())
        assert _application_chunks(filters, None) == ChunkScope.of(
            chunk_scope().filter(incident__in=incidents)
        )
        assert _any_incident(incident_scope(), filters, None) == incidents.exists()
    assert _any_incident(incident_scope(), IncidentFilters(applications=tuple(named)), None)
    assert _application_chunks(IncidentFilters(severity="SEV1"), None) is None  # the ORM's


UPLOADS_QUESTION = (
    "uploads failing: every insert errors out, reads are fine, the id column is at its max"
)


@pytest.fixture
def striking_detail_and_whole_story(tmp_path: Path) -> DatasetVersion:
    """One incident that shares a single detail with UPLOADS_QUESTION, one that
    tells all of it across its summary and body."""
    rows = [
        incident_row(
            "INC-2025-08-01-001",
            title="Dashboard id column misaligned",
            root_cause="A CSS change shifted one column.",
            body="Support saw the id column move.",
        ),
        incident_row(
            "INC-2025-08-02-001",
            title="Uploads failing after the key reached its maximum",
            root_cause="The id column of the uploads table hit its max value.",
            body="Every insert errored out while reads stayed fine.",
        ),
    ]
    return incidents_import(tmp_path / "two.jsonl", rows, dataset_name="two", activate=True)


def test_the_winners_come_with_the_question_terms_all_their_chunks_hold(
    striking_detail_and_whole_story: DatasetVersion,
) -> None:
    versions = [striking_detail_and_whole_story.pk]
    scope = ChunkScope.in_versions(IncidentChunk, versions)
    terms = rare_terms(UPLOADS_QUESTION, IncidentChunk._meta.db_table, versions)
    literal = embed_query_literal(UPLOADS_QUESTION)

    winners = _fused_winners(Fusion(scope, "incident", literal, [], 2, exact=True, terms=terms))

    covered = {hit.parent.incident_id: hit.covered for hit in winners}
    assert covered["INC-2025-08-02-001"] > covered["INC-2025-08-01-001"] > 0


@pytest.mark.parametrize(
    ("detail_score", "story_first"),
    [(0.80, True),  # a near tie goes to the incident covering more of the question
     (0.95, False)],  # a clear lead survives the coverage reordering
)  # fmt: skip
def test_coverage_reorders_near_ties_only(detail_score: float, story_first: bool) -> None:
    detail = Incident(incident_id="INC-2025-08-01-001")
    story = Incident(incident_id="INC-2025-08-02-001")
    story_score = 0.78 if story_first else 0.30
    ranked = [
        RankedParent(detail, detail_score, "", covered=2),
        RankedParent(story, story_score, "", covered=9),
    ]

    reordered = _covering_first(ranked)

    assert [hit.parent for hit in reordered] == (
        [story, detail] if story_first else [detail, story]
    )
    assert all(0.0 <= hit.score <= 1.0 for hit in reordered)


def test_a_vector_embedded_already_is_handed_back_at_once() -> None:
    """A chat answer searches with its question two or three times: the second
    search gets the vector without a trip through the embedding pool."""
    question = "Settlement report missing rows after the nightly export"
    literal = embed_query_literal(question)
    started = embed_in_background(f"  {question} ")  # the same text, as embedded
    assert started.done() and started.result() == literal
