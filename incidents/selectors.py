"""Read-only queries over incidents. Only selectors build queries.

Every selector reads the active dataset versions unless a version is pinned
(`version=`), which is how the evaluation and staged versions are searched.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Collection, Iterable, Mapping
from concurrent.futures import Future
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db import connection
from django.db.models import F, QuerySet
from django.utils import timezone

from incidentdesk.db import rows_select
from incidentdesk.embeddings import common_words
from incidentdesk.errors import NotFoundError
from incidentdesk.filtering import filter_queryset
from incidents import query_parsing as qp
from incidents import spelling
from incidents.caching import TimedCache
from incidents.dataset_selectors import active_versions
from incidents.filtersets import IncidentFilter
from incidents.models import (
    Dataset,
    DatasetVersion,
    Incident,
    IncidentChunk,
    RetiredReport,
)
from incidents.parsing import as_incident_id, normalize_incident_id
from incidents.ranking import (
    ChunkScope,
    chunks_best_similarity,
    chunks_hybrid_rank,
    content_words,
    embed_in_background,
    fetch_rows,
    forget_term_frequencies,
)
from incidents.rendering import incident_data, incidents_text
from incidents.vector_indexes import (
    PARTIAL_INDEX_EF_SEARCH,
    forget_partial_indexes,
    partial_index_versions,
)

# Filtered sets this small are ranked exactly: a scan of a few thousand
# vectors is cheaper than HNSW, and recall is 1.
EXACT_SEARCH_MAX_INCIDENTS = 5000
EXACT_SEARCH_MAX_CHUNKS = 5000


# --- scope ----------------------------------------------------------------------


ACTIVE_VERSIONS_TTL_SECONDS = 1.0
_active_cache: TimedCache[None, dict[int, DatasetVersion]] = TimedCache(
    ttl_seconds=ACTIVE_VERSIONS_TTL_SECONDS
)


def active_versions_by_pk() -> dict[int, DatasetVersion]:
    """The active versions, with their datasets, by primary key.

    Read at most once a second per process (a search asks several times);
    activation in this process forgets it at once (`forget_active_versions`).
    Shared between requests: read them, never change them.
    """
    return _active_cache.get(None, _read_active_versions)


def _read_active_versions() -> dict[int, DatasetVersion]:
    versions = active_versions().select_related("dataset").order_by("pk")
    return {v.pk: v for v in versions}


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
    forget_term_frequencies()
    forget_partial_indexes()
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


# --- nearest chunk ---------------------------------------------------------------


def incident_best_similarity(*, query: str, version: DatasetVersion | None = None) -> float:
    return chunks_best_similarity(chunk_scope(version), respelt(query, version))


# --- lookup by id ---------------------------------------------------------------


def incident_get_by_public_id(
    *, incident_id: str, version: DatasetVersion | None = None
) -> Incident | None:
    """Exact match after normalising dashes, spaces and case."""
    wanted = normalize_incident_id(incident_id)
    if not wanted:
        return None
    found = rows_select(Incident, _BY_PUBLIC_ID, [scope_version_ids(version), wanted])
    _attach_versions(found, version)
    return found[0] if found else None


# What incident_scope().filter(incident_id=...).order_by("-version__activated_at").first()
# runs, as one fixed statement: the ORM compiled it, and its join to the version
# and dataset, at every lookup (~1 ms of CPU of a chat answer that looks one up);
# the versions come from the scope instead (`_attach_versions`).
_BY_PUBLIC_ID = (
    'SELECT i.* FROM "incidents_incident" i'
    ' JOIN "incidents_datasetversion" v ON v."id" = i."version_id"'
    ' WHERE i."version_id" = ANY(%s) AND i."incident_id" = %s'
    ' ORDER BY v."activated_at" DESC LIMIT 1'
)


def incident_ids_existing(
    *, incident_ids: Collection[str], version: DatasetVersion | None = None
) -> set[str]:
    """Which of these normalised ids an incident in scope has: an answer may quote an
    id from a document, which no search returned, and it is still a true citation."""
    if not incident_ids:
        return set()
    found = incident_scope(version).filter(incident_id__in=list(incident_ids))
    return set(found.values_list("incident_id", flat=True))


def incident_get_by_searched_id(
    query: str, *, version: DatasetVersion | None = None
) -> Incident | None:
    """The incident when a search is exactly its id (any dash, any case), else None."""
    wanted = as_incident_id(query)
    return incident_get_by_public_id(incident_id=wanted, version=version) if wanted else None


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


# One scope is hot at a time: keep_one keeps memory flat.
_catalog_cache: TimedCache[tuple[Any, ...], ApplicationCatalog] = TimedCache(
    ttl_seconds=CATALOG_TTL_SECONDS, keep_one=True
)


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
    return _catalog_cache.get(_catalog_key(version), lambda: _read_catalog(version))


def _read_catalog(version: DatasetVersion | None) -> ApplicationCatalog:
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
    return ApplicationCatalog.build(entries)


_topic_cache: TimedCache[tuple[Any, ...], frozenset[str]] = TimedCache(
    ttl_seconds=None, keep_one=True
)


def incident_topic_words(version: DatasetVersion | None = None) -> frozenset[str]:
    """Every word of the scope's titles, applications, categories, companies and tags.

    What incidents are about, by the data's own words: "DNS", "database",
    "timeouts" are; "blew", "fell", "noteworthy" never title an incident. The
    router asks it whether a time-window question also names a topic. Kept
    until the scope changes (an import or activation), not for a fixed time:
    at 100k incidents one build reads every title.
    """
    return _topic_cache.get(
        _catalog_key(version), lambda: _read_topic_words(scope_version_ids(version))
    )


def _read_topic_words(version_ids: list[int]) -> frozenset[str]:
    sql = (
        "SELECT DISTINCT word FROM incidents_incident i, regexp_split_to_table(lower("
        "i.title || ' ' || i.impacted_application || ' ' || i.category || ' ' ||"
        " coalesce(i.extra->>'company', '') || ' ' || coalesce(i.extra->>'tags', '')),"
        " '[^a-z0-9]+') AS word WHERE i.version_id = ANY(%s) AND word <> ''"
    )
    return frozenset(row[0] for row in fetch_rows(sql, [version_ids]))


def respelt(query: str, version: DatasetVersion | None = None) -> str:
    """`query` with misspelt words written as the titles or English write them."""
    return spelling.respell(query, common_words(), incident_topic_words(version))


def parse_incident_filters(
    query: str, *, today: dt.date, version: DatasetVersion | None = None
) -> tuple[IncidentFilters, str]:
    """Filters named in the question, and the words left for ranking."""
    window, rest = qp.asked_time_window(query, today)
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
    """A full known application name written inside a longer question, with the
    entries that name it too: "CircleCI jobs stuck…" is about "CircleCI job
    execution (…)" as much as about the entry called just "CircleCI"."""
    found = catalog.names.search(text.lower()) if catalog.names else None
    if found is None:
        return None, None
    entry = next(e for e in catalog.entries if e.application.lower() == found.group(0))
    match = qp.match_applications(entry.application, catalog.entries)
    return match or qp.ApplicationMatch((entry.application,), "exact"), entry.application


