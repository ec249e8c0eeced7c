import json
from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError

from copilot.chat_models.offline.intents import bank_cross_validation
from copilot.evaluation import evaluate, evaluate_golden
from incidentdesk.management.base import SchemaCommand
from incidents.importers import ImportFileError


class Command(SchemaCommand):
    help = (
        "Evaluate routing and retrieval on labelled questions (the format of "
        "shared/eval/README.md). The corpus is loaded into its own evaluation datasets."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--incidents", type=Path, help="incidents JSONL file")
        parser.add_argument("--knowledge", type=Path, help="knowledge JSONL file")
        parser.add_argument("--queries", type=Path, help="labelled questions JSONL")
        parser.add_argument(
            "--golden",
            action="store_true",
            help="instead: replay every active golden question through the copilot (offline, "
            "active datasets) and report whether the answer cites the golden answer's ids",
        )
        parser.add_argument("--json", action="store_true", help="print one JSON object")
        parser.add_argument(
            "--bank",
            action="store_true",
            help="also cross-validate the intent model on its bank (k-fold and "
            "leave-one-style-out) and print those figures",
        )
        parser.add_argument(
            "--explain",
            action="store_true",
            help="also print, per question, the intent, its confidence, the alternatives "
            "considered and the tools chosen",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["golden"]:
            self.handle_golden(as_json=options["json"])
            return
        missing = [
            f"--{name}" for name in ("incidents", "knowledge", "queries") if not options[name]
        ]
        if missing:
            raise CommandError(f"{', '.join(missing)} required (or --golden)")
        try:
            report = evaluate(
                incidents_path=options["incidents"],
                knowledge_path=options["knowledge"],
                queries_path=options["queries"],
            )
        except (ImportFileError, OSError, KeyError, ValueError) as exc:
            raise CommandError(f"cannot evaluate: {exc}") from exc
        if options["bank"]:
            report["bank"] = bank_cross_validation()
        if options["json"]:
            self.stdout.write(json.dumps(report, indent=2))
            return
        if options["explain"]:
            self.write_explanations(report)
        self.write_table(report)
        if "bank" in report:
            bank = report["bank"]
            self.stdout.write(
                f"  intent bank ({bank['questions']} questions): k-fold accuracy "
                f"{bank['kfold_accuracy']:.3f}, leave-one-style-out "
                f"{bank['leave_one_style_out_accuracy']:.3f}"
            )

    def write_explanations(self, report: dict[str, Any]) -> None:
        for qid, explanation in report["explanations"].items():
            self.stdout.write(f"  {qid:<10} {explanation}")

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

    def handle_golden(self, *, as_json: bool) -> None:
        """1. replay; 2. one line per example; 3. exit non-zero when one regressed."""
        report = evaluate_golden()
        if as_json:
            self.stdout.write(json.dumps(report, indent=2))
        else:
            self.write_golden(report)
        if report["failed"]:
            raise CommandError(f"{len(report['failed'])} golden example(s) regressed")

    def write_golden(self, report: dict[str, Any]) -> None:
        for result in report["results"]:
            mark = "ok  " if result["passed"] else "MISS"
            mark = mark if result["scored"] else "--  "
            detail = f"missing {result['missing']}" if result["missing"] else ""
            detail += f" extra {result['extra']}" if result["extra"] else ""
            self.stdout.write(f"  {mark} #{result['id']} {result['question'][:60]!r} {detail}")
        self.stdout.write(
            f"{report['passed']}/{report['scored']} golden answers cite the same ids "
            f"({report['examples']} examples, {report['seconds']}s)"
        )
