"""The chat pages and the small POST endpoints behind their buttons.

Thin: each view checks the request, calls one selector or service and
renders, redirects or answers JSON (chat.js asks with Accept: application/json).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme, urlencode
from django.views.decorators.http import require_POST

from copilot import display, selectors, services
from copilot.models import Conversation
from incidentdesk.errors import NotFoundError, ValidationError

View = Callable[..., HttpResponse]


def _wants_json(request: HttpRequest) -> bool:
    return "application/json" in request.headers.get("Accept", "")


def _not_found_is_404(view: View) -> View:
    """Someone else's conversation or message is simply not there (no leak)."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return view(request, *args, **kwargs)
        except NotFoundError as exc:
            raise Http404(exc.message) from None

    return wrapper


SIDEBAR_SIZE = 100


def _history_query(request: HttpRequest) -> str:
    return request.GET.get("q", "").strip()[:200]


def _sidebar(request: HttpRequest, query: str) -> list[Conversation]:
    conversations = selectors.conversation_list_for_user(user=request.user, query=query)
    return list(conversations[:SIDEBAR_SIZE])


def _just_deleted(request: HttpRequest) -> Conversation | None:
    """The conversation named by `?deleted=`, if this user deleted it: the Undo banner."""
    raw = request.GET.get("deleted", "")
    try:
        return selectors.conversation_get_deleted_for_user(conversation_id=raw, user=request.user)
    except NotFoundError:
        return None


def _chat(request: HttpRequest, conversation: Conversation | None) -> HttpResponse:
    turns = selectors.conversation_turns(conversation=conversation) if conversation else []
    query = _history_query(request)
    context = {
        "conversation": conversation,
        "conversations": _sidebar(request, query),
        "history_query": query,
        "next_path": request.path,
        "deleted": _just_deleted(request),
        "purge_after_days": settings.CONVERSATION_PURGE_AFTER_DAYS,
        "turns": [display.turn_view(turn) for turn in turns],
    }
    return render(request, "copilot/chat.html", context)


def conversation_search(request: HttpRequest) -> HttpResponse:
    """The sidebar's list for a search over titles and messages (chat.js swaps it in)."""
    query = _history_query(request)
    current = request.GET.get("current", "")
    context = {
        "conversations": _sidebar(request, query),
        "history_query": query,
        "conversation": {"pk": int(current)} if current.isdigit() else None,
        "next_path": request.GET.get("next", "/") if _is_local(request, "next") else "/",
    }
    return render(request, "copilot/_conversation_list.html", context)


def chat_home(request: HttpRequest) -> HttpResponse:
    """A new, empty chat; the first question creates the conversation."""
    return _chat(request, None)


@_not_found_is_404
def conversation_detail(request: HttpRequest, conversation_id: int) -> HttpResponse:
    conversation = selectors.conversation_get_for_user(
        conversation_id=conversation_id, user=request.user
    )
    return _chat(request, conversation)


@require_POST
def conversation_create(request: HttpRequest) -> HttpResponse:
    conversation = services.conversation_create(owner=request.user)  # type: ignore[arg-type]
    url = reverse("conversation-detail", args=[conversation.pk])
    if _wants_json(request):
        # The sidebar entry as the page renders it, so its ⋯ menu works at once.
        context = {"item": conversation, "conversation": conversation, "next_path": url}
        item = render_to_string(
            "copilot/_conversation_item.html", {**context, "just_created": True}, request
        )
        return JsonResponse({"id": conversation.pk, "url": url, "item_html": item}, status=201)
    return redirect(url)


@require_POST
@_not_found_is_404
def conversation_rename(request: HttpRequest, conversation_id: int) -> HttpResponse:
    conversation = selectors.conversation_get_for_user(
        conversation_id=conversation_id, user=request.user
    )
    try:
        services.conversation_rename(
            conversation=conversation,
            user=request.user,  # type: ignore[arg-type]
            title=request.POST.get("title", ""),
        )
    except ValidationError as exc:
        messages.error(request, exc.message)
    return redirect("conversation-detail", conversation.pk)


@require_POST
@_not_found_is_404
def conversation_delete(request: HttpRequest, conversation_id: int) -> HttpResponse:
    conversation = selectors.conversation_get_for_user(
        conversation_id=conversation_id, user=request.user
    )
    services.conversation_delete(conversation=conversation, user=request.user)  # type: ignore[arg-type]
    back = request.POST.get("next", "") if _is_local(request, "next", post=True) else ""
    if not back or back == reverse("conversation-detail", args=[conversation.pk]):
        back = reverse("home")
    return redirect(f"{back}?{urlencode({'deleted': conversation.pk})}")


@require_POST
@_not_found_is_404
def conversation_restore(request: HttpRequest, conversation_id: int) -> HttpResponse:
    """Undo a delete (possible until the conversation is purged)."""
    conversation = selectors.conversation_get_deleted_for_user(
        conversation_id=conversation_id, user=request.user
    )
    services.conversation_restore(conversation=conversation, user=request.user)  # type: ignore[arg-type]
    return redirect("conversation-detail", conversation.pk)


def _is_local(request: HttpRequest, name: str, *, post: bool = False) -> bool:
    """Whether the `name` parameter is a path on this site (never an open redirect)."""
    value = (request.POST if post else request.GET).get(name, "")
    return value.startswith("/") and url_has_allowed_host_and_scheme(
        value, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )


@require_POST
@_not_found_is_404
def conversation_cancel(request: HttpRequest, conversation_id: int) -> HttpResponse:
    """The stop button: the running answer stops at its next check."""
    conversation = selectors.conversation_get_for_user(
        conversation_id=conversation_id, user=request.user
    )
    stopped = services.agent_run_cancel(conversation=conversation, user=request.user)  # type: ignore[arg-type]
    if _wants_json(request):
        return JsonResponse({"stopping": stopped})
    return redirect("conversation-detail", conversation.pk)


@_not_found_is_404
def message_answer(request: HttpRequest, message_id: int) -> HttpResponse:
    """One finished answer rendered on the server, swapped in by chat.js on `done`."""
    turn = selectors.message_turn_for_user(message_id=message_id, user=request.user)
    return render(request, "copilot/_answer.html", {"view": display.turn_view(turn)})


@require_POST
@_not_found_is_404
def message_feedback(request: HttpRequest, message_id: int) -> HttpResponse:
    """Thumbs up or down with an optional comment, stored on the answer."""
    message = selectors.message_get_for_user(message_id=message_id, user=request.user)
    try:
        services.message_feedback_set(
            message=message,
            user=request.user,  # type: ignore[arg-type]
            feedback=request.POST.get("feedback", ""),
            comment=request.POST.get("comment", ""),
        )
    except ValidationError as exc:
        if _wants_json(request):
            return JsonResponse({"error": exc.message}, status=400)
        messages.error(request, exc.message)
    if _wants_json(request):
        return JsonResponse({"feedback": message.feedback, "comment": message.feedback_comment})
    return redirect(
        f"{reverse('conversation-detail', args=[message.conversation_id])}#m{message.pk}"
    )
