"""Golden examples: import, embedding, nearest lookup."""

from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from copilot.models import GoldenExample
from copilot.selectors import golden_example_list_nearest
from tests.factories import rows_write

pytestmark = pytest.mark.django_db


def test_import_embeds_upserts_and_reports_bad_rows(tmp_path: Path, capsys) -> None:
    rows = [
        {"question": "How do I fix HTTP 403 errors in PayU?", "answer": "Restart the pool."},
        {"question": "", "answer": "orphan"},
    ]
    path = rows_write(tmp_path / "g.jsonl", rows)
    with pytest.raises(CommandError):
        call_command("import_golden_examples", str(path))
    assert "line 2: question is required" in capsys.readouterr().err
    example = GoldenExample.objects.get()
    assert example.embedding is not None and not example.needs_embedding

    rows_write(path, [{"question": rows[0]["question"], "answer": "Re-sync, then restart."}])
    call_command("import_golden_examples", str(path))
    assert "created 0, updated 1, unchanged 0" in capsys.readouterr().out


def test_nearest_examples_respect_the_similarity_floor(tmp_path: Path) -> None:
    rows = [
        {"question": "How do I fix HTTP 403 errors in PayU?", "answer": "a"},
        {"question": "What is the cafeteria menu on Friday?", "answer": "b"},
    ]
    call_command("import_golden_examples", str(rows_write(tmp_path / "g.jsonl", rows)))
    matches = golden_example_list_nearest(question="how to fix 403 errors in payu")
    assert [m.answer for m in matches] == ["a"]
    assert matches[0].similarity >= 0.6
