"""Version activation, rollback and the active version's safety."""

from dataclasses import replace
from pathlib import Path

import pytest
from django.db import IntegrityError, transaction

from incidentdesk.errors import IncidentDeskError
from incidents.importers import SourceRow
from incidents.importing import INCIDENT_SPEC, rows_import
from incidents.models import DatasetVersion, Incident
from incidents.services import (
    dataset_version_activate,
    dataset_version_rollback,
)
from tests.factories import DatasetFactory, DatasetVersionFactory, incident_row, incidents_import

pytestmark = pytest.mark.django_db


def test_activation_archives_the_previous_active_version() -> None:
    dataset = DatasetFactory()
    first = dataset_version_activate(version=DatasetVersionFactory(dataset=dataset))
    second = dataset_version_activate(version=DatasetVersionFactory(dataset=dataset))
    first.refresh_from_db()
    assert (first.status, second.status) == ("archived", "active")
    assert second.activated_at is not None


def test_the_database_refuses_two_active_versions() -> None:
    dataset = DatasetFactory()
    DatasetVersionFactory(dataset=dataset, status="active")
    with pytest.raises(IntegrityError), transaction.atomic():
        DatasetVersionFactory(dataset=dataset, status="active")


def test_a_building_version_can_never_be_activated() -> None:
    version = DatasetVersionFactory(status="building")
    with pytest.raises(IncidentDeskError, match="still building"):
        dataset_version_activate(version=version)
    version.refresh_from_db()
    assert version.status == "building"


def test_rollback_reactivates_the_previously_active_version() -> None:
    dataset = DatasetFactory()
    first = dataset_version_activate(version=DatasetVersionFactory(dataset=dataset))
    second = dataset_version_activate(version=DatasetVersionFactory(dataset=dataset))
    restored = dataset_version_rollback(dataset=dataset)
    second.refresh_from_db()
    assert restored.pk == first.pk
    assert (restored.status, second.status) == ("active", "archived")


def test_rollback_without_history_says_so() -> None:
    with pytest.raises(IncidentDeskError, match="no earlier version"):
        dataset_version_rollback(dataset=DatasetFactory())


class ExplodingSpec:
    """The incident spec, except chunking fails on one row (a crash mid-import)."""

    @staticmethod
    def chunk_texts(fields: dict) -> list[str]:
        if fields["title"] == "boom":
            raise RuntimeError("worker killed")
        return INCIDENT_SPEC.chunk_texts(fields)


def rows(count: int, *, boom_at: int) -> list[SourceRow]:
    return [
        SourceRow(
            i, incident_row(f"INC-2025-01-01-{i:03d}", title="boom" if i == boom_at else f"t{i}")
        )
        for i in range(1, count + 1)
    ]


def exploding_spec():
    return replace(INCIDENT_SPEC, chunk_texts=ExplodingSpec.chunk_texts)


def test_a_crash_in_a_new_version_leaves_the_active_one_untouched(tmp_path: Path) -> None:
    active = incidents_import(
        tmp_path / "a.jsonl", [incident_row("INC-2024-12-31-001")], activate=True
    )
    building = DatasetVersionFactory(dataset=active.dataset, status="ready")

    with pytest.raises(RuntimeError, match="worker killed"):
        rows_import(spec=exploding_spec(), version=building, rows=rows(150, boom_at=140))

    active.refresh_from_db()
    building.refresh_from_db()
    assert active.status == DatasetVersion.Status.ACTIVE
    assert list(active.incidents.values_list("incident_id", flat=True)) == ["INC-2024-12-31-001"]
    assert building.status == DatasetVersion.Status.FAILED  # stated, not left `building`
    assert 0 < building.incidents.count() < 149  # earlier batches committed, not all
    with pytest.raises(IncidentDeskError, match="had its import stopped"):
        dataset_version_activate(version=building)
    rows_import(spec=INCIDENT_SPEC, version=building, rows=rows(150, boom_at=0))
    building.refresh_from_db()
    assert (building.status, building.incidents.count()) == ("ready", 150)  # a re-run resumes


def test_a_crash_while_importing_into_the_active_version_rolls_back_everything(
    tmp_path: Path,
) -> None:
    active = incidents_import(
        tmp_path / "a.jsonl", [incident_row("INC-2024-12-31-001")], activate=True
    )

    with pytest.raises(RuntimeError):
        rows_import(spec=exploding_spec(), version=active, rows=rows(150, boom_at=140))

    assert Incident.objects.filter(version=active).count() == 1
    active.refresh_from_db()
    assert (active.status, active.row_count) == ("active", 1)