# --- incident_search_similar (the search_similar_incidents tool) ---------------


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


def incident_search_similar(
    *,
    query: str,
    limit: int = 5,
    now: dt.date | None = None,
    version: DatasetVersion | None = None,
) -> IncidentSearch:
    """Filters from the question first, then hybrid search; one hit per incident.

    If the filters leave nothing, they are dropped and `expanded` says so.
    """
    today = now or timezone.localdate()
    query = respelt(query, version)
    filters, rest = parse_incident_filters(query, today=today, version=version)
    # The embedding is the longest step: start it now for the text ranked
    # unless every filter is dropped, and check the filters while it runs.
    likely = query if filters.is_empty else rest
    vector = embed_in_background(likely) if content_words(likely) else None
    scope = incident_scope(version)
    applied, expanded = filters, False
    for looser in [filters, *relaxed_filters(filters)]:
        applied = looser
        if looser.is_empty or _any_incident(scope, looser, version):
            break
        expanded = True
    text = query if applied.is_empty else rest
    hits = _rank_incidents(
        applied.apply(scope),
        version,
        text,
        limit,
        is_filtered=not applied.is_empty,
        vector=vector if text == likely else None,
        chunks=_application_chunks(applied, version),
    )
    return IncidentSearch(query, hits, filters, expanded, applied)


# Most filtered searches name only applications ("… in PayU Core"): their two
# statements, written as the ORM compiles them from `IncidentFilters.apply`,
# which it did at every such search (~0.9 ms of CPU of a chat answer).
_ANY_OF_APPLICATIONS = (
    'SELECT 1 AS "a" FROM "incidents_incident" WHERE ("incidents_incident"."version_id" IN'
    ' ({versions}) AND "incidents_incident"."impacted_application" IN ({applications})) LIMIT 1'
)
_CHUNKS_OF_APPLICATIONS = (
    '("incidents_incidentchunk"."version_id" IN ({versions}) AND'
    ' "incidents_incidentchunk"."incident_id" IN (SELECT "U0"."id" FROM "incidents_incident" "U0"'
    ' WHERE ("U0"."version_id" IN ({versions}) AND "U0"."impacted_application" IN'
    " ({applications}))))"
)


