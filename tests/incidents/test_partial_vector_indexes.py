"""Partial HNSW and full-text indexes of active incident versions
(incidents.vector_indexes), on the real PostgreSQL: built, dropped, read by
search's own vector and full-text statements."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import DataError, connection

from incidentdesk.db import declared_indexes_ensure
from incidentdesk.embeddings import embed_query_literal
from incidents import selectors
from incidents.models import DatasetVersion, IncidentChunk
from incidents.ranking import ChunkScope, Fusion, _fused_winners_sql
from incidents.services import dataset_version_activate, dataset_version_archive
from incidents.vector_indexes import (
    PARTIAL_INDEX_EF_SEARCH,
    forget_partial_indexes,
    partial_index_name,
    partial_index_versions,
    partial_indexes_sync,
    partial_text_index_name,
)
from tests.celery_worker import celery_worker
from tests.factories import incident_row, incidents_import
from tests.processes import wait_until
from tests.test_celery import worker_database_url

WAIT_SECONDS = 120  # an upper bound for a slow machine, not a speed assertion
QUESTIONS = [
    "checkout requests timed out",
    "search latency after the index rebuild",
    "payments failing with HTTP 502",
]


def _rows() -> list[dict[str, object]]:
    topics = [
        ("Checkout Gateway", "checkout requests timed out for twenty minutes"),
        ("Search API", "search latency rose after the nightly index rebuild"),
        ("Payments", "payments failed with HTTP 502 from the card processor"),
        ("Login", "users could not log in: the token cache was evicted"),
    ]
    return [
        incident_row(
            f"INC-2025-03-{n:02d}-001",
            title=f"{topics[n % 4][1].capitalize()} ({n})",
            impacted_application=topics[n % 4][0],
            body=f"{topics[n % 4][1]}. Incident number {n}, seen by on-call.",
        )
        for n in range(1, 13)
    ]


def _partial_indexes() -> dict[str, bool]:
    """Partial index name -> indisvalid, from the catalog."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c"
            " ON c.oid = i.indexrelid WHERE c.relname ~ '^incidents_chunk_(hnsw|fts)_v[0-9]+$'"
        )
        return dict(cursor.fetchall())


def _both(version_id: int) -> list[str]:
    """A version's partial index names, in the order the sync builds them."""
    return [partial_index_name(version_id), partial_text_index_name(version_id)]


def _pg_indexes_definition(name: str) -> str:
    with connection.cursor() as cursor:
        cursor.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", [name])
        row = cursor.fetchone()
    return str(row[0]) if row else ""


@pytest.fixture
def small_threshold(settings: Any) -> None:
    """Tests' versions have a few dozen chunks: index them all the same."""
    settings.PARTIAL_HNSW_MIN_CHUNKS = 1


@pytest.fixture
def version(tmp_path: Path) -> Iterator[DatasetVersion]:
    """An active version of 12 incidents; its partial index dropped at the end
    (transaction=True tests keep DDL; the data is flushed after)."""
    active = incidents_import(tmp_path / "rows.jsonl", _rows(), activate=True)
    yield active
    DatasetVersion.objects.filter(pk=active.pk).update(status="archived")
    partial_indexes_sync()


pytestmark = pytest.mark.django_db(transaction=True)


def test_sync_builds_a_valid_partial_index_for_the_active_version(
    small_threshold: None, version: DatasetVersion
) -> None:
    built, dropped = partial_indexes_sync()
    name, text_name = _both(version.pk)
    assert (built, dropped) == ([name, text_name], [])
    assert _partial_indexes() == {name: True, text_name: True}
    definition = _pg_indexes_definition(name)
    # The full index's expression, its own graph parameters, the version as its predicate.
    assert "USING hnsw (((embedding)::halfvec(384)) halfvec_cosine_ops)" in definition
    assert "m='16'" in definition and "ef_construction='200'" in definition
    assert definition.endswith(f"WHERE (version_id = {version.pk})")
    text_definition = _pg_indexes_definition(text_name)
    assert "USING gin (search_vector)" in text_definition
    assert text_definition.endswith(f"WHERE (version_id = {version.pk})")
    assert partial_index_versions() == {version.pk}
    assert partial_indexes_sync() == ([], [])  # idempotent


