"""The rules a chat question passes before it is answered, on the real Redis."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading

import pytest
from django.core.cache import cache, caches

from copilot import asking
from copilot.services import conversation_create
from incidentdesk.errors import ConflictError, RateLimitedError


def test_an_admitted_question_holds_the_conversation_until_its_answer_ends(alice) -> None:
    conversation = conversation_create(owner=alice)
    with (
        asking.question_admitted(user_id=alice.pk, conversation_id=conversation.pk),
        pytest.raises(ConflictError, match="already being written"),
        asking.question_admitted(user_id=alice.pk, conversation_id=conversation.pk),
    ):
        pass
    with asking.question_admitted(user_id=alice.pk, conversation_id=conversation.pk):
        pass  # released: the next question gets in


def test_a_refused_question_still_counts_and_leaves_no_claim(alice, settings) -> None:
    settings.CHAT_QUESTIONS_PER_MINUTE = 2
    first, second = conversation_create(owner=alice), conversation_create(owner=alice)
    with (
        asking.question_admitted(user_id=alice.pk, conversation_id=first.pk),
        pytest.raises(ConflictError),  # the second of two allowed
        asking.question_admitted(user_id=alice.pk, conversation_id=first.pk),
    ):
        pass
    with (
        pytest.raises(RateLimitedError, match="asked 2 questions this minute") as refused,
        asking.question_admitted(user_id=alice.pk, conversation_id=second.pk),
    ):
        pass
    assert 0 < refused.value.extra["retry_after"] <= asking.RATE_WINDOW_SECONDS
    assert cache.get(f"chat-run:{second.pk}") is None


def test_admission_tells_whether_another_socket_listens(alice) -> None:
    conversation = conversation_create(owner=alice)
    asking.listener_join(conversation_id=conversation.pk, socket="tab-1")
    with asking.question_admitted(user_id=alice.pk, conversation_id=conversation.pk) as others:
        assert others is False  # only the asking socket
    asking.listener_join(conversation_id=conversation.pk, socket="tab-2")
    with asking.question_admitted(user_id=alice.pk, conversation_id=conversation.pk) as others:
        assert others is True
    asking.listener_leave(conversation_id=conversation.pk, socket="tab-1")
    asking.listener_leave(conversation_id=conversation.pk, socket="tab-2")
    assert asking.listener_count(conversation_id=conversation.pk) == 0


def test_a_socket_that_leaves_twice_counts_no_other_socket_out(alice) -> None:
    conversation = conversation_create(owner=alice)
    for tab in ("tab-1", "tab-2"):
        asking.listener_join(conversation_id=conversation.pk, socket=tab)
    asking.listener_leave(conversation_id=conversation.pk, socket="tab-1")
    asking.listener_leave(conversation_id=conversation.pk, socket="tab-1")
    assert asking.listener_count(conversation_id=conversation.pk) == 1
    asking.listener_leave(conversation_id=conversation.pk, socket="tab-2")


def test_sockets_of_a_process_that_died_stop_being_counted(alice) -> None:
    asking.listeners_release_orphaned()  # what earlier test runs' processes left in Redis
    conversation = conversation_create(owner=alice)
    dead = subprocess.Popen([sys.executable, "-c", ""])
    dead.wait()
    asking.listener_join(conversation_id=conversation.pk, socket="here")
    key = cache.make_key(f"chat-sockets:{conversation.pk}")
    cache.client().hset(key, "in-a-dead-daphne", f"{socket.gethostname()}:{dead.pid}")
    assert asking.listener_count(conversation_id=conversation.pk) == 2

    assert asking.listeners_release_orphaned() == 1
    assert asking.listener_count(conversation_id=conversation.pk) == 1
    asking.listener_leave(conversation_id=conversation.pk, socket="here")


def test_cache_objects_of_every_thread_share_one_redis_client() -> None:
    """Each thread (and async context) gets its own cache object; a new client
    each meant a new connection pool, so a new Redis connection per answer."""
    elsewhere = []
    thread = threading.Thread(target=lambda: elsewhere.append(caches["default"]))
    thread.start()
    thread.join()
    here = caches["default"]
    assert elsewhere[0] is not here
    assert elsewhere[0]._cache.get_client() is here._cache.get_client()
    # and one Django client: building one read redis's package metadata from disk
    assert elsewhere[0]._cache is here._cache


def test_each_socket_on_a_conversation_is_counted_and_kept_a_day(alice) -> None:
    conversation = conversation_create(owner=alice)
    key = cache.make_key(f"chat-sockets:{conversation.pk}")
    asking.listener_join(conversation_id=conversation.pk, socket="tab-1")
    assert asking.others_listening(conversation_id=conversation.pk) is False
    asking.listener_join(conversation_id=conversation.pk, socket="tab-2")
    assert asking.others_listening(conversation_id=conversation.pk) is True
    client = cache._cache.get_client()  # type: ignore[attr-defined]  # our Redis cache
    assert 0 < client.ttl(key) <= asking.LISTENERS_TIMEOUT_SECONDS
    asking.listener_leave(conversation_id=conversation.pk, socket="tab-1")
    asking.listener_leave(conversation_id=conversation.pk, socket="tab-2")
    assert asking.listener_count(conversation_id=conversation.pk) == 0
