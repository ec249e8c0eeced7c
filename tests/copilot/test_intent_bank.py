"""The intent model's bank: large, diverse, apart from the evaluation sets; the model
loads once and generalises across styles."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from copilot.chat_models.offline.intents import (
    INTENTS,
    bank_cross_validation,
    guess_intent,
    intent_model,
    load_bank,
)
from incidentdesk.embeddings import embed_texts

NEAR_DUPLICATE = 0.9


def test_the_bank_covers_every_intent_with_enough_questions() -> None:
    rows = load_bank()
    counts = Counter(row.intent for row in rows)
    assert len(rows) >= 800
    assert set(counts) == set(INTENTS)
    assert min(counts.values()) >= 15  # lookups are few: ids are routed before the model
    assert len({row.style for row in rows}) >= 10


@pytest.mark.eval
@pytest.mark.parametrize("questions", ["queries_dev.jsonl"])
def test_no_bank_question_copies_or_paraphrases_an_evaluation_question(
    eval_dir: Path, questions: str
) -> None:
    asked: list[str] = []
    for line in (eval_dir / questions).read_text(encoding="utf-8").splitlines():
        query = json.loads(line)["query"]
        asked += query if isinstance(query, list) else [query]
    unseen = Path(__file__).resolve().parent.parent / "eval" / "unseen.jsonl"
    for line in unseen.read_text(encoding="utf-8").splitlines():
        query = json.loads(line)["query"]
        asked += query if isinstance(query, list) else [query]
    bank = [row.text for row in load_bank()]
    assert not {t.strip().lower() for t in bank} & {t.strip().lower() for t in asked}
    similarity = embed_texts(bank) @ embed_texts(asked).T
    pairs = np.argwhere(similarity > NEAR_DUPLICATE)
    assert [(bank[i], asked[j]) for i, j in pairs] == []


def test_the_model_loads_once_and_guesses_with_a_confidence() -> None:
    assert intent_model() is intent_model()
    guess = guess_intent("hello there!")
    assert guess.intent == "chit_chat" and 0.5 < guess.confidence <= 1.0
    assert abs(sum(p for _, p in guess.ranked) - 1.0) < 1e-5


def test_cross_validation_holds_out_whole_styles() -> None:
    figures = bank_cross_validation(folds=3)
    assert figures["questions"] == len(load_bank())
    # Leave-one-style-out is the harder test: a style never seen in training.
    assert 0.7 <= figures["leave_one_style_out_accuracy"] <= figures["kfold_accuracy"] + 0.05
