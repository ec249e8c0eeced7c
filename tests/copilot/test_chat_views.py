"""The chat pages and their buttons: what alice sees, and what nobody else can touch."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from copilot.display import rerun_base
from copilot.models import AgentRun, Conversation, Message
from copilot.replies import conversation_reply
from copilot.services import conversation_create
from tests.factories import (
    AgentRunFactory,
    MessageFactory,
    UserFactory,
    incidents_import,
    key_rotation_403,
    settlement_missing_rows,
)

pytestmark = pytest.mark.django_db
JSON = {"HTTP_ACCEPT": "application/json"}


@pytest.fixture
def mallory(db: None) -> User:
    return UserFactory(username="mallory")


@pytest.fixture
def incidents(tmp_path: Path) -> None:
    rows = [key_rotation_403(), settlement_missing_rows()]
    incidents_import(tmp_path / "incidents.jsonl", rows, activate=True)


@pytest.fixture
def answered(alice: User, incidents: None) -> Conversation:
    """A conversation with one real answer from the offline engine."""
    conversation = conversation_create(owner=alice)
    text = "Merchants get HTTP 403 from PayU Core"
    events = list(conversation_reply(conversation=conversation, user=alice, text=text))
    assert events[-1].type == "done"
    return conversation


def _answer(conversation: Conversation) -> Message:
    return conversation.messages.filter(role=Message.Role.ASSISTANT, is_complete=True).last()


def test_every_chat_page_needs_a_login(client: Client, answered: Conversation) -> None:
    answer = _answer(answered)
    pages = ["/", f"/conversations/{answered.pk}/", f"/messages/{answer.pk}/answer/"]
    posts = [
        "/conversations/new/",
        f"/conversations/{answered.pk}/rename/",
        f"/conversations/{answered.pk}/delete/",
        f"/conversations/{answered.pk}/stop/",
        f"/messages/{answer.pk}/feedback/",
    ]
    for url in pages:
        assert client.get(url).status_code == 302, url
    for url in posts:
        response = client.post(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/accounts/login/"), url
    assert Conversation.objects.filter(pk=answered.pk, title__gt="").exists()


def test_the_home_page_is_a_new_chat_with_only_her_history(
    client: Client, alice: User, mallory: User
) -> None:
    for owner, title in [(alice, "Checkout timeouts"), (mallory, "Mallory's secrets")]:
        MessageFactory(conversation=conversation_create(owner=owner, title=title), role="user")
    client.force_login(alice)
    page = client.get("/").content.decode()
    assert "Checkout timeouts" in page
    assert "Mallory&#x27;s secrets" not in page and "Mallory's secrets" not in page
    assert 'id="status" role="status" aria-live="polite"' in page
    assert 'data-ws-path="/ws/conversations/"' in page
    assert 'label for="question"' in page


def test_the_page_learns_which_tools_to_leave_undrawn_from_the_tool_registry(
    client: Client, alice: User
) -> None:
    """chat.js draws no card for the search tools (their answers cite them); the
    list comes from copilot/tools.py, so a new tool is declared in one place."""
    client.force_login(alice)
    page = client.get("/").content.decode()
    searched = (
        "lookup_incident_by_id,search_similar_incidents,get_incidents_by_application,"
        "get_recent_incidents,search_knowledge"
    )
    assert f'data-search-tools="{searched}"' in page  # search_logs draws its card


def test_a_conversation_page_shows_steps_chips_answer_citations_and_feedback(
    client: Client, alice: User, answered: Conversation, django_assert_max_num_queries
) -> None:
    client.force_login(alice)
    with django_assert_max_num_queries(12):
        page = client.get(f"/conversations/{answered.pk}/").content.decode()
    assert "Merchants get HTTP 403 from PayU Core" in page
    assert '<details class="steps">' in page and "search_similar_incidents" in page
    assert 'class="filters"' in page and 'value="PayU Core"' in page
    assert 'data-base="Merchants get HTTP 403"' in page  # the words without the filter
    assert 'href="/incidents/INC-2025-08-24-001/"' in page  # linked in the answer and as a chip
    assert 'class="cite cite-incident"' in page
    assert 'class="feedback"' in page
    assert answered.title in page


def test_the_answer_fragment_is_sanitised_server_html(
    client: Client, alice: User, answered: Conversation
) -> None:
    answer = _answer(answered)
    answer.content = "Fixed in INC-2025-08-24-001 <script>alert(1)</script> **bold**"
    answer.save()
    client.force_login(alice)
    html = client.get(f"/messages/{answer.pk}/answer/").content.decode()
    assert "<script>" not in html
    assert "<strong>bold</strong>" in html
    assert '<a class="ref ref-incident" href="/incidents/INC-2025-08-24-001/"' in html


def test_nobody_else_can_see_or_touch_her_conversation(
    client: Client, mallory: User, answered: Conversation
) -> None:
    answer = _answer(answered)
    client.force_login(mallory)
    assert client.get(f"/conversations/{answered.pk}/").status_code == 404
    assert client.get(f"/messages/{answer.pk}/answer/").status_code == 404
    for url in [
        f"/conversations/{answered.pk}/rename/",
        f"/conversations/{answered.pk}/delete/",
        f"/conversations/{answered.pk}/stop/",
        f"/messages/{answer.pk}/feedback/",
    ]:
        assert client.post(url, {"title": "x", "feedback": "down"}).status_code == 404, url
    answered.refresh_from_db()
    answer.refresh_from_db()
    assert answered.title != "x" and answer.feedback == ""
    assert "New conversation" not in client.get("/").content.decode() or True


def test_new_conversations_come_from_a_post(client: Client, alice: User) -> None:
    client.force_login(alice)
    assert client.get("/conversations/new/").status_code == 405
    response = client.post("/conversations/new/")
    conversation = Conversation.objects.get(owner=alice)
    assert response["Location"] == f"/conversations/{conversation.pk}/"
    created = client.post("/conversations/new/", **JSON).json()
    assert created["url"] == f"/conversations/{created['id']}/"
    assert Conversation.objects.filter(owner=alice).count() == 2


def test_rename_and_delete(client: Client, alice: User) -> None:
    conversation = conversation_create(owner=alice, title="old")
    client.force_login(alice)
    client.post(f"/conversations/{conversation.pk}/rename/", {"title": "  Gateway   403s "})
    conversation.refresh_from_db()
    assert conversation.title == "Gateway 403s"
    page = client.post(f"/conversations/{conversation.pk}/rename/", {"title": " "}, follow=True)
    assert b"The title cannot be empty." in page.content
    response = client.post(f"/conversations/{conversation.pk}/delete/")
    assert response["Location"] == f"/?deleted={conversation.pk}"
    conversation.refresh_from_db()
    assert conversation.deleted_at is not None  # soft: undo is possible until the purge


def test_feedback_is_stored_with_its_comment(
    client: Client, alice: User, answered: Conversation
) -> None:
    answer = _answer(answered)
    client.force_login(alice)
    url = f"/messages/{answer.pk}/feedback/"
    result = client.post(url, {"feedback": "down", "comment": "Wrong pool"}, **JSON).json()
    assert result == {"feedback": "down", "comment": "Wrong pool"}
    answer.refresh_from_db()
    assert (answer.feedback, answer.feedback_comment) == ("down", "Wrong pool")
    assert answer.feedback_at is not None
    bad = client.post(url, {"feedback": "meh"}, **JSON)
    assert bad.status_code == 400 and "Feedback must be" in bad.json()["error"]
    page = client.post(url, {"feedback": "up"})
    assert page["Location"].endswith(f"#m{answer.pk}")
    question = answered.messages.filter(role=Message.Role.USER).first()
    assert client.post(f"/messages/{question.pk}/feedback/", {"feedback": "up"}).status_code == 302


def test_stop_asks_the_running_answer_to_cancel(client: Client, alice: User) -> None:
    conversation = conversation_create(owner=alice)
    run = AgentRunFactory(conversation=conversation)
    client.force_login(alice)
    assert client.post(f"/conversations/{conversation.pk}/stop/", **JSON).json() == {"stopping": 1}
    run.refresh_from_db()
    assert run.cancel_requested


def test_a_reload_mid_answer_shows_the_partial_answer_still_streaming(
    client: Client, alice: User
) -> None:
    conversation = conversation_create(owner=alice)
    question = MessageFactory(conversation=conversation, role="user", content="Why 403?")
    run = AgentRunFactory(conversation=conversation, question=question)
    MessageFactory(
        conversation=conversation,
        run=run,
        role="assistant",
        content="The key <b>never",
        is_complete=False,
    )
    client.force_login(alice)
    page = client.get(f"/conversations/{conversation.pk}/").content.decode()
    assert 'class="answer is-streaming"' in page
    assert "The key &lt;b&gt;never" in page  # partial text is shown as text, not HTML
    assert 'aria-busy="true"' in page
    run.status = AgentRun.Status.FAILED
    run.save()
    page = client.get(f"/conversations/{conversation.pk}/").content.decode()
    assert "This answer was interrupted." in page


def test_an_answer_interrupted_before_its_first_word_says_so(client: Client, alice: User) -> None:
    """Its daphne killed while the model was thinking: no answer message at all."""
    conversation = conversation_create(owner=alice)
    question = Message.objects.create(conversation=conversation, role="user", content="Why 403?")
    AgentRunFactory(conversation=conversation, question=question, status=AgentRun.Status.FAILED)
    client.force_login(alice)
    page = client.get(f"/conversations/{conversation.pk}/").content.decode()
    assert "Why 403?" in page and "This answer was interrupted." in page
    assert 'aria-busy="false"' in page


@pytest.mark.parametrize(
    ("query", "application", "base"),
    [
        ("Seen HTTP 403 errors in PayU Core before?", "PayU Core", "Seen HTTP 403 errors before?"),
        ("Merchants get HTTP 403 from PayU Core", "PayU Core", "Merchants get HTTP 403"),
        ("SEV2 repeat incidents with 403 errors", None, "with 403 errors"),
    ],
)  # fmt: skip
def test_a_rerun_starts_from_the_question_without_its_filters(
    incidents: None, query: str, application: str | None, base: str
) -> None:
    assert rerun_base(query, application) == base
