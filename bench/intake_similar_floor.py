#!/usr/bin/env python
"""Which similar incidents the intake playbook card should show: signals and floors.

Runs each report of a labelled set (tests/copilot/intake/data/similar_reports.jsonl,
written for this: a report sentence and the demo incidents truly like it, or
none) through intake's own search (`memory_retrieval`'s query, top 5), then
prints, per candidate signal and floor, the precision and recall of the list
the card would show, and how many unrelated reports would still show anything.
Needs the demo data (`manage.py load_demo`). Usage: python bench/intake_similar_floor.py
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from bootstrap import BASE_DIR
from django.db import connection
from django.utils import timezone

from copilot.intake import rules
from copilot.intake.selectors import incident_cosines, is_similar, shares_code
from incidentdesk.embeddings import embed_query_literal
from incidents import query_parsing as qp
from incidents.models import IncidentChunk
from incidents.ranking import rare_terms
from incidents.selectors import incident_search_similar, scope_version_ids

LABELLED = BASE_DIR / "tests" / "copilot" / "intake" / "data" / "similar_reports.jsonl"


@dataclass
class Candidate:
    report: int
    incident_id: str
    relevant: bool
    fused: float
    cosine: float
    summary_cosine: float
    shared_terms: int
    term_share: float
    shares_code: bool  # the incident's text has the report's error code (502, 429...)


def other_signals(query: str, incident_pk: int) -> tuple[float, int, float]:
    """Cosine to the summary chunk (title, root cause, mitigation) alone, and the
    report's distinctive words (the search's own IDF cut) found in the incident:
    how many, and their share."""
    terms = rare_terms(query, IncidentChunk._meta.db_table, scope_version_ids())
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT (SELECT 1 - (embedding <=> %s::vector) FROM incidents_incidentchunk"
            " WHERE incident_id = %s AND ordinal = 0),"
            " ARRAY(SELECT DISTINCT unnest(tsvector_to_array(search_vector))"
            " FROM incidents_incidentchunk WHERE incident_id = %s)",
            [embed_query_literal(query), incident_pk, incident_pk],
        )
        summary, lexemes = cursor.fetchone()
    shared = len(set(terms) & set(lexemes or []))
    return float(summary or 0.0), shared, shared / len(terms) if terms else 0.0


def candidates() -> tuple[list[Candidate], int]:
    rows = [json.loads(line) for line in LABELLED.read_text().splitlines() if line.strip()]
    found: list[Candidate] = []
    for index, row in enumerate(rows):
        text = rules.normalise_description(row["report"])
        _, query = qp.parse_time_window(text, timezone.localdate())
        hits = incident_search_similar(query=query, limit=5).hits
        cosines = incident_cosines(query=query, incidents=[hit.incident for hit in hits])
        codes = rules.error_codes(query)
        for hit in hits:
            summary, shared, share = other_signals(query, hit.incident.pk)
            found.append(
                Candidate(
                    index,
                    hit.incident.incident_id,
                    hit.incident.incident_id in row["similar"],
                    hit.score,
                    cosines[hit.incident.pk],
                    summary,
                    shared,
                    share,
                    shares_code(hit.incident, codes),
                )
            )
    relevant_total = sum(len(row["similar"]) for row in rows)
    return found, relevant_total


def report(
    name: str, kept: Callable[[Candidate], bool], found: list[Candidate], total: int
) -> None:
    shown = [c for c in found if kept(c)]
    right = sum(c.relevant for c in shown)
    reports = {c.report for c in found}
    unrelated = {
        c.report for c in found if not any(d.relevant for d in found if d.report == c.report)
    }
    noisy = len({c.report for c in shown if c.report in unrelated})
    precision = right / len(shown) if shown else 0.0
    print(
        f"{name:<34} shown {len(shown):3d}  precision {precision:.2f}  "
        f"recall {right / total:.2f}  unrelated reports showing any {noisy}/{len(unrelated)}"
        f"  (reports {len(reports)})"
    )


def f1(found: list[Candidate], floor: float) -> float:
    shown = [c for c in found if c.cosine >= floor]
    right = sum(c.relevant for c in shown)
    relevant = sum(c.relevant for c in found)
    if not right:
        return 0.0
    precision, recall = right / len(shown), right / relevant
    return 2 * precision * recall / (precision + recall)


def two_fold(found: list[Candidate]) -> None:
    """The cosine floor with the best F1 on half the reports, scored on the other half
    (recall here is over the labels the top 5 found, which is all of them)."""
    floors = [round(0.45 + i / 100, 2) for i in range(21)]
    for name, fit, held in (("even->odd", 0, 1), ("odd->even", 1, 0)):
        train = [c for c in found if c.report % 2 == fit]
        test = [c for c in found if c.report % 2 == held]
        chosen = max(floors, key=lambda f: (f1(train, f), -f))
        shown = [c for c in test if c.cosine >= chosen]
        right = sum(c.relevant for c in shown)
        print(
            f"two-fold {name}: floor {chosen}  held-out precision {right / len(shown):.2f}"
            f"  recall {right / sum(c.relevant for c in test):.2f}"
        )
    for floor in floors:
        print(f"  cosine >= {floor}: F1 {f1(found, floor):.3f}")


def main() -> None:
    found, total = candidates()
    print(f"{len(found)} candidates, {sum(c.relevant for c in found)} relevant, {total} labelled")
    for c in sorted(found, key=lambda c: -c.cosine):
        print(
            f"  r{c.report:02d} {c.incident_id} rel={int(c.relevant)} fused={c.fused:.3f} "
            f"cos={c.cosine:.3f} sum={c.summary_cosine:.3f} terms={c.shared_terms} "
            f"share={c.term_share:.2f} code={int(c.shares_code)}"
        )
    best = {c.report: max(d.cosine for d in found if d.report == c.report) for c in found}
    report("none (all top 5)", lambda c: True, found, total)
    for floor in (0.3, 0.4, 0.5, 0.6):
        report(f"fused >= {floor}", lambda c, f=floor: c.fused >= f, found, total)
    for floor in (0.35, 0.4, 0.45, 0.5, 0.55, 0.57, 0.6):
        report(f"cosine >= {floor}", lambda c, f=floor: c.cosine >= f, found, total)
    for floor in (0.35, 0.4, 0.45, 0.5, 0.55):
        report(f"summary cosine >= {floor}", lambda c, f=floor: c.summary_cosine >= f, found, total)
    for cos in (0.55, 0.6):
        for gap in (0.1, 0.15, 0.2):
            report(
                f"cosine >= {cos} and within {gap} of best",
                lambda c, a=cos, g=gap: c.cosine >= a and c.cosine >= best[c.report] - g,
                found,
                total,
            )
    report("code alone", lambda c: c.shares_code, found, total)
    for cos in (0.55, 0.57, 0.6):
        for low in (0.35, 0.4, 0.45):
            report(
                f"cosine >= {cos} or code and >= {low}",
                lambda c, a=cos, b=low: c.cosine >= a or (c.shares_code and c.cosine >= b),
                found,
                total,
            )
    report(
        "shipped (is_similar)",
        lambda c: is_similar(c.cosine, shares_code=c.shares_code),
        found,
        total,
    )
    two_fold(found)
    for floor in (1, 2, 3):
        report(f"shared terms >= {floor}", lambda c, f=floor: c.shared_terms >= f, found, total)
    for floor in (0.2, 0.3, 0.4):
        report(f"term share >= {floor}", lambda c, f=floor: c.term_share >= f, found, total)
    for cos in (0.4, 0.45, 0.5):
        for terms in (1, 2):
            report(
                f"cosine >= {cos} and terms >= {terms}",
                lambda c, a=cos, b=terms: c.cosine >= a and c.shared_terms >= b,
                found,
                total,
            )


if __name__ == "__main__":
    main()