def _only_applications(filters: IncidentFilters) -> bool:
    return bool(filters.applications) and filters == IncidentFilters(
        application=filters.application, applications=filters.applications
    )


def _placeholders(values: Collection[Any]) -> str:
    return ", ".join(["%s"] * len(values))


def _any_incident(
    scope: QuerySet[Incident], filters: IncidentFilters, version: DatasetVersion | None
) -> bool:
    """Whether `filters` leave any incident in `scope` (the incidents of `version`)."""
    versions = scope_version_ids(version)
    if not (_only_applications(filters) and versions):
        return filters.apply(scope).exists()
    sql = _ANY_OF_APPLICATIONS.format(
        versions=_placeholders(versions), applications=_placeholders(filters.applications)
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [*versions, *filters.applications])
        return cursor.fetchone() is not None


def _application_chunks(
    filters: IncidentFilters, version: DatasetVersion | None
) -> ChunkScope | None:
    """The chunks `_filtered_chunks` picks for a search filtered by applications only,
    when they are few enough to rank exactly; None otherwise (the ORM builds them)."""
    versions = scope_version_ids(version)
    small = scope_chunk_count(version) <= EXACT_SEARCH_MAX_CHUNKS
    if not (_only_applications(filters) and versions and small):
        return None
    where = _CHUNKS_OF_APPLICATIONS.format(
        versions=_placeholders(versions), applications=_placeholders(filters.applications)
    )
    return ChunkScope(IncidentChunk, (where, [*versions, *versions, *filters.applications]))


def _rank_incidents(
    incidents: QuerySet[Incident],
    version: DatasetVersion | None,
    text: str,
    limit: int,
    *,
    is_filtered: bool = False,
    vector: Future[str] | None = None,
    chunks: ChunkScope | None = None,
) -> list[IncidentHit]:
    """Hybrid-ranked within `incidents`; by date when no words are left to rank.

    `vector` is the embedding of `text` when the caller has started it;
    `chunks`, the chunks of `incidents` to rank exactly, when the caller wrote them.
    """
    if not content_words(text):
        newest = incidents.order_by(F("occurred_at").desc(nulls_last=True), "incident_id")
        return [
            IncidentHit(incident, "", 0.0) for incident in _with_versions(newest[:limit], version)
        ]
    scope, small = (
        (chunks, True) if chunks else _filtered_chunks(incidents, version, is_filtered=is_filtered)
    )
    ranked = chunks_hybrid_rank(
        scope,
        parent_field="incident",
        query=text,
        limit=limit,
        exact=small,
        vector=vector,
        versions=scope_version_ids(version),
        reports_last=True,
        covering_first=True,
    )
    _attach_versions([r.parent for r in ranked], version)
    return [IncidentHit(r.parent, r.chunk_text, r.score) for r in ranked]


def _attach_versions(incidents: Iterable[Incident], version: DatasetVersion | None) -> None:
    """Each incident's version and dataset, from the scope instead of a join.

    The select_related join cost 1.3 ms of a 20 ms search (bench/search_bench.py);
    an incident whose version just left the scope loads it lazily.
    """
    known = {version.pk: version} if version is not None else active_versions_by_pk()
    for incident in incidents:
        if incident.version_id in known:
            incident.version = known[incident.version_id]


def _with_versions(
    incidents: QuerySet[Incident], version: DatasetVersion | None = None
) -> list[Incident]:
    """The incidents, with `_attach_versions`: the copilot's lists (by application,
    recent) spent ~1 ms of CPU a call building and reading the join."""
    found = list(incidents)
    _attach_versions(found, version)
    return found


