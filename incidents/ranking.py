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
from concurrent.futures import Future, ThreadPoolExecutor
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
_term_stats_cache: TimedCache[tuple[str, tuple[int, ...] | None], dict[str, int]] = TimedCache(
    ttl_seconds=TERM_STATS_TTL_SECONDS
)


@lru_cache(maxsize=1024)
def _lexemes(text: str) -> tuple[str, ...]:
    """The question's words as PostgreSQL stems them; one question is often
    searched twice (incidents and knowledge), and questions repeat."""
    with stage("lexeme query"), connection.cursor() as cursor:
        cursor.execute(
            "SELECT plainto_tsquery(%s::regconfig, %s)::text",
            [TEXT_SEARCH_CONFIG, _with_slashed_words_apart(text)],
        )
        row = cursor.fetchone()
    return tuple(dict.fromkeys(_LEXEME_RE.findall(row[0] if row else "")))


_SLASHED_RE = re.compile(r"\b\w+(?:/\w+)+\b")


def _with_slashed_words_apart(text: str) -> str:
    """PostgreSQL reads "power/cooling" as one file-path token, which no text
    about power or cooling contains: people mean either word. The whole token
    stays too, for text that writes it the same way ("TCP/IP")."""
    return _SLASHED_RE.sub(lambda m: f"{m.group(0)} {m.group(0).replace('/', ' ')}", text)


def forget_term_frequencies() -> None:
    _term_stats_cache.clear()


def _term_frequencies(table: str, versions: Sequence[int] | None) -> dict[str, int]:
    """Chunks per lexeme in `table` (in `versions` only, when given), refreshed
    every few minutes.

    Counted in the versions searched, so which words a question keeps does not
    depend on what else the database holds (a staged import, other datasets).
    Counts only steer which words are kept; words missing from a stale copy
    count as rare (see rare_terms_tsquery), so staleness never hides a match.
    """
    key = (table, tuple(sorted(versions)) if versions is not None else None)
    return _term_stats_cache.get(key, lambda: _read_term_frequencies(*key))


def _read_term_frequencies(table: str, versions: tuple[int, ...] | None) -> dict[str, int]:
    where = (
        ""
        if versions is None
        else f" WHERE version_id IN ({', '.join(str(int(v)) for v in versions)})"
    )
    if versions == ():
        return {}
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT word, ndoc FROM ts_stat('SELECT search_vector FROM {table}{where}')"  # noqa: S608 - our table name, integer ids
        )
        return dict(cursor.fetchall())


def rare_terms(text: str, table: str, versions: Sequence[int] | None = None) -> list[str]:
    """The question's most distinctive lexemes (an IDF cut), rarest first.

    Natural questions rarely contain all their words in one chunk, so the
    terms are ORed; see TERM_ROW_BUDGET for which are kept.
    """
    if not content_words(text):
        return []
    frequencies = _term_frequencies(table, versions)
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


@dataclass(frozen=True)
class ChunkScope:
    """Chunks to rank: a chunk model and the WHERE clause that picks them,
    as SQL on its bare table (None: no chunk at all).

    Candidate queries are raw SQL: the ORM spent more time building them
    than PostgreSQL spent answering (bench/search_bench.py).
    """

    model: type[Any]
    where: tuple[str, list[Any]] | None

    @classmethod
    def of(cls, chunks: QuerySet[Any]) -> ChunkScope:
        return cls(chunks.model, _scope_where(chunks))

    @classmethod
    def in_versions(cls, model: type[Any], version_ids: Sequence[int]) -> ChunkScope:
        """`of(model.objects.filter(version_id__in=version_ids))`, the same SQL
        written directly: every unfiltered search asks for it, and building and
        compiling the QuerySet cost ~1 ms of a 30 ms search (cProfile)."""
        if not version_ids:
            return cls(model, None)  # what the ORM's EmptyResultSet means
        placeholders = ", ".join(["%s"] * len(version_ids))
        where = f'"{model._meta.db_table}"."version_id" IN ({placeholders})'
        return cls(model, (where, list(version_ids)))


