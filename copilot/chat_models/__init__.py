"""Chat models: one interface, an OpenAI-compatible client and the offline engine."""

from __future__ import annotations

from django.conf import settings

from copilot.chat_models.base import ChatModel


def configured_model(*, paced: bool = True) -> ChatModel:
    """The OpenAI-compatible model when OPENAI_API_KEY is set, else the offline engine.

    `paced`: the offline engine streams at OFFLINE_STREAM_PACE_MS, for answers a
    person watches arrive; a reply read whole (the JSON API) is not slowed.
    """
    if settings.OPENAI_API_KEY:
        # Deferred: load only the engine that is configured (openai is ~1 s).
        from copilot.chat_models.openai_compat import OpenAIChatModel

        return OpenAIChatModel.from_settings()
    from copilot.chat_models.offline import OfflineChatModel  # deferred: the offline engine is big

    pace = settings.OFFLINE_STREAM_PACE_MS / 1000 if paced else 0.0
    return OfflineChatModel(pace_seconds=pace)
