"""The offline engine's understanding end to end: follow-ups from the record, golden
examples leading the answer, windows that keep their subject, titles."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from copilot.events import DoneEvent, Event, TitleEvent, ToolCallEvent
from copilot.models import Conversation
from copilot.replies import conversation_reply
from copilot.services import conversation_create, golden_example_embed
from copilot.titles import heuristic_title
from tests.factories import GoldenExampleFactory

pytestmark = pytest.mark.usefixtures("desk")


def ask(conversation: Conversation, user: User, text: str) -> list[Event]:
    return list(conversation_reply(conversation=conversation, user=user, text=text))


def done_of(events: list[Event]) -> DoneEvent:
    return next(e for e in events if isinstance(e, DoneEvent))


def tools_of(events: list[Event]) -> list[tuple[str, dict]]:
    return [(e.name, e.arguments) for e in events if isinstance(e, ToolCallEvent)]


def test_what_was_the_resolution_rereads_the_incident_and_quotes_its_mitigation(
    alice: User,
) -> None:
    """The seeds' own follow-up: answered from the record the last turn showed."""
    conversation = conversation_create(owner=alice)
    ask(conversation, alice, "Merchants are getting HTTP 403 after we rotated the API key")
    follow_up = ask(conversation, alice, "What was the resolution?")
    assert tools_of(follow_up) == [("lookup_incident_by_id", {"incident_id": "INC-2025-08-24-001"})]
    answer = done_of(follow_up).content
    assert answer.startswith("> Mitigation: Re-synced the secret to every gateway pool")
    assert "INC-2025-08-24-001" in done_of(follow_up).citations


