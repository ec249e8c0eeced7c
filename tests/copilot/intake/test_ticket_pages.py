"""The ticket list and page: filters, who sees what, status actions (synced to the
local Jira), the link to and from the conversation, and the report's screenshot."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User
from django.test import Client
from pytest_django.fixtures import Settings

from copilot.models import Conversation, Ticket
from copilot.services import conversation_create
from tests.copilot.intake.conftest import error_dialog_png, intake_data, say
from tests.copilot.intake.jira_server import JiraServer, Reply, jira_configure, jira_reply
from tests.factories import TicketFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def carol(db: None) -> User:
    """carol is on call too, but did not report these incidents."""
    return UserFactory(username="carol")


def _ticket(owner: User, key: str, **fields: object) -> Ticket:
    conversation = conversation_create(owner=owner)
    return TicketFactory(key=key, created_by=owner, conversation=conversation, **fields)


def _keys(client: Client, **params: str) -> list[str]:
    response = client.get("/tickets/", params)
    assert response.status_code == 200
    return [t.key for t in response.context["tickets"]]


def test_people_see_their_own_tickets_and_staff_see_all(client, alice, bob, carol) -> None:
    _ticket(alice, "DESK-1")
    _ticket(carol, "DESK-2", status="resolved")
    _ticket(bob, "OPS-3", tracker="jira", external_url="https://jira.example.com/browse/OPS-3")
    client.force_login(alice)
    assert _keys(client) == ["DESK-1"]
    assert client.get("/tickets/DESK-2/").status_code == 404
    client.force_login(bob)
    assert _keys(client) == ["OPS-3", "DESK-2", "DESK-1"]
    assert _keys(client, status="resolved") == ["DESK-2"]
    assert _keys(client, tracker="jira") == ["OPS-3"]
    assert _keys(client, mine="1") == ["OPS-3"]
    assert client.get("/tickets/DESK-2/").status_code == 200


@pytest.mark.parametrize("params", [{"status": "done"}, {"tracker": "github"}, {"mine": "yes"}])
def test_an_unknown_filter_value_is_a_400(client, alice, params) -> None:
    client.force_login(alice)
    assert client.get("/tickets/", params).status_code == 400


def test_acknowledge_resolve_and_reopen_a_built_in_ticket(client, alice, carol) -> None:
    ticket = _ticket(alice, "DESK-1")
    client.force_login(alice)
    page = client.get("/tickets/DESK-1/").content.decode()
    assert 'value="acknowledge"' in page and 'value="reopen"' not in page
    for action, status in [
        ("acknowledge", "in_progress"), ("resolve", "resolved"), ("reopen", "open"),
    ]:  # fmt: skip
        response = client.post("/tickets/DESK-1/status/", {"action": action})
        assert response.status_code == 302
        ticket.refresh_from_db()
        assert ticket.status == status
    refused = client.post("/tickets/DESK-1/status/", {"action": "reopen"})
    assert refused.status_code == 409 and "it cannot be reopened" in refused.content.decode()
    assert client.post("/tickets/DESK-1/status/", {"action": "close!"}).status_code == 400
    assert client.get("/tickets/DESK-1/status/").status_code == 405
    client.force_login(carol)
    assert client.post("/tickets/DESK-1/status/", {"action": "resolve"}).status_code == 404
    ticket.refresh_from_db()
    assert ticket.status == "open"


@pytest.fixture
def jira(settings: Settings) -> Iterator[JiraServer]:
    server = JiraServer().start()
    jira_configure(settings, server, retries=0)
    yield server
    server.stop()


def test_status_changes_of_a_jira_ticket_go_through_its_workflow(client, alice, jira) -> None:
    ticket = _ticket(alice, "OPS-7", tracker="jira")
    client.force_login(alice)
    client.post("/tickets/OPS-7/status/", {"action": "acknowledge"})
    client.post("/tickets/OPS-7/status/", {"action": "resolve"})
    sent = [(r.method, r.path, r.json) for r in jira.requests]
    path = "/rest/api/2/issue/OPS-7/transitions"
    assert sent == [
        ("GET", path, {}), ("POST", path, {"transition": {"id": "21"}}),
        ("GET", path, {}), ("POST", path, {"transition": {"id": "31"}}),
    ]  # fmt: skip
    assert jira.requests[1].headers["Authorization"].startswith("Basic ")
    ticket.refresh_from_db()
    assert ticket.status == "resolved"


def test_a_jira_refusal_leaves_the_ticket_as_it_was(client, alice, jira) -> None:
    ticket = _ticket(alice, "OPS-8", tracker="jira")
    jira.script(jira_reply(401))
    client.force_login(alice)
    response = client.post("/tickets/OPS-8/status/", {"action": "resolve"})
    assert response.status_code == 502
    assert "OPS-8 was not changed: Jira refused the credentials" in response.content.decode()
    ticket.refresh_from_db()
    assert ticket.status == "open"


@pytest.mark.usefixtures("payments_desk")
def test_the_report_screenshot_is_shown_to_the_reporter_and_staff_only(
    client, alice, bob, carol
) -> None:
    conversation = conversation_create(owner=alice)
    data = intake_data(
        say(
            conversation,
            alice,
            "Checkout API returns 502 after the 14:00 deploy, please file a ticket",
            image=error_dialog_png(),
        )
    )
    key = data["ticket"]["key"]
    client.force_login(alice)
    page = client.get(f"/tickets/{key}/").content.decode()
    assert f'src="/tickets/{key}/screenshot/"' in page
    assert f'href="/conversations/{conversation.pk}/"' in page  # back to the conversation
    shot = client.get(f"/tickets/{key}/screenshot/")
    assert shot.status_code == 200 and shot["Content-Type"] == "image/png"
    assert b"".join(shot.streaming_content) == error_dialog_png()
    chat = client.get(f"/conversations/{conversation.pk}/").content.decode()
    assert f'href="/tickets/{key}/"' in chat  # and from the conversation to the ticket
    client.force_login(carol)
    assert client.get(f"/tickets/{key}/screenshot/").status_code == 404
    client.force_login(bob)
    assert client.get(f"/tickets/{key}/screenshot/").status_code == 200
    staff_page = client.get(f"/tickets/{key}/").content.decode()
    assert f'href="/conversations/{conversation.pk}/"' not in staff_page  # alice's, private
    assert Conversation.objects.get(pk=conversation.pk).owner == alice


def test_a_workflow_without_the_wanted_transition_is_said_plainly(client, alice, jira) -> None:
    ticket = _ticket(alice, "OPS-9", tracker="jira", status="in_progress")
    jira.script(Reply(status=200, body={"transitions": []}))
    client.force_login(alice)
    response = client.post("/tickets/OPS-9/status/", {"action": "resolve"})
    assert response.status_code == 502
    assert "Jira offers no transition of OPS-9 to resolved" in response.content.decode()
    assert [r.method for r in jira.requests] == ["GET"]
    ticket.refresh_from_db()
    assert ticket.status == "in_progress"
