"""Reading knowledge documents: JSON Lines rows or markdown files with front matter.

No ORM here; validation mirrors `incidents.importers`.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from incidents.importers import (
    FieldError,
    ImportFileError,
    ParsedRow,
    RowError,
    SourceRow,
    Validator,
    as_string_list,
    as_text,
    as_url,
    check_extra,
    check_object,
    parse_id,
    validate_fields,
)
from incidents.parsing import normalize_incident_id

DOCUMENT_TYPES = ("runbook", "postmortem", "architecture", "known_issue")


def as_document_type(value: Any) -> str:
    text = as_text(value).lower().replace("-", "_").replace(" ", "_")
    if text not in DOCUMENT_TYPES:
        raise FieldError(f"must be one of {', '.join(DOCUMENT_TYPES)}, got {value!r}")
    return text


def as_timestamp(value: Any) -> dt.datetime | None:
    if value is None or value == "":
        return None
    if isinstance(value, dt.datetime):
        parsed = value
    elif isinstance(value, dt.date):
        parsed = dt.datetime.combine(value, dt.time())
    elif isinstance(value, str):
        try:
            parsed = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
        except ValueError as exc:
            raise FieldError(f"not a valid date or timestamp: {value!r}") from exc
    else:
        raise FieldError(f"expected a date, got {type(value).__name__}")
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


DOCUMENT_FIELDS: dict[str, Validator] = {
    "title": lambda v: as_text(v, max_length=500),
    "type": as_document_type,
    "services": as_string_list,
    "tags": as_string_list,
    "related_incidents": lambda v: [normalize_incident_id(i) for i in as_string_list(v)],
    "path": lambda v: as_text(v, max_length=500),
    "source_url": as_url,
    "body": as_text,
    "last_validated_at": as_timestamp,
}


def parse_document(row: SourceRow) -> tuple[ParsedRow | None, list[RowError]]:
    """Validate one knowledge document row."""
    try:
        data = check_object(row)
        if data.get("_error"):
            return None, [RowError(row.line, "", str(data["_error"]))]
        key = parse_id(data.get("doc_id"), "doc_id")
    except FieldError as exc:
        field_name = "doc_id" if isinstance(row.data, dict) else ""
        return None, [RowError(row.line, field_name, str(exc))]
    fields, errors = validate_fields(data, DOCUMENT_FIELDS, row.line)
    for required in ("title", "body"):
        if not errors and not fields[required]:
            errors.append(RowError(row.line, required, "is required"))
    if errors:
        return None, errors
    extra = {k: v for k, v in data.items() if k not in DOCUMENT_FIELDS and k != "doc_id"}
    errors = check_extra(extra, row.line)
    if errors:
        return None, errors
    return ParsedRow(row.line, key, fields, extra), []


def read_markdown_folder(folder: Path) -> Iterator[SourceRow]:
    """One row per `*.md` file: YAML front matter plus the body.

    `doc_id` defaults to the file name and `path` to the path inside the
    folder, so a plain folder of runbooks imports as it is.
    """
    files = sorted(folder.rglob("*.md"))
    if not files:
        raise ImportFileError(f"no .md files in {folder}")
    for number, file in enumerate(files, start=1):
        relative = str(file.relative_to(folder))
        try:
            meta, body = split_front_matter(file.read_text(encoding="utf-8-sig"))
        except (ValueError, UnicodeDecodeError) as exc:
            yield SourceRow(number, {"doc_id": file.stem, "_error": f"{relative}: {exc}"})
            continue
        yield SourceRow(number, {"doc_id": file.stem, "path": relative, **meta, "body": body})


def split_front_matter(text: str) -> tuple[dict[str, Any], str]:
    if not text.startswith("---"):
        return {}, text
    _, _, rest = text.partition("\n")
    front, separator, body = rest.partition("\n---")
    if not separator:
        raise ValueError("front matter starts with --- but never ends")
    try:
        meta = yaml.safe_load(front) or {}
    except yaml.YAMLError as exc:
        raise ValueError(f"front matter is not valid YAML: {exc}") from exc
    if not isinstance(meta, dict):
        raise ValueError("front matter must be a mapping of keys to values")
    return meta, body.partition("\n")[2].strip()
