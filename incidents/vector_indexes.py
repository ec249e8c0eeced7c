"""Partial indexes, an HNSW and a full-text one per active incident dataset version.

The chunk table's HNSW index (`incidents_chunk_embedding_hnsw`) holds every
version's chunks: a search of the active version walks the graph past the
staged and archived versions' nodes (300 index tuples read for the 100 it
keeps, at ef_search 500). A second graph over the active version alone,
`WHERE version_id = <id>`, answers the same question at ef_search 200 with
better recall: at 100k incidents (68k chunks in the version, 204k in all) the
vector statement 9.9 → 4.4 ms p50, recall@10 on the version 0.970 → 0.999,
PostgreSQL CPU per search 17.3 → 14.0 ms (README, issue 19 item 2). Beside
it, a full-text GIN index of the version alone (`partial_text_index`): the
search's full-text statement then reads no version lexeme.

Lifecycle (`partial_indexes_sync`, idempotent: it compares what should
exist with pg_index and fixes the difference):

- built, CONCURRENTLY (searches and imports go on), for every active
  incident version above PARTIAL_HNSW_MIN_CHUNKS chunks, by the Celery task
  activation and archiving queue once they commit (`incidents.tasks`), and
  at start-up (`manage.py serve`);
- dropped when its version is no longer active (archived, rolled back from,
  deleted);
- an invalid one (a build cut short: a crash, a cancel, an error) is dropped
  and built again; the planner never uses an invalid index, and neither does
  search (`partial_index_versions` counts a version only once both of its
  indexes are valid), so a half-built index is never in use. Until then,
  search reads the full indexes exactly as before: never wrong, only slower.

Names are deterministic (`incidents_chunk_hnsw_v<id>`, `incidents_chunk_fts_v<id>`),
so two syncs agree;
an advisory lock keeps them from building the same index at once.
"""

from __future__ import annotations

import logging
import re

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex
from django.db import connection
from django.db.models import Q
from pgvector.django import HnswIndex

from incidents.caching import TimedCache
from incidents.models import Dataset, DatasetVersion, IncidentChunk, hnsw_cosine_index

logger = logging.getLogger(__name__)

PARTIAL_INDEX_PREFIX = "incidents_chunk_hnsw_v"
PARTIAL_TEXT_INDEX_PREFIX = "incidents_chunk_fts_v"
_NAME_RE = re.compile(rf"^(?:{PARTIAL_INDEX_PREFIX}|{PARTIAL_TEXT_INDEX_PREFIX})(\d+)$")
# hnsw.ef_search for a statement that reads a partial index. Measured on the
# 68k-chunk active version beside 136k others (README, issue 19 item 2):
# recall@10 0.999 at 200, 0.980 at 100 (no faster whole call), 1.000 at 500
# but slower than the full index (every candidate passes the filter, so the
# whole beam of 500 is walked).
PARTIAL_INDEX_EF_SEARCH = 200
# The partial graph's own parameters, sparser than the full index's (m 32,
# ef_construction 400, which the full index needs to find one version's chunks
# among the others'): over the version alone, m 16 reads half the neighbours
# at each node. Measured on the same 68k-chunk version at ef_search 200 (README,
# issue 19 item 2): HNSW scan 2.45 → 1.65 ms p50, recall@10 0.999 both, the
# same 200 searches' top 10 with the same scores; built in under half the time.
PARTIAL_HNSW_M = 16
PARTIAL_HNSW_EF_CONSTRUCTION = 200
# Any value: pg_advisory_lock's key for the sync (one sync builds at a time).
_SYNC_LOCK_KEY = 0x1D_19_02
# Read by every large search; a build takes minutes, so a few seconds' delay
# in noticing it costs nothing, and a dropped index noticed late is still
# correct (the planner falls back to the full index).
PARTIAL_INDEXES_TTL_SECONDS = 5.0
_valid_cache: TimedCache[None, frozenset[int]] = TimedCache(ttl_seconds=PARTIAL_INDEXES_TTL_SECONDS)


def partial_index_name(version_id: int) -> str:
    return f"{PARTIAL_INDEX_PREFIX}{int(version_id):d}"


def partial_text_index_name(version_id: int) -> str:
    return f"{PARTIAL_TEXT_INDEX_PREFIX}{int(version_id):d}"


def partial_index(version_id: int) -> HnswIndex:
    """The partial index of one version: the full index's opclass and half
    precision, its own graph parameters (PARTIAL_HNSW_M), `WHERE version_id = <id>`."""
    index = hnsw_cosine_index(
        partial_index_name(version_id),
        m=PARTIAL_HNSW_M,
        ef_construction=PARTIAL_HNSW_EF_CONSTRUCTION,
        half_precision=True,
    )
    index.condition = Q(version_id=int(version_id))
    return index


