"""Writes for datasets, versions and incidents; import jobs and single-incident writes.

The import engine itself (`rows_import`, the specs) is in `incidents.importing`.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.db import models, transaction
from django.utils import timezone
from django.utils.text import slugify

from incidentdesk import owners
from incidentdesk.embeddings import get_embedder
from incidentdesk.errors import ConflictError, IncidentDeskError, ValidationError
from incidents import importers
from incidents.dataset_selectors import (
    dataset_version_previous,
    import_job_list_queued_before,
    import_job_list_running_owned,
)
from incidents.importers import SourceRow
from incidents.importing import (
    CONNECTION_ERRORS,
    INCIDENT_SPEC,
    ImportResult,
    ImportSpec,
    ProgressCallback,
    dataset_version_refresh_counts,
    describe_exception,
    import_spec_for,
    rereadable,
    rows_import,
    validate_rows,
)
from incidents.models import Dataset, DatasetVersion, ImportJob, Incident, RetiredReport
from incidents.parsing import normalize_incident_id
from incidents.selectors import forget_active_versions

logger = logging.getLogger(__name__)

# Versions an import has not finished (still running, or stopped by an error): never active.
UNFINISHED = {DatasetVersion.Status.BUILDING, DatasetVersion.Status.FAILED}


# --- datasets and versions ----------------------------------------------------


def dataset_get_or_create(*, name: str, kind: str = Dataset.Kind.INCIDENTS) -> Dataset:
    dataset = Dataset.objects.filter(name=name).first()
    if dataset is None:
        dataset = Dataset(name=name, slug=slugify(name) or "dataset", kind=kind)
        dataset.full_clean()
        dataset.save()
    elif dataset.kind != kind:
        raise IncidentDeskError(f"dataset {name!r} holds {dataset.kind}, not {kind}")
    return dataset


def dataset_version_get_or_create(
    *, dataset: Dataset, label: str | None = None, user: User | None = None
) -> DatasetVersion:
    """The named version, else (no label) the newest one, else a new `v1`.

    Re-running the same import without `--version` therefore lands in the
    same version and changes nothing.
    """
    versions = dataset.versions.all()
    existing = versions.filter(label=label).first() if label else versions.first()
    if existing is not None:
        return existing
    version = DatasetVersion(
        dataset=dataset,
        label=label or f"v{versions.count() + 1}",
        embedding_model=get_embedder().model_id,
        created_by=user if user and user.pk else None,
    )
    version.full_clean()
    version.save()
    return version


@transaction.atomic
def dataset_version_activate(*, version: DatasetVersion) -> DatasetVersion:
    """Make `version` the one search reads; the previous active one is archived.

    One transaction, rows locked, so readers see either the old or the new
    version, never none or two. Activating an archived version is a rollback.
    """
    versions = DatasetVersion.objects.select_for_update().filter(dataset_id=version.dataset_id)
    current = {v.pk: v for v in versions}
    target = current[version.pk]
    if target.status in UNFINISHED:
        why = "is still building" if target.status == "building" else "had its import stopped"
        raise ConflictError(
            f"version {target.label} {why} and cannot be activated",
            {"version": target.pk, "status": target.status},
        )
    if target.status == DatasetVersion.Status.ACTIVE:
        return target
    for other in current.values():
        if other.status == DatasetVersion.Status.ACTIVE:
            other.status = DatasetVersion.Status.ARCHIVED
            other.save(update_fields=["status"])
    target.status = DatasetVersion.Status.ACTIVE
    target.activated_at = timezone.now()
    target.save(update_fields=["status", "activated_at"])
    # Search reads these counters to choose an exact scan for small scopes.
    dataset_version_refresh_counts(version=target)
    forget_active_versions()  # this process sees the change at once,
    transaction.on_commit(forget_active_versions)  # and again once committed
    _partial_indexes_sync_on_commit()
    return target


def dataset_version_archive(*, version: DatasetVersion) -> DatasetVersion:
    """Take a version out of search (an active one leaves the dataset with none)."""
    if version.status in UNFINISHED:
        # Archived versions can be re-activated (rollback): an unfinished one must not be.
        raise ConflictError(f"version {version.label} is {version.status}")
    version.status = DatasetVersion.Status.ARCHIVED
    version.save(update_fields=["status"])
    forget_active_versions()
    transaction.on_commit(forget_active_versions)
    _partial_indexes_sync_on_commit()
    return version


def _partial_indexes_sync_on_commit() -> None:
    """Queue the partial HNSW indexes' sync (incidents.vector_indexes) once the
    change commits: their build takes minutes and cannot run in a transaction.
    `robust`: a broker that is down must not undo the activation; search reads
    the full index until the next sync (hourly, start-up) builds it."""
    from incidents.tasks import partial_indexes_sync_task  # a real cycle: tasks call services

    transaction.on_commit(lambda: partial_indexes_sync_task.delay(), robust=True)


def dataset_version_rollback(*, dataset: Dataset) -> DatasetVersion:
    """Re-activate the version that was active before the current one."""
    previous = dataset_version_previous(dataset=dataset)
    if previous is None:
        raise ConflictError(f"dataset {dataset.name} has no earlier version to roll back to")
    return dataset_version_activate(version=previous)


# --- importing files ---------------------------------------------------------------


def dataset_import_rows(
    *,
    spec: ImportSpec,
    kind: str,
    rows: Iterable[SourceRow],
    dataset_name: str,
    version_label: str | None = None,
    activate: bool = False,
    user: User | None = None,
    on_progress: ProgressCallback | None = None,
) -> tuple[DatasetVersion, ImportResult]:
    """Import rows into a dataset's version, creating both when missing.

    A version is activated only when every row imported: a half-good file
    must not replace what people are searching. The rows are validated
    first, so a file that cannot be read leaves no dataset or version behind.
    """
    rows = rereadable(rows)
    checked = validate_rows(spec, rows)
    dataset = dataset_get_or_create(name=dataset_name, kind=kind)
    version = dataset_version_get_or_create(dataset=dataset, label=version_label, user=user)
    result = rows_import(
        spec=spec, version=version, rows=rows, on_progress=on_progress, checked=checked
    )
    if activate and not result.failed:
        version = dataset_version_activate(version=version)
    return version, result


def incident_import_file(
    *, path: Path, file_format: str | None = None, **options: Any
) -> tuple[DatasetVersion, ImportResult]:
    """The whole `import_incidents` flow (options: see `dataset_import_rows`)."""
    rows = importers.read_rows(path, file_format)
    return dataset_import_rows(
        spec=INCIDENT_SPEC, kind=Dataset.Kind.INCIDENTS, rows=rows, **options
    )


# --- import jobs (admin and API uploads, run by Celery) --------------------------

IMPORT_JOB_MAX_ATTEMPTS = 3  # runs a job gets when its worker keeps dying under it


def import_job_create(
    *,
    dataset: Dataset,
    label: str,
    uploaded_file: Any,
    file_format: str = "",
    activate: bool = False,
    user: User | None = None,
) -> ImportJob:
    """Store the upload in a new building version and queue the import."""
    from incidents.tasks import import_job_run  # a real cycle: tasks call services

    with transaction.atomic():
        version = dataset_version_get_or_create(dataset=dataset, label=label, user=user)
        job = ImportJob(
            version=version,
            file=uploaded_file,
            file_format=file_format,
            activate_when_done=activate,
            created_by=user if user and user.pk else None,
        )
        job.save()
        transaction.on_commit(lambda: import_job_run.delay(job.pk))
    return job


def import_job_run_now(*, job: ImportJob) -> ImportJob:
    """Run a queued (or interrupted) job in this process, recording progress on the row."""
    if job.attempts >= IMPORT_JOB_MAX_ATTEMPTS:
        return _import_job_finish(
            job,
            ImportJob.Status.FAILED,
            f"the worker stopped {job.attempts} times while running this import; giving up",
        )
    job.status = ImportJob.Status.RUNNING
    job.attempts += 1
    job.owner = owners.current()
    job.save(update_fields=["status", "attempts", "owner"])

    def progress(done: int, total: int, failed: int) -> None:
        ImportJob.objects.filter(pk=job.pk).update(
            rows_done=done, rows_total=total, rows_failed=failed
        )

    try:
        result = _import_job_rows(job, progress)
    except (importers.ImportFileError, IncidentDeskError) as exc:
        return _import_job_finish(job, ImportJob.Status.FAILED, str(exc))
    except CONNECTION_ERRORS:
        raise  # the task's retry (or the start-up sweep) deals with a lost database
    except Exception as exc:
        logger.exception("import job %s stopped", job.pk)
        return _import_job_finish(
            job, ImportJob.Status.FAILED, f"stopped by {describe_exception(exc)}"
        )
    job.refresh_from_db()
    job.created, job.updated, job.unchanged = result.created, result.updated, result.unchanged
    job.rows_failed = result.failed
    job.errors = [error.as_dict() for error in result.errors[:1000]]
    activate = job.activate_when_done and not result.failed
    if activate:
        dataset_version_activate(version=job.version)
    message = result.summary() + ("; activated" if activate else "")
    status = ImportJob.Status.PARTIAL if result.failed else ImportJob.Status.SUCCEEDED
    return _import_job_finish(job, status, message)


def import_job_requeue_interrupted() -> list[int]:
    """Queue again the jobs a crash left `queued` or `running`; return their ids.

    Called at start-up (`manage.py serve`), before the worker starts: a job
    still `running` lost its worker. Running a job twice is safe (rows are
    upserted, and the task skips a job that has finished), and
    import_job_run_now gives up after IMPORT_JOB_MAX_ATTEMPTS.
    """
    from incidents.tasks import import_job_run  # a real cycle: tasks call services

    unfinished = [ImportJob.Status.QUEUED, ImportJob.Status.RUNNING]
    ids = list(ImportJob.objects.filter(status__in=unfinished).values_list("pk", flat=True))
    for job_id in ids:
        import_job_run.delay(job_id)
    return ids


# A queued job whose message is not waiting in the broker this long after it was
# created lost its message (to a worker that died holding it, or to Redis).
IMPORT_JOB_QUEUED_GRACE = dt.timedelta(minutes=1)


def import_job_requeue_orphaned(*, waiting: set[int]) -> list[int]:
    """Queue again, while the server runs, the jobs a dead worker left; return their ids.

    `running` jobs whose worker process is gone (incidentdesk.owners), and
    `queued` jobs older than IMPORT_JOB_QUEUED_GRACE that are not among
    `waiting` (the job ids the broker holds). Jobs of live workers are left
    alone; import_job_run_now fails a job after IMPORT_JOB_MAX_ATTEMPTS.
    """
    from incidents.tasks import import_job_run  # a real cycle: tasks call services

    ids = [job.pk for job in import_job_list_running_owned() if owners.is_gone(job.owner)]
    ImportJob.objects.filter(pk__in=ids).update(
        status=ImportJob.Status.QUEUED, owner="", message="queued again: its worker stopped"
    )
    stale = import_job_list_queued_before(timezone.now() - IMPORT_JOB_QUEUED_GRACE)
    ids += [pk for pk in stale.values_list("pk", flat=True) if pk not in waiting and pk not in ids]
    for job_id in ids:
        import_job_run.delay(job_id)
    return ids


def _import_job_rows(job: ImportJob, progress: ProgressCallback) -> ImportResult:
    rows = importers.read_rows(Path(job.file.path), job.file_format or None)
    spec = import_spec_for(kind=job.version.dataset.kind)
    # Validated before the version is touched: an unreadable file fails the job alone.
    checked = validate_rows(spec, rows)
    return rows_import(
        spec=spec, version=job.version, rows=rows, on_progress=progress, checked=checked
    )


def _import_job_finish(job: ImportJob, status: str, message: str) -> ImportJob:
    job.status = status
    job.message = message
    job.finished_at = timezone.now()
    job.save()
    return job


# --- API writes: datasets, uploads, single incidents --------------------------------


def dataset_create(*, name: str, kind: str, description: str = "") -> Dataset:
    """A new, empty dataset; its versions come from uploads and imports."""
    slug = slugify(name)
    if Dataset.objects.filter(models.Q(name=name) | models.Q(slug=slug)).exists():
        raise ConflictError(f"A dataset named {name!r} already exists.", {"name": name})
    dataset = Dataset(name=name, slug=slug, kind=kind, description=description)
    dataset.full_clean()
    dataset.save()
    return dataset


def dataset_upload(
    *,
    dataset: Dataset,
    uploaded_file: Any,
    label: str = "",
    file_format: str = "",
    activate: bool = False,
    user: User | None = None,
) -> ImportJob:
    """Queue the import of an uploaded file into a new version of `dataset`.

    Never into an existing version: an upload must not change what people
    search until someone activates it (or asked for `activate`).
    """
    label = label.strip() or _next_version_label(dataset)
    if dataset.versions.filter(label=label).exists():
        raise ConflictError(
            f"Dataset {dataset.name} already has a version {label}; uploads need a new label.",
            {"version_label": label},
        )
    try:
        importers.detect_format(Path(uploaded_file.name or ""), file_format or None)
    except importers.ImportFileError as exc:
        raise ValidationError(str(exc), {"file": str(exc)}) from exc
    return import_job_create(
        dataset=dataset,
        label=label,
        uploaded_file=uploaded_file,
        file_format=file_format,
        activate=activate,
        user=user,
    )


def _next_version_label(dataset: Dataset) -> str:
    taken = set(dataset.versions.values_list("label", flat=True))
    number = len(taken) + 1
    while f"v{number}" in taken:
        number += 1
    return f"v{number}"


def incident_create(*, version: DatasetVersion, data: dict[str, Any]) -> Incident:
    """Add one incident to a version, validated, hashed and embedded like an imported row."""
    _check_incident_version(version)
    key = normalize_incident_id(str(data.get("incident_id") or ""))
    if version.incidents.filter(incident_id=key).exists():
        raise ConflictError(f"Incident {key} already exists in {version.label}.", {"key": key})
    return _incident_write(version, data)


def incident_update(*, incident: Incident, changes: dict[str, Any]) -> Incident:
    """Change some fields of an incident; it is re-validated and re-embedded as a whole."""
    _check_incident_version(incident.version)
    row = _incident_row(incident) | changes | {"incident_id": incident.incident_id}
    return _incident_write(incident.version, row)


def _check_incident_version(version: DatasetVersion) -> None:
    if version.dataset.kind != Dataset.Kind.INCIDENTS:
        raise ValidationError(
            f"{version} holds knowledge documents, not incidents.", {"version": "not incidents"}
        )
    if version.status in {*UNFINISHED, DatasetVersion.Status.ARCHIVED}:
        raise ConflictError(f"{version} is {version.status}; write to a ready or active version.")


def _incident_row(incident: Incident) -> dict[str, Any]:
    """The incident as an import row (the inverse of importers.parse_incident)."""
    row = {name: getattr(incident, name) for name in importers.INCIDENT_FIELDS}
    return {**incident.extra, **row, "occurred_at": _iso(incident.occurred_at)}


def _iso(value: Any) -> Any:
    return value.isoformat() if hasattr(value, "isoformat") else value


def _incident_write(version: DatasetVersion, data: dict[str, Any]) -> Incident:
    """One row through the import engine: the same rules, hash and chunks as a file."""
    row = SourceRow(1, {name: _iso(value) for name, value in data.items()})
    parsed, errors = importers.parse_incident(row)
    if parsed is None:
        fields = {error.field or "non_field": error.reason for error in errors}
        raise ValidationError(f"Invalid incident: {errors[0]}", fields)
    rows_import(spec=INCIDENT_SPEC, version=version, rows=[row])
    return Incident.objects.select_related("version__dataset").get(
        version=version, incident_id=parsed.key
    )


# --- review of chat reports ---------------------------------------------------------


def incident_mark_reported(*, version: DatasetVersion, incident_id: str) -> None:
    """A chat report stays `reported` (badged, ranked lower) until staff review it."""
    Incident.objects.filter(version=version, incident_id=incident_id).update(
        review_status=Incident.ReviewStatus.REPORTED
    )


def _check_reported(incident: Incident) -> None:
    if not incident.is_reported:
        raise ConflictError(f"{incident.incident_id} was already reviewed.")


@transaction.atomic
def incident_review_accept(
    *, incident: Incident, changes: dict[str, Any] | None = None
) -> Incident:
    """Accept a report as an incident, with the reviewer's edits (re-embedded if any)."""
    _check_reported(incident)
    if changes:
        incident = incident_update(incident=incident, changes=changes)
    incident.review_status = Incident.ReviewStatus.REVIEWED
    incident.save(update_fields=["review_status", "updated_at"])
    return incident


