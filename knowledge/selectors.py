"""Read-only queries over knowledge documents."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db import connection
from django.db.models import BooleanField, Case, F, Q, QuerySet, When
from django.utils import timezone

from incidentdesk.embeddings import similarities
from incidentdesk.errors import NotFoundError
from incidentdesk.filtering import filter_queryset
from incidents.models import DatasetVersion
from incidents.parsing import INCIDENT_ID_RE
from incidents.query_parsing import WHAT_TO_DO_ASKS
from incidents.ranking import (
    RankedParent,
    chunks_best_similarity,
    chunks_hybrid_rank,
    content_words,
)
from incidents.selectors import scope_version_ids
from knowledge.filtersets import KnowledgeDocumentFilter
from knowledge.models import KnowledgeChunk, KnowledgeDocument

PREVIEW_CHARS = 240
TYPES = tuple(KnowledgeDocument.Type.values)
GROUPS = {
    KnowledgeDocument.Type.RUNBOOK: "runbooks",
    KnowledgeDocument.Type.POSTMORTEM: "postmortems",
    KnowledgeDocument.Type.ARCHITECTURE: "architecture",
    KnowledgeDocument.Type.KNOWN_ISSUE: "known_issues",
}
# The original design's names for the groups, in the tool's JSON for a model;
# the REST API keeps its snake_case.
DESIGN_GROUPS = {"known_issues": "knownIssues"}


@dataclass(frozen=True)
class KnowledgeHit:
    document: KnowledgeDocument
    relevance: float  # 0-1, the best hit is 1
    preview: str

    def as_dict(self) -> dict[str, Any]:
        doc = self.document
        return {
            "id": doc.doc_id,
            "title": doc.title,
            "type": doc.type,
            "services": list(doc.services),
            "relevance": round(self.relevance, 3),
            "preview": self.preview,
            "path": doc.path or doc.source_url,
        }


@dataclass(frozen=True)
class KnowledgeSearch:
    query: str
    hits: list[KnowledgeHit]
    filters: dict[str, str] = field(default_factory=dict)
    loosened: str = ""  # a service filter that matched nothing and was dropped

    def as_text(self) -> str:
        """What the model reads: one block per document, best first."""
        if not self.hits:
            return f"No knowledge documents match: {self.query}"
        if self.loosened:
            lead = f"No document matched service {self.loosened}, so it was loosened:\n"
            return lead + replace(self, loosened="").as_text()
        blocks = [
            f"Document ID: {h.document.doc_id}\nTitle: {h.document.title}\n"
            f"Type: {h.document.type}\nServices: {', '.join(h.document.services)}\n"
            f"{_related_line(h.document)}Relevance: {h.relevance:.2f}\nExcerpt: {h.preview}"
            for h in self.hits
        ]
        # The ids by group, under the original design's names, before the blocks
        # (the blocks' own format is what readers of tool messages parse).
        groups = {
            name: [hit["id"] for hit in hits]
            for name, hits in self.grouped(design_names=True).items()
            if hits
        }
        head = f"Knowledge documents for: {self.query}\nGroups: {json.dumps(groups)}"
        return head + "\n\n" + "\n\n---\n\n".join(blocks)

    def grouped(self, *, design_names: bool = False) -> dict[str, list[dict[str, Any]]]:
        """Results grouped as runbooks, postmortems, architecture, known_issues
        (knownIssues with `design_names`)."""
        groups: dict[str, list[dict[str, Any]]] = {name: [] for name in GROUPS.values()}
        for hit in self.hits:
            groups[GROUPS[KnowledgeDocument.Type(hit.document.type)]].append(hit.as_dict())
        if design_names:
            return {DESIGN_GROUPS.get(name, name): hits for name, hits in groups.items()}
        return groups


def document_scope(version: DatasetVersion | None = None) -> QuerySet[KnowledgeDocument]:
    if version is not None:
        return KnowledgeDocument.objects.filter(version=version)
    return KnowledgeDocument.objects.filter(version__status=DatasetVersion.Status.ACTIVE)


def document_ids_existing(
    *, doc_ids: Collection[str], version: DatasetVersion | None = None
) -> set[str]:
    """Which of these normalised ids a document in scope has (see incident_ids_existing)."""
    if not doc_ids:
        return set()
    in_scope, scope = (_IDS_IN_VERSION, version.pk) if version else (_IDS_IN_ACTIVE, _ACTIVE)
    with connection.cursor() as cursor:
        cursor.execute(in_scope, [scope, list(doc_ids)])
        return {doc_id for (doc_id,) in cursor.fetchall()}


# What document_scope().filter(doc_id__in=...) runs, as fixed statements: an answer
# citing a document no tool returned compiled it at every answer (see _STALE_IN_SCOPE).
_ACTIVE = DatasetVersion.Status.ACTIVE.value
_IDS_IN_ACTIVE = (
    'SELECT d."doc_id" FROM "knowledge_knowledgedocument" d'
    ' JOIN "incidents_datasetversion" v ON v."id" = d."version_id"'
    ' WHERE v."status" = %s AND d."doc_id" = ANY(%s)'
)
_IDS_IN_VERSION = (
    'SELECT "doc_id" FROM "knowledge_knowledgedocument" WHERE "version_id" = %s'
    ' AND "doc_id" = ANY(%s)'
)


Filter = str | Sequence[str] | None  # one value or any of several


def filter_values(value: Filter) -> list[str]:
    """A filter as its values: a string may hold several, separated by commas."""
    items = [value] if isinstance(value, str) else list(value or [])
    return [part.strip() for item in items for part in item.split(",") if part.strip()]


def _any_of(field: str, values: list[str]) -> Q:
    """Documents matching at least one value (icontains on the array's text)."""
    match = Q()
    for value in values:
        match |= Q(**{f"{field}__icontains": value})
    return match


def _filtered_documents(
    version: DatasetVersion | None,
    type_filter: Filter,
    service_filter: Filter,
    tag_filter: Filter,
) -> QuerySet[KnowledgeDocument]:
    documents = document_scope(version)
    if types := filter_values(type_filter):
        documents = documents.filter(type__in=[t.lower().replace(" ", "_") for t in types])
    if services := filter_values(service_filter):
        documents = documents.filter(_any_of("services", services))
    if tags := filter_values(tag_filter):
        documents = documents.filter(_any_of("tags", [tag.lower() for tag in tags]))
    return documents


def _related_line(document: KnowledgeDocument) -> str:
    """The incidents a document draws on, for "which incident was it written from?"
    (a model looks them up by id)."""
    related = document.related_incidents
    return f"Related incidents: {', '.join(related)}\n" if related else ""


def knowledge_search(
    *,
    query: str,
    limit: int = 10,
    type_filter: Filter = None,
    service_filter: Filter = None,
    tag_filter: Filter = None,
    version: DatasetVersion | None = None,
) -> KnowledgeSearch:
    """Hybrid search over knowledge chunks, one hit per document.

    Each filter is one value or several (any of them matches); an empty
    query with filters lists the matching documents by id.
    """
    found = _knowledge_search(query, limit, type_filter, service_filter, tag_filter, version)
    if found.hits or not filter_values(service_filter) or not content_words(query):
        return found
    # A service named loosely ("the payments service") may be listed by no document
    # in those words: the nearest documents without it, saying so.
    wider = _knowledge_search(query, limit, type_filter, None, tag_filter, version)
    return replace(wider, loosened=", ".join(filter_values(service_filter)))


def _knowledge_search(
    query: str,
    limit: int,
    type_filter: Filter,
    service_filter: Filter,
    tag_filter: Filter,
    version: DatasetVersion | None,
) -> KnowledgeSearch:
    filters = {
        name: ", ".join(values)
        for name, value in (("type", type_filter), ("service", service_filter), ("tag", tag_filter))
        if (values := filter_values(value))
    }
    documents = _filtered_documents(version, type_filter, service_filter, tag_filter)
    if not content_words(query):
        listed = documents.order_by("doc_id")[:limit] if filters else []
        return KnowledgeSearch(
            query, [KnowledgeHit(d, 1.0, _preview(d.body)) for d in listed], filters
        )
    chunks = KnowledgeChunk.objects.filter(document__in=documents)
    ranked = chunks_hybrid_rank(
        chunks,
        parent_field="document",
        query=query,
        limit=limit,
        versions=scope_version_ids(version),
    )
    if asks_what_to_do(query):
        ranked = _actionable_first(ranked)
    # The best score, wherever the reordering put it: relevance stays within 0-1.
    top = max((r.score for r in ranked), default=1.0) or 1.0
    texts = [r.chunk_text for r in ranked]
    if asks_what_to_do(query):
        texts = _action_sections(ranked, texts)
    else:
        texts = _named_sections(ranked, texts, query)
    hits = [
        KnowledgeHit(
            r.parent, r.score / top, _with_companions(r.parent, best_passage(text, query, rank))
        )
        for rank, (r, text) in enumerate(zip(ranked, texts, strict=True))
    ]
    return KnowledgeSearch(query, hits, filters)


# "What do I do when…": the answer is a document's steps, not its Prevention or
# Symptoms section, even when those read closer to the question.
_WHAT_TO_DO_RE = re.compile(
    rf"\b(?:{WHAT_TO_DO_ASKS}|what\s+to\s+do|how\s+(?:do|should|can|would)\s+(?:i|we)|"
    r"first\s+steps?|steps?\s+to|procedure|checklist|playbook|runbook|"
    r"how\s+to\s+(?:handle|fix|stop|recover|respond|mitigate)|first\s+\d+\s+min\w*)\b",
    re.IGNORECASE,
)
# Headings of the sections that say what to do, as runbooks and known issues name them.
_ACTION_HEADING_RE = re.compile(
    r"\b(?:actions?|steps?|mitigat\w*|respon\w*|contain\w*|recover\w*|restor\w*|"
    r"roll\s*back\w*|triage|checklist|workaround|fix\w*|emergency|first\s+\d+\s+min\w*|"
    r"during)\b",
    re.IGNORECASE,
)


# Asked what to do, a runbook or known issue says it; an incident review or an
# architecture note only explains. Their fused score counts this much less then.
# With score fusion (0-1 within the candidates), 0.85 and 0.75 each put one more
# knowledge question first than 0.95 on our sets (kq, unseen) and none fewer.
EXPLAINING_TYPES_WEIGHT = 0.85
_EXPLAINING_TYPES = {"postmortem", "architecture"}


def _actionable_first(ranked: list[RankedParent]) -> list[RankedParent]:
    def weighted(hit: RankedParent) -> float:
        explains = hit.parent.type in _EXPLAINING_TYPES
        return hit.score * (EXPLAINING_TYPES_WEIGHT if explains else 1.0)

    return sorted(ranked, key=weighted, reverse=True)


def asks_what_to_do(query: str) -> bool:
    return bool(_WHAT_TO_DO_RE.search(query))


def _section(chunk_text: str) -> str:
    heading = chunk_text.partition("\n")[0]
    return heading.rpartition(" — ")[2] if " — " in heading else ""


def _action_sections(ranked: Sequence[Any], texts: list[str]) -> list[str]:
    """For the best few documents, their first action section instead of the
    winning chunk, even a later action chunk: runbooks put the first steps first
    (one query for all of them)."""
    wanted = {r.parent.pk: i for i, r in enumerate(ranked[:PASSAGE_HITS])}
    if not wanted:
        return texts
    replaced = list(texts)
    for document_id, text in _chunk_texts(list(wanted)):
        index = wanted.get(document_id)
        if index is not None and _ACTION_HEADING_RE.search(_section(text)):
            replaced[index] = text
            del wanted[document_id]  # the first action section of each document
    return replaced


def _named_sections(ranked: Sequence[Any], texts: list[str], query: str) -> list[str]:
    """For the best few documents, the section whose heading the question names
    ("the request path of a payment", "the webhook retry policy") instead of the
    winning chunk: an architecture note's Overview often reads closest to any
    question about it, but its headings say where each answer is (one query)."""
    asked = _stems(" ".join(content_words(query)))
    wanted = {r.parent.pk: i for i, r in enumerate(ranked[:PASSAGE_HITS])}
    if not wanted or not asked:
        return texts
    replaced = list(texts)
    for document_id, text in _chunk_texts(list(wanted)):
        index = wanted[document_id]
        # Strictly more named: the winning chunk stays on a tie, and a long
        # section's first window is kept over its later ones.
        if _heading_named(text, asked) > _heading_named(replaced[index], asked):
            replaced[index] = text
    return replaced


def _chunk_texts(document_ids: list[int]) -> list[tuple[int, str]]:
    """(document id, text) of the documents' chunks, each document's in order.

    A fixed statement: the ORM compiled it (with a join, to order the documents
    by doc_id, which the callers do not need) at every knowledge search."""
    with connection.cursor() as cursor:
        cursor.execute(_CHUNK_TEXTS, [document_ids])
        return [(int(document_id), str(text)) for document_id, text in cursor.fetchall()]


_CHUNK_TEXTS = (
    'SELECT "document_id", "text" FROM "knowledge_knowledgechunk"'
    ' WHERE "document_id" = ANY(%s) ORDER BY "document_id", "ordinal"'
)


def _heading_named(chunk_text: str, asked: set[str]) -> float:
    """The share of a chunk's section heading the question names; 0 under half,
    so one common word ("payment") does not pull in a "Payment flow" section."""
    heading = _stems(" ".join(content_words(_section(chunk_text))))
    share = len(heading & asked) / len(heading) if heading else 0.0
    return share if share >= 0.5 else 0.0


# The sections a reader needs beside whatever passage was quoted: a known issue is
# read for what it does and its workaround, a runbook for its steps and how to stop
# a repeat. A heading ("## Prevention") or an inline label ("**Workaround:** Raise…").
_LABEL = r"^\s*(?:#+\s*|\*\*)(?:{names})\b[^\n]*?(?:\*\*\s*:?|:\*\*|$)"
_COMPANIONS: dict[str, tuple[tuple[str, re.Pattern[str]], ...]] = {
    "known_issue": (
        ("Behaviour", re.compile(_LABEL.format(names="behaviou?r"), re.I | re.M)),
        (
            "Workaround",
            re.compile(
                _LABEL.format(
                    names=r"workarounds?|mitigations?|recommendations?|guidance|fix(?:es)?|"
                    r"what\s+to\s+do"
                ),
                re.I | re.M,
            ),
        ),
    ),
    "runbook": (("Prevention", re.compile(_LABEL.format(names="prevention"), re.I | re.M)),),
}
COMPANION_CHARS = 200


def _with_companions(document: KnowledgeDocument, passage: str) -> str:
    """The passage, then the first line of each companion section it does not
    already quote ("… Workaround: Raise or disable `consumer_timeout`…")."""
    for name, label in _COMPANIONS.get(document.type, ()):
        found = label.search(document.body)
        units = _units(document.body[found.end() :]) if found else []
        if units and units[0][:40] not in passage:
            passage += f" {name}: {_cut(units[0], COMPANION_CHARS)}"
    return passage


def knowledge_best_similarity(*, query: str, version: DatasetVersion | None = None) -> float:
    """How close the nearest knowledge chunk is to `query` (the engine's evidence)."""
    chunks = KnowledgeChunk.objects.filter(document__in=document_scope(version))
    return chunks_best_similarity(chunks, query)


def _preview(text: str) -> str:
    """The opening of `text` in whole sentences (a word cut only if one sentence is longer)."""
    return _joined(_units(" ".join(text.split()))[:4], PREVIEW_CHARS) or _cut(text, PREVIEW_CHARS)


# The best few documents quote the passage that answers the question, not the
# chunk's opening: whole sentences and list items, ranked by meaning and
# shared words, the best two shown in the document's order.
PASSAGE_HITS = 3
PASSAGE_CHARS = 420
PASSAGE_UNITS = 2
_WORD_WEIGHT = 0.05
# A sentence end, a flattened list item (" - ", " 2. ") or a line break.
_UNIT_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9*_(\"'`])|\s+-\s+(?=\S)|\s+(?=\d{1,2}\.\s)|\n+")
_STEM_RE = re.compile(r"[a-z0-9]{3,}")


def best_passage(chunk_text: str, query: str, rank: int = 0) -> str:
    """What a reader should see of a chunk for `query`: its section and the
    sentences or list items that answer (only the top PASSAGE_HITS are ranked;
    each costs a few sentence embeddings, cached)."""
    body = chunk_text.partition("\n")[2]
    units = _units(body)
    if rank >= PASSAGE_HITS or not units or not query.strip():
        return _preview(chunk_text)
    section = _section(chunk_text)
    room = PASSAGE_CHARS - len(section)
    if asks_what_to_do(query) and _ACTION_HEADING_RE.search(section):
        chosen = units  # steps are read in order, from the first: as many as fit
    else:
        chosen = [units[i] for i in _best_units(query, units)]
    passage = _joined(chosen, room) or _cut(chosen[0], room)
    return f"{section}: {passage}" if section else passage


def _best_units(query: str, units: list[str]) -> list[int]:
    """The PASSAGE_UNITS units closest to `query` by meaning and shared words, in order."""
    if len(units) <= PASSAGE_UNITS:
        return list(range(len(units)))
    shared = np.array([len(_stems(query) & _stems(unit)) for unit in units])
    scores = similarities(query, units) + _WORD_WEIGHT * shared
    return sorted(int(i) for i in np.argsort(-scores)[:PASSAGE_UNITS])


def _units(text: str) -> list[str]:
    units = (u.strip().removeprefix("- ") for u in _UNIT_RE.split(text))
    return [u for u in units if len(u.split()) >= 3]


def _stems(text: str) -> set[str]:
    return {w[:5] for w in _STEM_RE.findall(text.lower())}


def _joined(units: list[str], limit: int) -> str:
    """As many whole units as fit in `limit` characters, in order ("" if none does)."""
    kept: list[str] = []
    for unit in units:
        if sum(len(u) + 1 for u in kept) + len(unit) > limit:
            break
        kept.append(unit)
    return " ".join(kept)


def _cut(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    return flat[: limit - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"


# --- knowledge pages ------------------------------------------------------------


@dataclass(frozen=True)
class Freshness:
    """When a document was last checked, and whether that is too long ago to trust."""

    validated_at: dt.datetime | None
    age_days: int | None
    is_stale: bool


def stale_after_days() -> int:
    """KNOWLEDGE_STALE_DAYS: after this long without validation a document is stale."""
    return int(settings.KNOWLEDGE_STALE_DAYS)


def document_freshness(document: KnowledgeDocument, *, now: dt.datetime | None = None) -> Freshness:
    """Never validated counts as stale: nobody has vouched for it."""
    validated = document.last_validated_at
    if validated is None:
        return Freshness(None, None, True)
    age = ((now or timezone.now()) - validated).days
    return Freshness(validated, age, age > stale_after_days())


def knowledge_document_list(
    *, type_filter: str = "", service_filter: str = "", tag_filter: str = ""
) -> QuerySet[KnowledgeDocument]:
    """Active documents for the list page, filtered like the search_knowledge tool."""
    documents = _filtered_documents(
        None, type_filter or None, service_filter or None, tag_filter or None
    )
    return documents.select_related("version__dataset").order_by("doc_id")


@dataclass(frozen=True)
class KnowledgeFacets:
    services: list[str]
    tags: list[str]


def knowledge_facets() -> KnowledgeFacets:
    """Every service and tag of the active documents, for the list's filters."""
    rows = document_scope().values_list("services", "tags")
    services = sorted({service for svcs, _ in rows for service in svcs})
    tags = sorted({tag for _, tags in rows for tag in tags})
    return KnowledgeFacets(services, tags)


def knowledge_document_get(
    *, doc_id: str, user: AbstractBaseUser | AnonymousUser
) -> KnowledgeDocument:
    """The active document with that id, else its newest version; NotFoundError otherwise.

    Only staff see a version that was never activated (DatasetVersion.is_visible_to).
    """
    wanted = doc_id.strip().upper()
    documents = KnowledgeDocument.objects.filter(doc_id=wanted).select_related("version__dataset")
    if not getattr(user, "is_staff", False):
        documents = documents.exclude(version__activated_at=None)
    found = (
        documents.filter(version__status=DatasetVersion.Status.ACTIVE).first()
        or documents.order_by("-version__created_at").first()
    )
    if found is None:
        raise NotFoundError(f"Document {wanted} not found.")
    return found


# --- API lists, staleness ---------------------------------------------------------


def knowledge_stale_q(*, now: dt.datetime | None = None) -> Q:
    """Documents to flag as stale, as a filter: the rule of `document_freshness`."""
    cutoff = _stale_cutoff(now)
    return Q(last_validated_at__isnull=True) | Q(last_validated_at__lte=cutoff)


def _stale_cutoff(now: dt.datetime | None = None) -> dt.datetime:
    """Validated at or before this, a document is stale (`knowledge_stale_q`)."""
    # age.days > N there means at least N + 1 whole days here.
    return (now or timezone.now()) - dt.timedelta(days=settings.KNOWLEDGE_STALE_DAYS + 1)


def knowledge_document_annotate_stale(
    documents: QuerySet[KnowledgeDocument],
) -> QuerySet[KnowledgeDocument]:
    """Adds `is_stale` in SQL, so lists can show and sort by it without a query per row."""
    return documents.annotate(
        is_stale=Case(
            When(knowledge_stale_q(), then=True), default=False, output_field=BooleanField()
        )
    )


def knowledge_stale_ids(ids: Iterable[str]) -> set[str]:
    """Which of `ids` are active documents flagged as stale (incident ids are ignored).

    The copilot calls it with the ids an answer cites, to say which sources
    nobody has validated for KNOWLEDGE_STALE_DAYS.
    """
    wanted = {i.strip().upper() for i in ids if i and i.strip()}
    wanted = {i for i in wanted if not INCIDENT_ID_RE.match(i)}  # most answers cite only these
    if not wanted:
        return set()
    with connection.cursor() as cursor:
        cursor.execute(
            _STALE_IN_SCOPE, [DatasetVersion.Status.ACTIVE.value, _stale_cutoff(), list(wanted)]
        )
        return {doc_id for (doc_id,) in cursor.fetchall()}


# What document_scope().filter(knowledge_stale_q(), doc_id__in=...) runs, as one fixed
# statement: the ORM compiled it at every answer citing a document (0.86 -> ~0.2 ms of CPU).
_STALE_IN_SCOPE = (
    'SELECT d."doc_id" FROM "knowledge_knowledgedocument" d'
    ' JOIN "incidents_datasetversion" v ON v."id" = d."version_id" WHERE v."status" = %s'
    ' AND (d."last_validated_at" IS NULL OR d."last_validated_at" <= %s) AND d."doc_id" = ANY(%s)'
)


def knowledge_document_list_for_user(
    *, user: AbstractBaseUser | AnonymousUser, filters: Mapping[str, Any] | None = None
) -> QuerySet[KnowledgeDocument]:
    """The API's list: active documents filtered; staff may name any version."""
    filters = filters or {}
    staff_pinned = getattr(user, "is_staff", False) and filters.get("version")
    documents = KnowledgeDocument.objects.all() if staff_pinned else document_scope()
    documents = knowledge_document_annotate_stale(
        documents.select_related("version__dataset").order_by("doc_id", "pk")
    )
    return filter_queryset(KnowledgeDocumentFilter, filters, documents)


def knowledge_document_get_for_user(
    *, doc_id: str, user: AbstractBaseUser | AnonymousUser, version_id: int | None = None
) -> KnowledgeDocument:
    """An active document (staff: from any version with `version_id`); NotFoundError otherwise."""
    filters = {"version": version_id} if version_id else {}
    found = (
        knowledge_document_list_for_user(user=user, filters=filters)
        .filter(doc_id=doc_id.strip().upper())
        .order_by(F("version__activated_at").desc(nulls_last=True))
        .first()
    )
    if found is None:
        raise NotFoundError(f"Document {doc_id} not found.")
    return found
