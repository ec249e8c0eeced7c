"""The full-text half of a search in one statement: the question stemmed, its
words chosen by the searched versions' counts (`TermCount`) and searched, with
the same words Python's `rare_terms` chooses."""

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from incidents import ranking, term_counts
from incidents.models import DatasetVersion, IncidentChunk, TermCount
from incidents.ranking import ChunkScope, _text_candidates, rare_terms
from incidents.term_counts import term_counts_ensure, term_counts_refresh
from tests.factories import incident_row, incidents_import

pytestmark = pytest.mark.django_db

TABLE = IncidentChunk._meta.db_table
# Words from every chunk to none, a word twice, a slashed pair, a hyphenated
# word, one PostgreSQL stems differently from Snowball ("emergency"), one the
# lexeme pattern leaves out ("café"), and one only stop words.
QUESTIONS = [
    "checkout timed out when the connection pool ran dry",
    "timeout timeout zzqx error 0x80070005",
    "power/cooling failure in the emergency rack",
    "auto-increment primary key overflow on uploads",
    "café DNS resolution failures",
    "what is the",
]


@pytest.fixture
def version(tmp_path: Path) -> DatasetVersion:
    rows = [
        incident_row(
            f"INC-2025-08-{day:02d}-001",
            title=title,
            root_cause=f"The {title.lower()} came back.",
        )
        for day, title in enumerate(
            [
                "Checkout timeouts when the connection pool ran dry",
                "DNS resolution failures in the payments cluster",
                "Power failure in rack 12 during the emergency drill",
                "Uploads failing after the auto-increment key overflowed",
                "Timeout on settlement export with error 0x80070005",
            ],
            start=1,
        )
    ]
    return incidents_import(tmp_path / "five.jsonl", rows, dataset_name="five", activate=True)


def full_text(version: DatasetVersion, question: str) -> tuple[list[Any], list[str]]:
    scope = ChunkScope.in_versions(IncidentChunk, [version.pk])
    return _text_candidates(scope, "incident", question, [version.pk])


@pytest.mark.parametrize(("budget", "least", "common"), [(3000, 2, 6000), (1, 1, 1000), (2, 2, 3)])
def test_the_statement_chooses_the_words_rare_terms_chooses(
    version, monkeypatch, budget: int, least: int, common: int
) -> None:
    monkeypatch.setattr(ranking, "TERM_ROW_BUDGET", budget)
    monkeypatch.setattr(ranking, "MIN_QUERY_TERMS", least)
    monkeypatch.setattr(ranking, "COMMON_TERM_ROWS", common)
    for question in QUESTIONS:
        _, terms = full_text(version, question)
        assert terms == rare_terms(question, TABLE, [version.pk]), question


def test_the_full_text_half_is_one_round_trip(version, django_assert_num_queries) -> None:
    full_text(version, "checkout timed out")  # the version's counts checked once
    with django_assert_num_queries(1):
        hits, terms = full_text(version, "connection pool ran dry at checkout")
    assert hits and terms


def test_the_hits_are_those_of_the_words_searched_directly(version) -> None:
    """The statement's rows are the statement's own when given the words."""
    scope = ChunkScope.in_versions(IncidentChunk, [version.pk])
    for question in QUESTIONS:
        hits, terms = full_text(version, question)
        if not terms:
            assert hits == []
            continue
        ranked = ranking._text_versioned_sql(
            TABLE, "incident", scope.where[0], ranking._TSQUERY_PARAMETER, versions=True
        )
        tsquery = ranking._or_tsquery(terms)
        rows = ranking.fetch_rows(
            ranked, [tsquery, tsquery, ranking.versions_tsquery([version.pk]), *scope.where[1]]
        )
        assert hits == ranking._best_per_parent(rows), question


def test_words_are_counted_in_the_searched_versions_only(version, tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(ranking, "TERM_ROW_BUDGET", 1)
    monkeypatch.setattr(ranking, "MIN_QUERY_TERMS", 1)
    # Another dataset, never activated, says "rack" everywhere: for a search of the
    # active version the word stays rare.
    rows = [incident_row(f"INC-2025-01-0{day}-001", title=f"rack {day}") for day in range(1, 6)]
    incidents_import(tmp_path / "other.jsonl", rows, dataset_name="other-desk", activate=False)
    assert full_text(version, "checkout rack")[1] == ["rack"]


def test_counts_are_kept_until_stale_then_counted_again(version) -> None:
    assert term_counts_refresh(TABLE, version.pk)
    counts = TermCount.objects.filter(chunk_table=TABLE, version=version)
    holding = IncidentChunk.objects.filter(version=version, text__contains="0x80070005")
    assert counts.get(word="0x80070005").chunks == holding.count() > 0
    assert not term_counts_refresh(TABLE, version.pk)
    counts.update(counted_at=counts[0].counted_at - dt.timedelta(hours=1))
    assert term_counts_refresh(TABLE, version.pk)
    assert term_counts_refresh(TABLE, version.pk, force=True)


def test_forgetting_the_counts_recounts_them_at_the_next_check(version) -> None:
    term_counts_ensure(TABLE, [version.pk])
    TermCount.objects.filter(version=version).delete()
    term_counts_ensure(TABLE, [version.pk])  # checked a moment ago: no round trip
    assert not TermCount.objects.filter(version=version).exists()
    term_counts.forget_term_counts()
    term_counts_ensure(TABLE, [version.pk])
    assert TermCount.objects.filter(version=version, word="checkout").exists()


def test_counts_go_with_their_version(version) -> None:
    term_counts_ensure(TABLE, [version.pk])
    version.delete()
    assert not TermCount.objects.exists()
