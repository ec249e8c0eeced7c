"""Read-only queries over incidents. Only selectors build queries.

Every selector reads the active dataset versions unless a version is pinned
(`version=`), which is how the evaluation and staged versions are searched.
"""

from __future__ import annotations

import datetime as dt
import re
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.contrib.postgres.search import SearchQuery
from django.core.exceptions import EmptyResultSet, FullResultSet
from django.db import connection
from django.db.models import Count, F, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Lower, Trim
from django.utils import timezone

from incidentdesk.embeddings import embed_query_literal
from incidentdesk.errors import NotFoundError
from incidentdesk.filtering import filter_queryset
from incidentdesk.stages import stage, submit_staged
from incidents import query_parsing as qp
from incidents.filtersets import DatasetVersionFilter, ImportJobFilter, IncidentFilter
from incidents.models import (
    EMBEDDING_DIMENSIONS,
    TEXT_SEARCH_CONFIG,
    Dataset,
    DatasetVersion,
    ImportJob,
    Incident,
    IncidentChunk,
)
from incidents.parsing import as_incident_id, normalize_incident_id
from incidents.rendering import incident_data, incidents_text

_EMBEDDING_POOL = ThreadPoolExecutor(max_workers=2, thread_name_prefix="query-embedding")
RRF_K = 60  # reciprocal rank fusion constant (Cormack et al.); robust across corpora
TEXT_CANDIDATES = 100  # chunks taken from the full-text list
# Chunks taken from the vector list. The HNSW scan grows with it: on 200k
# chunks (one version of three, ef_search 500) the query took 4.3 ms for 40
# and 5.2 ms for 100, and the whole search p50 16.9 ms instead of 19.1 ms
# (bench/search_bench.py), while the evaluation figures stayed the same.
VECTOR_CANDIDATES = 40
HNSW_EF_SEARCH = settings.HNSW_EF_SEARCH
# Filtered sets this small are ranked exactly: a scan of a few thousand
# vectors is cheaper than HNSW, and recall is 1.
EXACT_SEARCH_MAX_INCIDENTS = 5000
EXACT_SEARCH_MAX_CHUNKS = 5000
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


# --- scope ----------------------------------------------------------------------


ACTIVE_VERSIONS_TTL_SECONDS = 1.0
_active_cache: list[tuple[float, dict[int, DatasetVersion]]] = []


def active_versions_by_pk() -> dict[int, DatasetVersion]:
    """The active versions, with their datasets, by primary key.

    Read at most once a second per process (a search asks several times);
    activation in this process forgets it at once (`forget_active_versions`).
    Shared between requests: read them, never change them.
    """
    if _active_cache and time.monotonic() - _active_cache[0][0] < ACTIVE_VERSIONS_TTL_SECONDS:
        return _active_cache[0][1]
    versions = active_versions().select_related("dataset").order_by("pk")
    by_pk = {v.pk: v for v in versions}
    _active_cache[:] = [(time.monotonic(), by_pk)]
    return by_pk


def active_version_rows() -> tuple[tuple[Any, ...], ...]:
    """(pk, status, row_count, chunk_count, activated_at) of the active versions."""
    return tuple(
        (v.pk, v.status, v.row_count, v.chunk_count, v.activated_at)
        for v in active_versions_by_pk().values()
    )


def forget_active_versions() -> None:
    _active_cache.clear()


def forget_cached_scopes() -> None:
    """Drop every per-process cache of what is searchable (tests, imports)."""
    _active_cache.clear()
    _catalog_cache.clear()
    _term_stats_cache.clear()
    _topic_cache.clear()


def scope_version_ids(version: DatasetVersion | None = None) -> list[int]:
    """The pinned version, else the active ones.

    Literal ids rather than a join on the version's status: with a join the
    planner misjudges full-text and vector filters on large chunk tables
    (measured: a 650 ms merge join instead of a 20 ms bitmap scan).
    """
    if version is not None:
        return [version.pk]
    return [row[0] for row in active_version_rows()]


def scope_chunk_count(version: DatasetVersion | None = None) -> int:
    """Chunks searchable in the scope, from the versions' counters (no query)."""
    if version is not None:
        return version.chunk_count
    return sum(row[3] or 0 for row in active_version_rows())