@transaction.atomic
def incident_review_merge(*, incident: Incident, into: Incident) -> Incident:
    """Fold a report into the existing incident it duplicates, then drop the report.

    The target keeps the report's id, title, reporter and conversation under
    `merged_reports` (an extra column), so the link back is not lost.
    """
    _check_reported(incident)
    if into.pk == incident.pk or into.is_reported:
        raise ValidationError(
            "Merge a report into a reviewed incident, not into itself or another report.",
            {"into": "not a reviewed incident"},
        )
    merged = {
        "incident_id": incident.incident_id,
        "title": incident.title,
        "reported_by": incident.extra.get("reported_by", ""),
        "conversation_id": incident.extra.get("conversation_id"),
    }
    previous = into.extra.get("merged_reports", [])
    into = incident_update(incident=into, changes={"merged_reports": [*previous, merged]})
    _report_retire(incident, RetiredReport.Outcome.MERGED, merged_into=into.incident_id)
    return into


@transaction.atomic
def incident_review_discard(*, incident: Incident) -> None:
    """Delete a report that is not an incident (a test, a mistake, a duplicate)."""
    _check_reported(incident)
    _report_retire(incident, RetiredReport.Outcome.DISCARDED)


def _report_retire(incident: Incident, outcome: str, *, merged_into: str = "") -> None:
    """Delete the report's row, keeping what its id became (links to it still answer)."""
    retired = RetiredReport(
        incident_id=incident.incident_id,
        title=incident.title,
        outcome=outcome,
        merged_into=merged_into,
    )
    retired.full_clean()
    retired.save()
    version = incident.version
    incident.delete()
    dataset_version_refresh_counts(version=version)
