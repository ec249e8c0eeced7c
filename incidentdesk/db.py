"""Database helpers shared by the apps."""

from __future__ import annotations

import logging
import weakref
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from functools import cache
from itertools import groupby
from typing import Any

from django.apps import apps
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Field, Index, Model

from incidentdesk.migrating import pending_migrations

logger = logging.getLogger(__name__)


@contextmanager
def derived_writes() -> Iterator[None]:
    """A transaction whose commit does not wait for the WAL to reach the disk.

    For what the copilot derives while it answers (tool results, traces, the
    answer as it streams): it can be produced again, and a PostgreSQL crash
    loses at most the last ~200 ms of it (wal_writer_delay), never a torn
    row. What a user sends is committed synchronously. Measured here: 3.3 ms
    per synchronous commit, 0.3 ms without the wait.
    """
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL synchronous_commit = off")
        yield


def rows_insert(*rows: Model) -> None:
    """INSERT the instances, in order, and set their primary keys, like save().

    save() builds and compiles its INSERT anew for every row: ~460 µs of
    CPU per message row here, against ~260 µs for the same statement run
    directly. An answer writes about eight rows, so the copilot's hot path
    comes here. Consecutive rows of one model go in one multi-row INSERT (an
    answer's tool and answer messages were a statement each); PostgreSQL
    returns their keys in the order of the VALUES, as bulk_create() relies on.
    Like bulk_create(), it sends no signals: these models have no receivers.
    """
    with connection.cursor() as cursor:
        for _, group in groupby(rows, key=type):
            _insert_many(cursor, list(group))


def _insert_many(cursor: Any, rows: list[Model]) -> None:
    sql, fields = _insert_statement(type(rows[0]), len(rows))
    cursor.execute(sql, [field.get_db_prep_save(field.pre_save(row, True), connection)
                         for row in rows for field in fields])  # fmt: skip
    for row, returned in zip(rows, cursor.fetchall(), strict=True):
        for field, value in zip(row._meta.db_returning_fields, returned, strict=True):
            setattr(row, field.attname, value)
        row._state.adding, row._state.db = False, connection.alias


@cache
def _insert_statement(model: type[Model], count: int) -> tuple[str, list[Field[Any, Any]]]:
    """The INSERT Django would run for `count` rows of `model` (no parents, plain
    placeholders)."""
    meta, quote = model._meta, connection.ops.quote_name
    returning = meta.db_returning_fields
    fields = [f for f in meta.local_concrete_fields if not f.generated and f not in returning]
    if meta.parents or not returning or any(hasattr(f, "get_placeholder") for f in fields):
        raise TypeError(f"rows_insert cannot write {meta.label}; use save()")
    columns, returned = _columns(fields), _columns(returning)
    values = ", ".join(["(" + ", ".join(["%s"] * len(fields)) + ")"] * count)
    # Names from the model's own metadata, quoted; every value is a parameter.
    sql = f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES {values} RETURNING {returned}"  # noqa: S608
    return sql, fields


def rows_select[M: Model](
    model: type[M], sql: str, params: Sequence[Any], *, extra: Sequence[str] = ()
) -> list[M]:
    """Instances of `model` from a fixed SELECT of its own columns (any of them, in
    any order), loaded as the ORM loads them: each field's `from_db_value`, then
    `Model.from_db`; a column not selected is deferred. `extra` names the last
    columns, which are not the model's: each is set on the instances as an
    attribute, as `raw()` sets them.

    `Model.objects.raw()` matches the columns to fields and looks up their
    converters at every call: 0.33 ms of CPU for one conversation row and
    0.95 ms for a ten-message history here, against 0.13 and 0.42 ms. The
    copilot reads the question's conversation and its history at every question.
    """
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        columns = tuple(column.name for column in cursor.description)
        rows = cursor.fetchall()
    own = len(columns) - len(extra)
    if tuple(columns[own:]) != tuple(extra):
        raise TypeError(f"rows_select expected the columns {extra} last, got {columns}")
    names, order, converters = _select_plan(model, columns[:own])
    loaded = []
    for row in rows:
        values = [row[position] for position in order]
        for index, convert in converters:
            values[index] = convert(values[index], None, connection)
        instance = model.from_db(connection.alias, names, values)
        for name, value in zip(extra, row[own:], strict=True):
            setattr(instance, name, value)
        loaded.append(instance)
    return loaded


@cache
def _select_plan(
    model: type[Model], columns: tuple[str, ...]
) -> tuple[list[str], list[int], list[tuple[int, Any]]]:
    """For rows of `columns`: the fields' attnames in the model's order (which
    `from_db` needs), each one's position in the row, and their converters."""
    fields = [f for f in model._meta.concrete_fields if f.column in columns]
    if len(fields) != len(columns):
        raise TypeError(f"rows_select reads only {model._meta.label}'s columns: {columns}")
    converters = [(i, f.from_db_value) for i, f in enumerate(fields) if hasattr(f, "from_db_value")]
    return [f.attname for f in fields], [columns.index(str(f.column)) for f in fields], converters


