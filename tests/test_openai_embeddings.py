"""The OpenAI embedder against a local server that speaks the embeddings API."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from incidentdesk.embeddings import OpenAIEmbedder


class EmbeddingsHandler(BaseHTTPRequestHandler):
    """POST /v1/embeddings: one vector per input, returned in reverse order."""

    requests: list[dict] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(
            {"path": self.path, "auth": self.headers["Authorization"], **body}
        )
        data = [
            {"object": "embedding", "index": i, "embedding": [float(len(text))] + [1.0] * 383}
            for i, text in enumerate(body["input"])
        ]
        payload = {"object": "list", "data": data[::-1], "model": body["model"],
                   "usage": {"prompt_tokens": 1, "total_tokens": 1}}  # fmt: skip
        raw = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server_url() -> Iterator[str]:
    EmbeddingsHandler.requests = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), EmbeddingsHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_openai_embeddings_ask_for_384_dimensions_and_keep_input_order(server_url: str) -> None:
    embedder = OpenAIEmbedder(
        api_key="sk-test", base_url=server_url, model="text-embedding-3-small", batch_size=2
    )
    vectors = embedder.embed(["a", "bbb", "cc"])
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)
    firsts = vectors[:, 0] / vectors[:, 1]  # undo the normalisation
    assert np.allclose(firsts, [1.0, 3.0, 2.0])
    sent = EmbeddingsHandler.requests
    assert [r["input"] for r in sent] == [["a", "bbb"], ["cc"]]
    assert {(r["path"], r["dimensions"], r["model"], r["auth"]) for r in sent} == {
        ("/v1/embeddings", 384, "text-embedding-3-small", "Bearer sk-test")
    }
