"""Rows built to break the importer are that row's error; the good rows still land.

JSON nested 100k deep, a 100k-digit number and a NUL byte in an extra column
each used to raise out of the import, leave the version `building` and lose
every good row (issue 17).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from incidents.importers import read_rows
from incidents.models import DatasetVersion, ImportJob
from incidents.services import import_job_create, import_job_run_now, incident_import_file
from knowledge.services import knowledge_import_file
from tests.factories import DatasetFactory, incident_row

pytestmark = pytest.mark.django_db

DEEP = "[" * 100_000 + "]" * 100_000
HUGE_NUMBER = "9" * 100_000


def hostile_lines() -> list[str]:
    """Line 1 and 5 are good; 2, 3 and 4 are hostile."""
    return [
        json.dumps(incident_row("INC-2025-03-01-001")),
        '{"incident_id": "INC-2025-03-02-001", "title": "deep", "deep": ' + DEEP + "}",
        '{"incident_id": "INC-2025-03-03-001", "title": "long", "n": ' + HUGE_NUMBER + "}",
        json.dumps(incident_row("INC-2025-03-04-001", note="before\x00after")),
        json.dumps(incident_row("INC-2025-03-05-001")),
    ]


def hostile_jsonl(tmp_path: Path) -> Path:
    path = tmp_path / "hostile.jsonl"
    path.write_text("\n".join(hostile_lines()) + "\n")
    return path


def assert_good_rows_imported(version: DatasetVersion, errors: list[tuple[int, str]]) -> None:
    version.refresh_from_db()
    assert version.status == DatasetVersion.Status.READY
    assert sorted(version.incidents.values_list("incident_id", flat=True)) == [
        "INC-2025-03-01-001",
        "INC-2025-03-05-001",
    ]
    assert errors == [
        (2, "invalid JSON: nested too deeply to read"),
        (3, "invalid JSON: a number longer than 4300 digits"),
        (4, "note: contains a NUL character, which PostgreSQL cannot store"),
    ]


def test_hostile_json_lines_are_row_errors(tmp_path: Path) -> None:
    version, result = incident_import_file(path=hostile_jsonl(tmp_path), dataset_name="ops")
    assert (result.created, result.failed) == (2, 3)
    errors = [(e.line, f"{e.field}: {e.reason}" if e.field else e.reason) for e in result.errors]
    assert_good_rows_imported(version, errors)


def test_hostile_elements_of_a_json_array_are_row_errors_with_their_lines(
    tmp_path: Path,
) -> None:
    # One element a line, as the JSONL file, so the expected lines are the same.
    path = tmp_path / "hostile.json"
    path.write_text("[" + ",\n".join(hostile_lines()) + "]\n")
    version, result = incident_import_file(path=path, dataset_name="ops")
    assert (result.created, result.failed) == (2, 3)
    errors = [(e.line, f"{e.field}: {e.reason}" if e.field else e.reason) for e in result.errors]
    assert_good_rows_imported(version, errors)


def test_a_multi_line_json_array_reports_the_line_each_row_starts_on(tmp_path: Path) -> None:
    rows = [incident_row(f"INC-2025-04-{day:02d}-001") for day in range(1, 31)]
    rows[7]["occurred_at"] = "2025-02-30"
    rows[22]["repeat_incident"] = "often"
    elements = [json.dumps(row, indent=2) for row in rows]
    starts, line = [], 2  # the array opens on line 1, the first element on line 2
    for element in elements:
        starts.append(line)
        line += element.count("\n") + 1
    path = tmp_path / "pretty.json"
    path.write_text("[\n" + ",\n".join(elements) + "\n]\n")
    assert [row.line for row in read_rows(path)] == starts
    _, result = incident_import_file(path=path, dataset_name="ops")
    assert [(e.line, e.field) for e in result.errors] == [
        (starts[7], "occurred_at"),
        (starts[22], "repeat_incident"),
    ]


def test_hostile_csv_cells_are_row_errors(tmp_path: Path) -> None:
    cells = [
        ("INC-2025-03-01-001", "good", "database", "fine"),
        ("INC-2025-03-02-001", "deep tags", "[" * 50_000 + "]" * 50_000, ""),
        ("INC-2025-03-03-001", "huge cell", "", "x" * 200_000),  # over csv.field_size_limit()
        ("INC-2025-03-04-001", "nul", "", "before\x00after"),
        ("INC-2025-03-05-001", "good", "database", "fine"),
    ]
    path = tmp_path / "hostile.csv"
    path.write_text("incident_id,title,tags,note\n" + "".join(",".join(c) + "\n" for c in cells))
    version, result = incident_import_file(path=path, dataset_name="ops")
    assert (result.created, result.failed) == (2, 3)
    assert [(e.line, e.field) for e in result.errors] == [(3, "tags"), (4, ""), (5, "note")]
    assert "nested too deeply" in result.errors[0].reason
    assert "field larger than field limit" in result.errors[1].reason
    version.refresh_from_db()
    assert version.status == DatasetVersion.Status.READY


def test_the_command_reports_each_hostile_row_and_imports_the_rest(tmp_path: Path) -> None:
    out, err = io.StringIO(), io.StringIO()
    path = hostile_jsonl(tmp_path)
    with pytest.raises(CommandError, match="3 row"):
        call_command("import_incidents", str(path), "--dataset", "ops", stdout=out, stderr=err)
    assert f"{path}: line 2: invalid JSON: nested too deeply" in err.getvalue()
    assert f"{path}: line 3: invalid JSON: a number longer" in err.getvalue()
    assert f"{path}: line 4: note: contains a NUL" in err.getvalue()
    assert "created 2" in out.getvalue() and "ops v1 is ready" in out.getvalue()


def test_an_import_job_with_hostile_rows_ends_partially_imported(tmp_path: Path) -> None:
    """The same service the Celery task calls (tests/test_celery.py runs a real worker)."""
    upload = hostile_jsonl(tmp_path).read_bytes()
    job = import_job_create(
        dataset=DatasetFactory(),
        label="hostile",
        uploaded_file=SimpleUploadedFile("hostile.jsonl", upload),
        activate=True,
    )
    try:
        job = import_job_run_now(job=ImportJob.objects.get(pk=job.pk))
        job.refresh_from_db()
        assert (job.status, job.created, job.rows_failed) == ("partial", 2, 3)
        assert [error["line"] for error in job.errors] == [2, 3, 4]
        assert job.version.status == DatasetVersion.Status.READY  # not activated: rows failed
    finally:
        job.file.delete(save=False)


def test_a_row_the_database_refuses_is_that_rows_error_even_in_an_active_version(
    tmp_path: Path,
) -> None:
    """Validation cannot foresee everything: a YAML date in front matter is not JSON."""
    folder = tmp_path / "runbooks"
    folder.mkdir()
    (folder / "KB-RB-001.md").write_text("---\ntitle: Good\ntype: runbook\n---\nRestart it.\n")
    version, _ = knowledge_import_file(path=folder, dataset_name="kb", activate=True)
    (folder / "KB-RB-002.md").write_text(
        "---\ntitle: Dated\ntype: runbook\nreviewed: 2024-01-01\n---\nCheck it.\n"
    )
    (folder / "KB-RB-003.md").write_text("---\ntitle: Also good\ntype: runbook\n---\nFix it.\n")
    version, result = knowledge_import_file(path=folder, dataset_name="kb")
    assert version.status == DatasetVersion.Status.ACTIVE
    assert (result.created, result.unchanged, result.failed) == (1, 1, 1)
    assert result.errors[0].line == 2 and "cannot be stored: TypeError" in result.errors[0].reason
    assert sorted(version.knowledge_documents.values_list("doc_id", flat=True)) == [
        "KB-RB-001",
        "KB-RB-003",
    ]
