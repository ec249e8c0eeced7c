"""The chat pages and the small POST endpoints behind their buttons.

Thin: each view checks the request, calls one selector or service and
renders, redirects or answers JSON (chat.js asks with Accept: application/json).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
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


def _chat(request: HttpRequest, conversation: Conversation | None) -> HttpResponse:
    turns = selectors.conversation_turns(conversation=conversation) if conversation else []
    context = {
        "conversation": conversation,
        "conversations": selectors.conversation_list_for_user(user=request.user)[:100],
        "turns": [display.turn_view(turn) for turn in turns],
    }
    return render(request, "copilot/chat.html", context)


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
        return JsonResponse({"id": conversation.pk, "url": url}, status=201)
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
    messages.success(request, f"Deleted “{conversation}”.")
    return redirect("home")


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
