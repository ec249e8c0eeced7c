"""Misspelt words of a search, respelt to the words of the incidents' titles."""

from pathlib import Path

import pytest

from incidentdesk.embeddings import common_words
from incidents.selectors import incident_search_similar
from incidents.spelling import respell
from tests.factories import incident_row, incidents_import

TITLES = frozenset(
    {"uploads", "fail", "primary", "key", "heroku", "incidents", "replication", "truncated"}
)


@pytest.mark.parametrize(
    ("typed", "meant"),
    [
        ("uplaods fail since noon", "uploads fail since noon"),  # two letters swapped
        ("any herkou incidnts", "any heroku incidents"),  # ...and a letter left out
        ("repliaction stopped", "replication stopped"),
        ("incidents that affected Herkou", "incidents that affected Heroku"),  # as a name is
    ],
)
def test_a_slip_away_from_one_title_word_is_that_word(typed: str, meant: str) -> None:
    assert respell(typed, common_words(), TITLES) == meant


@pytest.mark.parametrize(
    "typed",
    [
        "backends throttled",  # forms of English words the vocabulary lacks are no slips
        "cant connect, perf is bad",  # short words: contractions and shorthand
        "resync the ProxySQL pool",  # one more letter of another kind: "rsync" is not it
        "UPLAODS in eu-west-1 and x509",  # capitals, codes and regions are as typed
        "keyz",  # near no title word by one slip of fast typing ("key" is a letter changed)
        "truncate tables",  # another form of a title word ("truncated"), no slip
    ],
)
def test_words_that_are_no_slips_stay_as_typed(typed: str) -> None:
    assert respell(typed, common_words(), TITLES) == typed


@pytest.mark.django_db
def test_a_misspelt_search_finds_what_the_spelt_one_does(tmp_path: Path) -> None:
    rows = [
        incident_row(
            "INC-2014-07-29-002", title="Uploads fail when the primary key hits its limit"
        ),
        incident_row("INC-2018-11-08-001", title="Events table read-only after id hits its limit"),
    ]
    incidents_import(tmp_path / "a.jsonl", rows, activate=True)
    found = incident_search_similar(query="uplaods fail for evryone, id maxed out")
    assert found.query.startswith("uploads fail")
    assert found.hits[0].incident.incident_id == "INC-2014-07-29-002"
