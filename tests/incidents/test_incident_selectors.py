"""The retrieval selectors on real PostgreSQL + pgvector."""

import datetime as dt
from pathlib import Path

import pytest

from incidents import ranking, selectors
from incidents.models import DatasetVersion
from incidents.selectors import (
    application_catalog,
    incident_get_by_public_id,
    incident_list_by_application,
    incident_list_recent,
    incident_search_similar,
)
from tests.factories import (
    incident_row,
    incidents_import,
    key_rotation_403,
    settlement_missing_rows,
)

pytestmark = pytest.mark.django_db

ROWS = [
    key_rotation_403(company="PayU", occurred_at="2025-08-24", severity="SEV1"),
    settlement_missing_rows(
        "INC-2025-12-30-001",
        impacted_application="Settlement & Reporting",
        company="PayU",
        root_cause="A timezone bug cut the last hour of the day.",
        occurred_at="2025-12-30",
        repeat_incident=True,
    ),
    incident_row(
        "INC-2026-01-02-001",
        title="Checkout Gateway 502s after ingress upgrade",
        impacted_application="Checkout Gateway (PayU Core)",
        company="PayU",
        root_cause="Keep-alive timeout reset by the new chart.",
        occurred_at="2026-01-02",
        category="deploy",
    ),
    incident_row("INC-2026-01-05-001", title="Disk full on log volume",
                 impacted_application="Payout Service", company="PayU", occurred_at=""),
]  # fmt: skip
KEY_ROTATION = ROWS[0]
TODAY = dt.date(2026, 1, 10)


@pytest.fixture
def version(tmp_path: Path) -> DatasetVersion:
    return incidents_import(tmp_path / "rows.jsonl", ROWS, activate=True)


def test_lookup_normalises_unicode_hyphens_case_and_spaces(version) -> None:
    incident = incident_get_by_public_id(
        incident_id=" inc\u20112025\u20138\u2212 24-001 ".replace("8", "08", 1)
    )
    assert incident is not None and incident.incident_id == "INC-2025-08-24-001"
    assert incident.root_cause == KEY_ROTATION["root_cause"]


def test_lookup_of_an_unknown_or_empty_id_is_none(version) -> None:
    assert incident_get_by_public_id(incident_id="INC-1999-01-01-001") is None
    assert incident_get_by_public_id(incident_id="  ") is None


def test_lookup_ignores_versions_that_are_not_active(version, tmp_path: Path) -> None:
    staged = incidents_import(
        tmp_path / "staged.jsonl", [incident_row("INC-2030-01-01-001")], version_label="next"
    )
    assert incident_get_by_public_id(incident_id="INC-2030-01-01-001") is None
    assert incident_get_by_public_id(incident_id="INC-2030-01-01-001", version=staged) is not None


def test_similar_search_ranks_by_meaning_one_hit_per_incident(version) -> None:
    result = incident_search_similar(
        query="merchants get forbidden after credentials changed", now=TODAY
    )
    ids = [hit.incident.incident_id for hit in result.hits]
    assert ids[0] == "INC-2025-08-24-001"
    assert len(ids) == len(set(ids)) == 4
    assert result.filters.is_empty and not result.expanded


def test_filters_from_the_question_are_applied_and_returned(version) -> None:
    result = incident_search_similar(query="PayU Core incidents in the last 2 weeks", now=TODAY)
    assert [h.incident.incident_id for h in result.hits] == ["INC-2026-01-02-001"]
    filters = result.filters.as_dict()
    assert filters["applications"] == ["PayU Core", "Checkout Gateway (PayU Core)"]
    assert filters["window"] == {
        "start": "2025-12-27",
        "end": "2026-01-10",
        "label": "last 14 days",
    }


def test_repeat_filter_lists_repeat_incidents(version) -> None:
    result = incident_search_similar(query="which incidents were repeats?", limit=10, now=TODAY)
    assert [h.incident.incident_id for h in result.hits] == ["INC-2025-12-30-001"]