def incident_scope(version: DatasetVersion | None = None) -> QuerySet[Incident]:
    """Incidents of the active versions, or of one pinned version."""
    return Incident.objects.filter(version_id__in=scope_version_ids(version))


def chunk_scope(version: DatasetVersion | None = None) -> QuerySet[IncidentChunk]:
    return IncidentChunk.objects.filter(version_id__in=scope_version_ids(version))


# --- hybrid ranking (shared with knowledge search) ------------------------------


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
_term_stats_cache: dict[str, tuple[float, dict[str, int]]] = {}


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


def _term_frequencies(table: str) -> dict[str, int]:
    """Chunks per lexeme in `table`, refreshed every few minutes.

    Counts only steer which words are kept; words missing from a stale copy
    count as rare (see rare_terms_tsquery), so staleness never hides a match.
    """
    cached = _term_stats_cache.get(table)
    if cached and time.monotonic() - cached[0] < TERM_STATS_TTL_SECONDS:
        return cached[1]
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT word, ndoc FROM ts_stat('SELECT search_vector FROM {table}')")  # noqa: S608 - our table name
        frequencies = dict(cursor.fetchall())
    _term_stats_cache[table] = (time.monotonic(), frequencies)
    return frequencies


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
    rows = _fetch(nearest, [vector_literal, *params])
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
    rows = _fetch(nearest, [embed_query_literal(query), *params])
    return 1.0 - float(rows[0][0]) if rows else 0.0


def incident_best_similarity(*, query: str, version: DatasetVersion | None = None) -> float:
    return chunks_best_similarity(chunk_scope(version), query)


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
    return _best_per_parent(_fetch(ranked, [tsquery, *params, tsquery]))


