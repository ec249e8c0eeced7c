"""Reading and validating import files (no database)."""

import json
from pathlib import Path

import pytest

from incidents.importers import ImportFileError, parse_incident, read_rows
from tests.factories import incident_row


def write_jsonl(path: Path, rows: list[object], *, bom: bool = False) -> Path:
    text = "\n".join(json.dumps(r) if not isinstance(r, str) else r for r in rows) + "\n"
    path.write_text(("\ufeff" if bom else "") + text, encoding="utf-8")
    return path


def parse_file(path: Path) -> tuple[list, list]:
    parsed, errors = [], []
    for row in read_rows(path):
        result, row_errors = parse_incident(row)
        errors.extend(row_errors)
        if result:
            parsed.append(result)
    return parsed, errors


def test_a_bom_is_tolerated(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "a.jsonl", [incident_row("INC-2025-01-01-001")], bom=True)
    parsed, errors = parse_file(path)
    assert errors == []
    assert parsed[0].key == "INC-2025-01-01-001"


def test_each_bad_row_is_reported_by_line_and_field(tmp_path: Path) -> None:
    rows = [
        incident_row("INC-2025-01-01-001"),
        {k: v for k, v in incident_row("x").items() if k != "incident_id"},
        incident_row("INC-2025-01-03-001", occurred_at="2025-13-45"),
        incident_row("INC-2025-01-04-001", title=42, tags="a;b", repeat_incident="maybe"),
        "{not json",
        "[1, 2]",
    ]
    _, errors = parse_file(write_jsonl(tmp_path / "bad.jsonl", rows))
    found = {(e.line, e.field) for e in errors}
    assert found == {
        (2, "incident_id"),
        (3, "occurred_at"),
        (4, "title"),
        (4, "repeat_incident"),
        (5, ""),
        (6, ""),
    }
    reasons = {(e.line, e.field): e.reason for e in errors}
    assert reasons[(2, "incident_id")] == "is required"
    assert "expected text, got a number" in reasons[(4, "title")]
    assert reasons[(5, "")].startswith("invalid JSON")
    assert reasons[(6, "")] == "expected an object, got a list"


def test_unicode_hyphens_in_ids_are_normalised(tmp_path: Path) -> None:
    path = write_jsonl(
        tmp_path / "a.jsonl", [incident_row("inc\u20112025\u201101\u201101\u2011001")]
    )
    parsed, _ = parse_file(path)
    assert parsed[0].key == "INC-2025-01-01-001"


def test_unknown_columns_are_kept_in_extra(tmp_path: Path) -> None:
    row = incident_row("INC-2025-01-01-001", company="Acme", date_precision="day")
    parsed, _ = parse_file(write_jsonl(tmp_path / "a.jsonl", [row]))
    assert parsed[0].extra == {"company": "Acme", "date_precision": "day"}


def test_occurred_at_falls_back_to_the_date_in_the_id(tmp_path: Path) -> None:
    row = incident_row("INC-2024-02-29-001", occurred_at="")
    parsed, _ = parse_file(write_jsonl(tmp_path / "a.jsonl", [row]))
    assert str(parsed[0].fields["occurred_at"]) == "2024-02-29"


def test_an_empty_file_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("\ufeff\n  \n")
    with pytest.raises(ImportFileError, match="is empty"):
        list(read_rows(path))


def test_an_unknown_extension_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "incidents.xml"
    path.write_text("<incidents/>")
    with pytest.raises(ImportFileError, match=r"unknown file extension '\.xml'"):
        list(read_rows(path))


def test_csv_with_the_seed_headers_reads_lists_and_booleans(tmp_path: Path) -> None:
    path = tmp_path / "a.csv"
    path.write_text(
        "\ufeffincident_id,title,repeat_incident,tags,occurred_at,owner\n"
        "INC-2025-01-01-001,Disk full,true,disk;logs,2025-01-01,ops\n"
        "INC-2025-01-02-001,,no,,2025-01-02,ops\n",
        encoding="utf-8",
    )
    parsed, errors = parse_file(path)
    assert parsed[0].fields["repeat_incident"] is True
    assert parsed[0].fields["tags"] == ["disk", "logs"]
    assert parsed[0].extra == {"owner": "ops"}
    assert [(e.line, e.field, e.reason) for e in errors] == [(3, "title", "is required")]


def test_json_arrays_keep_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "a.json"
    rows = [incident_row("INC-2025-01-01-001"), incident_row("INC-2025-01-02-001", title="")]
    path.write_text(json.dumps(rows, indent=2))
    _, errors = parse_file(path)
    second_line = path.read_text().splitlines().index("  {", 2) + 1
    assert [(e.line, e.field) for e in errors] == [(second_line, "title")]


def test_every_row_of_a_long_json_array_keeps_the_line_it_starts_on(tmp_path: Path) -> None:
    """Counted from the previous row, not the top of the file (that was quadratic)."""
    elements = [
        json.dumps(incident_row(f"INC-2025-04-{n % 28 + 1:02d}-{n:03d}"), indent=n % 3)
        for n in range(200)
    ]
    starts, line = [], 3  # "[" and a blank line come first
    for element in elements:
        starts.append(line)
        line += element.count("\n") + 2  # the element, then a blank line after its comma
    path = tmp_path / "long.json"
    path.write_text("[\n\n" + ",\n\n".join(elements) + "\n]\n")
    assert [row.line for row in read_rows(path)] == starts
    assert [row.data["incident_id"] for row in read_rows(path)][-1] == "INC-2025-04-04-199"


def test_nul_characters_are_rejected_before_they_reach_postgres(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "a.jsonl", [incident_row("INC-2025-01-01-001", body="a\x00b")])
    _, errors = parse_file(path)
    assert [(e.field, e.reason) for e in errors] == [
        ("body", "contains a NUL character, which PostgreSQL cannot store")
    ]
