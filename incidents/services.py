"""Writes for datasets, versions and incidents, and the shared import engine.

The engine (`rows_import`) serves incidents here and knowledge documents in
`knowledge.services`: validate every row, skip unchanged ones by content
hash, embed changed ones in batches while the previous batch is written, and
keep the active version safe (see `rows_import`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.contrib.auth.models import User
from django.db import (
    DatabaseError,
    InterfaceError,
    OperationalError,
    connection,
    models,
    transaction,
)
from django.utils import timezone
from django.utils.text import slugify

from incidentdesk.db import declared_indexes_ensure
from incidentdesk.embeddings import embed_texts, get_embedder
from incidentdesk.errors import ConflictError, IncidentDeskError, ValidationError
from incidents import importers
from incidents.dataset_selectors import dataset_version_previous
from incidents.importers import ParsedRow, RowError, SourceRow, printable
from incidents.models import Dataset, DatasetVersion, ImportJob, Incident, IncidentChunk
from incidents.parsing import incident_chunk_texts, normalize_incident_id
from incidents.selectors import forget_active_versions

logger = logging.getLogger(__name__)

BATCH_ROWS = 64
ProgressCallback = Callable[[int, int, int], None]
# Versions an import has not finished (still running, or stopped by an error): never active.
UNFINISHED = {DatasetVersion.Status.BUILDING, DatasetVersion.Status.FAILED}
# The database itself is gone: no row is to blame, the import stops.
CONNECTION_ERRORS = (OperationalError, InterfaceError)


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
    return version


def dataset_version_rollback(*, dataset: Dataset) -> DatasetVersion:
    """Re-activate the version that was active before the current one."""
    previous = dataset_version_previous(dataset=dataset)
    if previous is None:
        raise ConflictError(f"dataset {dataset.name} has no earlier version to roll back to")
    return dataset_version_activate(version=previous)


def dataset_version_refresh_counts(*, version: DatasetVersion) -> DatasetVersion:
    version.row_count = version.incidents.count() + version.knowledge_documents.count()
    version.chunk_count = version.incident_chunks.count() + version.knowledge_chunks.count()
    version.save(update_fields=["row_count", "chunk_count"])
    return version


# --- the import engine ---------------------------------------------------------


@dataclass(frozen=True)
class ImportSpec:
    """How one kind of row is parsed, stored and chunked."""

    model: type[models.Model]
    chunk_model: type[models.Model]
    key_field: str  # incident_id, doc_id
    parent_field: str  # the chunk's foreign key: incident, document
    parse: Callable[[SourceRow], tuple[ParsedRow | None, list[RowError]]]
    chunk_texts: Callable[[dict[str, Any]], list[str]]
    hnsw_index: str


@dataclass
class ImportResult:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    failed: int = 0
    errors: list[RowError] = field(default_factory=list)
    seconds: float = 0.0
    chunks: int = 0

    @property
    def rows(self) -> int:
        return self.created + self.updated + self.unchanged + self.failed

    @property
    def rows_per_second(self) -> float:
        return self.rows / self.seconds if self.seconds else 0.0

    def summary(self) -> str:
        return (
            f"created {self.created}, updated {self.updated}, unchanged {self.unchanged}, "
            f"failed {self.failed} in {self.seconds:.1f}s ({self.rows_per_second:.1f} rows/s)"
        )


def content_hash(parsed: ParsedRow) -> str:
    payload = json.dumps([parsed.fields, parsed.extra], sort_keys=True, default=str)
    return hashlib.sha256(payload.encode()).hexdigest()


def validate_rows(
    spec: ImportSpec, rows: Iterable[SourceRow]
) -> tuple[list[ParsedRow], list[RowError]]:
    """Step 1: parse every row; a key seen twice in one file is an error."""
    valid: dict[str, ParsedRow] = {}
    errors: list[RowError] = []
    for row in rows:
        parsed, row_errors = _parse_row(spec, row)
        errors.extend(row_errors)
        if parsed is None:
            continue
        if parsed.key in valid:
            first = valid[parsed.key].line
            errors.append(
                RowError(row.line, spec.key_field, f"duplicate {parsed.key}, first on line {first}")
            )
            continue
        valid[parsed.key] = parsed
    return list(valid.values()), errors


def _parse_row(spec: ImportSpec, row: SourceRow) -> tuple[ParsedRow | None, list[RowError]]:
    """spec.parse, where anything a hostile row raises is that row's error, not the import's."""
    try:
        return spec.parse(row)
    except Exception as exc:
        logger.warning("row on line %s could not be parsed", row.line, exc_info=True)
        return None, [RowError(row.line, "", f"cannot be read: {_describe(exc)}")]


def _describe(exc: BaseException) -> str:
    first_line = (str(exc).strip().splitlines() or [""])[0][:300]
    return printable(f"{type(exc).__name__}: {first_line}" if first_line else type(exc).__name__)


def rows_import(
    *,
    spec: ImportSpec,
    version: DatasetVersion,
    rows: Iterable[SourceRow],
    on_progress: ProgressCallback | None = None,
) -> ImportResult:
    """Upsert rows into `version` by key; embed only what changed.

    Into an active version the whole import is one transaction, so a crash
    leaves search exactly as it was. Into any other version each batch
    commits (progress is visible) while the version stays `building`, which
    can never be activated; it becomes `ready` when the import ends, or
    `failed` (never activated either) when an error stops it half-way.
    """
    started = time.perf_counter()
    parsed, errors = validate_rows(spec, rows)
    result = ImportResult(failed=len({e.line for e in errors}), errors=errors)
    is_active = version.status == DatasetVersion.Status.ACTIVE
    outer: AbstractContextManager[Any] = transaction.atomic() if is_active else nullcontext()
    try:
        with outer:
            if not is_active:
                _set_status(version, DatasetVersion.Status.BUILDING)
            _write_rows(spec, version, parsed, result, on_progress)
            if not is_active:
                _set_status(version, DatasetVersion.Status.READY)
            dataset_version_refresh_counts(version=version)
    except BaseException:
        if not is_active:
            _mark_failed(version)
        raise
    result.seconds = time.perf_counter() - started
    return result


def _mark_failed(version: DatasetVersion) -> None:
    """Best effort: with the database gone the version stays `building` (never active)."""
    try:
        _set_status(version, DatasetVersion.Status.FAILED)
    except DatabaseError:
        logger.warning("could not mark %s failed", version, exc_info=True)


def _set_status(version: DatasetVersion, status: str) -> None:
    version.status = status
    version.save(update_fields=["status"])


def _write_rows(
    spec: ImportSpec,
    version: DatasetVersion,
    parsed: Sequence[ParsedRow],
    result: ImportResult,
    on_progress: ProgressCallback | None,
) -> None:
    """Steps 2-4: classify by hash, then embed batch n+1 while writing batch n."""
    changed = _classify(spec, version, parsed, result)
    total = len(parsed) + result.failed
    done = result.unchanged + result.failed
    if on_progress:
        on_progress(done, total, result.failed)
    if not _in_transaction() and index_drop_pays_off(spec=spec, rows=len(changed)):
        _drop_index(spec.hnsw_index)
    try:
        batches = [changed[i : i + BATCH_ROWS] for i in range(0, len(changed), BATCH_ROWS)]
        with ThreadPoolExecutor(max_workers=1) as pool:
            pending = _embed_batch(pool, spec, batches[0]) if batches else None
            for number, batch in enumerate(batches):
                texts, vectors = pending.result() if pending else ([], np.zeros(0))
                if number + 1 < len(batches):
                    pending = _embed_batch(pool, spec, batches[number + 1])
                try:
                    with transaction.atomic():
                        _write_batch(spec, version, batch, texts, vectors, result)
                except CONNECTION_ERRORS:
                    raise
                except Exception:
                    _write_singly(spec, version, batch, texts, vectors, result)
                done += len(batch)
                if on_progress:
                    on_progress(done, total, result.failed)
    finally:
        if not _in_transaction():
            # Also rebuilds an index an earlier import lost (killed before this line).
            declared_indexes_ensure([spec.chunk_model])


def _classify(
    spec: ImportSpec, version: DatasetVersion, parsed: Sequence[ParsedRow], result: ImportResult
) -> list[tuple[ParsedRow, str, int | None]]:
    """Rows to write, each with its new hash and existing primary key."""
    rows = spec.model.objects.filter(version=version).values_list(  # type: ignore[attr-defined]
        spec.key_field, "pk", "content_hash"
    )
    existing = {key: (pk, digest) for key, pk, digest in rows}
    changed: list[tuple[ParsedRow, str, int | None]] = []
    for row in parsed:
        digest = content_hash(row)
        pk, old_digest = existing.get(row.key, (None, None))
        if pk is not None and old_digest == digest:
            result.unchanged += 1
        else:
            changed.append((row, digest, pk))
    return changed


def _embed_batch(
    pool: ThreadPoolExecutor, spec: ImportSpec, batch: Sequence[tuple[ParsedRow, str, int | None]]
) -> Future[tuple[list[list[str]], np.ndarray]]:
    texts = [spec.chunk_texts(row.fields) for row, _, _ in batch]
    flat = [text for row_texts in texts for text in row_texts]
    return pool.submit(lambda: (texts, embed_texts(flat)))


def _write_batch(
    spec: ImportSpec,
    version: DatasetVersion,
    batch: Sequence[tuple[ParsedRow, str, int | None]],
    texts: list[list[str]],
    vectors: np.ndarray,
    result: ImportResult,
) -> None:
    objects = []
    for row, digest, pk in batch:
        values = {**row.fields, "extra": row.extra, "content_hash": digest, spec.key_field: row.key}
        objects.append(spec.model(pk=pk, version=version, **values))
    new = [obj for obj in objects if obj.pk is None]
    old = [obj for obj in objects if obj.pk is not None]
    spec.model.objects.bulk_create(new)  # type: ignore[attr-defined]
    if old:
        update_fields = [*batch[0][0].fields, "extra", "content_hash", "updated_at"]
        for obj in old:
            obj.updated_at = timezone.now()  # type: ignore[attr-defined]
        spec.model.objects.bulk_update(old, update_fields)  # type: ignore[attr-defined]
        spec.chunk_model.objects.filter(**{f"{spec.parent_field}__in": old}).delete()  # type: ignore[attr-defined]
    _write_chunks(spec, version, objects, texts, vectors, result)
    # Counted last: a batch the database refuses half-way is rolled back and retried singly.
    result.created += len(new)
    result.updated += len(old)


def _write_singly(
    spec: ImportSpec,
    version: DatasetVersion,
    batch: Sequence[tuple[ParsedRow, str, int | None]],
    texts: list[list[str]],
    vectors: np.ndarray,
    result: ImportResult,
) -> None:
    """A batch the database refused, one row at a time: the row it refuses is that row's error.

    Each row gets its own savepoint, so this works inside an active version's transaction.
    """
    ends = np.cumsum([len(row_texts) for row_texts in texts])
    for index, item in enumerate(batch):
        start = int(ends[index - 1]) if index else 0
        try:
            with transaction.atomic():
                row_vectors = vectors[start : int(ends[index])]
                _write_batch(spec, version, [item], [texts[index]], row_vectors, result)
        except CONNECTION_ERRORS:
            raise
        except Exception as exc:
            logger.warning("row on line %s could not be stored", item[0].line, exc_info=True)
            result.failed += 1
            result.errors.append(RowError(item[0].line, "", f"cannot be stored: {_describe(exc)}"))


def _write_chunks(
    spec: ImportSpec,
    version: DatasetVersion,
    parents: Sequence[models.Model],
    texts: list[list[str]],
    vectors: np.ndarray,
    result: ImportResult,
) -> None:
    chunks = []
    position = 0
    for parent, row_texts in zip(parents, texts, strict=True):
        for ordinal, text in enumerate(row_texts):
            chunks.append(
                spec.chunk_model(
                    **{spec.parent_field: parent},
                    version=version,
                    ordinal=ordinal,
                    text=text,
                    embedding=vectors[position],
                )
            )
            position += 1
    spec.chunk_model.objects.bulk_create(chunks, batch_size=500)  # type: ignore[attr-defined]
    result.chunks += len(chunks)


def _in_transaction() -> bool:
    return connection.in_atomic_block


def index_drop_pays_off(*, spec: ImportSpec, rows: int) -> bool:
    """Whether to load `rows` rows without the shared HNSW index and rebuild it after.

    The index serves every version, so while it is gone every search is a
    sequential scan, a crash in between loses it until the next start-up, and
    the rebuild covers the whole table, not only the new rows. Measured
    (bench/index_bench.py, 10k new chunks, on a 2-core machine shared with
    other builds, load 7-10, so loose): into an empty table 138 s in place
    against 35 s dropped and rebuilt; into 20k chunks 458 s in place (into
    30k) against 161 s (a rebuild over 30k). In place is ~3x slower at these
    sizes, but the rebuild grows with the whole table (188 s at 204k chunks,
    README) while searches go without the index. Availability wins: only a
    large load into a table holding fewer chunks than the load writes rows
    (each row makes at least one chunk) drops it.
    """
    if rows < settings.IMPORT_REBUILD_INDEX_THRESHOLD:
        return False
    with connection.cursor() as cursor:
        # The planner's estimate: cheap, and close enough to compare sizes.
        cursor.execute(
            "SELECT greatest(reltuples, 0) FROM pg_class WHERE oid = %s::regclass",
            [spec.chunk_model._meta.db_table],
        )
        row = cursor.fetchone()
    return row is not None and float(row[0]) < rows


def _drop_index(name: str) -> None:
    """Drop an HNSW index for a bulk load; `declared_indexes_ensure` builds it again.

    If the process dies before that, `manage.py serve` rebuilds it at start-up.
    """
    with connection.cursor() as cursor:
        cursor.execute(f'DROP INDEX IF EXISTS "{name}"')
    logger.info("dropped %s for the bulk load; rebuilding it after", name)


# --- incidents ------------------------------------------------------------------


def _incident_chunk_texts(fields: dict[str, Any]) -> list[str]:
    return incident_chunk_texts(
        title=fields["title"],
        application=fields["impacted_application"],
        root_cause=fields["root_cause"],
        mitigation=fields["mitigation"],
        body=fields["body"],
    )


INCIDENT_SPEC = ImportSpec(
    model=Incident,
    chunk_model=IncidentChunk,
    key_field="incident_id",
    parent_field="incident",
    parse=importers.parse_incident,
    chunk_texts=_incident_chunk_texts,
    hnsw_index="incidents_chunk_embedding_hnsw",
)


def incident_import(
    *,
    version: DatasetVersion,
    rows: Iterable[SourceRow],
    on_progress: ProgressCallback | None = None,
) -> ImportResult:
    """Import incident rows into a version (see `rows_import`)."""
    return rows_import(spec=INCIDENT_SPEC, version=version, rows=rows, on_progress=on_progress)


def dataset_import_rows(
    *,
    spec: ImportSpec,
    kind: str,
    rows: list[SourceRow],
    dataset_name: str,
    version_label: str | None = None,
    activate: bool = False,
    user: User | None = None,
    on_progress: ProgressCallback | None = None,
) -> tuple[DatasetVersion, ImportResult]:
    """Import rows into a dataset's version, creating both when missing.

    A version is activated only when every row imported: a half-good file
    must not replace what people are searching.
    """
    dataset = dataset_get_or_create(name=dataset_name, kind=kind)
    version = dataset_version_get_or_create(dataset=dataset, label=version_label, user=user)
    result = rows_import(spec=spec, version=version, rows=rows, on_progress=on_progress)
    if activate and not result.failed:
        version = dataset_version_activate(version=version)
    return version, result


def incident_import_file(
    *, path: Path, file_format: str | None = None, **options: Any
) -> tuple[DatasetVersion, ImportResult]:
    """The whole `import_incidents` flow (options: see `dataset_import_rows`)."""
    rows = list(importers.read_rows(path, file_format))
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
    from incidents.tasks import import_job_run

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
    job.save(update_fields=["status", "attempts"])

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
        return _import_job_finish(job, ImportJob.Status.FAILED, f"stopped by {_describe(exc)}")
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
    from incidents.tasks import import_job_run

    unfinished = [ImportJob.Status.QUEUED, ImportJob.Status.RUNNING]
    ids = list(ImportJob.objects.filter(status__in=unfinished).values_list("pk", flat=True))
    for job_id in ids:
        import_job_run.delay(job_id)
    return ids


def _import_job_rows(job: ImportJob, progress: ProgressCallback) -> ImportResult:
    from knowledge.services import KNOWLEDGE_SPEC

    path = Path(job.file.path)
    rows = list(importers.read_rows(path, job.file_format or None))
    is_knowledge = job.version.dataset.kind == Dataset.Kind.KNOWLEDGE
    spec = KNOWLEDGE_SPEC if is_knowledge else INCIDENT_SPEC
    return rows_import(spec=spec, version=job.version, rows=rows, on_progress=progress)


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
    incident_review_discard(incident=incident)
    return into


@transaction.atomic
def incident_review_discard(*, incident: Incident) -> None:
    """Delete a report that is not an incident (a test, a mistake, a duplicate)."""
    _check_reported(incident)
    version = incident.version
    incident.delete()
    dataset_version_refresh_counts(version=version)
