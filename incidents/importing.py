"""The import engine: validate rows, skip unchanged ones, embed and write the rest.

It serves every kind of dataset through an `ImportSpec` (how a row is parsed,
stored and chunked). `IMPORT_SPECS` maps a dataset kind to its spec: incidents
register theirs here, knowledge in `KnowledgeConfig.ready()`, so this module
(and `incidents.services`, which runs uploaded jobs) never imports knowledge.

Each import validates every row, skips unchanged ones by content hash, embeds
changed ones in batches while the previous batch is written, and keeps the
active version safe (see `rows_import`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.conf import settings
from django.db import (
    DatabaseError,
    InterfaceError,
    OperationalError,
    connection,
    models,
    transaction,
)
from django.utils import timezone

from incidentdesk.db import declared_indexes_ensure
from incidentdesk.embeddings import embed_texts
from incidentdesk.errors import IncidentDeskError
from incidents import importers
from incidents.importers import ParsedRow, RowError, SourceRow, printable
from incidents.models import Dataset, DatasetVersion, Incident, IncidentChunk
from incidents.parsing import incident_chunk_texts

logger = logging.getLogger(__name__)

BATCH_ROWS = 64
ProgressCallback = Callable[[int, int, int], None]
Changed = tuple[ParsedRow, str, int | None]  # a row to write, its new hash, its existing pk
# The database itself is gone: no row is to blame, the import stops.
CONNECTION_ERRORS = (OperationalError, InterfaceError)


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


@dataclass
class CheckedRows:
    """What validation keeps of each valid row: its key, place in the file and content hash.

    Little per row (the rows themselves are read again to be written), so a
    file of any size is imported in bounded memory.
    """

    valid: dict[str, tuple[int, int, str]] = field(default_factory=dict)  # key: index, line, hash
    errors: list[RowError] = field(default_factory=list)


def rereadable(rows: Iterable[SourceRow]) -> Iterable[SourceRow]:
    """Rows that can be read twice: a file's `RowFile` or a list, else a list of them."""
    return list(rows) if iter(rows) is rows else rows


def validate_rows(spec: ImportSpec, rows: Iterable[SourceRow]) -> CheckedRows:
    """Step 1: parse every row; a key seen twice in one file is an error."""
    checked = CheckedRows()
    for index, row in enumerate(rows):
        parsed, row_errors = _parse_row(spec, row)
        checked.errors.extend(row_errors)
        if parsed is None:
            continue
        if parsed.key in checked.valid:
            first = checked.valid[parsed.key][1]
            checked.errors.append(
                RowError(row.line, spec.key_field, f"duplicate {parsed.key}, first on line {first}")
            )
            continue
        checked.valid[parsed.key] = (index, row.line, content_hash(parsed))
    return checked


def _parse_row(spec: ImportSpec, row: SourceRow) -> tuple[ParsedRow | None, list[RowError]]:
    """spec.parse, where anything a hostile row raises is that row's error, not the import's."""
    try:
        return spec.parse(row)
    except Exception as exc:
        logger.warning("row on line %s could not be parsed", row.line, exc_info=True)
        return None, [RowError(row.line, "", f"cannot be read: {describe_exception(exc)}")]


def describe_exception(exc: BaseException) -> str:
    first_line = (str(exc).strip().splitlines() or [""])[0][:300]
    return printable(f"{type(exc).__name__}: {first_line}" if first_line else type(exc).__name__)