def _fetch(sql: str, params: list[Any]) -> list[tuple[Any, ...]]:
    """Rows of one candidate query.

    hnsw.ef_search and hnsw.iterative_scan are set once per connection
    (settings.DATABASES OPTIONS), so the index path costs one round trip.
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows: list[tuple[Any, ...]] = cursor.fetchall()
    return rows


# --- lookup by id ---------------------------------------------------------------


def lookup_incident_by_id(
    incident_id: str, *, version: DatasetVersion | None = None
) -> Incident | None:
    """Exact match after normalising dashes, spaces and case."""
    wanted = normalize_incident_id(incident_id)
    if not wanted:
        return None
    scope = incident_scope(version).select_related("version__dataset")
    return scope.filter(incident_id=wanted).order_by("-version__activated_at").first()


def incident_get_by_searched_id(
    query: str, *, version: DatasetVersion | None = None
) -> Incident | None:
    """The incident when a search is exactly its id (any dash, any case), else None."""
    wanted = as_incident_id(query)
    return lookup_incident_by_id(wanted, version=version) if wanted else None


# --- filters parsed from a question ---------------------------------------------


@dataclass(frozen=True)
class IncidentFilters:
    """What the question restricts the search to; shown to the user as chips."""

    application: str | None = None
    applications: tuple[str, ...] = ()
    window: qp.TimeWindow | None = None
    repeat: bool | None = None
    severity: str | None = None
    category: str | None = None

    @property
    def is_empty(self) -> bool:
        return not (
            self.applications or self.window or self.repeat or self.severity or self.category
        )

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["applications"] = list(self.applications)
        if self.window:
            data["window"] = {
                "start": self.window.start.isoformat() if self.window.start else None,
                "end": self.window.end.isoformat() if self.window.end else None,
                "label": self.window.label,
            }
        return {key: value for key, value in data.items() if value not in (None, [], ())}

    def apply(self, incidents: QuerySet[Incident]) -> QuerySet[Incident]:
        if self.applications:
            incidents = incidents.filter(impacted_application__in=self.applications)
        if self.window and self.window.start:
            incidents = incidents.filter(occurred_at__gte=self.window.start)
        if self.window and self.window.end:
            incidents = incidents.filter(occurred_at__lte=self.window.end)
        if self.repeat:
            incidents = incidents.filter(repeat_incident=True)
        if self.severity:
            incidents = incidents.filter(severity__iexact=self.severity)
        if self.category:
            incidents = incidents.filter(category__iexact=self.category)
        return incidents


CATALOG_TTL_SECONDS = 60


@dataclass(frozen=True)
class ApplicationCatalog:
    """Known applications, and one regex that finds any full name in a text."""

    entries: list[qp.ApplicationEntry]
    names: re.Pattern[str] | None

    @classmethod
    def build(cls, entries: list[qp.ApplicationEntry]) -> ApplicationCatalog:
        names = sorted({e.application.lower() for e in entries if len(e.application) >= 5}, key=len)
        alternation = "|".join(re.escape(name) for name in reversed(names))
        pattern = re.compile(rf"(?<!\w)(?:{alternation})(?!\w)") if names else None
        return cls(entries, pattern)


_catalog_cache: dict[tuple[Any, ...], tuple[float, ApplicationCatalog]] = {}


def _catalog_key(version: DatasetVersion | None) -> tuple[Any, ...]:
    """Changes whenever an import or activation changes what is in scope."""
    if version is None:
        return active_version_rows()
    return (
        (version.pk, version.status, version.row_count, version.chunk_count, version.activated_at),
    )


def application_catalog(version: DatasetVersion | None = None) -> list[qp.ApplicationEntry]:
    return cached_catalog(version).entries


def cached_catalog(version: DatasetVersion | None = None) -> ApplicationCatalog:
    """Every (application, company) pair in scope, for matching names.

    Built once per scope and reused for a minute: at 100k incidents the
    DISTINCT alone costs more than the whole search.
    """
    key = _catalog_key(version)
    cached = _catalog_cache.get(key)
    if cached and time.monotonic() - cached[0] < CATALOG_TTL_SECONDS:
        return cached[1]
    pairs = (
        incident_scope(version)
        .exclude(impacted_application="")
        .values_list("impacted_application", "extra__company")
        # Without clearing Meta.ordering, DISTINCT also covers the ordering
        # columns and keeps one row per incident (10k entries for 60 apps).
        .order_by()
        .distinct()
    )
    entries = [
        qp.ApplicationEntry.of(app, company if isinstance(company, str) else "")
        for app, company in pairs
    ]
    catalog = ApplicationCatalog.build(entries)
    _catalog_cache.clear()  # one scope is hot at a time; keep memory flat
    _catalog_cache[key] = (time.monotonic(), catalog)
    return catalog


_topic_cache: dict[tuple[Any, ...], frozenset[str]] = {}


def incident_topic_words(version: DatasetVersion | None = None) -> frozenset[str]:
    """Every word of the scope's titles, applications, categories, companies and tags.

    What incidents are about, by the data's own words: "DNS", "database",
    "timeouts" are; "blew", "fell", "noteworthy" never title an incident. The
    router asks it whether a time-window question also names a topic. Kept
    until the scope changes (an import or activation), not for a fixed time:
    at 100k incidents one build reads every title.
    """
    key = _catalog_key(version)
    if key not in _topic_cache:
        _topic_cache.clear()  # one scope is hot at a time
        _topic_cache[key] = _read_topic_words(scope_version_ids(version))
    return _topic_cache[key]


def _read_topic_words(version_ids: list[int]) -> frozenset[str]:
    sql = (
        "SELECT DISTINCT word FROM incidents_incident i, regexp_split_to_table(lower("
        "i.title || ' ' || i.impacted_application || ' ' || i.category || ' ' ||"
        " coalesce(i.extra->>'company', '') || ' ' || coalesce(i.extra->>'tags', '')),"
        " '[^a-z0-9]+') AS word WHERE i.version_id = ANY(%s) AND word <> ''"
    )
    return frozenset(row[0] for row in _fetch(sql, [version_ids]))


def parse_incident_filters(
    query: str, *, today: dt.date, version: DatasetVersion | None = None
) -> tuple[IncidentFilters, str]:
    """Filters named in the question, and the words left for ranking."""
    window, rest = qp.parse_time_window(query, today)
    category = qp.parse_category(rest)
    subject = qp.listing_subject(rest)
    if subject and category and qp.is_category_phrase(subject):
        subject = None  # "Database incidents" is a category, not an application
    catalog = cached_catalog(version)
    match = qp.match_applications(subject, catalog.entries) if subject else None
    if match is None:
        match, subject = _application_named_verbatim(rest, catalog)
    if match is None and (window or category):
        # "PayU Core timeouts in the last 90 days": the window is a filter and
        # the application named loosely beside it another; the rest is ranked.
        mention = qp.find_application_mention(rest, catalog.entries)
        if mention and _few_words_beside(rest, mention.subject):
            match, subject = mention.match, mention.subject
    filters = IncidentFilters(
        application=subject if match else None,
        applications=match.applications if match else (),
        window=window,
        repeat=qp.parse_repeat(rest),
        severity=qp.parse_severity(rest),
        category=category,
    )
    if match and subject:
        rest = re.sub(re.escape(subject), " ", qp.normalise_mention_text(rest), flags=re.IGNORECASE)
    return filters, qp.strip_filter_words(rest)


MENTION_TOPIC_WORDS = 3  # more words beside the name: a description, not "<app> <topic>"


def _few_words_beside(text: str, subject: str) -> bool:
    """A short "<application> <topic>" question, where the name is a filter."""
    words = content_words(qp.normalise_mention_text(text))
    return len([w for w in words if w not in subject.split()]) <= MENTION_TOPIC_WORDS


def relaxed_filters(filters: IncidentFilters) -> list[IncidentFilters]:
    """Ever looser versions of `filters`: application first, the window last."""
    without_app = replace(filters, application=None, applications=())
    without_attributes = replace(without_app, repeat=None, severity=None, category=None)
    return [without_app, without_attributes, IncidentFilters()]


def _application_named_verbatim(
    text: str, catalog: ApplicationCatalog
) -> tuple[qp.ApplicationMatch | None, str | None]:
    """A full known application name written inside a longer question."""
    found = catalog.names.search(text.lower()) if catalog.names else None
    if found is None:
        return None, None
    entry = next(e for e in catalog.entries if e.application.lower() == found.group(0))
    return qp.ApplicationMatch((entry.application,), "exact"), entry.application


# --- search_similar_incidents ---------------------------------------------------


@dataclass(frozen=True)
class IncidentHit:
    """One incident found by search, with the chunk that matched best."""

    incident: Incident
    chunk_text: str
    score: float


@dataclass(frozen=True)
class IncidentSearch:
    query: str
    hits: list[IncidentHit]
    filters: IncidentFilters = field(default_factory=IncidentFilters)
    expanded: bool = False  # the filters matched nothing and were loosened
    applied: IncidentFilters = field(default_factory=IncidentFilters)

    def as_text(self) -> str:
        """What the model reads: the filters used, then each incident."""
        heading = f"Found {len(self.hits)} incident(s) similar to: {self.query}"
        if not self.applied.is_empty:
            heading += f"\nFilters: {self.applied.as_dict()}"
        if self.expanded:
            heading += (
                f"\nNo incident matched {self.dropped_filters()}, so they were loosened:"
                " these are the nearest without them."
            )
        return incidents_text([hit.incident for hit in self.hits], heading=heading)

    def dropped_filters(self) -> str:
        """The filters loosened, in words ("severity SEV1, window last 90 days")."""
        kept = self.applied.as_dict()
        dropped = {k: v for k, v in self.filters.as_dict().items() if kept.get(k) != v}
        if "application" in dropped:
            dropped.pop("applications", None)  # the catalog names of the same mention
        return ", ".join(f"{name} {_filter_words(value)}" for name, value in dropped.items())

    def as_data(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "filters": self.filters.as_dict(),
            "applied_filters": self.applied.as_dict(),
            "expanded": self.expanded,
            "results": [
                incident_data(hit.incident, score=round(hit.score, 4), matched=hit.chunk_text)
                for hit in self.hits
            ],
        }


def _filter_words(value: Any) -> str:
    if isinstance(value, dict):
        return str(value.get("label", ""))
    if isinstance(value, list):
        return " or ".join(map(str, value))
    return str(value)


def search_similar_incidents(
    query: str,
    limit: int = 5,
    *,
    now: dt.date | None = None,
    version: DatasetVersion | None = None,
) -> IncidentSearch:
    """Filters from the question first, then hybrid search; one hit per incident.

    If the filters leave nothing, they are dropped and `expanded` says so.
    """
    today = now or timezone.localdate()
    filters, rest = parse_incident_filters(query, today=today, version=version)
    scope = incident_scope(version)
    applied, expanded = filters, False
    for looser in [filters, *relaxed_filters(filters)]:
        applied = looser
        if looser.is_empty or looser.apply(scope).exists():
            break
        expanded = True
    text = query if applied.is_empty else rest
    hits = _rank_incidents(
        applied.apply(scope), version, text, limit, is_filtered=not applied.is_empty
    )
    return IncidentSearch(query, hits, filters, expanded, applied)


# A chat report nobody has reviewed ranks below a reviewed incident of equal (or
# nearly equal) relevance: its fused score counts this much less when ordering.
# 2% is about two rank places near the top of one list (RRF_K 60); a clearly more
# relevant report still comes first. The only place review status touches ranking.
REPORTED_PENALTY = 0.02


def _reviewed_first(hits: list[IncidentHit], limit: int) -> list[IncidentHit]:
    """Hits reordered with the report penalty (scores themselves unchanged), cut to `limit`."""

    def weight(hit: IncidentHit) -> float:
        return hit.score * (1.0 - REPORTED_PENALTY if hit.incident.is_reported else 1.0)

    return sorted(hits, key=weight, reverse=True)[:limit]


def _rank_incidents(
    incidents: QuerySet[Incident],
    version: DatasetVersion | None,
    text: str,
    limit: int,
    *,
    is_filtered: bool = False,
) -> list[IncidentHit]:
    """Hybrid-ranked within `incidents`; by date when no words are left to rank."""
    if not content_words(text):
        newest = incidents.select_related("version__dataset").order_by(
            F("occurred_at").desc(nulls_last=True), "incident_id"
        )
        return [IncidentHit(incident, "", 0.0) for incident in newest[:limit]]
    chunks, small = _filtered_chunks(incidents, version, is_filtered=is_filtered)
    # One more than asked: a report at the cut may give way to the reviewed one below it.
    ranked = chunks_hybrid_rank(
        chunks, parent_field="incident", query=text, limit=limit + 1, exact=small
    )
    _attach_versions([r.parent for r in ranked], version)
    return _reviewed_first([IncidentHit(r.parent, r.chunk_text, r.score) for r in ranked], limit)


def _attach_versions(incidents: Iterable[Incident], version: DatasetVersion | None) -> None:
    """Each incident's version and dataset, from the scope instead of a join.

    The select_related join cost 1.3 ms of a 20 ms search (bench/search_bench.py);
    an incident whose version just left the scope loads it lazily.
    """
    known = {version.pk: version} if version is not None else active_versions_by_pk()
    for incident in incidents:
        if incident.version_id in known:
            incident.version = known[incident.version_id]


def _filtered_chunks(
    incidents: QuerySet[Incident], version: DatasetVersion | None, *, is_filtered: bool
) -> tuple[QuerySet[IncidentChunk], bool]:
    """Chunks of `incidents`, and whether they are few enough to rank exactly.

    A small set is named by literal ids so PostgreSQL fetches it through the
    foreign-key index and sorts it exactly, rather than walking the HNSW
    graph for a handful of rows.
    """
    chunks = chunk_scope(version)
    if scope_chunk_count(version) <= EXACT_SEARCH_MAX_CHUNKS:
        # The whole scope is small: beside a large staged version, a filtered
        # HNSW walk visits thousands of other versions' nodes (measured:
        # 127 ms for 100 demo chunks beside 60k others); a scan is < 2 ms.
        return (chunks.filter(incident__in=incidents) if is_filtered else chunks), True
    if not is_filtered:
        return chunks, False
    ids = list(incidents.values_list("pk", flat=True)[: EXACT_SEARCH_MAX_INCIDENTS + 1])
    if len(ids) <= EXACT_SEARCH_MAX_INCIDENTS:
        return chunks.filter(incident_id__in=ids), True
    return chunks.filter(incident__in=incidents), False


def incident_search_similar(
    *, query: str, limit: int = 5, version: DatasetVersion | None = None
) -> list[IncidentHit]:
    """Hits only, for pages that show a plain result list."""
    return search_similar_incidents(query, limit, version=version).hits


# --- get_incidents_by_application -----------------------------------------------


@dataclass(frozen=True)
class ApplicationSearch:
    application: str
    incidents: list[Incident]
    how: str  # exact | partial | semantic | none
    applications: tuple[str, ...] = ()


def get_incidents_by_application(
    app_name: str, limit: int = 5, *, version: DatasetVersion | None = None
) -> ApplicationSearch:
    """Case-insensitive exact name, then partial (by words), then semantic; newest first."""
    match = qp.match_applications(app_name, application_catalog(version))
    if match is not None:
        incidents = (
            incident_scope(version)
            .filter(impacted_application__in=match.applications)
            .select_related("version__dataset")
            .order_by(F("occurred_at").desc(nulls_last=True), "incident_id")
        )
        return ApplicationSearch(app_name, list(incidents[:limit]), match.how, match.applications)
    hits = _rank_incidents(incident_scope(version), version, app_name, limit)
    return ApplicationSearch(
        app_name, [hit.incident for hit in hits], "semantic" if hits else "none"
    )


# --- get_recent_incidents -------------------------------------------------------


def get_recent_incidents(
    days: int = 7,
    limit: int = 10,
    *,
    now: dt.date | None = None,
    version: DatasetVersion | None = None,
) -> list[Incident]:
    """Incidents that occurred in the last `days` days up to `now`, newest first.

    `occurred_at` is filled from the id (INC-YYYY-MM-DD-NNN) at import when
    the data has no date, so both sources count.
    """
    today = now or timezone.localdate()
    start = today - dt.timedelta(days=days)
    return list(
        incident_scope(version)
        .filter(occurred_at__gte=start, occurred_at__lte=today)
        .select_related("version__dataset")
        .order_by("-occurred_at", "incident_id")[:limit]
    )


# --- pages ----------------------------------------------------------------------


@dataclass(frozen=True)
class DatasetStats:
    name: str
    kind: str
    label: str
    rows: int


def active_versions() -> QuerySet[DatasetVersion]:
    return DatasetVersion.objects.filter(status=DatasetVersion.Status.ACTIVE)


def active_dataset_stats() -> list[DatasetStats]:
    """What is searchable right now, for the home page."""
    versions = active_versions().select_related("dataset").order_by("dataset__name")
    return [DatasetStats(v.dataset.name, v.dataset.kind, v.label, v.row_count) for v in versions]


# --- incident pages -------------------------------------------------------------

PAGE_SEARCH_LIMIT = 100  # a search page ranks at most this many incidents


@dataclass(frozen=True)
class IncidentListFilters:
    """The incident list's search box and filters, as the page submitted them."""

    query: str = ""
    application: str = ""
    date_from: dt.date | None = None
    date_to: dt.date | None = None
    version: DatasetVersion | None = None

    def apply(self, incidents: QuerySet[Incident]) -> QuerySet[Incident]:
        if self.application:
            incidents = incidents.filter(impacted_application=self.application)
        if self.date_from:
            incidents = incidents.filter(occurred_at__gte=self.date_from)
        if self.date_to:
            incidents = incidents.filter(occurred_at__lte=self.date_to)
        return incidents


