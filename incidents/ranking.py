"""The hybrid ranking both searches share: full-text and vector candidates
over a QuerySet of chunks, fused by reciprocal rank.

Incident search (`incidents.selectors`) and knowledge search
(`knowledge.selectors`) pass their own chunk QuerySets; this module knows
chunk tables only by their columns (`text`, `search_vector`, `embedding`,
`<parent>_id`), never which app they belong to.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from django.contrib.postgres.search import SearchQuery
from django.core.exceptions import EmptyResultSet, FullResultSet
from django.db import connection
from django.db.models import QuerySet

from incidentdesk.embeddings import embed_query_literal
from incidentdesk.stages import stage, submit_staged
from incidents.caching import TimedCache
from incidents.models import EMBEDDING_DIMENSIONS, TEXT_SEARCH_CONFIG

_EMBEDDING_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="query-embedding")
RRF_K = 60  # reciprocal rank fusion constant (Cormack et al.); robust across corpora
TEXT_CANDIDATES = 100  # chunks taken from the full-text list
# Chunks taken from the vector list. The HNSW scan grows with it: on 200k
# chunks (one version of three, ef_search 500) the query took 4.3 ms for 40
# and 5.2 ms for 100, and the whole search p50 16.9 ms instead of 19.1 ms
# (bench/search_bench.py), while the evaluation figures stayed the same.
VECTOR_CANDIDATES = 40
# The chunk tables' HNSW indexes are on half-precision vectors
# (models.hnsw_cosine_index); only this exact expression reaches them.
# Exact ranking keeps full precision.
INDEXED_DISTANCE = (
    f'"embedding"::halfvec({EMBEDDING_DIMENSIONS}) <=> %s::halfvec({EMBEDDING_DIMENSIONS})'
)
EXACT_DISTANCE = '"embedding" <=> %s::vector'
_WORD_RE = re.compile(r"[a-z0-9]+")
STOPWORDS = frozenset(
    {
     "a", "an", "and", "any", "are", "as", "at", "be", "been", "by", "can", "did", "do", "does",
     "for", "from", "had", "has", "have", "how", "i", "in", "is", "it", "its", "me", "my", "of",
     "on", "or", "our", "show", "that", "the", "there", "this", "to", "us", "was", "we", "were",
     "what", "when", "where", "which", "who", "why", "will", "with", "you", "your", "incidents",
     "incident", "happened", "list", "tell", "about", "ever", "past",
    }
)  # fmt: skip


@dataclass(frozen=True)
class RankedParent:
    """A parent (incident, document) with its fused score and best chunk."""

    parent: Any  # Incident, KnowledgeDocument
    score: float
    chunk_text: str

    @property
    def parent_id(self) -> int:
        return int(self.parent.pk)


def content_words(text: str) -> list[str]:
    return [w for w in _WORD_RE.findall(text.lower()) if w not in STOPWORDS]


_LEXEME_RE = re.compile(r"'([a-z0-9][a-z0-9_.\-/]*)'")
TERM_STATS_TTL_SECONDS = 600
# Rarest terms first, until the chunks they match would exceed this budget:
# small corpora use every word; at 100k incidents ranking stays cheap and
# the words kept are the distinctive ones (error codes, component names).
TERM_ROW_BUDGET = 3000
MIN_QUERY_TERMS = 2
# Past the budget, up to MIN_QUERY_TERMS words are still kept unless they
# match more chunks than this: at 100k incidents "mitigated" or "outages"
# match 50k-100k chunks, whose ranking took 100-500 ms and told incidents
# apart no better than the vector half already does.
COMMON_TERM_ROWS = 2 * TERM_ROW_BUDGET
_term_stats_cache: TimedCache[str, dict[str, int]] = TimedCache(ttl_seconds=TERM_STATS_TTL_SECONDS)


@lru_cache(maxsize=1024)
def _lexemes(text: str) -> tuple[str, ...]:
    """The question's words as PostgreSQL stems them; one question is often
    searched twice (incidents and knowledge), and questions repeat."""
    with stage("lexeme query"), connection.cursor() as cursor:
        cursor.execute(
            "SELECT plainto_tsquery(%s::regconfig, %s)::text", [TEXT_SEARCH_CONFIG, text]
        )
        row = cursor.fetchone()
    return tuple(dict.fromkeys(_LEXEME_RE.findall(row[0] if row else "")))


def forget_term_frequencies() -> None:
    _term_stats_cache.clear()


def _term_frequencies(table: str) -> dict[str, int]:
    """Chunks per lexeme in `table`, refreshed every few minutes.

    Counts only steer which words are kept; words missing from a stale copy
    count as rare (see rare_terms_tsquery), so staleness never hides a match.
    """
    return _term_stats_cache.get(table, lambda: _read_term_frequencies(table))


def _read_term_frequencies(table: str) -> dict[str, int]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT word, ndoc FROM ts_stat('SELECT search_vector FROM {table}')")  # noqa: S608 - our table name
        return dict(cursor.fetchall())


def rare_terms(text: str, table: str) -> list[str]:
    """The question's most distinctive lexemes (an IDF cut), rarest first.

    Natural questions rarely contain all their words in one chunk, so the
    terms are ORed; see TERM_ROW_BUDGET for which are kept.
    """
    if not content_words(text):
        return []
    frequencies = _term_frequencies(table)
    # A word the cached statistics have not seen yet (imported since) counts
    # as rare, so new error codes are searchable at once.
    present = sorted((frequencies.get(w, 0), w) for w in _lexemes(text))
    chosen: list[str] = []
    budget = TERM_ROW_BUDGET
    for count, word in present:
        over_budget = count > budget
        if over_budget and (len(chosen) >= MIN_QUERY_TERMS or count > COMMON_TERM_ROWS):
            break
        chosen.append(word)
        budget -= count
    return chosen


def _or_tsquery(terms: list[str]) -> str:
    # Lexemes are already stemmed: the "simple" configuration leaves them be.
    return " | ".join(f"'{w}'" for w in terms)


def rare_terms_tsquery(text: str, table: str) -> SearchQuery | None:
    """`rare_terms` as a SearchQuery, for ORM filters."""
    terms = rare_terms(text, table)
    if not terms:
        return None
    return SearchQuery(_or_tsquery(terms), search_type="raw", config="simple")


def chunks_hybrid_rank(
    chunks: QuerySet[Any], *, parent_field: str, query: str, limit: int, exact: bool = False
) -> list[RankedParent]:
    """The best `limit` parents of `chunks` by vector and full-text rank, fused.

    Each list is reduced to one rank per parent (its best chunk); reciprocal
    rank fusion adds 1/(RRF_K + rank) over both lists.
    """
    # The query embedding (~5 ms of CPU in onnxruntime, which releases the
    # GIL) runs while the full-text query waits on PostgreSQL.
    vector = submit_staged(_EMBEDDING_POOL, "query embedding", embed_query_literal, query)
    # Both candidate queries share one WHERE clause: compiling it through the
    # ORM twice cost ~0.5 ms per search (cProfile over bench/search_bench.py).
    scope = _scope_where(chunks)
    with stage("full-text query"):
        text_hits = _text_candidates(chunks, parent_field, query, scope)
    with stage("waiting for the embedding"):
        vector_literal = vector.result()
    with stage("vector query"):
        vector_hits = _vector_candidates(chunks, parent_field, vector_literal, exact, scope)
    fused = _reciprocal_rank_fusion([vector_hits, text_hits])[:limit]
    with stage("winners"):
        chunk_ids = [chunk_id for _, chunk_id, _ in fused]
        winners = _winning_parents(chunks.model, parent_field, chunk_ids)
    return [RankedParent(winners[chunk_id], score, winners[chunk_id].winning_text)
            for _, chunk_id, score in fused]  # fmt: skip


def _reciprocal_rank_fusion(lists: list[list[tuple[int, int]]]) -> list[tuple[int, int, float]]:
    """(parent, best chunk, score), best first; a parent's first-listed chunk wins."""
    scores: dict[int, float] = {}
    best_chunk: dict[int, int] = {}
    for hits in lists:
        for rank, (parent_id, chunk_id) in enumerate(hits, start=1):
            scores[parent_id] = scores.get(parent_id, 0.0) + 1.0 / (RRF_K + rank)
            best_chunk.setdefault(parent_id, chunk_id)
    ordered = sorted(scores.items(), key=lambda item: -item[1])
    return [(parent_id, best_chunk[parent_id], score) for parent_id, score in ordered]


