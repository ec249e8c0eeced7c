"""A NUL or other control character anywhere in a request is a 400, never a 500.

PostgreSQL cannot store NUL in text, so before the middleware every route that
looked a value up answered 500. The walk covers every route in the URLconf.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver
from django.urls.resolvers import RoutePattern

from incidentdesk.middleware import has_control_character
from tests.factories import ConversationFactory, MessageFactory

pytestmark = pytest.mark.django_db

_PARAMETER = re.compile(r"<(?:(\w+):)?\w+>")


def _routes(patterns: list[URLPattern | URLResolver], prefix: str = "/") -> Iterator[str]:
    """Every route written with `path()` (the admin's regex routes are Django's own)."""
    for entry in patterns:
        if not isinstance(entry.pattern, RoutePattern):
            continue
        route = prefix + str(entry.pattern)
        if isinstance(entry, URLResolver):
            yield from _routes(entry.url_patterns, route)
        else:
            yield route


def _with_nul_path(route: str) -> str:
    """The route with NUL for each text parameter and 1 for each number."""
    return _PARAMETER.sub(lambda m: "1" if m.group(1) == "int" else "%00", route)


def test_control_characters_are_told_apart_from_text() -> None:
    assert has_control_character("a\x00b")
    assert has_control_character("a\x1bb")
    assert has_control_character("a\x85b")
    assert not has_control_character("two\nlines\twith a tab\r\n")
    assert not has_control_character("INC\u20112025 ü")


def test_every_route_answers_400_to_nul_in_the_query_string(client: Client, alice: User) -> None:
    client.force_login(alice)
    routes = list(_routes(get_resolver().url_patterns))
    assert "/incidents/" in routes and "/api/incidents/<str:incident_id>/" in routes
    for route in routes:
        url = _PARAMETER.sub("1", route)
        for method in (client.get, client.post):
            response = method(f"{url}?q=a%00b")
            assert response.status_code == 400, (method.__name__, url, response.status_code)


def test_every_route_with_a_text_parameter_answers_400_to_nul_in_the_path(
    client: Client, alice: User
) -> None:
    client.force_login(alice)
    routes = [r for r in _routes(get_resolver().url_patterns) if "<str:" in r or "<path:" in r]
    assert "/knowledge/<str:doc_id>/" in routes
    for route in routes:
        response = client.get(_with_nul_path(route))
        assert response.status_code == 400, (route, response.status_code)


def test_the_issues_routes_answer_400_with_a_page_or_the_api_error_body(
    client: Client, alice: User
) -> None:
    client.force_login(alice)
    page = client.get("/incidents/", {"q": "a\x00b"})
    assert page.status_code == 400
    assert b"Control characters (such as NUL) are not allowed in: q." in page.content
    assert client.get("/knowledge/%00/").status_code == 400
    assert client.get("/incidents/%1b/").status_code == 400
    api = client.get("/api/incidents/%00/")
    assert api.status_code == 400
    assert api.json()["error"]["code"] == "invalid"
    assert api.json()["error"]["fields"] == {"path": ["Contains a control character."]}
    search = client.get("/api/incidents/search/", {"query": "pool\x00"})
    assert search.json()["error"]["fields"] == {"query": ["Contains a control character."]}


def test_the_rename_and_feedback_forms_answer_400_to_nul(client: Client, alice: User) -> None:
    conversation = ConversationFactory(owner=alice, title="Gateway 403s")
    answer = MessageFactory(conversation=conversation)
    client.force_login(alice)
    rename = client.post(f"/conversations/{conversation.pk}/rename/", {"title": "a\x00b"})
    feedback = client.post(
        f"/messages/{answer.pk}/feedback/", {"feedback": "down", "comment": "bad\x00"}
    )
    as_json = client.post(
        f"/messages/{answer.pk}/feedback/",
        {"feedback": "up\x00"},
        headers={"Accept": "application/json"},
    )
    assert rename.status_code == feedback.status_code == as_json.status_code == 400
    assert b"not allowed in: comment" in feedback.content
    assert as_json.json()["error"]["fields"] == {"feedback": ["Contains a control character."]}
    conversation.refresh_from_db()
    assert conversation.title == "Gateway 403s"


def test_tabs_and_newlines_in_a_form_are_still_accepted(client: Client, alice: User) -> None:
    conversation = ConversationFactory(owner=alice)
    answer = MessageFactory(conversation=conversation)
    client.force_login(alice)
    response = client.post(
        f"/messages/{answer.pk}/feedback/", {"feedback": "down", "comment": "two\r\nlines\tok"}
    )
    assert response.status_code == 302
    answer.refresh_from_db()
    assert answer.feedback_comment == "two\r\nlines\tok"