def incident_list(*, filters: IncidentListFilters) -> list[IncidentHit] | QuerySet[Incident]:
    """The list page: hybrid-ranked hits for a query, else newest first (lazy, for paging)."""
    incidents = filters.apply(incident_scope(filters.version))
    if content_words(filters.query):
        is_filtered = bool(filters.application or filters.date_from or filters.date_to)
        return _rank_incidents(
            incidents, filters.version, filters.query, PAGE_SEARCH_LIMIT, is_filtered=is_filtered
        )
    return incidents.select_related("version__dataset").order_by(
        F("occurred_at").desc(nulls_last=True), "incident_id"
    )


def incident_list_for_review() -> QuerySet[Incident]:
    """Chat reports waiting for staff, oldest first (uses incidents_incident_review_idx)."""
    return (
        Incident.objects.filter(review_status=Incident.ReviewStatus.REPORTED)
        .select_related("version__dataset")
        .order_by("created_at", "pk")
    )


def incident_get_for_review(*, pk: int) -> Incident:
    """One report waiting for review; NotFoundError once accepted, merged or discarded."""
    incident = incident_list_for_review().filter(pk=pk).first()
    if incident is None:
        raise NotFoundError(f"No report {pk} is waiting for review.")
    return incident


def incident_versions() -> QuerySet[DatasetVersion]:
    """Versions of incident datasets that hold rows, for the list's version filter."""
    return (
        DatasetVersion.objects.filter(dataset__kind=Dataset.Kind.INCIDENTS, row_count__gt=0)
        .select_related("dataset")
        .order_by("dataset__name", "-created_at")
    )