def partial_text_index(version_id: int) -> GinIndex:
    """The full-text index of one version: plain `search_vector`, `WHERE
    version_id = <id>`. The table's own full-text index keeps every version's
    chunks, each with its version as one more lexeme (models.versioned_search_index),
    so a search of the active version ANDs its words with that lexeme, whose
    posting list holds every chunk of the version: at 100k incidents the GIN scan
    took 2.6 of the statement's 7.1 ms p50, and the statement fell to 4.0 ms
    with this index, the same rows in the same order (README, issue 19 item 2).
    A second or so to build at 68k chunks, 13 MB."""
    return GinIndex(
        fields=["search_vector"],
        name=partial_text_index_name(version_id),
        condition=Q(version_id=int(version_id)),
    )


def version_partial_indexes(version_id: int) -> list[HnswIndex | GinIndex]:
    """A version's partial indexes, in the order the sync builds them."""
    return [partial_index(version_id), partial_text_index(version_id)]


def partial_index_versions() -> frozenset[int]:
    """Versions whose partial indexes are all valid and ready (read every few
    seconds): search reads them together or not at all."""
    return _valid_cache.get(None, _versions_fully_indexed)


def forget_partial_indexes() -> None:
    _valid_cache.clear()


def _versions_fully_indexed() -> frozenset[int]:
    present = _partial_indexes_present()
    versions = {version_id for version_id, _ in present.values()}
    return frozenset(
        version_id
        for version_id in versions
        if all(present.get(i.name, (0, False))[1] for i in version_partial_indexes(version_id))
    )


def _partial_indexes_present() -> dict[str, tuple[int, bool]]:
    """Partial index name -> (its version id, whether it is usable: valid, and
    built with the parameters wanted now). One built with others (an m 32 graph
    from before PARTIAL_HNSW_M) counts as invalid: search leaves it, the sync
    builds it again."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, i.indisvalid AND i.indisready, coalesce(c.reloptions, '{}')"
            " FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
            " WHERE i.indrelid = %s::regclass AND (c.relname LIKE %s OR c.relname LIKE %s)",
            [
                IncidentChunk._meta.db_table,
                f"{PARTIAL_INDEX_PREFIX}%",
                f"{PARTIAL_TEXT_INDEX_PREFIX}%",
            ],
        )
        found = {}
        for name, valid, options in cursor.fetchall():
            match = _NAME_RE.match(name)
            if match:
                current = sorted(options) == _options_wanted(name)
                found[name] = (int(match.group(1)), bool(valid) and current)
    return found


def _options_wanted(name: str) -> list[str]:
    """pg_class.reloptions of the partial index `name` as the sync builds it, sorted."""
    if not name.startswith(PARTIAL_INDEX_PREFIX):
        return []  # the GIN index: PostgreSQL's defaults
    return sorted([f"m={PARTIAL_HNSW_M:d}", f"ef_construction={PARTIAL_HNSW_EF_CONSTRUCTION:d}"])


def partial_index_wanted() -> set[int]:
    """Active incident versions large enough for a partial index.

    PARTIAL_HNSW_MIN_CHUNKS (settings): below it no search reads an HNSW
    index for the whole version anyway (selectors.EXACT_SEARCH_MAX_CHUNKS:
    scopes that small are ranked by an exact scan), so the index would only
    cost its build and its writes.
    """
    versions = DatasetVersion.objects.filter(
        status=DatasetVersion.Status.ACTIVE,
        dataset__kind=Dataset.Kind.INCIDENTS,
        chunk_count__gte=settings.PARTIAL_HNSW_MIN_CHUNKS,
    )
    return set(versions.values_list("pk", flat=True))


def partial_indexes_sync() -> tuple[list[str], list[str]]:
    """Build the partial indexes that should exist, drop the others; return
    (built, dropped) names. Outside any transaction (CONCURRENTLY cannot run
    in one). A build that fails drops what it left and raises: the next sync
    (the task's retry, the next activation, start-up) tries again."""
    if connection.in_atomic_block:
        raise RuntimeError("partial_indexes_sync runs outside transactions (CONCURRENTLY)")
    built: list[str] = []
    dropped: list[str] = []
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_lock(%s)", [_SYNC_LOCK_KEY])
    try:
        wanted = partial_index_wanted()
        present = _partial_indexes_present()
        for name, (version_id, valid) in sorted(present.items()):
            if version_id not in wanted or not valid:
                _drop(name)
                dropped.append(name)
        for version_id in sorted(wanted):
            for index in version_partial_indexes(version_id):
                if present.get(index.name, (0, False))[1]:
                    continue
                _build(index)
                built.append(index.name)
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [_SYNC_LOCK_KEY])
        forget_partial_indexes()
    return built, dropped


def _build(index: HnswIndex | GinIndex) -> None:
    logger.info("building %s", index.name)
    try:
        with connection.schema_editor(atomic=False) as editor:
            editor.execute(index.create_sql(IncidentChunk, editor, concurrently=True), None)
    except Exception:
        # CREATE INDEX CONCURRENTLY leaves an invalid index behind when it fails
        # after its first phase: never used, but written by every insert.
        logger.exception("building %s failed; dropping what it left", index.name)
        try:
            _drop(index.name)
        except Exception:
            logger.exception("could not drop %s; the next sync will", index.name)
        raise


def _drop(name: str) -> None:
    logger.info("dropping %s", name)
    with connection.cursor() as cursor:
        cursor.execute(f'DROP INDEX CONCURRENTLY IF EXISTS "{name}"')
