"""Demo data and the demo login that `make run` sets up once."""

from __future__ import annotations

import datetime as dt
import secrets
from dataclasses import dataclass
from pathlib import Path

from django.contrib.auth import get_user_model
from django.utils import timezone

from copilot.services import golden_examples_import_file
from incidentdesk.embedded import var_dir
from incidents.importing import ImportResult
from incidents.models import Dataset, DatasetVersion
from incidents.services import incident_import_file
from knowledge.services import knowledge_import_file, knowledge_validation_dates_shift

DEMO_DIR = Path(__file__).resolve().parent / "demo_data"
DEMO_INCIDENTS = "demo-incidents"
DEMO_KNOWLEDGE = "demo-knowledge"
DEMO_USERNAME = "demo"


@dataclass(frozen=True)
class DemoLogin:
    username: str
    password: str


def demo_is_loaded() -> bool:
    return (
        DatasetVersion.objects.filter(
            dataset__name__in=[DEMO_INCIDENTS, DEMO_KNOWLEDGE], status=DatasetVersion.Status.ACTIVE
        ).count()
        == 2
    )


def demo_load() -> list[str]:
    """Import the demo incidents, documents and golden examples; return a report."""
    _, incidents = incident_import_file(
        path=DEMO_DIR / "incidents.jsonl", dataset_name=DEMO_INCIDENTS, activate=True
    )
    documents = demo_knowledge_load(today=timezone.localdate())
    golden = golden_examples_import_file(path=DEMO_DIR / "golden_examples.jsonl")
    Dataset.objects.filter(name__in=[DEMO_INCIDENTS, DEMO_KNOWLEDGE]).update(
        description="Fictional demo data written for IncidentDesk."
    )
    return [
        f"incidents: {incidents.summary()}",
        f"knowledge: {documents.summary()}",
        f"golden examples: created {golden.created}, unchanged {golden.unchanged}",
    ]


def demo_knowledge_load(*, today: dt.date) -> ImportResult:
    """The demo documents, their validation dates moved so the latest is `today`
    (see knowledge_validation_dates_shift): most fresh, a few stale on purpose."""
    knowledge, documents = knowledge_import_file(
        path=DEMO_DIR / "knowledge.jsonl", dataset_name=DEMO_KNOWLEDGE, activate=True
    )
    knowledge_validation_dates_shift(version=knowledge, latest_on=today)
    return documents


def demo_login_ensure() -> DemoLogin:
    """A staff login for the demo; its password is generated once into var/."""
    password_file = var_dir() / "demo_password"
    if not password_file.exists():
        password_file.write_text(secrets.token_urlsafe(12))
        password_file.chmod(0o600)
    password = password_file.read_text().strip()
    user_model = get_user_model()
    user = user_model.objects.filter(username=DEMO_USERNAME).first()
    if user is None:
        user = user_model(username=DEMO_USERNAME, email="demo@example.com")
    user.is_staff = user.is_superuser = True  # the demo shows the admin too
    user.set_password(password)
    user.save()
    return DemoLogin(DEMO_USERNAME, password)