def incident_applications(version: DatasetVersion | None = None) -> list[str]:
    """Application names in scope, for the list's application filter."""
    return sorted({entry.application for entry in application_catalog(version)})


def incident_get_for_page(*, incident_id: str, version_id: int | None = None) -> Incident:
    """The incident with that id: in the given version, else active, else newest.

    Links from answers name only the id; an id that only exists in a staged or
    archived version still opens, and the page says which version it shows.
    """
    wanted = normalize_incident_id(incident_id)
    incidents = Incident.objects.filter(incident_id=wanted).select_related("version__dataset")
    if version_id is not None:
        incidents = incidents.filter(version_id=version_id)
    found = (
        incidents.filter(version_id__in=scope_version_ids()).first()
        or incidents.order_by("-version__created_at").first()
    )
    if found is None:
        raise NotFoundError(f"Incident {wanted} not found.")
    return found


def incident_list_similar(*, incident: Incident, limit: int = 5) -> list[IncidentHit]:
    """Active incidents most like this one (title, root cause, mitigation), itself excluded."""
    text = " ".join(part for part in (incident.title, incident.root_cause) if part)
    others = incident_scope().exclude(incident_id=incident.incident_id)
    return _rank_incidents(others, None, text, limit, is_filtered=True)


# --- API lists and details, the admin's version diff ------------------------------


