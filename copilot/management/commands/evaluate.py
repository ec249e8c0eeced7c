import json
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from copilot.evaluation import evaluate
from incidents.importers import ImportFileError


class Command(BaseCommand):
    help = (
        "Evaluate routing and retrieval on labelled questions (the format of "
        "shared/eval/README.md). The corpus is loaded into its own evaluation datasets."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--incidents", type=Path, required=True, help="incidents JSONL file")
        parser.add_argument("--knowledge", type=Path, required=True, help="knowledge JSONL file")
        parser.add_argument("--queries", type=Path, required=True, help="labelled questions JSONL")
        parser.add_argument("--json", action="store_true", help="print one JSON object")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            report = evaluate(
                incidents_path=options["incidents"],
                knowledge_path=options["knowledge"],
                queries_path=options["queries"],
            )
        except (ImportFileError, OSError, KeyError, ValueError) as exc:
            raise CommandError(f"cannot evaluate: {exc}") from exc
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        self.write_table(report)

    def write_table(self, report: dict[str, Any]) -> None:
        """1. per kind; 2. overall goals."""
        self.stdout.write(f"{report['questions']} questions in {report['seconds']}s")
        for kind, figures in report["kinds"].items():
            shown = {k: v for k, v in figures.items() if k not in {"misses", "count"}}
            numbers = "  ".join(f"{k} {v}" for k, v in shown.items())
            self.stdout.write(f"  {kind:<15} n={figures['count']:<3} {numbers}")
        for name, goal in report["goals"].items():
            mark = "ok  " if goal["met"] else "MISS"
            self.stdout.write(f"  {mark} {name:<24} {goal['measured']:.3f} (goal {goal['goal']})")
