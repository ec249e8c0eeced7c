"""The history sidebar: soft delete with undo and purge, no empty conversations, the ⋯ menu
of a new chat, and full-text search over titles and messages that never crosses users."""

from __future__ import annotations

import datetime as dt
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from copilot import asking
from copilot.models import Conversation, Message
from copilot.services import conversation_create, conversation_delete, conversation_purge_deleted
from copilot.tasks import conversation_purge_deleted_task
from tests.factories import MessageFactory, UserFactory

pytestmark = pytest.mark.django_db
JSON = {"HTTP_ACCEPT": "application/json"}


@pytest.fixture
def mallory(db: None) -> User:
    return UserFactory(username="mallory")


def _chat(owner: User, title: str, *said: str) -> Conversation:
    conversation = conversation_create(owner=owner, title=title)
    for text in said or ("a question",):
        MessageFactory(conversation=conversation, role="user", content=text)
    return conversation


def _sidebar(page: str) -> str:
    return page[page.index('id="conversations"') : page.index("</aside>")]


# --- delete, undo, purge -------------------------------------------------------------


def test_a_deleted_conversation_is_hidden_everywhere_but_kept_for_undo(
    client: Client, alice: User
) -> None:
    chat = _chat(alice, "Gateway 403s")
    client.force_login(alice)
    response = client.post(
        f"/conversations/{chat.pk}/delete/", {"next": f"/conversations/{chat.pk}/"}
    )
    assert response["Location"] == f"/?deleted={chat.pk}"
    assert "Gateway 403s" not in _sidebar(client.get("/").content.decode())
    assert client.get(f"/conversations/{chat.pk}/").status_code == 404
    api = APIClient()
    api.force_login(alice)
    assert api.get(f"/api/conversations/{chat.pk}/").status_code == 404
    assert api.get("/api/conversations/").json()["count"] == 0
    assert asking.conversation_join(alice, chat.pk, "socket") is None  # the websocket refuses it
    assert Conversation.objects.get(pk=chat.pk).deleted_at is not None


def test_undo_restores_it_in_its_place(client: Client, alice: User) -> None:
    older, chat = _chat(alice, "Older one"), _chat(alice, "Gateway 403s")
    client.force_login(alice)
    client.post(f"/conversations/{chat.pk}/delete/")
    page = client.get(f"/?deleted={chat.pk}").content.decode()
    assert "Deleted “Gateway 403s”." in page
    assert f'action="/conversations/{chat.pk}/restore/"' in page
    response = client.post(f"/conversations/{chat.pk}/restore/")
    assert response["Location"] == f"/conversations/{chat.pk}/"
    sidebar = _sidebar(client.get("/").content.decode())
    assert sidebar.index("Gateway 403s") < sidebar.index(older.title)  # still the newest


def test_nobody_else_can_delete_restore_or_see_the_undo_banner(
    client: Client, alice: User, mallory: User
) -> None:
    chat = _chat(alice, "Gateway 403s")
    client.force_login(mallory)
    assert client.post(f"/conversations/{chat.pk}/delete/").status_code == 404
    conversation_delete(conversation=chat, user=alice)
    assert client.post(f"/conversations/{chat.pk}/restore/").status_code == 404
    assert "Gateway 403s" not in client.get(f"/?deleted={chat.pk}").content.decode()
    api = APIClient()
    api.force_login(mallory)
    assert api.post(f"/api/conversations/{chat.pk}/restore/").status_code == 404
    assert Conversation.objects.get(pk=chat.pk).deleted_at is not None


def test_deleting_from_another_page_returns_there_and_never_off_site(
    client: Client, alice: User
) -> None:
    here, other = _chat(alice, "Here"), _chat(alice, "Other")
    client.force_login(alice)
    back = client.post(f"/conversations/{other.pk}/delete/", {"next": f"/conversations/{here.pk}/"})
    assert back["Location"] == f"/conversations/{here.pk}/?deleted={other.pk}"
    evil = client.post(f"/conversations/{here.pk}/delete/", {"next": "//evil.example/"})
    assert evil["Location"] == f"/?deleted={here.pk}"


def test_the_api_deletes_softly_and_restores(alice: User) -> None:
    chat = _chat(alice, "Gateway 403s")
    api = APIClient()
    api.force_login(alice)
    assert api.delete(f"/api/conversations/{chat.pk}/").status_code == 204
    assert api.post(f"/api/conversations/{chat.pk}/restore/").json()["title"] == "Gateway 403s"
    assert api.get(f"/api/conversations/{chat.pk}/").status_code == 200


def test_the_purge_removes_what_is_past_the_undo_period_and_stale_empty_chats(
    alice: User,
) -> None:
    now = timezone.now()
    old, recent, kept = _chat(alice, "Old"), _chat(alice, "Recent"), _chat(alice, "Kept")
    Conversation.objects.filter(pk=old.pk).update(deleted_at=now - dt.timedelta(days=8))
    Conversation.objects.filter(pk=recent.pk).update(deleted_at=now - dt.timedelta(days=6))
    empty_old, empty_new = conversation_create(owner=alice), conversation_create(owner=alice)
    Conversation.objects.filter(pk=empty_old.pk).update(created_at=now - dt.timedelta(days=2))
    assert conversation_purge_deleted(older_than=dt.timedelta(days=7)) == 2
    remaining = set(Conversation.objects.values_list("pk", flat=True))
    assert remaining == {recent.pk, kept.pk, empty_new.pk}
    assert not Message.objects.filter(conversation_id=old.pk).exists()


