"""The import engine on real PostgreSQL + pgvector, with real embeddings."""

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from incidents.importers import SourceRow
from incidents.importing import INCIDENT_SPEC, index_drop_pays_off, rows_import
from incidents.models import Dataset, DatasetVersion, Incident, IncidentChunk
from incidents.services import incident_import_file
from tests.factories import DatasetVersionFactory, incident_row

pytestmark = pytest.mark.django_db


def write_jsonl(path: Path, rows: list[object]) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n")
    return path


def corrupted_copy(eval_dir: Path, tmp_path: Path, keep: int = 12) -> tuple[Path, int]:
    """The first `keep` real incidents plus one row of each kind of damage."""
    lines = (eval_dir / "incidents.jsonl").read_text().splitlines()[:keep]
    first = json.loads(lines[0])
    damaged = [
        json.dumps({k: v for k, v in first.items() if k != "incident_id"}),  # missing id
        json.dumps({**first, "incident_id": "INC-2099-01-01-001", "occurred_at": "2099-02-30"}),
        json.dumps({**first, "incident_id": "INC-2099-01-02-001", "repeat_incident": "often"}),
        json.dumps({**first, "incident_id": "INC-2099-01-03-001", "tags": {"a": 1}}),
        lines[1],  # duplicate of a row above
    ]
    path = tmp_path / "corrupted.jsonl"
    path.write_text("\ufeff" + "\n".join(lines + damaged) + "\n", encoding="utf-8")
    return path, keep


def test_a_corrupted_eval_copy_imports_the_good_rows_and_reports_the_bad(
    eval_dir: Path, tmp_path: Path
) -> None:
    path, good = corrupted_copy(eval_dir, tmp_path)
    version, result = incident_import_file(path=path, dataset_name="public", activate=True)
    assert (result.created, result.failed) == (good, 5)
    assert [(e.line, e.field) for e in result.errors] == [
        (good + 1, "incident_id"),
        (good + 2, "occurred_at"),
        (good + 3, "repeat_incident"),
        (good + 4, "tags"),
        (good + 5, "incident_id"),
    ]
    assert "duplicate" in result.errors[-1].reason
    assert version.status == DatasetVersion.Status.READY  # not activated: rows failed
    assert version.incidents.count() == good


def test_unknown_columns_survive_the_round_trip(eval_dir: Path, tmp_path: Path) -> None:
    path = tmp_path / "one.jsonl"
    shutil.copy(eval_dir / "incidents.jsonl", path)
    path.write_text(path.read_text().splitlines()[0] + "\n")
    incident_import_file(path=path, dataset_name="public")
    incident = Incident.objects.get()
    source = json.loads(path.read_text())
    assert incident.extra["company"] == source["company"]
    assert incident.extra["source_collection"] == source["source_collection"]


def test_reimporting_the_same_file_changes_nothing(tmp_path: Path) -> None:
    rows = [incident_row(f"INC-2025-03-0{i}-001") for i in range(1, 4)]
    path = write_jsonl(tmp_path / "a.jsonl", rows)
    incident_import_file(path=path, dataset_name="ops", activate=True)
    before = list(IncidentChunk.objects.values_list("pk", flat=True).order_by("pk"))
    stamps = list(Incident.objects.values_list("updated_at", flat=True).order_by("pk"))

    version, result = incident_import_file(path=path, dataset_name="ops", activate=True)

    assert (result.created, result.updated, result.unchanged) == (0, 0, 3)
    assert list(IncidentChunk.objects.values_list("pk", flat=True).order_by("pk")) == before
    assert list(Incident.objects.values_list("updated_at", flat=True).order_by("pk")) == stamps
    assert DatasetVersion.objects.count() == 1
    assert version.status == DatasetVersion.Status.ACTIVE


