"""Writes for the copilot's curated memory (golden examples)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from django.contrib.auth.models import User
from django.db import transaction

from copilot.models import GoldenExample
from incidentdesk.embeddings import embed_texts
from incidents import importers
from incidents.importers import FieldError, RowError, SourceRow, as_text


@dataclass
class GoldenImportResult:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    errors: list[RowError] = field(default_factory=list)


def golden_example_embed(*, example: GoldenExample) -> GoldenExample:
    """Embed the question (what new questions are compared with)."""
    example.embedding = embed_texts([example.question])[0]
    example.embedded_question = example.question
    GoldenExample.objects.filter(pk=example.pk).update(
        embedding=example.embedding, embedded_question=example.question
    )
    return example


def golden_example_save(*, example: GoldenExample) -> GoldenExample:
    """Validate and save; embedding follows in the background when needed."""
    from copilot.tasks import golden_example_embed_task

    example.full_clean()
    example.save()
    if example.needs_embedding:
        transaction.on_commit(lambda: golden_example_embed_task.delay(example.pk))
    return example


def _parse_golden(row: SourceRow) -> tuple[str, str]:
    data = importers.check_object(row)
    question = as_text(data.get("question"))
    answer = as_text(data.get("answer"))
    if not question:
        raise FieldError("question is required")
    if not answer:
        raise FieldError("answer is required")
    return question, answer


def golden_examples_import_file(
    *, path: Path, file_format: str | None = None, user: User | None = None
) -> GoldenImportResult:
    """Upsert examples by question and embed them right away (they are few)."""
    result = GoldenImportResult()
    for row in importers.read_rows(path, file_format):
        try:
            question, answer = _parse_golden(row)
        except FieldError as exc:
            result.errors.append(RowError(row.line, "", str(exc)))
            continue
        _golden_upsert(question, answer, user, result)
    return result


def _golden_upsert(
    question: str, answer: str, user: User | None, result: GoldenImportResult
) -> None:
    example = GoldenExample.objects.filter(question=question).first()
    if example is not None and example.answer == answer and not example.needs_embedding:
        result.unchanged += 1
        return
    if example is None:
        example = GoldenExample(question=question, created_by=user if user and user.pk else None)
        result.created += 1
    else:
        result.updated += 1
    example.answer = answer
    example.full_clean()
    example.save()
    golden_example_embed(example=example)
