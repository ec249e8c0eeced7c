"""Offline intake end to end: report → ticket → comment → "what did we decide?"."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from copilot.events import StatusEvent
from copilot.models import AgentRun, Decision, Message, Ticket, TicketComment
from copilot.services import conversation_create
from incidents.models import Incident
from incidents.parsing import INCIDENT_ID_RE
from incidents.selectors import incident_search_similar
from knowledge.parsing import DOCUMENT_ID_IN_TEXT_RE
from tests.copilot.intake.conftest import done_of, error_dialog_png, intake_data, say

pytestmark = pytest.mark.usefixtures("payments_desk")

REPORT = "Checkout API returns 502 after the 14:00 deploy"
# 2-4 words from the key phrase (the service and the symptom), not the raw sentence.
SHORT_TITLE = "Checkout Gateway 502 errors"


def test_a_report_streams_a_status_per_step_then_the_card_and_the_answer(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    events = say(conversation, alice, REPORT, image=error_dialog_png())
    kinds = [e.type for e in events]
    assert kinds[-2:] == ["tool_result", "done"]
    data = intake_data(events)
    assert [s["name"] for s in data["steps"]] == [
        "INGESTION", "VISION_ANALYSIS", "INCIDENT_CLASSIFICATION", "MEMORY_RETRIEVAL",
        "PLAYBOOK", "DUPLICATE_CHECK", "TICKET_CREATE", "MEMORY_WRITE",
    ]  # fmt: skip
    assert all(not s["error"] for s in data["steps"]), data["steps"]
    statuses = [e.text for e in events if isinstance(e, StatusEvent)]
    assert statuses[0] == "Analyzing your request... please hold on."
    assert "Searching for Similar Incidents..." in statuses


def test_a_report_says_each_step_in_the_designs_words(alice: User) -> None:
    # Retrieval says what it found as search_similar_incidents does (it said only
    # that it was searching), and the turn ends as the agent's does: title, then
    # wrapping up (intake wrapped up first).
    events = say(conversation_create(owner=alice), alice, REPORT)
    found = len(intake_data(events)["similar_incidents"])
    assert found
    said = [(e.type, e.to_message().get("text") or e.to_message().get("title")) for e in events]
    assert [(kind, text) for kind, text in said if kind in {"status", "title"}] == [
        ("status", "Analyzing your request... please hold on."),
        ("status", "Classifying the incident..."),
        ("status", "Searching for Similar Incidents..."),
        ("status", f"Found {found} relevant incidents..."),
        ("status", "Drafting next actions from past incidents and runbooks..."),
        ("status", "Checking open tickets for duplicates..."),
        ("status", "Preparing the ticket..."),
        ("status", "Saving the incident so later searches find it..."),
        ("status", "Generating title for the incident report..."),
        ("title", SHORT_TITLE),
        ("status", "Almost done, wrapping up the details"),
    ]


def test_the_report_becomes_a_structured_incident_with_sourced_actions(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    data = intake_data(say(conversation, alice, REPORT, image=error_dialog_png()))
    incident = data["incident"]
    assert incident["title"] == SHORT_TITLE
    assert incident["service"] == "Checkout Gateway"
    assert incident["severity"] == "SEV2"
    assert "HTTP 502" in incident["error_codes"]
    assert "deployment" in incident["components"]
    assert "ERR_UPSTREAM_TIMEOUT" in data["description"]  # read from the screenshot
    assert data["similar_incidents"] and all(s["incident_id"] for s in data["similar_incidents"])
    assert data["actions"] and all(a["source"] for a in data["actions"])
    assert data["owner_team"]
    assert data["ticket"] is None  # nobody asked for one yet
    assert data["ticket_proposal"] == {"action": "create", "ticket_key": ""}


def test_report_confirm_comment_and_the_decision_ledger(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    say(conversation, alice, REPORT, image=error_dialog_png())
    assert Ticket.objects.count() == 0

    filed = intake_data(say(conversation, alice, "yes, file it"))
    ticket = Ticket.objects.get()
    assert filed["ticket"]["key"] == ticket.key and ticket.key.startswith("DESK-")
    assert filed["ticket"]["url"] == f"/tickets/{ticket.key}/"
    assert ticket.severity == "SEV2" and ticket.service == "Checkout Gateway"

    comment = (
        "add a comment: we rolled back the 14:00 deploy and decided to keep the flag off. "
        "Bob will watch the error rate"
    )
    commented = say(conversation, alice, comment)
    assert intake_data(commented)["kind"] == "add_comment"
    posted = TicketComment.objects.get()
    assert posted.ticket == ticket and posted.body.startswith("we rolled back")

    answer = say(conversation, alice, "what did we decide?")
    ledger = intake_data(answer)["decisions"]
    whats = [d["what"] for d in ledger]
    assert whats == [
        f"File ticket {ticket.key}: {ticket.title}",
        "keep the flag off",
        "watch the error rate",
    ]
    assert [d["who"] for d in ledger] == ["alice", "alice", "Bob"]
    assert ledger[1]["ticket_comment_id"] == posted.pk
    assert ledger[1]["source_message_id"] == posted.source_message_id
    content = done_of(answer).content
    assert "keep the flag off" in content and f"comment #{posted.pk} on {ticket.key}" in content


def test_every_turn_is_stored_so_a_reload_shows_it(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    done = done_of(say(conversation, alice, REPORT))
    roles = list(conversation.messages.values_list("role", flat=True))
    assert roles == ["user", "assistant"]
    answer = Message.objects.get(pk=done.message_id)
    assert answer.content == done.content
    assert answer.data["incident_intake"]["incident"]["title"] == SHORT_TITLE
    run = AgentRun.objects.get(pk=done.run_id)
    assert run.status == "done" and run.tool_calls.count() == 7
    conversation.refresh_from_db()
    assert conversation.state["intake"]["incident"]["title"] == SHORT_TITLE
    assert conversation.title == SHORT_TITLE


@pytest.mark.parametrize(
    "ask", ["please file a ticket", "please open a ticket", "can you raise a Jira issue"]
)
def test_asking_for_a_ticket_in_the_report_files_it_at_once(alice: User, ask: str) -> None:
    conversation = conversation_create(owner=alice)
    data = intake_data(say(conversation, alice, f"{REPORT}, {ask}"))
    assert data["ticket"]["key"] == Ticket.objects.get().key
    assert data["incident"]["title"] == SHORT_TITLE


def test_a_report_saying_not_to_open_a_ticket_only_proposes_one(alice: User) -> None:
    # "don't open a ticket yet" filed one at once.
    text = f"{REPORT}, don't open a ticket yet"
    data = intake_data(say(conversation_create(owner=alice), alice, text))
    assert data["ticket"] is None and not Ticket.objects.exists()
    assert data["ticket_proposal"] == {"action": "create", "ticket_key": ""}


def test_filing_twice_returns_the_same_ticket(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    say(conversation, alice, REPORT)
    first = intake_data(say(conversation, alice, "yes, file it"))["ticket"]
    again = intake_data(say(conversation, alice, "create a ticket"))["ticket"]
    assert first == again
    assert Ticket.objects.count() == 1


def test_a_reported_incident_is_found_by_later_searches(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    data = intake_data(
        say(conversation, alice, "Refund webhooks to merchants are failing with 500 since 09:30")
    )
    found = incident_search_similar(query="refund webhooks failing with 500", limit=5).hits
    assert data["incident"]["incident_id"] in [hit.incident.incident_id for hit in found]


def test_a_report_is_stored_reported_under_a_short_title(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    data = intake_data(say(conversation, alice, REPORT))
    stored = Incident.objects.get(incident_id=data["incident"]["incident_id"])
    assert stored.review_status == "reported" and stored.version.dataset.name == "reported"
    assert stored.title == SHORT_TITLE and 2 <= len(stored.title.split()) <= 4


def test_a_second_report_of_the_same_problem_offers_the_open_ticket(alice: User, bob: User) -> None:
    first = conversation_create(owner=alice)
    say(first, alice, f"{REPORT}, please file a ticket")
    ticket = Ticket.objects.get()

    second = conversation_create(owner=bob)
    data = intake_data(say(second, bob, "Checkout is throwing 502s right now since the deploy"))
    assert data["duplicate"]["ticket_key"] == ticket.key
    assert data["ticket_proposal"] == {"action": "comment", "ticket_key": ticket.key}
    assert Ticket.objects.count() == 1

    confirmed = intake_data(say(second, bob, "yes"))
    assert confirmed["ticket"]["key"] == ticket.key
    assert TicketComment.objects.get().ticket == ticket
    assert Ticket.objects.count() == 1


def test_a_likely_duplicate_asks_first_even_when_the_report_asks_for_a_ticket(
    alice: User, bob: User
) -> None:
    say(conversation_create(owner=alice), alice, f"{REPORT}, please file a ticket")
    ticket = Ticket.objects.get()
    second = conversation_create(owner=bob)
    text = "Checkout is throwing 502s right now since the deploy, please open a ticket"
    data = intake_data(say(second, bob, text))
    assert data["duplicate"]["ticket_key"] == ticket.key
    assert data["ticket"] is None
    assert data["ticket_proposal"] == {"action": "comment", "ticket_key": ticket.key}
    assert Ticket.objects.count() == 1


def test_a_new_ticket_anyway_files_a_separate_one(alice: User, bob: User) -> None:
    say(conversation_create(owner=alice), alice, f"{REPORT}, please file a ticket")
    second = conversation_create(owner=bob)
    say(second, bob, "Checkout is throwing 502s right now since the deploy")
    data = intake_data(say(second, bob, "create a new ticket anyway"))
    assert data["ticket"]["key"] != Ticket.objects.order_by("pk").first().key
    assert Ticket.objects.count() == 2


def test_what_did_we_decide_with_nothing_decided_says_so(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    answer = say(conversation, alice, "what did we decide?")
    assert "No decisions" in done_of(answer).content
    assert Decision.objects.count() == 0


def test_a_second_report_replaces_the_current_incident_and_its_proposal(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    say(conversation, alice, f"{REPORT}, please file a ticket")
    data = intake_data(say(conversation, alice, "Refund webhooks are failing with 500 right now"))
    assert data["ticket"] is None
    assert data["ticket_proposal"] == {"action": "create", "ticket_key": ""}
    filed = intake_data(say(conversation, alice, "yes, file it"))
    assert filed["ticket"]["key"] != Ticket.objects.order_by("pk").first().key
    assert Ticket.objects.order_by("pk").last().title == "Refund Webhooks 500 errors"


def _stored_report(incident_id: str) -> Incident:
    return Incident.objects.get(incident_id=incident_id, version__status="active")


def test_a_report_filed_at_once_is_stored_with_its_ticket_key(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    data = intake_data(say(conversation, alice, f"{REPORT}, please file a ticket"))
    stored = _stored_report(data["incident"]["incident_id"])
    assert stored.extra["ticket_key"] == data["ticket"]["key"] == Ticket.objects.get().key


def test_a_ticket_filed_on_confirmation_is_written_on_the_stored_report(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    incident_id = intake_data(say(conversation, alice, REPORT))["incident"]["incident_id"]
    assert _stored_report(incident_id).extra["ticket_key"] == ""  # proposed, not filed
    filed = intake_data(say(conversation, alice, "yes, file it"))["ticket"]
    assert _stored_report(incident_id).extra["ticket_key"] == filed["key"]


def test_the_answer_cites_only_incidents_and_documents(alice: User) -> None:
    # The playbook's other sources ("log search", "change rule") are no records:
    # cited, the page linked them as documents that do not exist.
    conversation = conversation_create(owner=alice)
    events = say(conversation, alice, REPORT)
    sources = {action["source"] for action in intake_data(events)["actions"]}
    assert {"log search", "change rule"} <= sources
    citations = done_of(events).citations
    assert citations and all(
        INCIDENT_ID_RE.match(cited) or DOCUMENT_ID_IN_TEXT_RE.fullmatch(cited)
        for cited in citations
    ), citations
