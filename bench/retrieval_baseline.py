#!/usr/bin/env python
"""Hybrid search against the original design's pure vector search.

Runs the symptom and knowledge questions of a labelled file twice on the
evaluation datasets (loaded by `manage.py evaluate`): ranked by cosine
similarity of chunk embeddings alone (best chunk per incident/document), and
by the shipped hybrid selectors. Prints hit@1, hit@5 and MRR@10 for both.
Usage: python bench/retrieval_baseline.py [--queries FILE]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from bootstrap import EVAL_DIR
from pgvector.django import CosineDistance

from copilot.evaluation import corpus_load
from incidentdesk.embeddings import embed_query
from incidents.models import IncidentChunk
from incidents.selectors import incident_search_similar
from knowledge.models import KnowledgeChunk
from knowledge.selectors import knowledge_search


def vector_only(chunks, parent: str, query: str) -> list[str]:
    nearest = chunks.order_by(CosineDistance("embedding", embed_query(query))).values_list(parent)
    return list(dict.fromkeys(row[0] for row in nearest[:200]))[:10]


def scores(rankings: list[tuple[list[str], set[str]]]) -> str:
    ranks = [next((i for i, x in enumerate(r, 1) if x in rel), None) for r, rel in rankings]
    hit1 = sum(r == 1 for r in ranks) / len(ranks)
    hit5 = sum(r is not None and r <= 5 for r in ranks) / len(ranks)
    mrr = sum(1 / r for r in ranks if r) / len(ranks)
    return f"hit@1 {hit1:.3f}  hit@5 {hit5:.3f}  MRR@10 {mrr:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=Path, default=EVAL_DIR / "queries_dev.jsonl")
    args = parser.parse_args()
    corpus = corpus_load(
        incidents_path=EVAL_DIR / "incidents.jsonl", knowledge_path=EVAL_DIR / "knowledge.jsonl"
    )
    questions = [json.loads(line) for line in args.queries.read_text().splitlines() if line]
    incident_chunks = IncidentChunk.objects.filter(version=corpus.incidents)
    knowledge_chunks = KnowledgeChunk.objects.filter(version=corpus.knowledge)
    for kind in ("symptom_search", "knowledge"):
        chosen = [q for q in questions if q["kind"] == kind]
        vector, hybrid = [], []
        for q in chosen:
            relevant = set(q["relevant_ids"])
            if kind == "symptom_search":
                vector.append(
                    (vector_only(incident_chunks, "incident__incident_id", q["query"]), relevant)
                )
                hits = incident_search_similar(
                    query=q["query"], limit=10, version=corpus.incidents
                ).hits
                hybrid.append(([h.incident.incident_id for h in hits], relevant))
            else:
                vector.append(
                    (vector_only(knowledge_chunks, "document__doc_id", q["query"]), relevant)
                )
                found = knowledge_search(query=q["query"], limit=10, version=corpus.knowledge).hits
                hybrid.append(([h.document.doc_id for h in found], relevant))
        print(f"{kind} ({len(chosen)} questions)")
        print(f"  vector only  {scores(vector)}")
        print(f"  hybrid       {scores(hybrid)}")


if __name__ == "__main__":
    main()