def incident_list_for_user(
    *, user: AbstractBaseUser | AnonymousUser, filters: Mapping[str, Any] | None = None
) -> QuerySet[Incident]:
    """The API's list: active versions, filtered (IncidentFilter); staff may name any version."""
    filters = filters or {}
    staff_pinned = getattr(user, "is_staff", False) and filters.get("version")
    incidents = Incident.objects.all() if staff_pinned else incident_scope()
    incidents = incidents.select_related("version__dataset").order_by(
        F("occurred_at").desc(nulls_last=True), "incident_id", "pk"
    )
    return filter_queryset(IncidentFilter, filters, incidents)


def incident_get_for_user(
    *, incident_id: str, user: AbstractBaseUser | AnonymousUser, version_id: int | None = None
) -> Incident:
    """One incident by id (any dash, any case) in the active versions.

    Staff may read it from any version; others only from active ones, and
    get a NotFoundError either way, so staged data does not leak.
    """
    staff = getattr(user, "is_staff", False)
    incidents = Incident.objects.all() if staff and version_id else incident_scope()
    if version_id:
        incidents = incidents.filter(version_id=version_id)
    incident = (
        incidents.select_related("version__dataset")
        .filter(incident_id=normalize_incident_id(incident_id))
        .order_by(F("version__activated_at").desc(nulls_last=True))
        .first()
    )
    if incident is None:
        raise NotFoundError(f"Incident {incident_id} not found.")
    return incident