def test_archiving_the_version_drops_its_partial_index(
    small_threshold: None, version: DatasetVersion
) -> None:
    partial_indexes_sync()
    dataset_version_archive(version=version)
    assert partial_indexes_sync() == ([], sorted(_both(version.pk)))
    assert _partial_indexes() == {}
    assert partial_index_versions() == frozenset()


def test_versions_below_the_threshold_get_none(version: DatasetVersion) -> None:
    # The default threshold: 24 chunks are ranked by an exact scan anyway.
    assert partial_indexes_sync() == ([], [])
    assert _partial_indexes() == {}


def test_an_invalid_partial_index_is_never_read_and_is_built_again(
    small_threshold: None, version: DatasetVersion
) -> None:
    """What a build cut short (crash, cancel) leaves: present, invalid. Either
    index invalid, search reads neither partial index."""
    partial_indexes_sync()
    for name in _both(version.pk):
        with connection.cursor() as cursor:
            cursor.execute(
                "UPDATE pg_index SET indisvalid = false WHERE indexrelid = %s::regclass", [name]
            )
        forget_partial_indexes()
        assert partial_index_versions() == frozenset()  # search reads the full indexes
        assert partial_indexes_sync() == ([name], [name])  # dropped, then built again
        assert _partial_indexes() == dict.fromkeys(_both(version.pk), True)


def test_a_partial_index_built_with_other_parameters_is_built_again(
    small_threshold: None, version: DatasetVersion
) -> None:
    """An m 32 graph, as partial indexes were built before PARTIAL_HNSW_M."""
    partial_indexes_sync()
    name = partial_index_name(version.pk)
    with connection.cursor() as cursor:
        cursor.execute(f'DROP INDEX "{name}"')
        cursor.execute(
            f'CREATE INDEX "{name}" ON incidents_incidentchunk USING hnsw'
            " ((embedding::halfvec(384)) halfvec_cosine_ops) WITH (m = 32, ef_construction = 400)"
            f" WHERE version_id = {version.pk:d}"
        )
    forget_partial_indexes()
    assert partial_index_versions() == frozenset()  # search reads the full indexes
    assert partial_indexes_sync() == ([name], [name])
    assert "m='16'" in _pg_indexes_definition(name)
    assert partial_index_versions() == {version.pk}


def test_a_failed_build_leaves_no_invalid_index(
    small_threshold: None, version: DatasetVersion
) -> None:
    """A chunk whose vector does not fit half precision fails the build after
    CREATE INDEX CONCURRENTLY has committed its (invalid) index: the sync drops it."""
    chunk = IncidentChunk.objects.filter(version=version).first()
    assert chunk is not None
    with connection.cursor() as cursor:
        # The full index would refuse the row too: out of the way meanwhile.
        cursor.execute('DROP INDEX "incidents_chunk_embedding_hnsw"')
    try:
        IncidentChunk.objects.filter(pk=chunk.pk).update(embedding=[1e6] * 384)
        with pytest.raises(DataError):
            partial_indexes_sync()
        assert _partial_indexes() == {}
        assert partial_index_versions() == frozenset()
    finally:
        IncidentChunk.objects.filter(pk=chunk.pk).delete()
        declared_indexes_ensure([IncidentChunk])
    assert partial_indexes_sync() == (_both(version.pk), [])  # the retry


def _whole_scope(monkeypatch: pytest.MonkeyPatch) -> ChunkScope:
    """The chunks an unfiltered search ranks, as search picks them, the version
    counted large (no exact scan)."""
    monkeypatch.setattr(selectors, "EXACT_SEARCH_MAX_CHUNKS", 0)
    scope, small = selectors._filtered_chunks(selectors.incident_scope(), None, is_filtered=False)
    assert isinstance(scope, ChunkScope) and not small
    return scope


def _explain_generic(scope: ChunkScope) -> str:
    """EXPLAIN of search's vector statement as a prepared statement's generic
    plan sees it ($n parameters), on a table too small to prefer an index."""
    sql, _ = _fused_winners_sql(Fusion(scope, "incident", embed_query_literal(QUESTIONS[0]), [], 5))
    return _explain_generic_sql(sql)