def test_filters_that_match_nothing_are_loosened_and_say_so(version) -> None:
    result = incident_search_similar(
        query="PayU Core outages in 2019 with a secret cache", now=TODAY
    )
    assert result.expanded
    assert result.filters.window is not None
    assert result.hits[0].incident.incident_id == "INC-2025-08-24-001"
    # The reader is told which filter found nothing before the nearest results.
    loosened = result.as_text().split("No incident matched ", 1)[1].split(", so they")[0]
    assert "window in 2019" in loosened


def test_an_empty_query_lists_newest_first(version) -> None:
    result = incident_search_similar(query="  ", limit=2, now=TODAY)
    assert [h.incident.incident_id for h in result.hits] == [
        "INC-2026-01-05-001",
        "INC-2026-01-02-001",
    ]


def test_application_search_is_case_insensitive_then_partial_then_semantic(version) -> None:
    exact = incident_list_by_application(application="payu core")
    assert exact.how == "exact"
    assert [i.incident_id for i in exact.incidents] == ["INC-2026-01-02-001", "INC-2025-08-24-001"]
    partial = incident_list_by_application(application="settlement")
    assert partial.how == "partial"
    assert [i.incident_id for i in partial.incidents] == ["INC-2025-12-30-001"]
    semantic = incident_list_by_application(application="log storage disks", limit=1)
    assert semantic.how == "semantic"
    assert [i.incident_id for i in semantic.incidents] == ["INC-2026-01-05-001"]


def test_recent_incidents_cross_the_year_and_use_the_date_from_the_id(version) -> None:
    recent = incident_list_recent(days=14, now=TODAY)
    assert [i.incident_id for i in recent] == [
        "INC-2026-01-05-001",  # no occurred_at in the row: taken from its id
        "INC-2026-01-02-001",
        "INC-2025-12-30-001",
    ]
    assert incident_list_recent(days=14, now=dt.date(2025, 12, 29)) == []


def test_recent_incidents_of_one_application(version) -> None:
    recent = incident_list_recent(days=14, now=TODAY, application="settlement & reporting")
    assert [i.incident_id for i in recent] == ["INC-2025-12-30-001"]
    # A name nothing answers to lists none of its incidents, not every recent one.
    assert incident_list_recent(days=14, now=TODAY, application="Nonexistent Pay") == []


def test_selectors_use_a_fixed_number_of_queries(version, django_assert_max_num_queries) -> None:
    with django_assert_max_num_queries(4):
        incident_list_recent(days=3650, limit=50, now=TODAY)
    with django_assert_max_num_queries(6):
        incident_list_by_application(application="PayU", limit=50)
    with django_assert_max_num_queries(12):
        incident_search_similar(query="timeouts after a deploy", limit=10, now=TODAY)


@pytest.mark.parametrize(
    "listing",
    [
        lambda: incident_list_by_application(application="payu core").incidents,
        lambda: incident_list_recent(days=14, now=TODAY),
        lambda: [hit.incident for hit in incident_search_similar(query=" ", now=TODAY).hits],
    ],
    ids=["by application", "recent", "newest"],
)
def test_the_copilots_lists_take_versions_from_the_scope_not_a_join(
    version, listing, django_assert_num_queries
) -> None:
    """Building and reading the version and dataset join cost ~1 ms of CPU a call."""
    listing()  # the scope's versions and the application catalog read once
    with django_assert_num_queries(1) as captured:
        incidents = listing()
        assert {i.version.dataset.pk for i in incidents} == {version.dataset_id}
    assert "JOIN" not in captured.captured_queries[0]["sql"]


def test_results_render_as_text_for_the_model_and_as_data(version) -> None:
    result = incident_search_similar(query="forbidden after key rotation", limit=1, now=TODAY)
    text = result.as_text()
    assert f"Incident ID: INC-2025-08-24-001\nTitle: {KEY_ROTATION['title']}\n" in text
    assert f"Root Cause: {KEY_ROTATION['root_cause']}" in text
    assert "Details and Actions Taken and Steps and Fixes:\nCheckout requests timed out" in text
    data = result.as_data()
    assert data["results"][0]["incident_id"] == "INC-2025-08-24-001"
    assert data["results"][0]["occurred_at"] == "2025-08-24"
    assert data["filters"] == {}