def dataset_list() -> QuerySet[Dataset]:
    """Every dataset with its version count and active version (one query)."""
    active = DatasetVersion.objects.filter(
        dataset=OuterRef("pk"), status=DatasetVersion.Status.ACTIVE
    )
    return Dataset.objects.annotate(
        version_count=Count("versions"),
        active_version_id=Subquery(active.values("pk")[:1]),
        active_version_label=Subquery(active.values("label")[:1]),
    ).order_by("name")


def dataset_get(*, slug: str) -> Dataset:
    dataset = dataset_list().filter(slug=slug).first()
    if dataset is None:
        raise NotFoundError(f"Dataset {slug} not found.")
    return dataset


def dataset_version_list(*, filters: Mapping[str, Any] | None = None) -> QuerySet[DatasetVersion]:
    versions = DatasetVersion.objects.select_related("dataset").order_by(
        "dataset__name", "-created_at", "-pk"
    )
    return filter_queryset(DatasetVersionFilter, filters, versions)


def dataset_version_get(*, version_id: int) -> DatasetVersion:
    version = DatasetVersion.objects.select_related("dataset").filter(pk=version_id).first()
    if version is None:
        raise NotFoundError(f"Dataset version {version_id} not found.")
    return version


def dataset_version_previous(*, dataset: Dataset) -> DatasetVersion | None:
    """The version that was active before the current one: what a rollback activates."""
    return (
        dataset.versions.select_related("dataset")
        .filter(status=DatasetVersion.Status.ARCHIVED, activated_at__isnull=False)
        .order_by("-activated_at")
        .first()
    )


