"""Reject control characters in the path, query string and form fields, once, up front.

PostgreSQL cannot store a NUL byte in text, so a `%00` anywhere that reaches
a query was a 500 on every route that looks something up. Other control
characters are never legitimate in ids, filters or titles either. One check
here, before any view runs, answers 400 with a message instead; tab, line
feed and carriage return stay allowed because textareas send them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.http.multipartparser import MultiPartParserError
from django.shortcuts import render

from incidentdesk.api.errors import error_body

# Unicode's control characters (category Cc: C0, DEL, C1) but tab, LF and CR.
_CONTROL_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
_FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


def has_control_character(value: str) -> bool:
    """True when `value` holds a C0/C1 control (NUL included) other than tab and newlines."""
    return _CONTROL_RE.search(value) is not None


def _bad_fields(request: HttpRequest) -> list[str]:
    """Where the control characters are: "path", then query and form field names."""
    bad = ["path"] if has_control_character(request.path_info) else []
    bad += _bad_keys(request.GET.lists())
    if request.method == "POST" and request.content_type in _FORM_TYPES:
        bad += _bad_keys(request.POST.lists())
    return bad


def _bad_keys(items: Iterable[tuple[str, list[str]]]) -> list[str]:
    return [
        key
        for key, values in items
        if has_control_character(key) or any(has_control_character(v) for v in values)
    ]


class ControlCharacterMiddleware:
    """400 for any request whose path, query string or form fields carry control characters.

    Pages get a short HTML page; /api/ (and chat.js, which asks for JSON) get
    the API's documented error body, naming the fields.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            bad = _bad_fields(request)
        except MultiPartParserError:
            bad = []  # a malformed upload is the view's (and its parser's) to answer
        if bad:
            return _rejection(request, bad)
        return self.get_response(request)


def _rejection(request: HttpRequest, fields: list[str]) -> HttpResponse:
    message = f"Control characters (such as NUL) are not allowed in: {', '.join(fields)}."
    wants_json = "application/json" in request.headers.get("Accept", "")
    if request.path_info.startswith("/api/") or wants_json:
        detail = {name: ["Contains a control character."] for name in fields}
        return JsonResponse(error_body("invalid", message, detail), status=400)
    return render(request, "400.html", {"message": message}, status=400)
