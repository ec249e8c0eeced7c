"""What the import commands share: arguments, a progress bar, the summary."""

from __future__ import annotations

from argparse import ArgumentParser
from collections.abc import Callable
from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser
from tqdm import tqdm

from incidentdesk.errors import IncidentDeskError
from incidentdesk.management.base import SchemaCommand
from incidents.importers import FORMATS, ImportFileError
from incidents.importing import ImportResult, ProgressCallback
from incidents.models import DatasetVersion

ImportFunction = Callable[..., tuple[DatasetVersion, ImportResult]]
MAX_ERRORS_SHOWN = 200


class ImportCommand(SchemaCommand):
    """Imports each FILE into one dataset version, then prints a summary."""

    import_function: ImportFunction
    default_dataset: str

    def create_parser(self, prog_name: str, subcommand: str, **kwargs: Any) -> CommandParser:
        # Django's own --version (print Django's version) gives way to ours.
        kwargs.setdefault("conflict_handler", "resolve")
        return super().create_parser(prog_name, subcommand, **kwargs)

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("files", nargs="+", type=Path, help="Files to import, in order.")
        parser.add_argument(
            "--dataset",
            default=self.default_dataset,
            help=f"Dataset name; created if missing (default: {self.default_dataset}).",
        )
        parser.add_argument(
            "--version",
            dest="version_label",
            help="Version label; default: the dataset's newest version, else v1.",
        )
        parser.add_argument(
            "--activate",
            action="store_true",
            help="Make the version the one search reads, if every row imported.",
        )
        parser.add_argument(
            "--format", choices=FORMATS, help="File format; default: from the extension."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        failed = 0
        for path in options["files"]:
            failed += self.import_one(path, options)
        if failed:
            raise CommandError(f"{failed} row(s) failed; the other rows were imported")

    def import_one(self, path: Path, options: dict[str, Any]) -> int:
        """1. import with a progress bar; 2. print errors; 3. print the summary."""
        with tqdm(desc=path.name, unit="row", disable=options["verbosity"] < 1) as bar:
            try:
                version, result = type(self).import_function(
                    path=path,
                    dataset_name=options["dataset"],
                    version_label=options["version_label"],
                    file_format=options["format"],
                    activate=options["activate"],
                    on_progress=self.progress_callback(bar),
                )
            except (ImportFileError, IncidentDeskError) as exc:
                raise CommandError(f"{path}: {exc}") from exc
        self.report_errors(path, result)
        self.report_summary(path, version, result, options["activate"])
        return result.failed

    @staticmethod
    def progress_callback(bar: tqdm[Any]) -> ProgressCallback:
        def update(done: int, total: int, failed: int) -> None:
            bar.total = total
            bar.n = done
            bar.set_postfix(failed=failed, refresh=False)
            bar.refresh()

        return update

    def report_errors(self, path: Path, result: ImportResult) -> None:
        for error in result.errors[:MAX_ERRORS_SHOWN]:
            self.stderr.write(f"{path}: {error}")
        if len(result.errors) > MAX_ERRORS_SHOWN:
            self.stderr.write(f"... and {len(result.errors) - MAX_ERRORS_SHOWN} more errors")

    def report_summary(
        self, path: Path, version: DatasetVersion, result: ImportResult, activate: bool
    ) -> None:
        self.stdout.write(f"{path}: {result.summary()}; {result.chunks} chunks embedded")
        state = f"{version.dataset.name} {version.label} is {version.status}"
        if activate and result.failed:
            state += " (not activated because rows failed)"
        self.stdout.write(self.style.SUCCESS(state) if not result.failed else state)