def test_a_detail_follow_up_quotes_the_sentence_that_answers_it(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    ask(conversation, alice, "Checkout p99 went through the roof, seen it before?")
    answer = done_of(ask(conversation, alice, "how long did that last?")).content
    assert answer.splitlines()[0] == "> Checkout p99 latency rose to 9 seconds for 25 minutes."


def test_the_second_one_points_at_the_second_result(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    first = ask(conversation, alice, "Any incidents in 2025?")
    ids = done_of(first).citations
    assert len(ids) >= 2
    follow_up = ask(conversation, alice, "the second one - what caused it?")
    assert tools_of(follow_up)[0] == ("lookup_incident_by_id", {"incident_id": ids[1]})


def test_walking_down_a_list_after_reading_one_in_detail(alice: User) -> None:
    """After "the first one - what caused it?" the focus is one incident; "the
    second one" still means the listing's second."""
    conversation = conversation_create(owner=alice)
    ids = done_of(ask(conversation, alice, "Any incidents in 2025?")).citations
    assert len(ids) >= 2
    ask(conversation, alice, "the first one - what caused it?")
    follow_up = ask(conversation, alice, "and the second one, how long did it last?")
    assert tools_of(follow_up)[0] == ("lookup_incident_by_id", {"incident_id": ids[1]})


def test_a_runbook_follow_up_searches_knowledge_with_the_incidents_topic(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    ask(conversation, alice, "Merchants are getting HTTP 403 after we rotated the API key")
    follow_up = ask(conversation, alice, "is there a runbook for that?")
    name, arguments = tools_of(follow_up)[0]
    assert name == "search_knowledge" and arguments["type_filter"] == "runbook"
    assert "403" in arguments["query"]
    assert "KB-RB-001" in done_of(follow_up).content


def test_a_window_question_keeps_its_subject(alice: User) -> None:
    """ "PayU Core timeouts in the last 90 days": PayU Core incidents in the window only."""
    conversation = conversation_create(owner=alice)
    events = ask(conversation, alice, "PayU Core problems between June and December 2025")
    assert tools_of(events)[0][0] == "search_similar_incidents"
    result = next(e for e in events if hasattr(e, "data") and "applied_filters" in e.data)
    assert result.data["applied_filters"]["applications"] == ["PayU Core"]
    assert [r["incident_id"] for r in result.data["results"]] == ["INC-2025-08-24-001"]


def test_a_matching_golden_example_leads_the_offline_answer(alice: User) -> None:
    example = GoldenExampleFactory(
        question="Why did PayU merchants get 403s after the key rotation?",
        answer="The rotated key never reached the gateway cache: see INC-2025-08-24-001. "
        "Unrelated to INC-2025-09-01-001; INC-2020-01-01-001 was the first time.",
    )
    golden_example_embed(example=example)
    conversation = conversation_create(owner=alice)
    events = ask(conversation, alice, "Why did PayU merchants get 403s after the key rotation?")
    answer = done_of(events).content
    assert answer.startswith("### Verified answer\n\nThe rotated key never reached")
    assert "### From the records" in answer
    # Ids the search did not return are looked up, so they are verified like any citation;
    # one that is not in the data is said so.
    looked_up = [
        a["incident_id"] for name, a in tools_of(events) if name == "lookup_incident_by_id"
    ]
    assert looked_up == ["INC-2020-01-01-001"]  # the search returned the other two
    assert {"INC-2025-08-24-001", "INC-2025-09-01-001"} <= set(done_of(events).citations)
    assert "INC-2020-01-01-001 [unverified" in answer
    assert "(1 of the incidents it cites is not in the current data.)" in answer


def test_without_a_golden_match_the_answer_is_unchanged(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    answer = done_of(ask(conversation, alice, "Checkout latency spike from the pool")).content
    assert "Verified answer" not in answer


@pytest.mark.parametrize(
    ("question", "title"),
    [
        ("Payments gettin 403 for merchants since the key rotation", "Payments 403 Merchants Key"),
        ("cloudflare?", "Cloudflare incidents"),
        ("hello", ""),
        ("What caused INC-2025-08-24-001?", "Incident INC-2025-08-24-001"),
    ],
)
def test_titles_are_two_to_four_words_of_the_key_phrase(question: str, title: str) -> None:
    assert heuristic_title(question) == title


def test_a_greeting_leaves_the_conversation_untitled_until_a_question(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    greeting = ask(conversation, alice, "hi there")
    assert not any(isinstance(e, TitleEvent) for e in greeting)
    assert not tools_of(greeting)
    question = ask(conversation, alice, "settlement report missing rows?")
    title = next(e for e in question if isinstance(e, TitleEvent)).title
    assert 2 <= len(title.split()) <= 4


def test_after_a_document_has_that_happened_searches_incidents_of_its_subject(
    alice: User,
) -> None:
    """The dialogue state remembers the documents a turn was about: "has that bitten
    anyone?" asks for incidents like the document's subject, not a detail of the
    past fix shown under it."""
    conversation = conversation_create(owner=alice)
    first = ask(conversation, alice, "is there a known issue about gateways caching secrets?")
    assert done_of(first).content.startswith("The most relevant known issue is **KB-KI-001**")
    follow_up = ask(conversation, alice, "has that bitten anyone before?")
    assert tools_of(follow_up) == [
        ("search_similar_incidents",
         {"query": "Gateway secret caches keep old keys for a day", "limit": 5})
    ]  # fmt: skip
    assert "INC-2025-08-24-001" in done_of(follow_up).citations


def test_after_an_incident_has_that_happened_still_asks_about_the_incident(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    ask(conversation, alice, "INC-2025-08-24-001")
    follow_up = ask(conversation, alice, "has that happened before?")
    assert tools_of(follow_up) == [("lookup_incident_by_id", {"incident_id": "INC-2025-08-24-001"})]


def test_today_against_then_is_no_time_window(alice: User) -> None:
    """ "How would we handle that today?" asks what to do now, about the incident
    shown; "what broke today?" is a window."""
    conversation = conversation_create(owner=alice)
    ask(conversation, alice, "INC-2025-08-24-001")
    follow_up = ask(conversation, alice, "how would we handle that today?")
    assert tools_of(follow_up)[0][0] == "search_knowledge"
    listing = ask(conversation, alice, "what broke today?")
    assert tools_of(listing)[0][0] != "search_knowledge"
