"""Reading and validating import files. No ORM: this is pure parsing.

Files are JSON Lines, a JSON array, or CSV, UTF-8 with or without a BOM.
Every row is validated field by field; a bad row becomes a `RowError` with
its line number, field and reason, and the good rows go on.
"""

from __future__ import annotations

import csv
import datetime as dt
import json
import math
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import urlparse

from incidents.parsing import date_from_incident_id, incident_id_problem, normalize_incident_id

FORMATS = ("jsonl", "json", "csv")
_EXTENSIONS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv"}
MAX_ID_LENGTH = 64
# Deeper extra columns are refused: PostgreSQL's jsonb and Python's own parser both
# recurse per level, and no export nests anywhere near this deep.
MAX_EXTRA_DEPTH = 64
# What PostgreSQL cannot store in text or jsonb: NUL, and lone UTF-16 surrogates
# (json.loads accepts "\ud800", UTF-8 has no encoding for it).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_SPACE = re.compile(r"\s*")
ARRAY_READ_SIZE = 1 << 20  # characters read at a time from a JSON array
_DECODER = json.JSONDecoder()


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


def read_rows(path: Path, file_format: str | None = None) -> RowFile:
    """The file's raw rows, each with the line it starts on (BOM tolerated).

    The file is read as it is iterated, in bounded memory, and afresh each
    time: the import engine reads it twice (validate, then write) rather
    than hold every row.
    """
    return RowFile(path, detect_format(path, file_format))


@dataclass(frozen=True)
class RowFile:
    """An import file's rows, read lazily; iterate it as often as needed."""

    path: Path
    kind: str

    def __iter__(self) -> Iterator[SourceRow]:
        readers: dict[str, Callable[[TextIO], Iterator[SourceRow]]] = {
            "jsonl": _jsonl_rows,
            "json": _json_array_rows,
            "csv": _csv_rows,
        }
        name = self.path.name
        try:
            if _is_blank(self.path):
                raise ImportFileError(f"{name} is empty")
            # newline="": the csv module handles line ends inside quoted cells itself.
            newline = "" if self.kind == "csv" else None
            with self.path.open(encoding="utf-8-sig", newline=newline) as handle:
                yield from readers[self.kind](handle)
        except UnicodeDecodeError as exc:
            raise ImportFileError(f"{name} is not UTF-8: {exc}") from exc
        except OSError as exc:
            raise ImportFileError(f"cannot read {self.path}: {exc.strerror}") from exc


def _is_blank(path: Path) -> bool:
    """Whether the file holds only whitespace (read up to its first other character)."""
    with path.open(encoding="utf-8-sig") as handle:
        while chunk := handle.read(ARRAY_READ_SIZE):
            if chunk.strip():
                return False
    return True


def _jsonl_rows(handle: TextIO) -> Iterator[SourceRow]:
    for number, line in enumerate(handle, start=1):
        if not line.strip():
            continue
        try:
            yield SourceRow(number, json.loads(line))
        except (RecursionError, ValueError) as exc:  # ValueError includes JSONDecodeError
            yield SourceRow(number, _InvalidJson(_unreadable(exc)))


def _unreadable(exc: Exception) -> str:
    """Why a JSON value could not be read, for the row's error."""
    if isinstance(exc, json.JSONDecodeError):
        return f"invalid JSON: {exc.msg} at column {exc.colno}"
    if isinstance(exc, RecursionError):
        return "invalid JSON: nested too deeply to read"
    if "digits" in str(exc):  # int(): sys.set_int_max_str_digits' limit
        return f"invalid JSON: a number longer than {sys.get_int_max_str_digits()} digits"
    return f"invalid JSON: {exc}"


def _json_array_rows(handle: TextIO) -> Iterator[SourceRow]:
    """Walk a JSON array element by element so each row keeps its line number.

    The text is read in chunks (`_ArrayText`), so a file of any size, on one
    line or many, is read in linear time and bounded memory. An element that
    is valid JSON but cannot be read (nested too deep, a number too long) is
    that row's error; a syntax error ends the file, as nothing after it can be
    trusted.
    """
    text = _ArrayText(handle)
    if text.next_char() != "[":
        raise ImportFileError("a .json file must hold an array of objects")
    text.position += 1
    while text.next_char() not in ("]", ""):
        line = text.line()
        yield SourceRow(line, text.decode())
        if text.next_char() == ",":
            text.position += 1


