from argparse import ArgumentParser
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError

from copilot.services import golden_examples_import_file
from incidentdesk.management.base import SchemaCommand
from incidents.importers import FORMATS, ImportFileError


class Command(SchemaCommand):
    help = "Import golden examples (question, answer) from JSON Lines, JSON or CSV."

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("file", type=Path, help="File with question and answer fields.")
        parser.add_argument(
            "--format", choices=FORMATS, help="File format; default: from the extension."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            result = golden_examples_import_file(
                path=options["file"], file_format=options["format"]
            )
        except ImportFileError as exc:
            raise CommandError(str(exc)) from exc
        for error in result.errors:
            self.stderr.write(f"{options['file']}: {error}")
        self.stdout.write(
            f"golden examples: created {result.created}, updated {result.updated}, "
            f"unchanged {result.unchanged}, failed {len(result.errors)}"
        )
        if result.errors:
            raise CommandError(f"{len(result.errors)} row(s) failed")
