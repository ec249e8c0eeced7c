"""The hybrid ranking both searches share: full-text and vector candidates
over a QuerySet of chunks, fused by their scaled scores.

Incident search (`incidents.selectors`) and knowledge search
(`knowledge.selectors`) pass their own chunk QuerySets; this module knows
chunk tables only by their columns (`text`, `search_vector`, `embedding`,
`<parent>_id`), never which app they belong to.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.contrib.postgres.search import SearchQuery
from django.core.exceptions import EmptyResultSet, FullResultSet
from django.db import connection
from django.db.models import QuerySet

from incidentdesk.db import hnsw_ef_search_use, rows_select
from incidentdesk.embeddings import embed_query_literal, query_literal_known
from incidentdesk.stages import stage, submit_staged
from incidents.caching import TimedCache
from incidents.models import EMBEDDING_DIMENSIONS, TEXT_SEARCH_CONFIG, VERSION_LEXEME_PREFIX

_EMBEDDING_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="query-embedding")
# Fusion: each list's scores scaled to 0-1 over its candidates (min-max), then
# weighted equally (a convex combination; Bruch et al., "An Analysis of Fusion
# Functions for Hybrid Retrieval", 2023). Reciprocal rank fusion, used before,
# kept only the order of each list, so a clear full-text winner counted no more
# than a near tie. Measured on 406 symptom and 200 knowledge questions of eight
# sets (bench notes in the README): hit@1 rose on seven of eight and fell by one
# question on one; the dev set's is the same at weights 0.3-0.6, so the prior of
# equal weights stands (cross-validating on dev cannot pick among ties).
VECTOR_WEIGHT = 0.5
TEXT_CANDIDATES = 100  # chunks taken from the full-text list
# Chunks taken from the vector list. Score fusion scales the list between its
# best and its last candidate, so the list must reach past the near misses: with
# 40 chunks (~25 incidents), hit@1 on our outcome-only symptom set C was 0.867,
# with 100, 0.933 (knowledge 0.90 vs 0.94). The HNSW scan grows with it: on 200k
# chunks (ef_search 500) 40 took 4.3 ms and 100 took 5.2 ms (bench/search_bench.py).
VECTOR_CANDIDATES = 100
# The chunk tables' HNSW indexes are on half-precision vectors
# (models.hnsw_cosine_index); only this exact expression reaches them.
# Exact ranking keeps full precision.
INDEXED_DISTANCE = (
    f'"embedding"::halfvec({EMBEDDING_DIMENSIONS}) <=> %s::halfvec({EMBEDDING_DIMENSIONS})'
)
EXACT_DISTANCE = '"embedding" <=> %s::vector'
# The chunk tables' full-text indexes hold each chunk's version as one more
# lexeme (models.versioned_search_index); only this exact expression reaches them.
VERSIONED_SEARCH_VECTOR = (
    f"(search_vector || array_to_tsvector(ARRAY['{VERSION_LEXEME_PREFIX}' || version_id::text]))"
)
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
    covered: int = 0  # the question's full-text terms found in any of its chunks

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
    # hnsw.ef_search for its vector statement; None: the connection's
    # (settings.HNSW_EF_SEARCH). Set where `where` reaches a partial index.
    ef_search: int | None = None
    # Whether `where` is one version's own partial full-text index's predicate
    # (incidents.vector_indexes): the full-text statement then filters by it
    # directly instead of by the versions' lexemes (`_text_candidates`).
    text_indexed: bool = False

    @classmethod
    def of(cls, chunks: QuerySet[Any]) -> ChunkScope:
        return cls(chunks.model, _scope_where(chunks))

    @classmethod
    def in_versions(
        cls,
        model: type[Any],
        version_ids: Sequence[int],
        *,
        indexed: Collection[int] = (),
        indexed_ef_search: int | None = None,
    ) -> ChunkScope:
        """`of(model.objects.filter(version_id__in=version_ids))`, the same SQL
        written directly: every unfiltered search asks for it, and building and
        compiling the QuerySet cost ~1 ms of a 30 ms search (cProfile).

        `indexed`: versions with partial HNSW and full-text indexes of their
        own (`WHERE version_id = <id>`, incidents.vector_indexes). One of them
        alone is written as a literal: the planner matches a partial index's
        predicate only against constants, and a prepared statement's generic
        plan sees `$1`. The id is an integer from our own database (%d), never
        user input. Its vector statement runs at `indexed_ef_search`.
        """
        if not version_ids:
            return cls(model, None)  # what the ORM's EmptyResultSet means
        if len(version_ids) == 1 and version_ids[0] in indexed:
            literal = f'"{model._meta.db_table}"."version_id" = {int(version_ids[0]):d}'
            return cls(model, (literal, []), ef_search=indexed_ef_search, text_indexed=True)
        placeholders = ", ".join(["%s"] * len(version_ids))
        where = f'"{model._meta.db_table}"."version_id" IN ({placeholders})'
        return cls(model, (where, list(version_ids)))


def embed_in_background(query: str) -> Future[str]:
    """The query's vector literal, computed on the embedding pool.

    The embedding (~5-10 ms of CPU in onnxruntime, which releases the GIL)
    is the longest single step of a search: callers start it as soon as they
    know the text, and prepare everything else while it runs. A vector known
    already (a chat answer searches with its question two or three times) is
    handed back at once: the trip through the pool cost more than the lookup.
    """
    known = query_literal_known(query)
    if known is not None:
        done: Future[str] = Future()
        done.set_result(known)
        return done
    return submit_staged(_EMBEDDING_POOL, "query embedding", embed_query_literal, query)


# A chat report nobody has reviewed ranks below a reviewed incident of equal (or
# nearly equal) relevance: its fused score counts this much less when ordering.
# 2% of a fused score (0-1); a clearly more relevant report still comes first.
# The only place review status touches ranking.
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
    versions: Sequence[int] | None = None,
    reports_last: bool = False,
    covering_first: bool = False,
) -> list[RankedParent]:
    """The best `limit` parents of `chunks` by vector and full-text rank, fused.

    Each list is reduced to one score per parent (its best chunk); the two
    lists' scaled scores are added (`_fused_winners`). `vector` is the
    query's embedding when the caller started it (`embed_in_background`);
    `versions`, the versions every chunk of `chunks` is in: their word counts
    pick the full-text terms, and the full-text index finds only their chunks.
    `reports_last` orders unreviewed reports with REPORTED_PENALTY
    (`_reviewed_first`): incident search asks for it, documents are never reports.
    `covering_first` reorders the head by term coverage (`_covering_first`):
    incident search asks for it too.
    """
    if vector is None:
        vector = embed_in_background(query)
    scope = chunks if isinstance(chunks, ChunkScope) else ChunkScope.of(chunks)
    with stage("full-text query"):
        text_hits = _text_candidates(scope, parent_field, query, versions)
    with stage("waiting for the embedding"):
        vector_literal = vector.result()
    if scope.where is None:
        return []
    # One more than asked for reports_last: a report at the cut may give way to
    # the reviewed one below it.
    wanted = limit + 1 if reports_last else limit
    depth, terms = wanted, []
    if covering_first:
        table = scope.model._meta.db_table
        depth, terms = max(wanted, RERANK_DEPTH), rare_terms(query, table, versions)
    with stage("vector query with winners"):
        fusion = Fusion(scope, parent_field, vector_literal, text_hits, depth, exact, terms)
        ranked = _fused_winners(fusion)
    if covering_first:
        ranked = _covering_first(ranked)[:wanted]
    return _reviewed_first(ranked, limit) if reports_last else ranked


# The fused ranking sees one chunk per parent: an incident whose best chunk
# matches a striking detail of the question can outrank the one that says, over
# its summary and body, most of what the question describes. The best
# RERANK_DEPTH parents are reordered by how many of the question's full-text
# terms appear anywhere in their chunks, scaled 0-1 among them and added at
# COVERAGE_WEIGHT. Incidents only: an incident is one story cut into chunks,
# while a document's sections answer different asks, so covering the question
# across sections says less (applied to documents too, held-out set F lost one
# knowledge question at rank 1). Measured on dev, unseen and sets E and G: no
# hit@1 or hit@5 moved, and the right incident's lead over the runner-up grew on
# every set; 0.2 cost a knowledge question, weighting terms by rarity changed
# nothing, and a second look at each parent's top two chunk similarities lost.
RERANK_DEPTH = 10
COVERAGE_WEIGHT = 0.1


def _covering_first(ranked: list[RankedParent]) -> list[RankedParent]:
    """`ranked` with its head reordered by term coverage (`RankedParent.covered`);
    scores stay within 0-1 (divided by 1 + COVERAGE_WEIGHT), so the head still
    ranks above the rest."""
    head, rest = ranked[:RERANK_DEPTH], ranked[RERANK_DEPTH:]
    if len(head) < 2:
        return ranked
    low = min(hit.covered for hit in head)
    spread = max(hit.covered for hit in head) - low or 1

    def rescored(hit: RankedParent, coverage: float) -> RankedParent:
        return replace(hit, score=(hit.score + COVERAGE_WEIGHT * coverage) / (1 + COVERAGE_WEIGHT))

    head = [rescored(hit, (hit.covered - low) / spread) for hit in head]
    return sorted(head, key=lambda hit: hit.score, reverse=True) + [rescored(h, 0) for h in rest]


@dataclass(frozen=True)
class Fusion:
    """What one fused search is given (`_fused_winners`): where to look, the
    query's embedding and full-text hits, how many parents to return, whether
    to scan exactly, and the lexemes whose coverage is counted."""

    scope: ChunkScope
    parent_field: str
    vector_literal: str
    text_hits: list[tuple[int, int, float]]
    limit: int
    exact: bool = False
    terms: Sequence[str] = ()


def _fused_winners(fusion: Fusion) -> list[RankedParent]:
    """The vector candidates fused with `text_hits` and the winners' rows, in
    one statement: the only round trip left once the embedding is known.

    What it computes, in SQL: the nearest VECTOR_CANDIDATES chunks; each
    parent's best chunk, with its cosine similarity and its place in the list;
    the full-text (parent, chunk, ts_rank) list as given; each list's scores
    scaled to 0-1 over its candidates (`_scaled`), weighted by VECTOR_WEIGHT and
    added (a parent missing from a list adds 0 for it), where a parent in both
    lists keeps its vector chunk and ties are broken by first listing (vector
    list first); then the best `limit` parents with their winning chunk's text
    and how many of `terms` (lexemes) their chunks hold (`_covered_sql`).
    """
    sql, params = _fused_winners_sql(fusion)
    scope = fusion.scope
    parent_model = scope.model._meta.get_field(fusion.parent_field).related_model
    if not fusion.exact:  # an exact scan reads no HNSW index
        hnsw_ef_search_use(scope.ef_search or settings.HNSW_EF_SEARCH)
    # rows_select, not raw(): raw() matched the columns to fields at every search.
    rows = rows_select(parent_model, sql, params, extra=_WINNER_COLUMNS)
    return [RankedParent(row, row.fused_score, row.winning_text, row.covered) for row in rows]


def _fused_winners_sql(fusion: Fusion) -> tuple[str, list[Any]]:
    """`_fused_winners`' statement and its parameters."""
    where, params = fusion.scope.where or ("FALSE", [])
    model, parent_field = fusion.scope.model, fusion.parent_field
    parent_table = model._meta.get_field(parent_field).related_model._meta.db_table
    sql = (
        f"WITH nearest AS MATERIALIZED ({_nearest_sql(model, parent_field, where, fusion.exact)}),"  # noqa: S608 - names are ours, values are parameters
        " vector AS (SELECT DISTINCT ON (parent_id) parent_id, chunk_id, position AS rank,"
        " 1 - distance AS score FROM (SELECT parent_id, chunk_id, distance,"
        " row_number() OVER (ORDER BY distance, returned) AS position FROM nearest) AS sorted"
        " ORDER BY parent_id, position),"
        " text AS (SELECT * FROM unnest(%s::bigint[], %s::bigint[], %s::float8[])"
        " WITH ORDINALITY AS hits(parent_id, chunk_id, score, rank)),"
        " bounds AS (SELECT min(v.score) AS vlo, max(v.score) AS vhi,"
        " (SELECT min(score) FROM text) AS tlo, (SELECT max(score) FROM text) AS thi"
        " FROM vector v),"
        " fused AS (SELECT coalesce(v.parent_id, t.parent_id) AS parent_id,"
        " coalesce(v.chunk_id, t.chunk_id) AS chunk_id,"
        f" {VECTOR_WEIGHT!r}::float8 * {_scaled('v', 'b.vlo', 'b.vhi')}"
        f" + {1 - VECTOR_WEIGHT!r}::float8 * {_scaled('t', 'b.tlo', 'b.thi')} AS score,"
        " coalesce(v.rank, 1000000000 + t.rank) AS listed"
        " FROM vector v FULL JOIN text t ON t.parent_id = v.parent_id CROSS JOIN bounds b"
        " ORDER BY score DESC, listed LIMIT %s)"
        f' SELECT p.*, f.score AS fused_score, c."text" AS winning_text,'
        f" {_covered_sql(model._meta.db_table, parent_field)} AS covered FROM fused f"
        f' JOIN "{model._meta.db_table}" c ON c."id" = f.chunk_id'
        f' JOIN "{parent_table}" p ON p."id" = f.parent_id ORDER BY f.score DESC, f.listed'
    )
    hits = fusion.text_hits  # as three arrays: parents, chunks, scores
    text_columns = [
        [hit[0] for hit in hits],
        [hit[1] for hit in hits],
        [float(hit[2]) for hit in hits],
    ]
    return sql, [fusion.vector_literal, *params, *text_columns, fusion.limit, list(fusion.terms)]


