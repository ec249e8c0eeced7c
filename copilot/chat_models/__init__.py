"""Chat models: one interface, an OpenAI-compatible client and the offline engine."""

from __future__ import annotations

from django.conf import settings

from copilot.chat_models.base import ChatModel


def configured_model() -> ChatModel:
    """The OpenAI-compatible model when OPENAI_API_KEY is set, else the offline engine."""
    if settings.OPENAI_API_KEY:
        # Deferred: load only the engine that is configured (openai is ~1 s).
        from copilot.chat_models.openai_compat import OpenAIChatModel

        return OpenAIChatModel.from_settings()
    from copilot.chat_models.offline import OfflineChatModel  # deferred: the offline engine is big

    return OfflineChatModel()
