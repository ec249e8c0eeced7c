"""Read-only queries over datasets, their versions and import jobs.

The API's dataset pages, the admin's activation and rollback, and the
version diff read these; what is searchable (`incidents.selectors`' scope)
starts from `active_versions`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, F, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Lower, Trim

from incidentdesk.errors import NotFoundError
from incidentdesk.filtering import filter_queryset
from incidents.filtersets import DatasetVersionFilter, ImportJobFilter
from incidents.models import Dataset, DatasetVersion, ImportJob


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


def import_job_list_running_owned() -> QuerySet[ImportJob]:
    """Jobs `running` that name their worker process (the orphan check's candidates)."""
    return ImportJob.objects.filter(status=ImportJob.Status.RUNNING).exclude(owner="")


def import_job_list_queued_before(moment: dt.datetime) -> QuerySet[ImportJob]:
    """Jobs still `queued` that were created before `moment`."""
    return ImportJob.objects.filter(status=ImportJob.Status.QUEUED, created_at__lt=moment)


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