def rows_import(
    *,
    spec: ImportSpec,
    version: DatasetVersion,
    rows: Iterable[SourceRow],
    on_progress: ProgressCallback | None = None,
    checked: CheckedRows | None = None,
) -> ImportResult:
    """Upsert rows into `version` by key; embed only what changed.

    The rows are read twice, to validate (unless `checked` is that already
    done) and then to write the changed ones a batch at a time, so only a
    batch is ever held, whatever the file's size.

    Into an active version the whole import is one transaction, so a crash
    leaves search exactly as it was. Into any other version each batch
    commits (progress is visible) while the version stays `building`, which
    can never be activated; it becomes `ready` when the import ends, or
    `failed` (never activated either) when an error stops it half-way.
    """
    started = time.perf_counter()
    rows = rereadable(rows)
    if checked is None:
        checked = validate_rows(spec, rows)
    result = ImportResult(failed=len({e.line for e in checked.errors}), errors=checked.errors)
    is_active = version.status == DatasetVersion.Status.ACTIVE
    outer: AbstractContextManager[Any] = transaction.atomic() if is_active else nullcontext()
    try:
        with outer:
            if not is_active:
                _set_status(version, DatasetVersion.Status.BUILDING)
            _write_rows(spec, version, rows, checked, result, on_progress)
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
    rows: Iterable[SourceRow],
    checked: CheckedRows,
    result: ImportResult,
    on_progress: ProgressCallback | None,
) -> None:
    """Steps 2-4: classify by hash, then embed batch n+1 while writing batch n."""
    changed = _classify(spec, version, checked, result)
    total = len(checked.valid) + result.failed
    done = result.unchanged + result.failed
    if on_progress:
        on_progress(done, total, result.failed)
    if not _in_transaction() and index_drop_pays_off(spec=spec, rows=len(changed)):
        _drop_index(spec.hnsw_index)
    try:
        batches = _changed_batches(spec, rows, changed)
        with ThreadPoolExecutor(max_workers=1) as pool:
            batch = next(batches, [])
            pending = _embed_batch(pool, spec, batch)
            while batch:
                following = next(batches, [])  # read and parsed while `batch` is embedded
                texts, vectors = pending.result()
                pending = _embed_batch(pool, spec, following)
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
                batch = following
    finally:
        if not _in_transaction():
            # Also rebuilds an index an earlier import lost (killed before this line).
            declared_indexes_ensure([spec.chunk_model])


def _classify(
    spec: ImportSpec, version: DatasetVersion, checked: CheckedRows, result: ImportResult
) -> dict[int, tuple[str, str, int | None]]:
    """The rows to write, by index in the file: each one's key, new hash and existing pk."""
    rows = spec.model.objects.filter(version=version).values_list(  # type: ignore[attr-defined]
        spec.key_field, "pk", "content_hash"
    )
    existing = {key: (pk, digest) for key, pk, digest in rows}
    changed: dict[int, tuple[str, str, int | None]] = {}
    for key, (index, _, digest) in checked.valid.items():
        pk, old_digest = existing.get(key, (None, None))
        if pk is not None and old_digest == digest:
            result.unchanged += 1
        else:
            changed[index] = (key, digest, pk)
    return changed


def _changed_batches(
    spec: ImportSpec, rows: Iterable[SourceRow], changed: dict[int, tuple[str, str, int | None]]
) -> Iterator[list[Changed]]:
    """Step 2 reads the rows again: the changed ones, parsed, BATCH_ROWS at a time."""
    batch: list[Changed] = []
    for index, row in enumerate(rows):
        if index not in changed:
            continue
        key, digest, pk = changed[index]
        parsed, _ = _parse_row(spec, row)
        if parsed is None or parsed.key != key:  # the file changed between the two readings
            raise IncidentDeskError(f"line {row.line} changed while it was being imported")
        batch.append((parsed, digest, pk))
        if len(batch) == BATCH_ROWS:
            yield batch
            batch = []
    if batch:
        yield batch


def _embed_batch(
    pool: ThreadPoolExecutor, spec: ImportSpec, batch: Sequence[Changed]
) -> Future[tuple[list[list[str]], np.ndarray]]:
    texts = [spec.chunk_texts(row.fields) for row, _, _ in batch]
    flat = [text for row_texts in texts for text in row_texts]
    return pool.submit(lambda: (texts, embed_texts(flat)))


def _write_batch(
    spec: ImportSpec,
    version: DatasetVersion,
    batch: Sequence[Changed],
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
    batch: Sequence[Changed],
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
            result.errors.append(
                RowError(item[0].line, "", f"cannot be stored: {describe_exception(exc)}")
            )


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


def dataset_version_refresh_counts(*, version: DatasetVersion) -> DatasetVersion:
    version.row_count = version.incidents.count() + version.knowledge_documents.count()
    version.chunk_count = version.incident_chunks.count() + version.knowledge_chunks.count()
    version.save(update_fields=["row_count", "chunk_count"])
    return version


# --- the registry: one spec per dataset kind --------------------------------------


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


# Filled in by each app that imports rows: knowledge adds its spec in
# `KnowledgeConfig.ready()`. Dataset kinds are `Dataset.Kind` values.
IMPORT_SPECS: dict[str, ImportSpec] = {Dataset.Kind.INCIDENTS: INCIDENT_SPEC}


def import_spec_for(*, kind: str) -> ImportSpec:
    """The spec that imports rows of a dataset of this kind."""
    try:
        return IMPORT_SPECS[kind]
    except KeyError:
        raise IncidentDeskError(f"no importer is registered for {kind} datasets") from None
