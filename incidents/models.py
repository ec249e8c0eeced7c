"""Datasets, their versions, incidents and the chunks search reads."""

from __future__ import annotations

from typing import TYPE_CHECKING

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex, OpClass
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models import F, Func, Q, TextField, Value
from django.db.models.expressions import CombinedExpression
from django.db.models.functions import Cast
from pgvector.django import HalfVectorField, HnswIndex, VectorField

from incidentdesk.embeddings import DIMENSIONS

if TYPE_CHECKING:
    from django.contrib.auth.base_user import AbstractBaseUser
    from django.contrib.auth.models import AnonymousUser

# The columns' size is the embedders' one (defined once, in incidentdesk.embeddings).
EMBEDDING_DIMENSIONS = DIMENSIONS
# Full-text configuration for every tsvector and tsquery in the project.
TEXT_SEARCH_CONFIG = "english"


class Dataset(models.Model):
    """A named collection of incidents or knowledge documents, kept in versions.

    Versions let staff load a new export next to the one in use, check it,
    then switch (and switch back) in one transaction.
    """

    class Kind(models.TextChoices):
        INCIDENTS = "incidents", "Incidents"
        KNOWLEDGE = "knowledge", "Knowledge documents"

    name = models.CharField(max_length=200, unique=True)
    slug = models.SlugField(max_length=200, unique=True)
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.INCIDENTS)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class DatasetVersion(models.Model):
    """One loaded copy of a dataset. Search reads only the active one."""

    class Status(models.TextChoices):
        BUILDING = "building", "Building"
        READY = "ready", "Ready"
        ACTIVE = "active", "Active"
        ARCHIVED = "archived", "Archived"
        # An import stopped half-way (not a bad row: those leave it ready). Never
        # activated; importing the file again resumes it, as rows are upserted.
        FAILED = "failed", "Failed (import stopped)"

    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="versions")
    label = models.CharField(max_length=100)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.BUILDING)
    embedding_model = models.CharField(max_length=200, blank=True)
    embedding_dimensions = models.PositiveIntegerField(default=EMBEDDING_DIMENSIONS)
    row_count = models.PositiveIntegerField(default=0)
    chunk_count = models.PositiveIntegerField(default=0)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="dataset_versions",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    activated_at = models.DateTimeField(null=True, blank=True)
    notes = models.TextField(blank=True)

    class Meta:
        ordering = ["dataset__name", "-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["dataset", "label"], name="%(app_label)s_%(class)s_unique_label"
            ),
            # The invariant every search relies on: one active version at most.
            models.UniqueConstraint(
                fields=["dataset"],
                condition=Q(status="active"),
                name="%(app_label)s_%(class)s_one_active_per_dataset",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.dataset.name} {self.label} ({self.status})"

    def is_visible_to(self, user: AbstractBaseUser | AnonymousUser) -> bool:
        """Staff may preview any version; others only one that was published.

        A version never activated holds staged rows nobody has signed off on,
        so the pages hide it as the API does. An archived version was once
        published, and answers written then still link to its incidents.
        """
        return bool(getattr(user, "is_staff", False)) or self.activated_at is not None


class ImportJob(models.Model):
    """A file being imported into a version, with progress the admin shows."""

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        SUCCEEDED = "succeeded", "Succeeded"
        PARTIAL = "partial", "Partially imported"  # the good rows; `errors` lists the rest
        FAILED = "failed", "Failed"

    version = models.ForeignKey(
        DatasetVersion, on_delete=models.CASCADE, related_name="import_jobs"
    )
    file = models.FileField(upload_to="imports/%Y/%m/")
    file_format = models.CharField(max_length=10, blank=True)
    activate_when_done = models.BooleanField(default=False)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.QUEUED)
    rows_total = models.PositiveIntegerField(default=0)
    rows_done = models.PositiveIntegerField(default=0)
    rows_failed = models.PositiveIntegerField(default=0)
    # Runs started: more than one means a worker died mid-job and the job was redelivered.
    attempts = models.PositiveIntegerField(default=0)
    # `host:pid` of the worker running it (incidentdesk.owners): a job `running` whose
    # worker died is queued again by `manage.py recover`.
    owner = models.CharField(max_length=300, blank=True)
    created = models.PositiveIntegerField(default=0)
    updated = models.PositiveIntegerField(default=0)
    unchanged = models.PositiveIntegerField(default=0)
    errors = models.JSONField(default=list, blank=True)
    message = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="import_jobs",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"Import #{self.pk} into {self.version}"


