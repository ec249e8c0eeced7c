"""Template helpers that hand the chat page what copilot/tools.py defines."""

from __future__ import annotations

from django import template

from copilot import tools

register = template.Library()


@register.simple_tag
def search_tools() -> str:
    """The tools whose results chat.js leaves undrawn, comma-separated (`data-search-tools`)."""
    return ",".join(tools.search_tools())
