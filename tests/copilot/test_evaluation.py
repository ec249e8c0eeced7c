"""The evaluation gate: the dev questions must meet the retrieval goals."""

from pathlib import Path

import pytest
from django.core.management import call_command

from copilot.evaluation import GOALS, evaluate
from copilot.models import Conversation
from incidents.models import DatasetVersion

pytestmark = [pytest.mark.django_db, pytest.mark.eval]


def test_the_dev_set_meets_every_goal(eval_dir: Path) -> None:
    report = evaluate(
        incidents_path=eval_dir / "incidents.jsonl",
        knowledge_path=eval_dir / "knowledge.jsonl",
        queries_path=eval_dir / "queries_dev.jsonl",
    )
    missed = {name: goal for name, goal in report["goals"].items() if not goal["met"]}
    assert missed == {}, missed
    assert set(report["goals"]) == set(GOALS)
    assert report["kinds"]["multi_turn"]["tools_per_turn"] >= 0.9
    # The evaluation never activates its datasets or touches others, and its
    # conversations are thrown away.
    assert not DatasetVersion.objects.filter(status="active").exists()
    assert not Conversation.objects.exists()


def test_the_command_prints_json_and_is_idempotent(eval_dir: Path, tmp_path: Path, capsys) -> None:
    queries = tmp_path / "q.jsonl"
    queries.write_text((eval_dir / "queries_dev.jsonl").read_text().splitlines()[37] + "\n")
    args = ["--incidents", str(eval_dir / "incidents.jsonl"), "--knowledge",
            str(eval_dir / "knowledge.jsonl"), "--queries", str(queries)]  # fmt: skip
    call_command("evaluate", *args, "--json")
    call_command("evaluate", *args)
    out = capsys.readouterr().out
    assert '"questions": 1' in out
    assert "routing_accuracy" in out
    assert DatasetVersion.objects.count() == 2