_WINNER_COLUMNS = ("fused_score", "winning_text", "covered")  # after p.* in _fused_winners


def _covered_sql(table: str, parent_field: str) -> str:
    """SQL: how many of the terms parameter's lexemes the chunks of the winner
    `f.parent_id` hold, all its chunks together (its foreign-key index finds them)."""
    return (
        "(SELECT count(DISTINCT words.lexeme)"  # noqa: S608 - names are ours, values are parameters
        f' FROM "{table}" AS whole, unnest(whole.search_vector) AS words'
        f' WHERE whole."{parent_field}_id" = f.parent_id AND words.lexeme = ANY(%s::text[]))'
    )


def _scaled(alias: str, low: str, high: str) -> str:
    """SQL: `alias`.score scaled to 0-1 between its list's `low` and `high`; 1 when
    the list's scores are all equal (one candidate), 0 when the parent is not in it."""
    return (
        f"(CASE WHEN {alias}.parent_id IS NULL THEN 0"
        f" WHEN {high} > {low} THEN ({alias}.score - {low}) / ({high} - {low}) ELSE 1 END)"
    )


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


def _best_per_parent(rows: Sequence[tuple[int, int, float]]) -> list[tuple[int, int, float]]:
    """(parent, chunk, score) rows, each parent once with its best (first) chunk."""
    seen: dict[int, tuple[int, int, float]] = {}
    for row in rows:
        seen.setdefault(row[0], row)
    return list(seen.values())


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
    hnsw_ef_search_use(settings.HNSW_EF_SEARCH)
    rows = fetch_rows(nearest, [embed_query_literal(query), *params])
    return 1.0 - float(rows[0][0]) if rows else 0.0


