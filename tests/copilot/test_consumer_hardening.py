"""The chat websocket against hostile clients: foreign origins (scheme, host and port),
binary, oversized and deeply nested frames. Through the real ASGI stack, as
test_consumer.py does."""

from __future__ import annotations

import json
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User

from copilot.asking import MAX_FRAME_BYTES
from copilot.models import Message
from copilot.services import conversation_create
from incidentdesk.asgi import application
from incidentdesk.websocket_origin import parse_origin
from tests.copilot.test_consumer import _cookie, _fresh_channel_layer, run

pytestmark = pytest.mark.django_db(transaction=True)
__all__ = ["_fresh_channel_layer"]  # the autouse fixture, imported to apply here too


def _connects(user: User, host: bytes | None, origin: bytes, scheme: str = "ws") -> bool:
    conversation = conversation_create(owner=user)
    cookie = [header for header in _cookie(user) if header[0] == b"cookie"]
    headers = [(b"origin", origin), *([(b"host", host)] if host else []), *cookie]

    async def scenario() -> bool:
        path = f"/ws/conversations/{conversation.pk}/"
        socket = WebsocketCommunicator(application, path, headers=headers)
        socket.scope["scheme"] = scheme
        connected, _ = await socket.connect()
        if connected:
            await socket.disconnect()
        return bool(connected)

    return bool(run(scenario))


@pytest.mark.parametrize(
    ("host", "origin", "scheme"),
    [
        (b"127.0.0.1:8000", b"http://127.0.0.1:8000", "ws"),
        (b"127.0.0.1", b"http://127.0.0.1", "ws"),
        (b"localhost:8300", b"http://localhost:8300", "ws"),
        (b"127.0.0.1", b"https://127.0.0.1:443", "wss"),
    ],
)
def test_a_page_of_this_site_may_open_a_socket(
    alice: User, host: bytes, origin: bytes, scheme: str
) -> None:
    assert _connects(alice, host, origin, scheme)


@pytest.mark.parametrize(
    ("host", "origin", "scheme"),
    [
        (b"127.0.0.1:8000", b"http://127.0.0.1:9999", "ws"),  # another port: the case
        (b"127.0.0.1:8000", b"http://127.0.0.1", "ws"),
        (b"127.0.0.1:8000", b"https://127.0.0.1:8000", "ws"),  # another scheme
        (b"127.0.0.1", b"http://127.0.0.1", "wss"),
        (b"127.0.0.1:8000", b"http://localhost:8000", "ws"),  # another host
        (b"evil.example", b"http://evil.example", "ws"),  # not in ALLOWED_HOSTS
        (None, b"http://127.0.0.1", "ws"),  # no Host header
        (b"127.0.0.1", b"null", "ws"),
        (b"127.0.0.1", b"http://127.0.0.1:99999", "ws"),
    ],
)
def test_any_other_origin_is_refused(
    alice: User, host: bytes | None, origin: bytes, scheme: str
) -> None:
    assert not _connects(alice, host, origin, scheme)


def test_a_trusted_origin_is_accepted_from_another_port(alice: User, settings: Any) -> None:
    settings.CSRF_TRUSTED_ORIGINS = ["https://chat.example.com"]
    assert _connects(alice, b"127.0.0.1:8000", b"https://chat.example.com")
    assert not _connects(alice, b"127.0.0.1:8000", b"https://chat.example.com:8443")


def test_origins_are_compared_with_their_default_ports() -> None:
    assert parse_origin("http://127.0.0.1") == ("http", "127.0.0.1", 80)
    assert parse_origin("https://[::1]") == ("https", "::1", 443)
    assert parse_origin("HTTP://Example.COM:80") == ("http", "example.com", 80)
    assert parse_origin("ftp://example.com") is None
    assert parse_origin("http://127.0.0.1:0x50") is None


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize(
    ("frame", "close_code", "message"),
    [
        ({"bytes_data": b"\x00\x01binary"}, 1003, "binary frames are not understood"),
        ({"text_data": "x" * (MAX_FRAME_BYTES + 1)}, 1009, "larger than 64 KB"),
        ({"text_data": _nested(20_000)}, 1007, "nested too deeply"),
        ({"text_data": '{"type": "ask", "text": ' + _nested(50) + "}"}, 1007, "nested too"),
    ],
    ids=["binary", "oversized", "nested", "nested-in-object"],
)
def test_a_hostile_frame_gets_an_error_event_and_a_clean_close(
    alice: User, frame: dict[str, Any], close_code: int, message: str
) -> None:
    conversation = conversation_create(owner=alice)
    headers = _cookie(alice)

    async def scenario() -> tuple[dict[str, Any], dict[str, Any]]:
        path = f"/ws/conversations/{conversation.pk}/"
        socket = WebsocketCommunicator(application, path, headers=headers)
        assert (await socket.connect())[0]
        await socket.send_to(**frame)
        error = await socket.receive_json_from(timeout=10)
        closed = await socket.receive_output(timeout=10)
        await socket.wait()
        return error, closed

    error, closed = run(scenario)
    assert error["type"] == "error" and error["code"] == "invalid"
    assert message in error["message"]
    assert closed == {"type": "websocket.close", "code": close_code}
    assert not Message.objects.exists()


def test_brackets_and_quotes_inside_a_question_are_not_nesting(alice: User) -> None:
    conversation = conversation_create(owner=alice)
    headers = _cookie(alice)
    text = 'why "[[[[[[[[[[" and \\" {{{{{{{{{{ in the logs?'

    async def scenario() -> dict[str, Any]:
        path = f"/ws/conversations/{conversation.pk}/"
        socket = WebsocketCommunicator(application, path, headers=headers)
        await socket.connect()
        await socket.send_to(text_data=json.dumps({"type": "ask", "text": text}))
        first = await socket.receive_json_from(timeout=30)
        await socket.disconnect()
        return dict(first)

    assert run(scenario)["type"] != "error"
