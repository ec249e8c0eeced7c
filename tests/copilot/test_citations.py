"""The citation check: ids nothing returned are marked, but an id the user typed
or one in a not-found sentence is no claim and is left as written."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from copilot.chat_models.offline import OfflineChatModel
from copilot.citations import UNVERIFIED_MARK, check_citations
from copilot.events import DoneEvent
from copilot.services import conversation_create
from tests.copilot.conftest import ask


def test_an_invented_id_is_still_marked_and_dropped() -> None:
    checked = check_citations(
        "See INC-2025-08-24-001 and INC-2099-01-01-999.", {"INC-2025-08-24-001"}
    )
    assert checked.text == f"See INC-2025-08-24-001 and INC-2099-01-01-999{UNVERIFIED_MARK}."
    assert (checked.kept, checked.dropped) == (["INC-2025-08-24-001"], ["INC-2099-01-01-999"])


def test_an_id_the_user_typed_is_not_rewritten() -> None:
    checked = check_citations(
        "INC\u20102099\u201001\u201001\u2010001 is not in any dataset I can search.",
        set(),
        typed="What happened in inc-2099-01-01-001?",
    )
    assert UNVERIFIED_MARK not in checked.text
    assert (checked.kept, checked.dropped) == ([], [])


@pytest.mark.parametrize(
    "sentence",
    [
        "No incident with id 'INC-2099-01-01-001' was found.",
        "No incident found with ID INC-2099-01-01-001.",
        "I could not find INC-2099-01-01-001 in the active datasets.",
        "KB-RB-999 does not exist.",
    ],
)
def test_a_not_found_sentence_is_not_rewritten(sentence: str) -> None:
    checked = check_citations(f"{sentence} INC-2099-01-01-002 shows the same.", set())
    assert checked.text.startswith(sentence)
    assert checked.dropped == ["INC-2099-01-01-002"]  # the next sentence claims it


@pytest.mark.parametrize(
    "answer",
    [
        "I found no incidents for PayU in 2019; the closest is INC-2099-01-01-007.",
        "No incident matched, but INC-2099-01-01-007 is close.",
        "Nothing was found for 2019 - however INC-2099-01-01-007 looks related.",
        "No incidents other than INC-2099-01-01-007 matched.",
        "I could not find a runbook. Instead KB-RB-999 covers it.",
    ],
)
def test_an_invented_id_beside_a_not_found_clause_is_still_marked(answer: str) -> None:
    # The exemption covered the whole sentence: an id the model made up after
    # "found no incidents ...;" or "..., but" was kept unmarked.
    checked = check_citations(answer, set())
    assert UNVERIFIED_MARK in checked.text
    assert len(checked.dropped) == 1


@pytest.mark.usefixtures("desk")
def test_the_not_found_answer_is_not_garbled(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    events = ask(conversation, alice, "Look up INC-2099-01-01-001", model=OfflineChatModel())
    done = events[-1]
    assert isinstance(done, DoneEvent)
    assert "No incident found with ID INC-2099-01-01-001." in done.content
    assert "[unverified" not in done.content
    assert (done.citations, done.dropped_citations) == ([], [])
