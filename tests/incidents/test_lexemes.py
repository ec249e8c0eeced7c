"""The Python guess of PostgreSQL's lexemes, and the search's check of it."""

import pytest

from incidents import ranking
from incidents.lexemes import lexemes_guessed
from incidents.models import DatasetVersion, IncidentChunk
from tests.factories import incident_row, incidents_import

PLAIN_QUESTIONS = [
    "Checkout timeouts after the deploy",
    "502s from the gateway, again!",
    "The service's auto-increment key ran out.",
    "IPv6 routes flapped in 2024 (twice) - 100% of traffic",
]


@pytest.mark.django_db
@pytest.mark.parametrize("text", PLAIN_QUESTIONS)
def test_the_guess_is_what_postgresql_makes_of_a_plain_question(text: str) -> None:
    assert lexemes_guessed(text) == set(ranking._lexemes(text))


@pytest.mark.parametrize("text", ["us-east-1 is down", "power/cooling", "v1.2.3", "a@b.io"])
def test_tokens_the_guess_does_not_cover_are_not_guessed(text: str) -> None:
    assert lexemes_guessed(text) is None


@pytest.fixture
def version(tmp_path) -> DatasetVersion:
    rows = [
        incident_row("INC-2025-03-01-001", title="Internal wildcard certificate expired"),
        incident_row("INC-2025-03-02-001", title="Settlement batch missed rows"),
    ]
    return incidents_import(tmp_path / "a.jsonl", rows, activate=True)


def _lexemes_first(version: DatasetVersion, query: str) -> list[tuple[int, int, float]]:
    """The full-text candidates as found before the guess: lexemes, then rows."""
    scope = ranking.ChunkScope.in_versions(IncidentChunk, [version.pk])
    terms = ranking.rare_terms(query, IncidentChunk._meta.db_table, [version.pk])
    sql, params = ranking._candidates_sql(scope, "incident", terms, [version.pk])
    return ranking._best_per_parent(ranking.fetch_rows(sql, params))


@pytest.mark.django_db
@pytest.mark.parametrize(
    "query",
    [
        "settlement rows missed",  # guessed right: candidates of the guess, one round trip
        # Python's Snowball stems "internal" as "internal", PostgreSQL's as "intern":
        # the guess is wrong, and the search asks again with PostgreSQL's lexemes.
        "internal certificate expired",
    ],
)
def test_full_text_candidates_are_those_of_postgresqls_lexemes(
    version: DatasetVersion, query: str
) -> None:
    scope = ranking.ChunkScope.in_versions(IncidentChunk, [version.pk])
    found = ranking._text_candidates(scope, "incident", query, [version.pk])
    assert found
    assert found == _lexemes_first(version, query)


@pytest.mark.django_db
def test_a_wrong_guess_is_noticed() -> None:
    """The case the fallback above exists for (if the stemmers ever agree on
    "internal", this test needs another word PostgreSQL stems differently)."""
    assert lexemes_guessed("internal") != set(ranking._lexemes("internal"))
