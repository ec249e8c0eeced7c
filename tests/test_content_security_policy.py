"""A strict Content-Security-Policy on every page, and no inline script for it to block."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.test import Client

from tests.factories import ConversationFactory, KnowledgeDocumentFactory, MessageFactory

pytestmark = pytest.mark.django_db

TEMPLATES = Path(__file__).resolve().parents[1] / "templates"
# A <script> that runs inline: no src, and not a JSON data block (which never runs).
INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)(?![^>]*application/json)[^>]*>", re.I)
EVENT_HANDLER = re.compile(r"<[^>]+\son[a-z]+\s*=", re.I)
JS_URL = re.compile(r"""(href|src|action)\s*=\s*["']?\s*javascript:""", re.I)


def _policy(response: object) -> dict[str, list[str]]:
    header = response["Content-Security-Policy"]  # type: ignore[index]
    directives = (part.split() for part in header.split(";") if part.strip())
    return {name: values for name, *values in directives}


def _assert_no_inline_script(html: str, where: str) -> None:
    assert not INLINE_SCRIPT.search(html), where
    assert not EVENT_HANDLER.search(html), where
    assert not JS_URL.search(html), where


def test_no_template_has_an_inline_script_or_event_handler() -> None:
    templates = list(TEMPLATES.rglob("*.html"))
    assert len(templates) > 10
    for template in templates:
        _assert_no_inline_script(template.read_text(), str(template))


def test_every_kind_of_page_sends_the_strict_policy_and_has_no_inline_script(
    client: Client, alice: User, bob: User
) -> None:
    conversation = ConversationFactory(owner=bob)
    answer = MessageFactory(conversation=conversation)
    document = KnowledgeDocumentFactory()
    anonymous = client.get("/accounts/login/")
    client.force_login(bob)
    pages = {
        "login": anonymous,
        "chat": client.get(f"/conversations/{conversation.pk}/"),
        "answer": client.get(f"/messages/{answer.pk}/answer/"),
        "incidents": client.get("/incidents/"),
        "knowledge": client.get("/knowledge/"),
        "admin": client.get("/admin/"),
        "docs": client.get("/api/docs/"),
        "not found": client.get(f"/knowledge/{document.doc_id}-missing/"),
        "bad request": client.get("/incidents/?q=%00"),
    }
    for name, response in pages.items():
        policy = _policy(response)
        assert policy["script-src"] == ["'self'"], name
        assert policy["object-src"] == ["'none'"], name
        assert policy["frame-ancestors"] == ["'none'"], name
        assert policy["base-uri"] == ["'none'"], name
        _assert_no_inline_script(response.content.decode(), name)
    assert _policy(pages["chat"])["style-src"] == ["'self'"]


def test_the_api_docs_load_their_start_up_script_as_a_file(client: Client, alice: User) -> None:
    client.force_login(alice)
    page = client.get("/api/docs/").content.decode()
    script_url = re.search(r'<script src="(/api/docs/\?[^"]*script=[^"]*)"', page)
    assert script_url, page
    script = client.get(script_url.group(1).replace("&amp;", "&"))
    assert script.status_code == 200
    assert script["Content-Type"].startswith("application/javascript")
    assert "/api/schema/" in script.content.decode()
