"""Read-only queries for the copilot."""

from __future__ import annotations

from dataclasses import dataclass

from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AnonymousUser
from django.db.models import QuerySet
from pgvector.django import CosineDistance

from copilot.models import Conversation, GoldenExample, Message
from incidentdesk.embeddings import embed_query
from incidentdesk.errors import NotFoundError

GOLDEN_MIN_SIMILARITY = 0.6


@dataclass(frozen=True)
class GoldenMatch:
    question: str
    answer: str
    similarity: float


def golden_example_list_nearest(
    *, question: str, limit: int = 2, min_similarity: float = GOLDEN_MIN_SIMILARITY
) -> list[GoldenMatch]:
    """Active golden examples closest to `question` (cosine ≥ min_similarity)."""
    vector = embed_query(question)
    nearest = (
        GoldenExample.objects.filter(is_active=True, embedding__isnull=False)
        .annotate(distance=CosineDistance("embedding", vector))
        .filter(distance__lte=1 - min_similarity)
        .order_by("distance")[:limit]
    )
    return [GoldenMatch(g.question, g.answer, 1 - g.distance) for g in nearest]


def conversation_list_for_user(*, user: AbstractBaseUser | AnonymousUser) -> QuerySet[Conversation]:
    """The user's conversations, most recently active first (the sidebar)."""
    if not user.is_authenticated:
        return Conversation.objects.none()
    return Conversation.objects.filter(owner_id=user.pk).order_by("-updated_at", "-pk")


def conversation_get_for_user(
    *, conversation_id: int | str, user: AbstractBaseUser | AnonymousUser
) -> Conversation:
    """The conversation if `user` owns it; NotFoundError otherwise, so ids leak nothing."""
    try:
        return conversation_list_for_user(user=user).get(pk=int(conversation_id))
    except (Conversation.DoesNotExist, ValueError, TypeError):
        raise NotFoundError(f"Conversation {conversation_id} not found.") from None


def conversation_messages(*, conversation: Conversation) -> QuerySet[Message]:
    """Every message in order, as stored (user, assistant, tool)."""
    return conversation.messages.order_by("created_at", "pk")


def message_get_for_user(
    *, message_id: int | str, user: AbstractBaseUser | AnonymousUser
) -> Message:
    """A message of one of the user's conversations; NotFoundError otherwise."""
    try:
        return Message.objects.select_related("conversation").get(
            pk=int(message_id), conversation__owner_id=user.pk
        )
    except (Message.DoesNotExist, ValueError, TypeError):
        raise NotFoundError(f"Message {message_id} not found.") from None


def message_list_disliked() -> QuerySet[Message]:
    """Thumbs-down answers, newest first: the curators' review queue."""
    return (
        Message.objects.filter(role=Message.Role.ASSISTANT, feedback=Message.Feedback.DOWN)
        .select_related("conversation__owner", "run")
        .order_by("-feedback_at", "-pk")
    )
