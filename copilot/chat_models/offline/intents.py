"""The intent model: a question → what the asker wants, with a confidence.

A multinomial logistic regression over the MiniLM embedding the app already
computes for the query (cached, so search reuses it), the embedding of the
question's last sentence (long messages put the ask at the end) and a few
cheap signals. It learns from the bank in `bank/` (questions written in
twelve styles, never from the evaluation sets), not from wording rules.

Training takes a few seconds (embedding the bank); the weights are cached
under var/ keyed by the bank, the features and the embedder, so a process
loads them in milliseconds. Prediction is one small matrix product.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import logging
import math
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from django.conf import settings

from incidentdesk.embeddings import embed_query, embed_texts, get_embedder
from incidents import query_parsing as qp
from incidents.parsing import find_incident_ids

logger = logging.getLogger(__name__)

BANK_DIR = Path(__file__).resolve().parent / "bank"
QUESTION_INTENTS = ("lookup", "by_application", "recent", "similar", "knowledge", "follow_up")
INTAKE_INTENTS = ("report", "comment", "decision_summary", "chit_chat")
INTENTS = QUESTION_INTENTS + INTAKE_INTENTS
# Chosen by leave-one-style-out cross-validation of the bank
# (`bank_cross_validation`); weaker regularisation overfits the styles.
REGULARISATION_C = 4.0
FEATURES_VERSION = "6"  # bump when `features` changes: the cached weights are rebuilt
# Where a message's last ask begins: a sentence end, a dash, a semicolon or a comma.
CLAUSE_END_RE = re.compile(r"(?<=[.!?;,])\s+|\s+[\u2013\u2014-]+\s+|\n+")
_WORD_RE = re.compile(r"\w+")


# A greeting gets no search only when the model is this sure: a terse search
# ("postmortem template") can look like chat to it (0.56 there; "hi there" 0.96).
CHIT_CHAT_SURE = 0.8


@dataclass(frozen=True)
class BankRow:
    text: str
    intent: str
    style: str


def load_bank(directory: Path = BANK_DIR) -> list[BankRow]:
    """Every row of every bank file, in file order."""
    rows = []
    for path in sorted(directory.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                data = json.loads(line)
                rows.append(BankRow(data["text"], data["intent"], data.get("style", "")))
    return rows


def last_sentence(text: str) -> str:
    """The final clause of a message (two words at least): where people put the ask
    ("replica lag is climbing, what now?")."""
    parts = [p.strip() for p in CLAUSE_END_RE.split(text.strip()) if p.strip()]
    last = ""
    while parts and len(last.split()) < 2:
        last = f"{parts.pop()} {last}".strip()
    return last or text


def cheap_signals(text: str) -> list[float]:
    """Signals an embedding blurs: a time expression, a category listing, an
    incident id, a question mark, length."""
    window, _ = qp.parse_time_window(text, _SIGNAL_DAY)
    words = len(_WORD_RE.findall(text))
    return [
        float(window is not None),
        float(qp.parse_category(text) is not None),
        float(bool(find_incident_ids(text))),
        float("?" in text),
        math.log1p(words) / 4,
    ]


# Time expressions are found relative to a day; any fixed day finds the same ones.
_SIGNAL_DAY = dt.date(2026, 1, 1)
SIGNAL_WEIGHT = 2.0  # a signal counts like a strong embedding direction


def features(texts: Sequence[str], vectors: np.ndarray, last_vectors: np.ndarray) -> np.ndarray:
    signals = np.array([cheap_signals(t) for t in texts], dtype=np.float32) * SIGNAL_WEIGHT
    return np.hstack([vectors, last_vectors, signals]).astype(np.float32)


def _embed_rows(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    vectors = embed_texts(list(texts))
    lasts = [last_sentence(t) for t in texts]
    changed = [i for i, (t, last) in enumerate(zip(texts, lasts, strict=True)) if last != t]
    last_vectors = vectors.copy()
    if changed:
        last_vectors[changed] = embed_texts([lasts[i] for i in changed])
    return vectors, last_vectors


@dataclass(frozen=True)
class IntentGuess:
    """The intents in order of probability; `allowed` narrows them to a context."""

    ranked: tuple[tuple[str, float], ...]

    @property
    def intent(self) -> str:
        return self.ranked[0][0]

    @property
    def confidence(self) -> float:
        return self.ranked[0][1]

    def probability(self, intent: str) -> float:
        return dict(self.ranked).get(intent, 0.0)

    def among(self, allowed: Sequence[str]) -> IntentGuess:
        """Only `allowed` intents, renormalised: a follow-up needs something to follow."""
        kept = [(name, p) for name, p in self.ranked if name in allowed]
        total = sum(p for _, p in kept) or 1.0
        return IntentGuess(tuple((name, p / total) for name, p in kept))

    @property
    def is_greeting(self) -> bool:
        """Chit-chat, and sure of it: the router, intake and titles share this bar."""
        return self.probability("chit_chat") >= CHIT_CHAT_SURE and self.intent == "chit_chat"

    def describe(self, top: int = 3) -> str:
        return ", ".join(f"{name} {p:.2f}" for name, p in self.ranked[:top])


GUESSES_KEPT = 1024


@dataclass(frozen=True)
class IntentModel:
    """Weights of the trained regression; `guess` is one matrix product and a softmax."""

    classes: tuple[str, ...]
    weights: np.ndarray  # (features, classes)
    bias: np.ndarray
    # text -> its guess: intake, the title and the router each ask about the
    # same question, three embeddings' features and products per answer.
    _guesses: dict[str, IntentGuess] = field(default_factory=dict, compare=False, repr=False)

    def guess_features(self, row: np.ndarray) -> IntentGuess:
        logits = row @ self.weights + self.bias
        exp = np.exp(logits - logits.max())
        probabilities = exp / exp.sum()
        order = np.argsort(-probabilities)
        return IntentGuess(tuple((self.classes[i], float(probabilities[i])) for i in order))

    def guess(self, text: str) -> IntentGuess:
        known = self._guesses.get(text)
        if known is not None:
            return known
        vector = np.asarray(embed_query(text), dtype=np.float32)
        last = last_sentence(text)
        last_vector = vector if last == text else np.asarray(embed_query(last), np.float32)
        guessed = self.guess_features(features([text], vector[None, :], last_vector[None, :])[0])
        if len(self._guesses) >= GUESSES_KEPT:
            self._guesses.clear()
        self._guesses[text] = guessed
        return guessed


def train(rows: Sequence[BankRow], matrix: np.ndarray, c: float = REGULARISATION_C) -> IntentModel:
    """Fit the regression on `matrix` (features of `rows`); classes balanced."""
    from sklearn.linear_model import LogisticRegression  # training only: keeps imports light

    labels = [r.intent for r in rows]
    fitted = LogisticRegression(C=c, max_iter=2000, class_weight="balanced")
    fitted.fit(matrix, labels)
    classes = tuple(str(name) for name in fitted.classes_)
    return IntentModel(classes, fitted.coef_.T.astype(np.float32), fitted.intercept_)


def bank_matrix(rows: Sequence[BankRow]) -> np.ndarray:
    """The features of every bank row (embedding them takes seconds: cached under var/)."""
    path = _cache_path(rows).with_name(_cache_path(rows).stem + "-features.npy")
    if path.exists():
        loaded: np.ndarray = np.load(path)
        return loaded
    texts = [r.text for r in rows]
    vectors, last_vectors = _embed_rows(texts)
    matrix = features(texts, vectors, last_vectors)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{threading.get_ident()}.tmp.npy")
    np.save(partial, matrix)
    partial.replace(path)
    return matrix


# --- the process-wide model, cached on disk ----------------------------------------

_model: IntentModel | None = None
_lock = threading.Lock()


def _cache_path(rows: Sequence[BankRow]) -> Path:
    digest = hashlib.sha256()
    for part in (FEATURES_VERSION, str(REGULARISATION_C), get_embedder().model_id):
        digest.update(part.encode())
    for row in rows:
        digest.update(f"{row.text}\t{row.intent}\n".encode())
    return Path(settings.VAR_DIR) / "cache" / f"intents-{digest.hexdigest()[:16]}.npz"


def _load_or_train() -> IntentModel:
    rows = load_bank()
    path = _cache_path(rows)
    if path.exists():
        with np.load(path) as saved:
            return IntentModel(tuple(saved["classes"]), saved["weights"], saved["bias"])
    logger.info("training the intent model on %d bank questions", len(rows))
    model = train(rows, bank_matrix(rows))
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(f".{threading.get_ident()}.tmp.npz")
    np.savez(partial, classes=np.array(model.classes), weights=model.weights, bias=model.bias)
    partial.replace(path)  # atomic: another process may be training too
    return model


def intent_model() -> IntentModel:
    """The trained model, loaded (or trained) once per process."""
    global _model
    if _model is None:
        with _lock:
            if _model is None:
                _model = _load_or_train()
    return _model


def forget_model() -> None:
    """Drop the loaded model (benchmarks time a load from the cached weights)."""
    global _model
    _model = None


def guess_intent(text: str) -> IntentGuess:
    return intent_model().guess(text)


# --- how well it generalises: cross-validation of the bank ---------------------------


def bank_cross_validation(
    rows: Sequence[BankRow] | None = None, *, folds: int = 5, c: float = REGULARISATION_C
) -> dict[str, object]:
    """Accuracy of k-fold and leave-one-style-out cross-validation over the bank."""
    rows = list(rows or load_bank())
    matrix = bank_matrix(rows)
    labels = np.array([r.intent for r in rows])
    kfold = np.arange(len(rows)) % folds
    styles = np.array([r.style for r in rows])
    return {
        "questions": len(rows),
        "kfold_accuracy": _held_out_accuracy(rows, matrix, labels, kfold, c),
        "leave_one_style_out_accuracy": _held_out_accuracy(rows, matrix, labels, styles, c),
    }


def _held_out_accuracy(
    rows: Sequence[BankRow], matrix: np.ndarray, labels: np.ndarray, groups: np.ndarray, c: float
) -> float:
    correct = 0
    for group in np.unique(groups):
        test = groups == group
        model = train([r for r, t in zip(rows, test, strict=True) if not t], matrix[~test], c)
        guesses = [model.guess_features(row).intent for row in matrix[test]]
        correct += sum(g == label for g, label in zip(guesses, labels[test], strict=True))
    return round(correct / len(rows), 4)