def test_full_text_keeps_the_rarest_words_within_its_budget(version, monkeypatch) -> None:
    monkeypatch.setattr(ranking, "TERM_ROW_BUDGET", 1)
    monkeypatch.setattr(ranking, "MIN_QUERY_TERMS", 1)
    ranking.forget_term_frequencies()
    # "timed" is in every body; "timezone" in one root cause; "zzqx" nowhere yet.
    query = ranking.rare_terms_tsquery("timed out timezone zzqx", "incidents_incidentchunk")
    assert query is not None
    sql_text = str(query.source_expressions[-1].value)
    assert "'timezon'" in sql_text and "'zzqx'" in sql_text
    assert "'time'" not in sql_text


def test_full_text_leaves_out_words_too_common_to_rank(version, monkeypatch) -> None:
    monkeypatch.setattr(ranking, "TERM_ROW_BUDGET", 1)
    monkeypatch.setattr(ranking, "MIN_QUERY_TERMS", 2)
    ranking.forget_term_frequencies()
    # "zzqx" is nowhere; "timed" is in every body, so past the budget. Short
    # of MIN_QUERY_TERMS it is still kept, unless it is too common to rank.
    monkeypatch.setattr(ranking, "COMMON_TERM_ROWS", 1000)
    assert ranking.rare_terms("timed zzqx", "incidents_incidentchunk") == ["zzqx", "time"]
    monkeypatch.setattr(ranking, "COMMON_TERM_ROWS", 1)
    assert ranking.rare_terms("timed zzqx", "incidents_incidentchunk") == ["zzqx"]


def test_the_application_catalog_lists_each_application_once(tmp_path: Path) -> None:
    rows = [
        incident_row(f"INC-2025-01-{day:02d}-001", impacted_application="PayU Core",
                     company="PayU", occurred_at=f"2025-01-{day:02d}")
        for day in range(1, 6)
    ]  # fmt: skip
    incidents_import(tmp_path / "same-app.jsonl", rows, dataset_name="same-app", activate=True)
    assert [(e.application, e.company) for e in application_catalog()] == [("PayU Core", "PayU")]


def test_a_small_scope_is_ranked_exactly_a_large_one_through_hnsw(version, monkeypatch) -> None:
    assert version.chunk_count == version.incident_chunks.count() > 0  # counted on activation
    _, exact = selectors._filtered_chunks(selectors.incident_scope(), None, is_filtered=False)
    assert exact
    monkeypatch.setattr(selectors, "EXACT_SEARCH_MAX_CHUNKS", version.chunk_count - 1)
    _, exact = selectors._filtered_chunks(selectors.incident_scope(), None, is_filtered=False)
    assert not exact


def test_word_counts_that_pick_full_text_terms_come_from_the_searched_versions(
    version, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setattr(ranking, "TERM_ROW_BUDGET", 1)
    monkeypatch.setattr(ranking, "MIN_QUERY_TERMS", 1)
    # Another dataset, never activated, says "timezone" everywhere: it must not make
    # the word common for a search of the active version.
    rows = [
        incident_row(f"INC-2025-01-0{day}-001", title=f"timezone bug {day}") for day in range(1, 6)
    ]
    incidents_import(tmp_path / "other.jsonl", rows, dataset_name="other-desk", activate=False)
    ranking.forget_term_frequencies()
    assert ranking.rare_terms("timed timezone", "incidents_incidentchunk", [version.pk]) == [
        "timezon"
    ]
    everywhere = ranking.rare_terms("timed timezone", "incidents_incidentchunk")
    assert everywhere != ["timezon"]  # counted over every dataset, the word looked common
