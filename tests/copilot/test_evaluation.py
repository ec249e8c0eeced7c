"""The evaluation gate: the dev questions must meet the retrieval goals."""

import datetime as dt
import json
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


def test_questions_are_routed_as_the_chat_routes_them(eval_dir: Path, tmp_path: Path) -> None:
    """The router the evaluation scores is the chat's, with the corpus's vocabulary
    of topics: words that name no topic ("paged", "logged") keep a window a listing."""
    as_of = dt.date(2026, 4, 30)
    start = as_of - dt.timedelta(days=45)
    incidents = [json.loads(line) for line in (eval_dir / "incidents.jsonl").open()]
    in_window = [
        row["incident_id"]
        for row in incidents
        if start <= dt.date.fromisoformat(row["occurred_at"][:10]) <= as_of
    ]
    asks = ["What did on-call get paged for in the last 45 days?",
            "what's been logged over the past 45 days"]  # fmt: skip
    queries = tmp_path / "q.jsonl"
    queries.write_text(
        "".join(
            json.dumps({"qid": f"T-{n}", "query": ask, "kind": "recent", "as_of": str(as_of),
                        "expected_tool": "get_recent_incidents", "relevant_ids": in_window})
            + "\n"
            for n, ask in enumerate(asks)
        )
    )  # fmt: skip
    report = evaluate(
        incidents_path=eval_dir / "incidents.jsonl",
        knowledge_path=eval_dir / "knowledge.jsonl",
        queries_path=queries,
    )
    assert report["kinds"]["recent"]["routing_accuracy"] == 1.0
