"""The offline engine: understanding by an intent model and slot parsers,
answers written extractively from what the tools returned.

- `engine`: the chat model (`OfflineChatModel`).
- `intents`: the intent model and its training bank (`bank/`).
- `slots`: time windows and application mentions.
- `router`: a question and the dialogue state → tool calls.
- `reading` / `writing`: tool results in, the answer out.
"""

from copilot.chat_models.offline.engine import OfflineChatModel

__all__ = ["OfflineChatModel"]