class Incident(models.Model):
    """A past incident as exported by the source system, within one version.

    `extra` keeps every column the importer does not know, so a file
    round-trips without loss.
    """

    class ReviewStatus(models.TextChoices):
        # Imported rows come from a curated export: reviewed by definition.
        REVIEWED = "reviewed", "Reviewed"
        # Written by chat intake: searchable at once, but nobody has checked it yet.
        REPORTED = "reported", "Reported, not reviewed"

    version = models.ForeignKey(DatasetVersion, on_delete=models.CASCADE, related_name="incidents")
    incident_id = models.CharField(max_length=64)
    title = models.CharField(max_length=500)
    impacted_application = models.CharField(max_length=300, blank=True)
    root_cause = models.TextField(blank=True)
    mitigation = models.TextField(blank=True)
    accountable_party = models.CharField(max_length=300, blank=True)
    source_system = models.CharField(max_length=100, blank=True)
    repeat_incident = models.BooleanField(default=False)
    severity = models.CharField(max_length=20, blank=True)
    status = models.CharField(max_length=50, blank=True)
    occurred_at = models.DateField(null=True, blank=True)
    category = models.CharField(max_length=100, blank=True)
    tags = ArrayField(models.CharField(max_length=100), default=list, blank=True)
    source_url = models.URLField(max_length=1000, blank=True)
    body = models.TextField(blank=True)
    extra = models.JSONField(default=dict, blank=True)
    # sha256 of the imported fields: an unchanged row is skipped, not re-embedded.
    content_hash = models.CharField(max_length=64, blank=True)
    review_status = models.CharField(
        max_length=20, choices=ReviewStatus.choices, default=ReviewStatus.REVIEWED
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-occurred_at", "incident_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["version", "incident_id"], name="%(app_label)s_%(class)s_unique_id"
            ),
        ]
        indexes = [
            # incident_list_recent and time-window filters: newest first within a version.
            models.Index(fields=["version", "-occurred_at"], name="incidents_incident_recent_idx"),
            # incident_list_by_application and application filters (an IN list
            # of names): without it 100k incidents are scanned, 60-90 ms.
            models.Index(
                fields=["impacted_application", "version"], name="incidents_incident_app_idx"
            ),
            # The repeat-incident filter: few rows, so a partial index.
            models.Index(
                fields=["version"],
                condition=Q(repeat_incident=True),
                name="incidents_incident_repeat_idx",
            ),
            # incident_list_for_review: the few reports waiting for staff.
            models.Index(
                fields=["created_at"],
                condition=Q(review_status="reported"),
                name="incidents_incident_review_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.incident_id}: {self.title}"

    @property
    def is_reported(self) -> bool:
        """A chat report nobody has accepted yet: pages badge it, search ranks it lower."""
        return self.review_status == self.ReviewStatus.REPORTED


class RetiredReport(models.Model):
    """A chat report staff merged into an incident or discarded.

    The report's row is deleted, so no search can find it, but its id lives on
    in chat answers, tickets and bookmarks: `/incidents/<id>/` answers with the
    incident it was merged into, or says it was discarded, never a bare 404.
    The target is kept as its public id, which outlives re-imports of its row.
    """

    class Outcome(models.TextChoices):
        MERGED = "merged", "merged into another incident"
        DISCARDED = "discarded", "discarded"

    incident_id = models.CharField(max_length=64, help_text="The report's id.")
    title = models.CharField(max_length=500)
    outcome = models.CharField(max_length=20, choices=Outcome.choices)
    merged_into = models.CharField(max_length=64, blank=True, help_text="The incident's id.")
    retired_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-retired_at", "-pk"]
        indexes = [
            # retired_report_get: an incident page whose id no longer exists.
            models.Index(fields=["incident_id"], name="incidents_retired_id_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.incident_id}: {self.get_outcome_display()}"


class EmbeddedChunk(models.Model):
    """What every searchable chunk has: text, its embedding, its tsvector.

    Subclasses add the parent foreign key and name their own indexes.
    """

    ordinal = models.PositiveIntegerField()
    text = models.TextField()
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS)
    search_vector = models.GeneratedField(
        expression=SearchVector("text", config=TEXT_SEARCH_CONFIG),
        output_field=SearchVectorField(),
        db_persist=True,
    )

    class Meta:
        abstract = True


def hnsw_cosine_index(
    name: str, *, m: int = 16, ef_construction: int = 64, half_precision: bool = False
) -> HnswIndex:
    """The cosine vector index of a table (pgvector's defaults unless a table needs more).

    Chunk tables index half-precision copies of their vectors. Measured on
    the same 300k chunks at ef_search 500: 5.0 ms per query instead of
    5.7 ms, recall@10 on one version of three 0.99 instead of 0.97
    (bench/search_bench.py), on a graph half the size. Their queries must use
    the same expression (`ranking.INDEXED_DISTANCE`) to reach the index.
    """
    if not half_precision:
        return HnswIndex(
            name=name, fields=["embedding"], m=m, ef_construction=ef_construction,
            opclasses=["vector_cosine_ops"],
        )  # fmt: skip
    half = Cast("embedding", HalfVectorField(dimensions=EMBEDDING_DIMENSIONS))
    return HnswIndex(
        OpClass(half, name="halfvec_cosine_ops"), name=name, m=m, ef_construction=ef_construction
    )


# A chunk's version as one more lexeme of its full-text index: "version 12". No
# text yields it (the parser never puts a space inside a lexeme), so it matches
# only a query that asks for it (`ranking.versions_tsquery`).
VERSION_LEXEME_PREFIX = "version "


def versioned_search_index(name: str) -> GinIndex:
    """The full-text index of a chunk table, its version kept inside it.

    It indexes `search_vector || 'version <version_id>'`, so a search of the
    active version ANDs the question's words with that one lexeme within the
    GIN scan and visits only that version's matching chunks. With a plain index
    on `search_vector` the version was filtered after the heap visit: at 204k
    chunks in three versions, 4,062 buffers for a median question instead of
    1,464 (bench/search_bench.py). Its queries must use the same expression
    (`ranking.VERSIONED_SEARCH_VECTOR`) to reach the index.
    """
    version_lexeme = CombinedExpression(
        Value(VERSION_LEXEME_PREFIX),
        "||",
        Cast("version_id", TextField()),
        output_field=TextField(),
    )
    lexemes = Func(version_lexeme, template="ARRAY[%(expressions)s]")
    return GinIndex(
        CombinedExpression(
            F("search_vector"),
            "||",
            Func(lexemes, function="array_to_tsvector"),
            output_field=SearchVectorField(),
        ),
        name=name,
    )


class IncidentChunk(EmbeddedChunk):
    """A searchable piece of an incident: its summary, or a window of its body.

    `version` is copied from the incident so filtered vector queries need no
    join.
    """

    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="chunks")
    version = models.ForeignKey(
        DatasetVersion, on_delete=models.CASCADE, related_name="incident_chunks"
    )

    class Meta:
        ordering = ["incident", "ordinal"]
        constraints = [
            models.UniqueConstraint(
                fields=["incident", "ordinal"], name="%(app_label)s_%(class)s_unique_ordinal"
            ),
        ]
        indexes = [
            # incident_search_similar: cosine nearest neighbours. A denser,
            # better-built graph than the default, so searches can use a small
            # ef_search: at 204k chunks recall@10 0.99 at ef_search 500, where
            # ef_construction 200 needed 800 for 0.94-0.97 (bench/search_bench.py).
            # Costs a longer build (about 2x that of ef_construction 200).
            hnsw_cosine_index(
                "incidents_chunk_embedding_hnsw", m=32, ef_construction=400, half_precision=True
            ),
            # incident_search_similar: the full-text half of hybrid search, within
            # the versions searched.
            versioned_search_index("incidents_chunk_fts_ver_gin"),
        ]

    def __str__(self) -> str:
        return f"{self.incident.incident_id} #{self.ordinal}"