class _ArrayText:
    """The unread part of a JSON array's text, topped up a chunk at a time.

    Lines are counted from the previous element, never from the top of the
    file, and a chunk read for an element that does not fit is at least as
    large as what is buffered, so even a huge element is read in linear time.
    """

    def __init__(self, handle: TextIO) -> None:
        self.handle = handle
        self.text = ""
        self.position = 0
        self.counted_to = 0  # self.lines counts the newlines before this offset
        self.lines = 1
        self.at_end = False

    def more(self) -> None:
        """Drop what was read, append the next chunk (or note the end)."""
        self.line()
        chunk = self.handle.read(max(ARRAY_READ_SIZE, len(self.text) - self.position))
        self.text = self.text[self.position :] + chunk
        self.position = self.counted_to = 0
        self.at_end = not chunk

    def line(self) -> int:
        """The line the reading position is on."""
        self.lines += self.text.count("\n", self.counted_to, self.position)
        self.counted_to = self.position
        return self.lines

    def next_char(self) -> str:
        """Skip whitespace; the character there, or "" at the end of the file."""
        while True:
            self.position = _skip_space(self.text, self.position)
            if self.position < len(self.text) or self.at_end:
                return self.text[self.position : self.position + 1]
            self.more()

    def decode(self) -> Any:
        """The value at the reading position (or why it cannot be read); moves past it."""
        while True:
            value, end = self._decode_buffered()
            # A value that ends the buffer may be cut short (a number): read on to be sure.
            if end is not None and (end < len(self.text) or self.at_end):
                self.position = end
                return value
            self.more()

    def _decode_buffered(self) -> tuple[Any, int | None]:
        """The value and where it ends, or (None, None) when it may go on past the buffer."""
        try:
            return _DECODER.raw_decode(self.text, self.position)
        except json.JSONDecodeError as exc:
            if not self.at_end:
                return None, None  # perhaps only cut short by the chunk's end
            line = self.lines + self.text.count("\n", self.counted_to, exc.pos)
            raise ImportFileError(f"invalid JSON on line {line}: {exc.msg}") from exc
        except (RecursionError, ValueError) as exc:
            end = _value_end(self.text, self.position)
            if end is None and self.at_end:
                raise ImportFileError("invalid JSON: the array is not closed") from exc
            return _InvalidJson(_unreadable(exc)), end


def _skip_space(text: str, position: int) -> int:
    match = _SPACE.match(text, position)
    return match.end() if match else position


# A string (escapes included), or one bracket: enough to find where a value ends.
_JSON_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
_SCALAR_END = re.compile(r"[\s,\]]")


def _value_end(text: str, position: int) -> int | None:
    """Where the JSON value at `position` ends, without parsing it (no recursion);
    None if it does not end within `text`."""
    if text[position] not in "[{":
        end = _SCALAR_END.search(text, position)
        return end.start() if end else None
    depth = 0
    for match in _JSON_TOKEN.finditer(text, position):
        token = match.group()
        if token in ("[", "{"):
            depth += 1
        elif token in ("]", "}"):
            depth -= 1
            if depth == 0:
                return match.end()
    return None


def _csv_rows(handle: TextIO) -> Iterator[SourceRow]:
    """Rows with the line each starts on; a row the csv module refuses is that row's error."""
    started: list[int] = []  # numbers of the non-blank lines read for the current record

    def lines() -> Iterator[str]:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                started.append(number)
            yield line

    reader = csv.DictReader(lines())
    if not reader.fieldnames:
        raise ImportFileError("the CSV file has no header row")
    while True:
        started.clear()
        try:
            record = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:  # e.g. a cell over csv.field_size_limit(): that row only
            yield SourceRow(started[0] if started else 0, _InvalidJson(f"invalid CSV: {exc}"))
            continue
        extra_cells = record.pop(None, None)
        if extra_cells:
            yield SourceRow(started[0], _InvalidJson(f"{len(extra_cells)} more cells than headers"))
        else:
            yield SourceRow(started[0], record)


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
    _check_storable(text)
    if max_length and len(text) > max_length:
        raise FieldError(f"longer than {max_length} characters ({len(text)})")
    return text


def _check_storable(text: str) -> None:
    found = _UNSTORABLE.search(text)
    if found is None:
        return
    if found.group() == "\x00":
        raise FieldError("contains a NUL character, which PostgreSQL cannot store")
    raise FieldError("contains a lone UTF-16 surrogate, which is not valid Unicode")


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
            except (RecursionError, ValueError) as exc:
                raise FieldError(f"not a valid JSON list: {_unreadable(exc)}") from exc
        else:
            return [part.strip() for part in re.split(r"[;,]", text) if part.strip()]
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise FieldError(f"expected a list of strings, got {_type_name(value)}")
    return [as_text(item) for item in value if item.strip()]


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


def check_extra(extra: dict[str, Any], line: int) -> list[RowError]:
    """Columns kept in `extra` must fit jsonb: storable text, finite numbers, bounded depth."""
    errors = []
    for name, value in extra.items():
        try:
            _check_storable(name)
            _check_json_value(value)
        except FieldError as exc:
            errors.append(RowError(line, printable(name), str(exc)))
    return errors


def _check_json_value(value: Any) -> None:
    """Walk the value with a stack, not recursion: it may be nested on purpose."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > MAX_EXTRA_DEPTH:
            raise FieldError(f"nested more than {MAX_EXTRA_DEPTH} levels deep")
        if isinstance(item, str):
            _check_storable(item)
        elif isinstance(item, float) and not math.isfinite(item):
            raise FieldError(f"{item} is not a number JSON can store")
        elif isinstance(item, dict):
            for key, child in item.items():
                _check_storable(str(key))
                stack.append((child, depth + 1))
        elif isinstance(item, list):
            stack.extend((child, depth + 1) for child in item)


def printable(text: str) -> str:
    """Text safe to show and to store in a job's errors (jsonb), escaped if it is not."""
    return text if _UNSTORABLE.search(text) is None else repr(text)[1:-1]


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
        if problem := incident_id_problem(key):  # what NFKC could not fold (a Cyrillic I)
            raise FieldError(problem)
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
    errors = check_extra(extra, row.line)
    if errors:
        return None, errors
    return ParsedRow(row.line, key, fields, extra), []