def versions_tsquery(versions: Sequence[int]) -> str:
    """A tsquery matching the chunks of `versions` in VERSIONED_SEARCH_VECTOR."""
    return " | ".join(f"'{VERSION_LEXEME_PREFIX}{int(v):d}'" for v in versions)


def _text_candidates(
    scope: ChunkScope, parent_field: str, query: str, versions: Sequence[int] | None
) -> list[tuple[int, int, float]]:
    """The best full-text chunks' (parent, chunk, ts_rank), one per parent.

    The question's words are ANDed with the versions' lexemes inside the GIN
    scan, so only chunks of `versions` are read from the table; ts_rank reads
    the words alone, so scores do not depend on the versions.
    """
    table = scope.model._meta.db_table
    terms = rare_terms(query, table, versions)
    if not terms or scope.where is None or (versions is not None and not versions):
        return []
    where, params = scope.where
    tsquery = _or_tsquery(terms)
    if scope.text_indexed:
        return _best_per_parent(
            fetch_rows(_text_indexed_sql(table, parent_field, where), [tsquery, tsquery, *params])
        )
    matches, match_params = "to_tsquery('simple', %s)", [tsquery]
    if versions is not None:
        matches += " && %s::tsquery"
        match_params.append(versions_tsquery(versions))
    # OFFSET 0 keeps the full-text matches (a few thousand at most, see
    # TERM_ROW_BUDGET) apart from the scope filter: otherwise PostgreSQL ANDs
    # the GIN bitmap with the version index's bitmap of every chunk in the
    # version, which took longer than ranking the matches (14.5 ms vs 7.3 ms).
    # ts_rank's tsquery is a sub-select, computed once: once the statement is
    # prepared, a generic plan parsed to_tsquery(%s) again for every match
    # (at 100k incidents 15.2 ms → 9.8 ms p50 over 200 questions).
    ranked = (
        f'SELECT "{parent_field}_id", "id",'  # noqa: S608 - names are ours, values are parameters
        " ts_rank(search_vector, (SELECT to_tsquery('simple', %s)))"
        f' FROM (SELECT * FROM "{table}"'
        f" WHERE {VERSIONED_SEARCH_VECTOR} @@ ({matches}) OFFSET 0)"
        f' AS "{table}" WHERE {where}'
        " ORDER BY 3 DESC"
        f" LIMIT {TEXT_CANDIDATES:d}"
    )
    return _best_per_parent(fetch_rows(ranked, [tsquery, *match_params, *params]))


def _text_indexed_sql(table: str, parent_field: str, where: str) -> str:
    """`_text_candidates`' statement where `where` is a partial full-text index's
    predicate (ChunkScope.text_indexed): the question's words alone reach that
    index, and every chunk it finds is in scope. The same rows in the same
    order as the versioned statement; at 100k incidents 7.1 → 4.0 ms p50
    (its GIN scan no longer walks the version lexeme's posting list).
    Parameters: the tsquery twice, then those of `where`."""
    return (
        f'SELECT "{parent_field}_id", "id",'  # noqa: S608 - names are ours, values are parameters
        " ts_rank(search_vector, (SELECT to_tsquery('simple', %s)))"
        f" FROM \"{table}\" WHERE search_vector @@ to_tsquery('simple', %s) AND {where}"
        f" ORDER BY 3 DESC LIMIT {TEXT_CANDIDATES:d}"
    )


def fetch_rows(sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    """Rows of one candidate query.

    hnsw.ef_search and hnsw.iterative_scan are set once per connection
    (settings.DATABASES OPTIONS), so the index path costs one round trip
    (ef_search changes only for a partial index: `hnsw_ef_search_use`).
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows: list[tuple[Any, ...]] = cursor.fetchall()
    return rows
