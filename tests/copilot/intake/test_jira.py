"""The Jira adapter against a local server speaking Jira's REST API (create issue, comment)."""

from __future__ import annotations

import base64
import socket
import time
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User
from pytest_django.fixtures import Settings

from copilot.intake.executor import intake_reply
from copilot.models import Ticket, TicketComment
from copilot.services import conversation_create
from copilot.tickets.base import TicketDraft, TrackerError
from copilot.tickets.jira import JiraTracker
from copilot.tickets.trackers import get_tracker
from incidentdesk.errors import ConflictError
from tests.copilot.intake.conftest import done_of, intake_data, reported, say
from tests.copilot.intake.jira_server import JiraServer, jira_configure, jira_reply, slow
from tests.factories import AgentRunFactory

DRAFT = TicketDraft(
    title="Checkout API returns 502 after the 14:00 deploy",
    description="502s on checkout",
    severity="SEV2",
    service="Checkout Gateway",
    labels=("incidentdesk", "sev2", "http 502"),
)


@pytest.fixture
def jira() -> Iterator[JiraServer]:
    server = JiraServer().start()
    yield server
    server.stop()


@pytest.fixture
def jira_settings(settings: Settings, jira: JiraServer) -> Settings:
    return jira_configure(settings, jira, retries=2)


def tracker(jira: JiraServer, **options: float) -> JiraTracker:
    defaults = {"timeout": 0.5, "retries": 2, "backoff": 0.01}
    return JiraTracker(
        base_url=jira.url, user="desk-bot@example.com", token="jira-test-token", project="OPS",
        **(defaults | options),
    )  # fmt: skip


def test_it_creates_an_issue_in_the_project(jira: JiraServer) -> None:
    remote = tracker(jira).create_issue(DRAFT)
    assert remote.key == "OPS-1"
    assert remote.url == f"{jira.url}/browse/OPS-1"
    sent = jira.requests[0]
    assert sent.path == "/rest/api/2/issue"
    credentials = base64.b64encode(b"desk-bot@example.com:jira-test-token").decode()
    assert sent.headers["Authorization"] == f"Basic {credentials}"
    fields = sent.json["fields"]
    assert fields["project"] == {"key": "OPS"}
    assert fields["summary"] == "[SEV2] Checkout API returns 502 after the 14:00 deploy"
    assert fields["issuetype"] == {"name": "Task"}
    assert fields["labels"] == ["incidentdesk", "sev2", "http-502"]  # no spaces in labels


def test_it_adds_a_comment(jira: JiraServer) -> None:
    comment = tracker(jira).add_comment("OPS-7", "Rolled back the deploy.")
    assert comment.external_id == "20001"
    assert jira.requests[0].path == "/rest/api/2/issue/OPS-7/comment"
    assert jira.requests[0].json == {"body": "Rolled back the deploy."}


def test_bad_credentials_are_an_auth_error_and_not_retried(jira: JiraServer) -> None:
    jira.script(jira_reply(401))
    with pytest.raises(TrackerError) as caught:
        tracker(jira).create_issue(DRAFT)
    assert caught.value.kind == "auth"
    assert "HTTP 401" in caught.value.message
    assert len(jira.requests) == 1


def test_a_500_fails_at_once_with_jiras_reason(jira: JiraServer) -> None:
    """The issue may exist after a 500: retrying could file it twice."""
    jira.script(jira_reply(500, ("Workflow scheme is broken",)))
    with pytest.raises(TrackerError, match="HTTP 500: Workflow scheme is broken") as caught:
        tracker(jira).create_issue(DRAFT)
    assert caught.value.kind == "unavailable"
    assert len(jira.requests) == 1


def test_a_503_is_retried_and_then_succeeds(jira: JiraServer) -> None:
    jira.script(jira_reply(503, retry_after="0"), jira_reply(429))
    assert tracker(jira).create_issue(DRAFT).key.startswith("OPS-")
    assert len(jira.requests) == 3


def test_it_gives_up_after_the_retries(jira: JiraServer) -> None:
    jira.script(*[jira_reply(503)] * 3)
    with pytest.raises(TrackerError, match="HTTP 503"):
        tracker(jira, retries=2).create_issue(DRAFT)
    assert len(jira.requests) == 3