def test_a_changed_row_is_updated_and_re_embedded(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "a.jsonl", [incident_row("INC-2025-03-01-001")])
    incident_import_file(path=path, dataset_name="ops")
    old_chunks = set(IncidentChunk.objects.values_list("pk", flat=True))
    write_jsonl(path, [incident_row("INC-2025-03-01-001", root_cause="An expired certificate.")])

    _, result = incident_import_file(path=path, dataset_name="ops")

    assert (result.created, result.updated) == (0, 1)
    assert Incident.objects.get().root_cause == "An expired certificate."
    chunks = IncidentChunk.objects.all()
    assert old_chunks.isdisjoint(c.pk for c in chunks)
    assert "Root cause: An expired certificate." in chunks[0].text


def test_chunks_carry_unit_vectors_and_a_full_text_vector(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "a.jsonl", [incident_row("INC-2025-03-01-001")])
    incident_import_file(path=path, dataset_name="ops")
    chunk = IncidentChunk.objects.order_by("ordinal").first()
    assert chunk is not None
    assert len(chunk.embedding) == 384
    assert sum(x * x for x in chunk.embedding) == pytest.approx(1.0, abs=1e-3)
    assert IncidentChunk.objects.filter(search_vector="exhausted").count() == 1


def test_the_command_exits_non_zero_and_names_each_bad_line(tmp_path: Path, capsys) -> None:
    rows = [incident_row("INC-2025-03-01-001"), incident_row("INC-2025-03-02-001", title="")]
    path = write_jsonl(tmp_path / "a.jsonl", rows)
    with pytest.raises(CommandError, match="1 row"):
        call_command("import_incidents", str(path), "--dataset", "ops", "--verbosity", "0")
    captured = capsys.readouterr()
    assert f"{path}: line 2: title: is required" in captured.err
    assert "created 1, updated 0, unchanged 0, failed 1" in captured.out
    assert Incident.objects.count() == 1


def test_the_command_reports_an_unreadable_file_without_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "a.txt"
    path.write_text("hello")
    with pytest.raises(CommandError, match="unknown file extension"):
        call_command("import_incidents", str(path), "--verbosity", "0")


def test_a_large_import_drops_the_shared_index_only_into_a_smaller_table(settings: Any) -> None:
    """Dropping it makes every version's search a sequential scan, and the rebuild covers
    the whole table: worth it only when the load outweighs what the table holds."""
    settings.IMPORT_REBUILD_INDEX_THRESHOLD = 2
    version = DatasetVersionFactory()
    rows = [SourceRow(n, incident_row(f"INC-2025-01-01-00{n}")) for n in range(1, 4)]
    rows_import(spec=INCIDENT_SPEC, version=version, rows=rows)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE incidents_incidentchunk")  # rolled back with the test
    chunks = IncidentChunk.objects.count()
    assert chunks >= 3

    assert not index_drop_pays_off(spec=INCIDENT_SPEC, rows=1)  # under the threshold
    assert not index_drop_pays_off(spec=INCIDENT_SPEC, rows=chunks)  # the table is as large
    assert index_drop_pays_off(spec=INCIDENT_SPEC, rows=chunks + 1)


def test_a_file_that_breaks_half_way_leaves_no_dataset_behind(tmp_path: Path) -> None:
    """Files are read as a stream, but validated before anything is created."""
    path = tmp_path / "broken.json"
    good = [json.dumps(incident_row(f"INC-2025-01-01-00{n}")) for n in range(1, 4)]
    path.write_text("[\n" + ",\n".join(good) + ',\n{"incident_id": oops}\n]\n')
    with pytest.raises(CommandError, match="invalid JSON on line 5"):
        call_command("import_incidents", str(path), "--dataset", "ops", "--verbosity", "0")
    assert not Dataset.objects.filter(name="ops").exists()


def test_rows_from_a_generator_are_imported_although_the_engine_reads_rows_twice() -> None:
    version = DatasetVersionFactory()
    rows = (SourceRow(n, incident_row(f"INC-2025-01-01-00{n}")) for n in range(1, 4))
    result = rows_import(spec=INCIDENT_SPEC, version=version, rows=rows)
    assert (result.created, result.failed) == (3, 0)
    assert version.incidents.count() == 3