def test_the_command_and_the_daily_task_purge_after_the_configured_days(
    alice: User, settings
) -> None:
    chat = _chat(alice, "Old")
    Conversation.objects.filter(pk=chat.pk).update(deleted_at=timezone.now() - dt.timedelta(days=3))
    out = StringIO()
    call_command("purge_conversations", "--days", "5", stdout=out)
    assert out.getvalue().strip() == "purged 0 conversation(s)"
    settings.CONVERSATION_PURGE_AFTER_DAYS = 2
    assert conversation_purge_deleted_task() == 1
    assert not Conversation.objects.filter(pk=chat.pk).exists()
    assert "purge-deleted-conversations" in settings.CELERY_BEAT_SCHEDULE


# --- new chats ---------------------------------------------------------------------------


def test_new_chat_is_a_link_and_saves_nothing_until_the_first_question(
    client: Client, alice: User
) -> None:
    client.force_login(alice)
    page = client.get("/").content.decode()
    assert '<a class="button new-chat" href="/">' in page
    assert page.count('<dialog id="confirm-delete"') == 1  # the delete confirmation
    assert 'action="/conversations/new/"><button' not in page.replace("\n", "")
    assert not Conversation.objects.exists()
    empty = conversation_create(owner=alice)  # the first question failed to send
    assert str(empty.pk) not in _sidebar(client.get("/").content.decode())
    assert client.get(f"/conversations/{empty.pk}/").status_code == 200  # still openable


def test_a_created_conversation_comes_with_its_sidebar_entry_and_menu(
    client: Client, alice: User
) -> None:
    client.force_login(alice)
    created = client.post("/conversations/new/", **JSON).json()
    item = created["item_html"]
    assert f'data-id="{created["id"]}"' in item and "just now" in item
    assert f'action="/conversations/{created["id"]}/rename/"' in item
    assert f'action="/conversations/{created["id"]}/delete/"' in item
    assert 'aria-current="page"' in item


# --- search ----------------------------------------------------------------------------------


@pytest.fixture
def histories(alice: User, mallory: User) -> dict[str, Conversation]:
    return {
        "title": _chat(alice, "Checkout timeouts", "what broke this week?"),
        "message": _chat(alice, "Untitled", "Merchants get HTTP 403 after key rotation"),
        "other": _chat(alice, "Settlement rows", "missing rows in the report"),
        "mallory": _chat(mallory, "Mallory checkout", "HTTP 403 rotation checkout"),
    }


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("checkout", ["title"]),
        ("rotating keys", ["message"]),  # English stems
        ("rotat", ["message"]),  # a word still being typed
        ("HTTP 403", ["message"]),
        ("report", ["other"]),
        ("nothing like this", []),
        ("a & | ! :* ( '", []),  # tsquery syntax is never passed through
    ],
)
def test_search_finds_titles_and_messages_of_her_own_conversations_only(
    client: Client, alice: User, histories: dict[str, Conversation], query: str, expected: list[str]
) -> None:
    client.force_login(alice)
    page = client.get("/conversations/search/", {"q": query}).content.decode()
    found = [name for name, chat in histories.items() if f'data-id="{chat.pk}"' in page]
    assert found == expected
    if not expected:
        assert "No conversation matches" in page


def test_search_works_in_the_page_url_and_the_api_for_each_user(
    client: Client, alice: User, mallory: User, histories: dict[str, Conversation]
) -> None:
    client.force_login(alice)
    page = client.get("/", {"q": "checkout"}).content.decode()
    assert 'value="checkout"' in page and "Checkout timeouts" in _sidebar(page)
    assert "Settlement rows" not in _sidebar(page) and "Mallory" not in page
    api = APIClient()
    api.force_login(mallory)
    titles = [
        c["title"] for c in api.get("/api/conversations/", {"q": "checkout"}).json()["results"]
    ]
    assert titles == ["Mallory checkout"]


def test_search_needs_a_login_and_runs_few_queries(
    client: Client, alice: User, histories: dict[str, Conversation], django_assert_max_num_queries
) -> None:
    assert client.get("/conversations/search/", {"q": "checkout"})["Location"].startswith(
        "/accounts/login/"
    )
    client.force_login(alice)
    with django_assert_max_num_queries(4):
        client.get("/conversations/search/", {"q": "http 403"})


def test_a_deleted_conversation_is_not_found_by_search(
    client: Client, alice: User, histories: dict[str, Conversation]
) -> None:
    conversation_delete(conversation=histories["title"], user=alice)
    client.force_login(alice)
    page = client.get("/conversations/search/", {"q": "checkout"}).content.decode()
    assert f'data-id="{histories["title"].pk}"' not in page