def embed_in_background(query: str) -> Future[str]:
    """The query's vector literal, computed on the embedding pool.

    The embedding (~5-10 ms of CPU in onnxruntime, which releases the GIL)
    is the longest single step of a search: callers start it as soon as they
    know the text, and prepare everything else while it runs.
    """
    return submit_staged(_EMBEDDING_POOL, "query embedding", embed_query_literal, query)


# A chat report nobody has reviewed ranks below a reviewed incident of equal (or
# nearly equal) relevance: its fused score counts this much less when ordering.
# 2% is about two rank places near the top of one list (RRF_K 60); a clearly more
# relevant report still comes first. The only place review status touches ranking.
REPORTED_PENALTY = 0.02


def _reviewed_first(ranked: list[RankedParent], limit: int) -> list[RankedParent]:
    """Parents reordered with the report penalty (scores themselves unchanged), cut
    to `limit`. A parent is a report when its `is_reported` says so (incidents)."""

    def weight(hit: RankedParent) -> float:
        is_reported = getattr(hit.parent, "is_reported", False)
        return hit.score * (1.0 - REPORTED_PENALTY if is_reported else 1.0)

    return sorted(ranked, key=weight, reverse=True)[:limit]


def chunks_hybrid_rank(
    chunks: QuerySet[Any] | ChunkScope,
    *,
    parent_field: str,
    query: str,
    limit: int,
    exact: bool = False,
    vector: Future[str] | None = None,
    term_versions: Sequence[int] | None = None,
    reports_last: bool = False,
) -> list[RankedParent]:
    """The best `limit` parents of `chunks` by vector and full-text rank, fused.

    Each list is reduced to one rank per parent (its best chunk); reciprocal
    rank fusion adds 1/(RRF_K + rank) over both lists. `vector` is the
    query's embedding when the caller started it (`embed_in_background`);
    `term_versions`, the versions whose word counts pick the full-text terms.
    `reports_last` orders unreviewed reports with REPORTED_PENALTY
    (`_reviewed_first`): incident search asks for it, documents are never reports.
    """
    if vector is None:
        vector = embed_in_background(query)
    scope = chunks if isinstance(chunks, ChunkScope) else ChunkScope.of(chunks)
    with stage("full-text query"):
        text_hits = _text_candidates(scope, parent_field, query, term_versions)
    with stage("waiting for the embedding"):
        vector_literal = vector.result()
    if scope.where is None:
        return []
    # One more than asked for reports_last: a report at the cut may give way to
    # the reviewed one below it.
    wanted = limit + 1 if reports_last else limit
    with stage("vector query with winners"):
        ranked = _fused_winners(scope, parent_field, vector_literal, exact, text_hits, wanted)
    return _reviewed_first(ranked, limit) if reports_last else ranked


