"""Reading and validating import files (no database)."""

import json
from pathlib import Path

import pytest

from incidents.importers import ARRAY_READ_SIZE, ImportFileError, parse_incident, read_rows
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


# Ids that display as INC-2025-01-01-001 (issue 17): each was a distinct incident.
LOOK_ALIKES = {
    "zero-width space after": "INC-2025-01-01-001\u200b",
    "zero-width joiner inside": "INC-2025\u200d-01-01-001",
    "byte order mark before": "\ufeffINC-2025-01-01-001",
    "fullwidth digits": "INC-\uff12\uff10\uff12\uff15-01-01-001",
    "fullwidth letters": "\uff29\uff2e\uff23-2025-01-01-001",
}


@pytest.mark.parametrize("raw", LOOK_ALIKES.values(), ids=LOOK_ALIKES.keys())
def test_look_alike_ids_are_the_id_they_look_like(tmp_path: Path, raw: str) -> None:
    parsed, errors = parse_file(write_jsonl(tmp_path / "a.jsonl", [incident_row(raw)]))
    assert errors == []
    assert parsed[0].key == "INC-2025-01-01-001"


def test_an_id_with_a_character_outside_its_form_is_a_row_error(tmp_path: Path) -> None:
    rows = [
        incident_row("\u0406NC-2025-01-01-001"),  # a Cyrillic I, which NFKC keeps
        incident_row("INC-2025-01-01-00\u0661"),  # an Arabic-Indic one
        incident_row("CHG-12345"),
        incident_row("INC-2025-01-01-002"),
    ]
    parsed, errors = parse_file(write_jsonl(tmp_path / "a.jsonl", rows))
    assert [row.key for row in parsed] == ["INC-2025-01-01-002"]
    reasons = [(e.line, e.field, e.reason) for e in errors]
    assert reasons == [
        (1, "incident_id", "contains '\u0406' (U+0406 CYRILLIC CAPITAL LETTER "
         "BYELORUSSIAN-UKRAINIAN I); ids look like INC-YYYY-MM-DD-NNN"),
        (2, "incident_id", "contains '\u0661' (U+0661 ARABIC-INDIC DIGIT ONE); "
         "ids look like INC-YYYY-MM-DD-NNN"),
        (3, "incident_id", "is not an incident id: ids look like INC-YYYY-MM-DD-NNN"),
    ]  # fmt: skip


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


def big_array(rows: int, *, pretty: bool) -> tuple[str, list[int]]:
    """A JSON array over a megabyte (more than one read), and the line each element starts on."""
    elements = [
        json.dumps(incident_row(f"INC-2025-05-{n % 28 + 1:02d}-{n:04d}", body="x" * 2000))
        for n in range(rows)
    ]
    if not pretty:
        return "[" + ",".join(elements) + "]", [1] * rows
    return "[\n" + ",\n".join(elements) + "\n]\n", list(range(2, rows + 2))


@pytest.mark.parametrize("pretty", [True, False], ids=["one element a line", "one line"])
def test_a_json_array_larger_than_a_read_is_read_whole_with_its_lines(
    tmp_path: Path, pretty: bool
) -> None:
    text, starts = big_array(600, pretty=pretty)
    path = tmp_path / "big.json"
    path.write_text(text)
    assert path.stat().st_size > 1024 * 1024
    rows = list(read_rows(path))
    assert [row.line for row in rows] == starts
    assert [row.data["incident_id"] for row in rows][-1] == "INC-2025-05-12-0599"


DEEP = '{"incident_id": "INC-2025-06-01-001", "deep": ' + "[" * 100_000 + "]" * 100_000 + "}"
LONG = '{"incident_id": "INC-2025-06-02-001", "n": ' + "9" * 100_000 + "}"


@pytest.mark.parametrize("offset", [-150_000, -60_000, -1, 0, 1])
@pytest.mark.parametrize("hostile", [(DEEP, LONG), (LONG, DEEP)], ids=["deep first", "long first"])
def test_hostile_elements_cut_by_a_read_are_still_row_errors(
    tmp_path: Path, hostile: tuple[str, str], offset: int
) -> None:
    """An element cut by the end of a read is read on, never taken for a shorter value."""
    start = "[" + json.dumps(incident_row("INC-2025-06-09-001", body=""))[:-1] + ', "pad": "'
    pad = "x" * (ARRAY_READ_SIZE + offset - len(start) - len('"},\n'))
    text = (
        start
        + pad
        + '"},\n'
        + ",\n".join([*hostile, json.dumps(incident_row("INC-2025-06-03-001"))])
        + "]"
    )
    assert text.index(hostile[0]) == ARRAY_READ_SIZE + offset
    path = tmp_path / "hostile.json"
    path.write_text(text)
    parsed, errors = parse_file(path)
    assert [row.key for row in parsed] == ["INC-2025-06-09-001", "INC-2025-06-03-001"]
    reasons = {
        DEEP: "invalid JSON: nested too deeply to read",
        LONG: "invalid JSON: a number longer than 4300 digits",
    }
    assert [(e.line, e.reason) for e in errors] == [
        (2, reasons[hostile[0]]),
        (3, reasons[hostile[1]]),
    ]


def test_a_syntax_error_far_into_a_json_array_names_its_line(tmp_path: Path) -> None:
    text, _ = big_array(500, pretty=True)
    path = tmp_path / "broken.json"
    path.write_text(text.rstrip().removesuffix("]").rstrip() + ',\n{"incident_id": oops}\n]\n')
    with pytest.raises(ImportFileError, match="invalid JSON on line 502"):
        list(read_rows(path))


def test_json_lines_split_only_on_newlines(tmp_path: Path) -> None:
    """U+2028 and U+0085 may stand unescaped in a JSON string: they do not end a row."""
    path = tmp_path / "a.jsonl"
    row = incident_row("INC-2025-01-01-001", body="one\u2028two\x85three")
    path.write_text(json.dumps(row, ensure_ascii=False) + "\n" + json.dumps(row) + "\n")
    assert [row.line for row in read_rows(path)] == [1, 2]
    parsed, errors = parse_file(path)
    assert errors == [] and parsed[0].fields["body"] == "one\u2028two\x85three"