def _filtered_chunks(
    incidents: QuerySet[Incident], version: DatasetVersion | None, *, is_filtered: bool
) -> tuple[QuerySet[IncidentChunk] | ChunkScope, bool]:
    """Chunks of `incidents`, and whether they are few enough to rank exactly.

    A small set is named by literal ids so PostgreSQL fetches it through the
    foreign-key index and sorts it exactly, rather than walking the HNSW
    graph for a handful of rows.
    """
    if not is_filtered:
        # A small scope is ranked exactly: beside a large staged version, a
        # filtered HNSW walk visits thousands of other versions' nodes
        # (measured: 127 ms for 100 demo chunks beside 60k others); a scan is < 2 ms.
        small = scope_chunk_count(version) <= EXACT_SEARCH_MAX_CHUNKS
        # The whole scope, its SQL written without the ORM (ChunkScope.in_versions);
        # a large one version with a partial HNSW index reads it (vector_indexes).
        whole = ChunkScope.in_versions(
            IncidentChunk,
            scope_version_ids(version),
            indexed=() if small else partial_index_versions(),
            indexed_ef_search=PARTIAL_INDEX_EF_SEARCH,
        )
        return whole, small
    chunks = chunk_scope(version)
    if scope_chunk_count(version) <= EXACT_SEARCH_MAX_CHUNKS:
        return chunks.filter(incident__in=incidents), True
    ids = list(incidents.values_list("pk", flat=True)[: EXACT_SEARCH_MAX_INCIDENTS + 1])
    if len(ids) <= EXACT_SEARCH_MAX_INCIDENTS:
        return chunks.filter(incident_id__in=ids), True
    return chunks.filter(incident__in=incidents), False


# --- incident_list_by_application (the get_incidents_by_application tool) -------


@dataclass(frozen=True)
class ApplicationSearch:
    application: str
    incidents: list[Incident]
    how: str  # exact | partial | semantic | none
    applications: tuple[str, ...] = ()


def incident_list_by_application(
    *, application: str, limit: int = 5, version: DatasetVersion | None = None
) -> ApplicationSearch:
    """Case-insensitive exact name, then partial (by words), then semantic; newest first."""
    match = qp.match_applications(application, application_catalog(version))
    if match is not None:
        params = [scope_version_ids(version), list(match.applications), max(limit, 0)]
        incidents = rows_select(Incident, _NEWEST_OF_APPLICATIONS, params)
        _attach_versions(incidents, version)
        return ApplicationSearch(application, incidents, match.how, match.applications)
    hits = _rank_incidents(incident_scope(version), version, application, limit)
    return ApplicationSearch(
        application, [hit.incident for hit in hits], "semantic" if hits else "none"
    )


# What incident_scope().filter(impacted_application__in=...).order_by(
# F("occurred_at").desc(nulls_last=True), "incident_id")[:limit] runs, as one fixed
# statement: the copilot's by-application listing compiled it at every call.
_NEWEST_OF_APPLICATIONS = (
    'SELECT * FROM "incidents_incident"'
    ' WHERE "version_id" = ANY(%s) AND "impacted_application" = ANY(%s)'
    ' ORDER BY "occurred_at" DESC NULLS LAST, "incident_id" LIMIT %s'
)


# --- incident_list_recent (the get_recent_incidents tool) -----------------------


def incident_list_recent(
    *,
    days: int = 7,
    limit: int = 10,
    now: dt.date | None = None,
    application: str | None = None,
    version: DatasetVersion | None = None,
) -> list[Incident]:
    """Incidents that occurred in the last `days` days up to `now`, newest first;
    of the applications `application` names (as `incident_list_by_application`
    matches names: exactly, then by words), when given.

    `occurred_at` is filled from the id (INC-YYYY-MM-DD-NNN) at import when
    the data has no date, so both sources count.
    """
    today = now or timezone.localdate()
    start = today - dt.timedelta(days=days)
    incidents = incident_scope(version).filter(occurred_at__gte=start, occurred_at__lte=today)
    if application:
        match = qp.match_applications(application, application_catalog(version))
        if match is None:
            return []  # a name nothing answers to: none of its incidents, not all
        incidents = incidents.filter(impacted_application__in=match.applications)
    return _with_versions(incidents.order_by("-occurred_at", "incident_id")[:limit], version)


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


def retired_report_get(*, incident_id: str) -> RetiredReport | None:
    """What became of a chat report merged or discarded under that id, if one was."""
    wanted = normalize_incident_id(incident_id)
    return RetiredReport.objects.filter(incident_id=wanted).first()


def incident_list_similar(*, incident: Incident, limit: int = 5) -> list[IncidentHit]:
    """Active incidents most like this one (title, root cause, mitigation), itself excluded."""
    text = " ".join(part for part in (incident.title, incident.root_cause) if part)
    others = incident_scope().exclude(incident_id=incident.incident_id)
    return _rank_incidents(others, None, text, limit, is_filtered=True)


# --- API lists and details ------------------------------------------------------


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
