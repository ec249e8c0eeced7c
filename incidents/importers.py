"""Reading and validating import files. No ORM: this is pure parsing.

Files are JSON Lines, a JSON array, or CSV, UTF-8 with or without a BOM.
Every row is validated field by field; a bad row becomes a `RowError` with
its line number, field and reason, and the good rows go on.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from incidents.parsing import date_from_incident_id, normalize_incident_id

FORMATS = ("jsonl", "json", "csv")
_EXTENSIONS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv"}
MAX_ID_LENGTH = 64
_SPACE = re.compile(r"\s*")


class ImportFileError(Exception):
    """The file as a whole cannot be read (not a row problem)."""


@dataclass(frozen=True)
class SourceRow:
    line: int
    data: Any


@dataclass(frozen=True)
class RowError:
    line: int
    field: str
    reason: str

    def __str__(self) -> str:
        where = f"line {self.line}" if self.line else "file"
        return f"{where}: {self.field}: {self.reason}" if self.field else f"{where}: {self.reason}"

    def as_dict(self) -> dict[str, Any]:
        return {"line": self.line, "field": self.field, "reason": self.reason}


@dataclass
class ParsedRow:
    """A valid row: its key (incident_id, doc_id), model fields and extras."""

    line: int
    key: str
    fields: dict[str, Any]
    extra: dict[str, Any] = field(default_factory=dict)


# --- reading files --------------------------------------------------------------


def detect_format(path: Path, requested: str | None = None) -> str:
    if requested:
        if requested not in FORMATS:
            raise ImportFileError(f"unknown format {requested!r}: use one of {', '.join(FORMATS)}")
        return requested
    suffix = path.suffix.lower()
    if suffix not in _EXTENSIONS:
        raise ImportFileError(
            f"unknown file extension {suffix or '(none)'!r} for {path.name}: "
            f"use .jsonl, .json or .csv, or pass --format"
        )
    return _EXTENSIONS[suffix]


def read_rows(path: Path, file_format: str | None = None) -> Iterator[SourceRow]:
    """Yield raw rows with the line each starts on (BOM tolerated)."""
    kind = detect_format(path, file_format)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ImportFileError(f"{path.name} is not UTF-8: {exc}") from exc
    except OSError as exc:
        raise ImportFileError(f"cannot read {path}: {exc.strerror}") from exc
    if not text.strip():
        raise ImportFileError(f"{path.name} is empty")
    readers: dict[str, Callable[[str], Iterator[SourceRow]]] = {
        "jsonl": _jsonl_rows,
        "json": _json_array_rows,
        "csv": _csv_rows,
    }
    return readers[kind](text)


def _jsonl_rows(text: str) -> Iterator[SourceRow]:
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield SourceRow(number, json.loads(line))
        except json.JSONDecodeError as exc:
            yield SourceRow(number, _InvalidJson(f"invalid JSON: {exc.msg} at column {exc.colno}"))


def _json_array_rows(text: str) -> Iterator[SourceRow]:
    """Walk a JSON array element by element so each row keeps its line number.

    Lines are counted from the previous element, not from the top of the file
    each time, so reading stays linear in the file's size.
    """
    decoder = json.JSONDecoder()
    position = _skip_space(text, 0)
    if not text.startswith("[", position):
        raise ImportFileError("a .json file must hold an array of objects")
    position = _skip_space(text, position + 1)
    line, counted_to = 1, 0
    while position < len(text) and text[position] != "]":
        line += text.count("\n", counted_to, position)
        counted_to = position
        try:
            value, position = decoder.raw_decode(text, position)
        except json.JSONDecodeError as exc:
            raise ImportFileError(f"invalid JSON on line {exc.lineno}: {exc.msg}") from exc
        yield SourceRow(line, value)
        position = _skip_space(text, position)
        if text.startswith(",", position):
            position = _skip_space(text, position + 1)


def _skip_space(text: str, position: int) -> int:
    match = _SPACE.match(text, position)
    return match.end() if match else position


def _csv_rows(text: str) -> Iterator[SourceRow]:
    reader = csv.DictReader(text.splitlines(keepends=True))
    if not reader.fieldnames:
        raise ImportFileError("the CSV file has no header row")
    line = reader.line_num + 1
    for record in reader:
        extra_cells = record.pop(None, None)
        if extra_cells:
            yield SourceRow(line, _InvalidJson(f"{len(extra_cells)} more cells than headers"))
        else:
            yield SourceRow(line, record)
        line = reader.line_num + 1


@dataclass(frozen=True)
class _InvalidJson:
    reason: str


# --- field validators -----------------------------------------------------------


class FieldError(ValueError):
    pass


def _type_name(value: Any) -> str:
    names = {
        bool: "a boolean",
        int: "a number",
        float: "a number",
        list: "a list",
        dict: "an object",
    }
    return names.get(type(value), type(value).__name__)


def as_text(value: Any, *, max_length: int | None = None) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise FieldError(f"expected text, got {_type_name(value)}")
    text = value.strip()
    if "\x00" in text:
        raise FieldError("contains a NUL character, which PostgreSQL cannot store")
    if max_length and len(text) > max_length:
        raise FieldError(f"longer than {max_length} characters ({len(text)})")
    return text


def as_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    if value is None or value == "":
        return False
    if isinstance(value, str) and value.strip().lower() in {"true", "yes", "1", "y", "t"}:
        return True
    if isinstance(value, str) and value.strip().lower() in {"false", "no", "0", "n", "f"}:
        return False
    raise FieldError(f"expected true or false, got {value!r}")


def as_date(value: Any) -> dt.date | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        raise FieldError(f"expected a date (YYYY-MM-DD), got {_type_name(value)}")
    text = value.strip()
    try:
        if len(text) == 10:
            return dt.date.fromisoformat(text)
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).date()
    except ValueError as exc:
        raise FieldError(f"not a valid date (YYYY-MM-DD): {text!r}") from exc


def as_string_list(value: Any) -> list[str]:
    """A list of strings; in CSV a JSON list or a `;`/`,`-separated cell."""
    if value is None or value == "":
        return []
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except json.JSONDecodeError as exc:
                raise FieldError(f"not a valid JSON list: {exc.msg}") from exc
        else:
            return [part.strip() for part in re.split(r"[;,]", text) if part.strip()]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise FieldError(f"expected a list of strings, got {_type_name(value)}")
    return [item.strip() for item in value if item.strip()]


def as_url(value: Any) -> str:
    text = as_text(value, max_length=1000)
    if text and urlparse(text).scheme not in {"http", "https"}:
        raise FieldError(f"expected an http(s) URL, got {text!r}")
    return text


# --- incident rows --------------------------------------------------------------

Validator = Callable[[Any], Any]

INCIDENT_FIELDS: dict[str, Validator] = {
    "title": lambda v: as_text(v, max_length=500),
    "impacted_application": lambda v: as_text(v, max_length=300),
    "root_cause": as_text,
    "mitigation": as_text,
    "accountable_party": lambda v: as_text(v, max_length=300),
    "source_system": lambda v: as_text(v, max_length=100),
    "repeat_incident": as_bool,
    "severity": lambda v: as_text(v, max_length=20).upper(),
    "status": lambda v: as_text(v, max_length=50),
    "occurred_at": as_date,
    "category": lambda v: as_text(v, max_length=100),
    "tags": as_string_list,
    "source_url": as_url,
    "body": as_text,
}


def parse_id(value: Any, name: str) -> str:
    """A required, normalised id (unicode dashes and case folded)."""
    text = normalize_incident_id(as_text(value))
    if not text:
        raise FieldError("is required")
    if len(text) > MAX_ID_LENGTH:
        raise FieldError(f"longer than {MAX_ID_LENGTH} characters")
    return text


def validate_fields(
    data: dict[str, Any], validators: dict[str, Validator], line: int
) -> tuple[dict[str, Any], list[RowError]]:
    fields: dict[str, Any] = {}
    errors: list[RowError] = []
    for name, validator in validators.items():
        try:
            fields[name] = validator(data.get(name))
        except FieldError as exc:
            errors.append(RowError(line, name, str(exc)))
    return fields, errors


def check_object(row: SourceRow) -> dict[str, Any]:
    if isinstance(row.data, _InvalidJson):
        raise FieldError(row.data.reason)
    if not isinstance(row.data, dict):
        raise FieldError(f"expected an object, got {_type_name(row.data)}")
    return row.data


def parse_incident(row: SourceRow) -> tuple[ParsedRow | None, list[RowError]]:
    """Validate one incident row against the seed schema."""
    try:
        data = check_object(row)
        key = parse_id(data.get("incident_id"), "incident_id")
    except FieldError as exc:
        field_name = "" if not isinstance(row.data, dict) else "incident_id"
        return None, [RowError(row.line, field_name, str(exc))]
    fields, errors = validate_fields(data, INCIDENT_FIELDS, row.line)
    if not errors and not fields["title"]:
        errors.append(RowError(row.line, "title", "is required"))
    if errors:
        return None, errors
    fields["occurred_at"] = fields["occurred_at"] or date_from_incident_id(key)
    extra = {k: v for k, v in data.items() if k not in INCIDENT_FIELDS and k != "incident_id"}
    return ParsedRow(row.line, key, fields, extra), []