def test_a_slow_jira_times_out_once_without_a_retry(jira: JiraServer) -> None:
    jira.script(slow(1.5))
    started = time.perf_counter()
    with pytest.raises(TrackerError, match=r"did not answer within 0\.3 s") as caught:
        tracker(jira, timeout=0.3).create_issue(DRAFT)
    assert caught.value.kind == "timeout"
    assert time.perf_counter() - started < 1.4
    assert len(jira.requests) == 1


def test_a_refused_connection_is_retried_then_reported() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again: nothing listens there
    closed = JiraTracker(
        base_url=f"http://127.0.0.1:{port}",
        user="u",
        token="t",
        project="OPS",
        retries=1,
        backoff=0.01,
    )
    with pytest.raises(TrackerError, match=f"Could not reach Jira at 127.0.0.1:{port}"):
        closed.create_issue(DRAFT)


def test_jira_url_switches_the_tracker(jira_settings: Settings) -> None:
    assert get_tracker().name == "jira"
    jira_settings.JIRA_URL = ""
    assert get_tracker().name == "builtin"


@pytest.mark.usefixtures("payments_desk", "jira_settings")
def test_intake_still_answers_when_jira_refuses_the_credentials(
    alice: User, jira: JiraServer
) -> None:
    jira.script(jira_reply(401))
    conversation = conversation_create(owner=alice)
    events = list(
        intake_reply(
            conversation=conversation, user=alice, text="Checkout 502s right now, file a ticket"
        )
    )
    data = intake_data(events)
    assert data["ticket"] is None
    assert data["ticket_error"] == "Ticket creation failed, please check Jira credentials."
    assert data["actions"] and data["similar_incidents"]  # the summary and actions survive
    step = next(s for s in data["steps"] if s["name"] == "TICKET_CREATE")
    assert (step["outcome"], step["error"]) == ("failed", data["ticket_error"])
    assert "Ticket creation failed, please check Jira credentials." in done_of(events).content
    assert Ticket.objects.count() == 0


@pytest.mark.usefixtures("payments_desk", "jira_settings")
def test_after_a_failure_yes_files_the_ticket_in_jira_and_comments_go_there(
    alice: User, jira: JiraServer
) -> None:
    jira.script(jira_reply(503), jira_reply(503), jira_reply(503))
    conversation = conversation_create(owner=alice)
    failed = intake_data(say(conversation, alice, "Checkout 502s right now, file a ticket"))
    assert failed["ticket_error"].startswith("Ticket creation failed: Jira failed with HTTP 503")

    filed = intake_data(say(conversation, alice, "yes, try again"))["ticket"]
    ticket = Ticket.objects.get()
    assert (filed["key"], filed["tracker"]) == (ticket.key, "jira")
    assert filed["url"] == f"{jira.url}/browse/{ticket.key}"

    say(conversation, alice, "add a comment: we decided to roll back the 14:00 deploy")
    comment = TicketComment.objects.get()
    assert jira.requests[-1].path == f"/rest/api/2/issue/{ticket.key}/comment"
    assert comment.external_id.startswith("200")  # Jira's comment id, kept for provenance


@pytest.mark.usefixtures("payments_desk", "jira_settings")
def test_a_failed_jira_comment_still_keeps_the_decisions(alice: User, jira: JiraServer) -> None:
    conversation = reported(alice, "Checkout 502s right now, file a ticket")
    jira.script(jira_reply(401))
    events = say(conversation, alice, "add a comment: we decided to roll back the 14:00 deploy")
    data = intake_data(events)
    assert data["ticket_error"] == "Adding the comment failed, please check Jira credentials."
    assert [d["what"] for d in data["decisions"]] == ["roll back the 14:00 deploy"]
    assert data["decisions"][0]["ticket_comment_id"] is None
    step = data["steps"][-1]
    assert (step["name"], step["error"]) == ("TICKET_ADD_COMMENT", data["ticket_error"])
    assert TicketComment.objects.count() == 0
    assert done_of(events).content.startswith("Adding the comment failed")


@pytest.mark.usefixtures("payments_desk")
def test_a_conversation_with_an_answer_running_refuses_a_report(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    AgentRunFactory(conversation=conversation)
    with pytest.raises(ConflictError):
        intake_reply(conversation=conversation, user=alice, text="Checkout 502s right now")