def import_job_list(*, filters: Mapping[str, Any] | None = None) -> QuerySet[ImportJob]:
    jobs = ImportJob.objects.select_related("version__dataset").order_by("-created_at", "-pk")
    return filter_queryset(ImportJobFilter, filters, jobs)


def import_job_get(*, job_id: int) -> ImportJob:
    job = ImportJob.objects.select_related("version__dataset").filter(pk=job_id).first()
    if job is None:
        raise NotFoundError(f"Import job {job_id} not found.")
    return job


DIFF_SAMPLE = 50  # ids listed per kind of change; the counts are always complete


@dataclass(frozen=True)
class VersionDiff:
    """What activating `version` changes for search, against the active version."""

    version: DatasetVersion
    active: DatasetVersion | None
    rows: int
    active_rows: int
    added: int
    removed: int
    changed: int  # the same record (same title), its content edited
    added_ids: list[str]
    removed_ids: list[str]
    changed_ids: list[str]
    # An id now naming a different record (another title): not an edit of the old one.
    replaced: int = 0
    replaced_ids: list[str] = field(default_factory=list)

    @property
    def is_noop(self) -> bool:
        return self.version.status == DatasetVersion.Status.ACTIVE


def dataset_version_diff(*, version: DatasetVersion) -> VersionDiff:
    """Rows added, removed, changed (by content hash) and replaced versus the active version.

    A changed row whose title differs and whose application or date (a
    document: its type) differs too is counted as replaced: a different record
    reusing the id (exports renumber), which "changed" would hide. A new title
    alone is an edit.
    """
    active = (
        version.dataset.versions.filter(status=DatasetVersion.Status.ACTIVE)
        .exclude(pk=version.pk)
        .first()
    )
    is_knowledge = version.dataset.kind == Dataset.Kind.KNOWLEDGE
    related, key = (
        ("knowledge_documents", "doc_id") if is_knowledge else ("incidents", "incident_id")
    )
    target = getattr(version, related).all()
    current = getattr(active, related).all() if active else target.none()
    added = target.exclude(**{f"{key}__in": current.values(key)}).order_by(key)
    removed = current.exclude(**{f"{key}__in": target.values(key)}).order_by(key)
    old = current.filter(**{key: OuterRef(key)})
    places = ["type"] if is_knowledge else ["impacted_application", "occurred_at"]
    differing = (
        target.annotate(
            old_hash=Subquery(old.values("content_hash")[:1]),
            old_title=Lower(Trim(Subquery(old.values("title")[:1]))),
            **{f"old_{name}": Subquery(old.values(name)[:1]) for name in places},
        )
        .filter(old_hash__isnull=False)
        .exclude(old_hash=F("content_hash"))
        .order_by(key)
    )
    same_place = Q(*[Q(**{f"old_{name}": F(name)}) for name in places])
    replaced = differing.exclude(old_title=Lower(Trim("title"))).exclude(same_place)
    changed = differing.exclude(pk__in=replaced.values("pk"))

    def ids(rows: QuerySet[Any]) -> list[str]:
        return list(rows.values_list(key, flat=True)[:DIFF_SAMPLE])

    return VersionDiff(
        version=version, active=active, rows=target.count(), active_rows=current.count(),
        added=added.count(), removed=removed.count(), changed=changed.count(),
        added_ids=ids(added), removed_ids=ids(removed), changed_ids=ids(changed),
        replaced=replaced.count(), replaced_ids=ids(replaced),
    )  # fmt: skip