def _winning_parents(model: type[Any], parent_field: str, chunk_ids: list[int]) -> dict[int, Any]:
    """Each winning chunk's parent, with the chunk's text as `winning_text`, in one query.

    Raw SQL: the same through select_related cost 0.7 ms more per search
    (bench/search_bench.py), mostly in building the chunk models.
    """
    if not chunk_ids:
        return {}
    parent_model = model._meta.get_field(parent_field).related_model
    sql = (
        f'SELECT p.*, c."id" AS winning_chunk_id, c."text" AS winning_text'  # noqa: S608 - names are ours, values are parameters
        f' FROM "{parent_model._meta.db_table}" p JOIN "{model._meta.db_table}" c'
        f' ON c."{parent_field}_id" = p."id" WHERE c."id" = ANY(%s)'
    )
    parents = parent_model._default_manager.raw(sql, [chunk_ids])
    return {parent.winning_chunk_id: parent for parent in parents}


def _best_per_parent(rows: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """(parent, chunk) pairs, each parent once with its best (first) chunk."""
    seen: dict[int, int] = {}
    for parent_id, chunk_id in rows:
        seen.setdefault(parent_id, chunk_id)
    return list(seen.items())


def _scope_where(chunks: QuerySet[Any]) -> tuple[str, list[Any]] | None:
    """The WHERE clause of `chunks` as SQL on its bare table; None if it is empty.

    Candidate queries are raw SQL: the ORM spent more time building them
    than PostgreSQL spent answering (bench/search_bench.py).
    """
    query = chunks.query
    if any(n for alias, n in query.alias_refcount.items() if alias != query.base_table):
        # A filter through a join: name the rows by primary key instead.
        return _scope_where(chunks.model._default_manager.filter(pk__in=chunks.values("pk")))
    try:
        sql, params = query.get_compiler(using=chunks.db).compile(query.where)
    except EmptyResultSet:
        return None
    except FullResultSet:
        return "TRUE", []
    return sql, list(params)


def _vector_candidates(
    chunks: QuerySet[Any],
    parent_field: str,
    vector_literal: str,
    exact: bool,
    scope: tuple[str, list[Any]] | None,
) -> list[tuple[int, int]]:
    """The nearest chunks' (parent, chunk), one per parent; `scope` is
    `_scope_where(chunks)`."""
    if scope is None:
        return []
    where, params = scope
    table = chunks.model._meta.db_table
    # Chunk ids, not texts: a hundred texts cost ~1 ms to send, and only the
    # few winners' texts are read (`_winning_parents`).
    distance = EXACT_DISTANCE if exact else INDEXED_DISTANCE
    nearest = (
        f'SELECT "{parent_field}_id", "id", {distance} AS distance'  # noqa: S608 - names are ours, values are parameters
        f' FROM "{table}" WHERE {where}'
    )
    if exact:
        # Behind OFFSET 0 the ORDER BY cannot reach the HNSW index: PostgreSQL
        # scans the small scope and sorts it, without a SET LOCAL (and the
        # transaction it needs: three more round trips).
        nearest = f"SELECT * FROM ({nearest} OFFSET 0) AS scoped"  # noqa: S608 - ours
    nearest += f" ORDER BY distance LIMIT {VECTOR_CANDIDATES:d}"
    rows = fetch_rows(nearest, [vector_literal, *params])
    # relaxed_order may hand rows back slightly out of order: sort them.
    rows.sort(key=lambda row: row[2])
    return _best_per_parent([(parent_id, chunk_id) for parent_id, chunk_id, _ in rows])


def chunks_best_similarity(chunks: QuerySet[Any], query: str) -> float:
    """Cosine similarity of `query` to its nearest chunk in `chunks` (0.0 if none).

    The offline engine's evidence when it is unsure which tool a question
    needs: the search whose corpus holds a closer match wins.
    """
    scope = _scope_where(chunks)
    if scope is None:
        return 0.0
    where, params = scope
    nearest = (
        f"SELECT {INDEXED_DISTANCE} AS distance"  # noqa: S608 - names are ours, values are parameters
        f' FROM "{chunks.model._meta.db_table}" WHERE {where} ORDER BY distance LIMIT 1'
    )
    rows = fetch_rows(nearest, [embed_query_literal(query), *params])
    return 1.0 - float(rows[0][0]) if rows else 0.0


def _text_candidates(
    chunks: QuerySet[Any], parent_field: str, query: str, scope: tuple[str, list[Any]] | None
) -> list[tuple[int, int]]:
    """The best full-text chunks' (parent, chunk), one per parent; `scope` is
    `_scope_where(chunks)`."""
    table = chunks.model._meta.db_table
    terms = rare_terms(query, table)
    if not terms or scope is None:
        return []
    where, params = scope
    # OFFSET 0 keeps the full-text matches (a few thousand at most, see
    # TERM_ROW_BUDGET) apart from the scope filter: otherwise PostgreSQL ANDs
    # the GIN bitmap with the version index's bitmap of every chunk in the
    # version, which took longer than ranking the matches (8 ms vs 2.5 ms).
    ranked = (
        f'SELECT "{parent_field}_id", "id" FROM (SELECT * FROM "{table}"'  # noqa: S608 - names are ours, values are parameters
        " WHERE search_vector @@ to_tsquery('simple', %s) OFFSET 0)"
        f' AS "{table}" WHERE {where}'
        " ORDER BY ts_rank(search_vector, to_tsquery('simple', %s)) DESC"
        f" LIMIT {TEXT_CANDIDATES:d}"
    )
    tsquery = _or_tsquery(terms)
    return _best_per_parent(fetch_rows(ranked, [tsquery, *params, tsquery]))


def fetch_rows(sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    """Rows of one candidate query.

    hnsw.ef_search and hnsw.iterative_scan are set once per connection
    (settings.DATABASES OPTIONS), so the index path costs one round trip.
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows: list[tuple[Any, ...]] = cursor.fetchall()
    return rows
