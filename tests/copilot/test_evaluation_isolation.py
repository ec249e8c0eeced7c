"""`manage.py evaluate` works in its own datasets and user only: every other row stays."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.db import connection
from django.db.models import Model, Q

from copilot.evaluation import EVAL_USERNAME
from copilot.models import Ticket
from copilot.services import conversation_create
from incidents.models import Dataset, DatasetVersion, Incident, IncidentChunk
from knowledge.models import KnowledgeChunk, KnowledgeDocument
from tests.factories import DatasetVersionFactory, IncidentFactory

pytestmark = [pytest.mark.django_db, pytest.mark.eval]

EVAL = "evaluation-"
# The rows the evaluation may own; any other row of any table must not change.
EVALUATION_ROWS: list[tuple[type[Model], Q]] = [
    (Dataset, Q(name__startswith=EVAL)),
    (DatasetVersion, Q(dataset__name__startswith=EVAL)),
    (Incident, Q(version__dataset__name__startswith=EVAL)),
    (IncidentChunk, Q(version__dataset__name__startswith=EVAL)),
    (KnowledgeDocument, Q(version__dataset__name__startswith=EVAL)),
    (KnowledgeChunk, Q(version__dataset__name__startswith=EVAL)),
    (User, Q(username=EVAL_USERNAME)),
]
# A multi-turn question whose first turn reads as a report, so intake runs (and
# once wrote to the live "reported" dataset, and filed a ticket).
REPORT_TURNS = {
    "qid": "ISO-1",
    "kind": "multi_turn",
    "query": [
        "Checkout Gateway is returning 502 errors right now since the deploy, please file a ticket",
        "yes, file it",
    ],
    "expected_tool": "search_similar_incidents",
    "expected_tools_per_turn": ["search_similar_incidents", "search_similar_incidents"],
    "relevant_ids": [],
    "answer_must_mention": [],
}


def _rows_outside_the_evaluation() -> dict[str, int]:
    with connection.cursor() as cursor:
        counts = {}
        for table in connection.introspection.table_names(cursor):
            cursor.execute(f'SELECT count(*) FROM "{table}"')  # noqa: S608 - our own table names
            counts[table] = cursor.fetchone()[0]
    for model, owned in EVALUATION_ROWS:
        counts[model._meta.db_table] -= model._default_manager.filter(owned).count()
    return counts


def _slice(source: Path, target: Path, rows: int) -> Path:
    target.write_text("\n".join(source.read_text().splitlines()[:rows]) + "\n")
    return target


def test_evaluate_changes_no_row_outside_its_datasets_and_user(
    eval_dir: Path, tmp_path: Path, alice: User
) -> None:
    live = DatasetVersionFactory(dataset__name="reported", status="active")
    IncidentFactory(version=live, review_status="reported")
    conversation_create(owner=alice)
    questions = eval_dir / "queries_dev.jsonl"
    queries = tmp_path / "queries.jsonl"
    lines = questions.read_text().splitlines()
    first_single = next(line for line in lines if isinstance(json.loads(line)["query"], str))
    queries.write_text(first_single + "\n" + json.dumps(REPORT_TURNS) + "\n")
    before = _rows_outside_the_evaluation()

    call_command(
        "evaluate",
        incidents=_slice(eval_dir / "incidents.jsonl", tmp_path / "incidents.jsonl", 8),
        knowledge=_slice(eval_dir / "knowledge.jsonl", tmp_path / "knowledge.jsonl", 3),
        queries=queries,
        json=True,
        stdout=open(tmp_path / "report.json", "w"),  # noqa: SIM115 - closed with the test
    )

    after = _rows_outside_the_evaluation()
    changed = {t: (before[t], after.get(t)) for t in before if before[t] != after.get(t)}
    assert changed == {}
    assert live.incidents.count() == 1
    assert not Ticket.objects.exists()
    assert Incident.objects.filter(version__dataset__name="evaluation-reported").exists()