def _explain_generic_sql(sql: str, *, index_scans: bool = True) -> str:
    """`index_scans=False`: bitmap scans only, as a full-text match is read (on a
    table of a few dozen rows a plain index scan of the version would win)."""
    numbered = sql
    for n in range(1, sql.count("%s") + 1):
        numbered = numbered.replace("%s", f"${n}", 1)
    with connection.cursor() as cursor:
        cursor.execute("SET enable_seqscan = off")
        cursor.execute("SET enable_sort = off")
        cursor.execute(f"SET enable_indexscan = {'on' if index_scans else 'off'}")
        try:
            cursor.execute(f"EXPLAIN (GENERIC_PLAN) {numbered}")
            return "\n".join(row[0] for row in cursor.fetchall())
        finally:
            cursor.execute("RESET enable_seqscan")
            cursor.execute("RESET enable_sort")
            cursor.execute("RESET enable_indexscan")


def test_the_search_vector_statement_reads_the_partial_index(
    small_threshold: None, version: DatasetVersion, monkeypatch: pytest.MonkeyPatch
) -> None:
    before = _whole_scope(monkeypatch)
    assert before.ef_search is None  # no partial index yet: as before
    assert "incidents_chunk_embedding_hnsw" in _explain_generic(before)

    partial_indexes_sync()
    forget_partial_indexes()
    scope = _whole_scope(monkeypatch)
    assert scope.where == (f'"incidents_incidentchunk"."version_id" = {version.pk}', [])
    assert scope.ef_search == PARTIAL_INDEX_EF_SEARCH
    plan = _explain_generic(scope)
    assert partial_index_name(version.pk) in plan
    assert "incidents_chunk_embedding_hnsw" not in plan


def _text_statement(question: str) -> str:
    """The full-text statement search runs for `question`, as sent."""
    sent: list[str] = []

    def record(execute: Any, sql: str, params: Any, many: bool, context: Any) -> Any:
        if "ts_rank" in sql:
            sent.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(record):
        selectors.incident_search_similar(query=question, limit=5)
    assert len(sent) == 1
    return sent[0]


def test_the_search_full_text_statement_reads_the_partial_text_index(
    small_threshold: None, version: DatasetVersion, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(selectors, "EXACT_SEARCH_MAX_CHUNKS", 0)
    before = _explain_generic_sql(_text_statement(QUESTIONS[0]), index_scans=False)
    assert "incidents_chunk_fts_ver_gin" in before

    partial_indexes_sync()
    forget_partial_indexes()
    with connection.cursor() as cursor:  # statistics, as a real table has them
        cursor.execute("ANALYZE incidents_incidentchunk")
    plan = _explain_generic_sql(_text_statement(QUESTIONS[0]), index_scans=False)
    assert partial_text_index_name(version.pk) in plan
    assert "incidents_chunk_fts_ver_gin" not in plan


def _hits(question: str) -> list[tuple[str, float]]:
    found = selectors.incident_search_similar(query=question, limit=5)
    return [(hit.incident.incident_id, round(hit.score, 6)) for hit in found.hits]


def test_search_results_are_the_same_with_the_partial_index(
    small_threshold: None, version: DatasetVersion, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(selectors, "EXACT_SEARCH_MAX_CHUNKS", 0)  # the HNSW path
    without = {q: _hits(q) for q in QUESTIONS}
    partial_indexes_sync()
    forget_partial_indexes()
    with_index = {q: _hits(q) for q in QUESTIONS}
    assert all(without.values())
    assert with_index == without
    with connection.cursor() as cursor:  # and the search left its ef_search set
        cursor.execute("SHOW hnsw.ef_search")
        assert cursor.fetchone() == (str(PARTIAL_INDEX_EF_SEARCH),)


@pytest.mark.celery
def test_activation_queues_the_build_and_archiving_the_drop(tmp_path: Path) -> None:
    """The real path: activation commits, the worker's task builds the index."""
    name = None
    env = {"DATABASE_URL": worker_database_url(), "PARTIAL_HNSW_MIN_CHUNKS": "1"}
    with celery_worker("--pool", "solo", env=env):
        try:
            staged = incidents_import(tmp_path / "rows.jsonl", _rows())
            name = partial_index_name(staged.pk)
            dataset_version_activate(version=staged)
            wait_until(
                lambda: _partial_indexes() == dict.fromkeys(_both(staged.pk), True),
                "the partial indexes' build",
                WAIT_SECONDS,
            )
            dataset_version_archive(version=staged)
            wait_until(lambda: _partial_indexes() == {}, "the partial index drop", WAIT_SECONDS)
        finally:
            if name and _partial_indexes():
                DatasetVersion.objects.update(status="archived")
                partial_indexes_sync()
