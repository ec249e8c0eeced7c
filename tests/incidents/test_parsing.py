import datetime as dt

import pytest

from incidents.parsing import (
    date_from_incident_id,
    find_incident_ids,
    incident_chunk_texts,
    markdown_sections,
    normalize_incident_id,
    word_windows,
)


@pytest.mark.parametrize("dash", ["\u2010", "\u2011", "\u2012", "\u2013", "\u2014", "\u2212", "-"])
def test_normalise_maps_every_unicode_dash_and_case(dash: str) -> None:
    raw = f" inc{dash}2025{dash}08{dash}24{dash}001 "
    assert normalize_incident_id(raw) == "INC-2025-08-24-001"


def test_normalise_turns_stray_spaces_into_dashes() -> None:
    assert normalize_incident_id("INC 2025 - 08-24 -001") == "INC-2025-08-24-001"


def test_normalise_folds_look_alikes_and_drops_invisible_characters() -> None:
    """What a lookup, a search or the API is given is matched as the import stored it."""
    raw = "\u200binc\uff0d\uff12\uff10\uff12\uff15-08-24-001\u2060\ufeff"
    assert normalize_incident_id(raw) == "INC-2025-08-24-001"
    assert normalize_incident_id("INC\u00ad2025-08-24-001") == "INC-2025-08-24-001"


def test_date_is_parsed_from_the_id_only_when_real() -> None:
    assert date_from_incident_id("INC-2024-02-29-002") == dt.date(2024, 2, 29)
    assert date_from_incident_id("INC-2023-02-29-001") is None
    assert date_from_incident_id("CHG-12345") is None


def test_ids_are_found_in_free_text_once_each() -> None:
    text = (
        "Compare INC\u20112025\u201108\u201124\u2011001 with inc-2024-01-02-003 "
        "and INC-2025-08-24-001."
    )
    assert find_incident_ids(text) == ["INC-2025-08-24-001", "INC-2024-01-02-003"]


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("inc 2020-02-19-001 pls", ["INC-2020-02-19-001"]),
        ("INC#2019-07-02-001 or inc2019-07-02-002?", ["INC-2019-07-02-001", "INC-2019-07-02-002"]),
        ("what about 2021-10-04-001?", ["INC-2021-10-04-001"]),
        # A date, or a longer code that contains one, is no id.
        ("on 2021-10-04 at 10:01", []),
        ("order 12-2020-02-19-001x", []),
    ],
)
def test_ids_are_found_however_the_prefix_is_joined_or_left_out(text: str, found: list) -> None:
    assert find_incident_ids(text) == found


def test_word_windows_overlap_and_cover_every_word() -> None:
    words = [f"w{i}" for i in range(250)]
    windows = word_windows(" ".join(words), size=100, overlap=20)
    assert [len(w.split()) for w in windows] == [100, 100, 90]
    assert windows[1].split()[0] == "w80"
    covered = {word for window in windows for word in window.split()}
    assert covered == set(words)


def test_incident_chunks_start_with_a_summary_then_titled_body_windows() -> None:
    chunks = incident_chunk_texts(
        title="403 after key rotation",
        application="PayU Core",
        root_cause="stale key",
        mitigation="re-synced the secret",
        body="Merchants saw HTTP 403.",
    )
    assert chunks[0].splitlines() == [
        "403 after key rotation",
        "Application: PayU Core",
        "Root cause: stale key",
        "Mitigation: re-synced the secret",
    ]
    assert chunks[1] == "403 after key rotation\nMerchants saw HTTP 403."


def test_markdown_is_split_by_section_with_preamble() -> None:
    body = "Intro line.\n\n## Symptoms\n- 403s\n\n## Steps\n1. Rotate\n\n## Empty\n"
    assert markdown_sections(body) == [
        ("", "Intro line."),
        ("Symptoms", "- 403s"),
        ("Steps", "1. Rotate"),
    ]