def row_update(row: Model, *names: str) -> int:
    """UPDATE the named fields of a stored instance (every field but the key when none
    are named, as save() writes them); return how many rows changed (0 or 1).

    save() and QuerySet.update() build and compile their UPDATE anew at every
    call: 720 and 420 µs of CPU here, against ~140 µs for the statement run
    directly. An answer closes its run and marks its conversation twice, so
    the copilot's hot path comes here (like `rows_insert`). Fields get their
    `pre_save` value, as save() gives them (`auto_now` sets now); no signals.
    """
    sql, fields = _update_statement(type(row), names)
    values = [field.get_db_prep_save(field.pre_save(row, False), connection) for field in fields]
    with connection.cursor() as cursor:
        cursor.execute(sql, [*values, row.pk])
        return int(cursor.rowcount)


@cache
def _update_statement(
    model: type[Model], names: tuple[str, ...]
) -> tuple[str, list[Field[Any, Any]]]:
    """The UPDATE of `names` (all concrete fields but the key when empty) by primary key."""
    meta, quote = model._meta, connection.ops.quote_name
    pk = meta.pk
    if names:
        fields = [meta.get_field(name) for name in names]
    else:
        fields = [f for f in meta.local_concrete_fields if f is not pk and not f.generated]
    if meta.parents or pk is None or any(hasattr(f, "get_placeholder") for f in fields):
        raise TypeError(f"row_update cannot write {meta.label}; use save()")
    assignments = ", ".join(f"{quote(str(f.column))} = %s" for f in fields)  # type: ignore[union-attr]
    # Names from the model's own metadata, quoted; every value is a parameter.
    sql = f"UPDATE {quote(meta.db_table)} SET {assignments} WHERE {quote(str(pk.column))} = %s"  # noqa: S608
    return sql, fields  # type: ignore[return-value]


def _columns(fields: Sequence[Field[Any, Any]]) -> str:
    """Quoted column names (a concrete field always has one)."""
    return ", ".join(connection.ops.quote_name(str(field.column)) for field in fields)


# --- declared indexes -------------------------------------------------------------


def declared_indexes(
    models: Iterable[type[Model]] | None = None,
) -> list[tuple[type[Model], Index]]:
    """Every index the models' Meta.indexes declare (all installed models by default)."""
    chosen = apps.get_models() if models is None else models
    return [
        (model, index)
        for model in chosen
        if model._meta.managed and not model._meta.proxy
        for index in model._meta.indexes
    ]


def indexes_in_database() -> dict[str, bool]:
    """Index name -> whether it is valid, in the connection's schema.

    A CREATE INDEX CONCURRENTLY cut short (a crash, a cancel) leaves an
    invalid index behind: present in pg_indexes, never used by a query.
    """
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname, i.indisvalid FROM pg_index i"
            " JOIN pg_class c ON c.oid = i.indexrelid"
            " JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE n.nspname = current_schema()"
        )
        return {str(name): bool(valid) for name, valid in cursor.fetchall()}


def declared_indexes_ensure(models: Iterable[type[Model]] | None = None) -> list[str]:
    """Build every declared index that is missing or invalid; return their names.

    An index can be lost outside migrations: a bulk import that dropped one
    to load faster was killed before rebuilding it, and every search became
    a sequential scan for good. Run at start-up (`manage.py serve`) and after
    each import. CONCURRENTLY when not inside a transaction, so searches keep
    running while it builds. Skipped while migrations are pending: a pending
    migration may be the one that adds (or renames) the index.
    """
    if models is None and pending_migrations():
        logger.warning("migrations are pending; not checking indexes")
        return []
    present = indexes_in_database()
    missing = [(m, i) for m, i in declared_indexes(models) if not present.get(str(i.name))]
    concurrently = not connection.in_atomic_block
    for model, index in missing:
        logger.warning("index %s is missing or invalid; building it", index.name)
        with connection.schema_editor(atomic=False) as editor:
            # What PostgreSQL's add_index(concurrently=...) runs; the stubs lack the argument.
            if index.name in present:  # invalid: drop the leftover first
                editor.execute(index.remove_sql(model, editor, concurrently=concurrently))
            editor.execute(index.create_sql(model, editor, concurrently=concurrently), None)
    return [str(index.name) for _, index in missing]


# hnsw.ef_search each open connection has, when this process knows it; a
# connection not in it has the one its options set (settings.HNSW_EF_SEARCH).
# Keyed by the driver's connection, which the pool hands from thread to thread.
_ef_search_of: weakref.WeakKeyDictionary[Any, int | None] = weakref.WeakKeyDictionary()


def hnsw_ef_search_use(ef_search: int) -> None:
    """Make hnsw.ef_search `ef_search` for the statements this connection runs next.

    Each statement that reads an HNSW index calls it first: a partial index
    (incidents.vector_indexes) needs 200, every other scope the connection's
    500. A SET is one more round trip, sent only when the value changes, so
    searches of one kind in a row pay none. A SET inside a transaction is
    undone by its rollback, so one made there is not remembered (the next
    call sets it again).
    """
    connection.ensure_connection()
    raw = connection.connection
    if _ef_search_of.get(raw, settings.HNSW_EF_SEARCH) == ef_search:
        return
    with connection.cursor() as cursor:
        cursor.execute(f"SET hnsw.ef_search = {int(ef_search):d}")
    _ef_search_of[raw] = None if connection.in_atomic_block else ef_search