def _fused_winners(
    scope: ChunkScope,
    parent_field: str,
    vector_literal: str,
    exact: bool,
    text_hits: list[tuple[int, int]],
    limit: int,
) -> list[RankedParent]:
    """The vector candidates fused with `text_hits` and the winners' rows, in
    one statement: the only round trip left once the embedding is known.

    What it computes, in SQL: the nearest VECTOR_CANDIDATES chunks, sorted by
    distance (relaxed_order may return them slightly out of order; ties keep
    the order returned); each parent's best chunk, ranked; the full-text
    (parent, chunk) list, ranked as given; reciprocal rank fusion over both,
    where a parent in both lists keeps its vector chunk and ties are broken
    by first listing (vector list first); then the best `limit` parents with
    their winning chunk's text.
    """
    where, params = scope.where or ("FALSE", [])
    model = scope.model
    parent_table = model._meta.get_field(parent_field).related_model._meta.db_table
    sql = (
        f"WITH nearest AS MATERIALIZED ({_nearest_sql(model, parent_field, where, exact)}),"  # noqa: S608 - names are ours, values are parameters
        " vector AS (SELECT parent_id, chunk_id, row_number() OVER (ORDER BY first) AS rank"
        " FROM (SELECT DISTINCT ON (parent_id) parent_id, chunk_id, position AS first"
        " FROM (SELECT parent_id, chunk_id,"
        " row_number() OVER (ORDER BY distance, returned) AS position FROM nearest) AS sorted"
        " ORDER BY parent_id, position) AS best),"
        " text AS (SELECT * FROM unnest(%s::bigint[], %s::bigint[])"
        " WITH ORDINALITY AS hits(parent_id, chunk_id, rank)),"
        " fused AS (SELECT coalesce(v.parent_id, t.parent_id) AS parent_id,"
        " coalesce(v.chunk_id, t.chunk_id) AS chunk_id,"
        f" coalesce(1::float8 / ({RRF_K:d} + v.rank), 0)"
        f" + coalesce(1::float8 / ({RRF_K:d} + t.rank), 0) AS score,"
        " coalesce(v.rank, 1000000000 + t.rank) AS listed"
        " FROM vector v FULL JOIN text t ON t.parent_id = v.parent_id"
        " ORDER BY score DESC, listed LIMIT %s)"
        f' SELECT p.*, f.score AS fused_score, c."text" AS winning_text FROM fused f'
        f' JOIN "{model._meta.db_table}" c ON c."id" = f.chunk_id'
        f' JOIN "{parent_table}" p ON p."id" = f.parent_id ORDER BY f.score DESC, f.listed'
    )
    parents, chunk_ids = [p for p, _ in text_hits], [c for _, c in text_hits]
    parent_model = model._meta.get_field(parent_field).related_model
    rows = parent_model._default_manager.raw(
        sql, [vector_literal, *params, parents, chunk_ids, limit]
    )
    return [RankedParent(row, row.fused_score, row.winning_text) for row in rows]


def _nearest_sql(model: type[Any], parent_field: str, where: str, exact: bool) -> str:
    """The nearest VECTOR_CANDIDATES chunks: (parent_id, chunk_id, distance,
    returned), `returned` numbering them in the order PostgreSQL returns them.

    Chunk ids, not texts: a hundred texts cost ~1 ms to send, and only the
    few winners' texts are read. Parameters: the vector literal, then those
    of `where`.
    """
    distance = EXACT_DISTANCE if exact else INDEXED_DISTANCE
    nearest = (
        f'SELECT "{parent_field}_id" AS parent_id, "id" AS chunk_id, {distance} AS distance'  # noqa: S608 - names are ours, values are parameters
        f' FROM "{model._meta.db_table}" WHERE {where}'
    )
    if exact:
        # Behind OFFSET 0 the ORDER BY cannot reach the HNSW index: PostgreSQL
        # scans the small scope and sorts it, without a SET LOCAL (and the
        # transaction it needs: three more round trips).
        nearest = f"SELECT * FROM ({nearest} OFFSET 0) AS scoped"  # noqa: S608 - ours
    nearest += f" ORDER BY distance LIMIT {VECTOR_CANDIDATES:d}"
    return f"SELECT *, row_number() OVER () AS returned FROM ({nearest}) AS candidates"  # noqa: S608 - ours


def _best_per_parent(rows: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """(parent, chunk) pairs, each parent once with its best (first) chunk."""
    seen: dict[int, int] = {}
    for parent_id, chunk_id in rows:
        seen.setdefault(parent_id, chunk_id)
    return list(seen.items())


def _scope_where(chunks: QuerySet[Any]) -> tuple[str, list[Any]] | None:
    """The WHERE clause of `chunks` as SQL on its bare table; None if it is empty."""
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
    scope: ChunkScope, parent_field: str, query: str, term_versions: Sequence[int] | None
) -> list[tuple[int, int]]:
    """The best full-text chunks' (parent, chunk), one per parent."""
    table = scope.model._meta.db_table
    terms = rare_terms(query, table, term_versions)
    if not terms or scope.where is None:
        return []
    where, params = scope.where
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
