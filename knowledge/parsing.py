"""Pure text helpers for knowledge documents. No ORM here."""

from __future__ import annotations

import re

from incidents.parsing import UNICODE_DASHES

# KB-RB-013 (runbook), KB-KI-002 (known issue), ...: whatever dash was typed.
DOCUMENT_ID_IN_TEXT_RE = re.compile(
    rf"\bKB\s*[-{UNICODE_DASHES}]\s*[A-Z]{{2}}\s*[-{UNICODE_DASHES}]\s*\d{{3,}}\b",
    re.IGNORECASE,
)
_DASHES_RE = re.compile(rf"\s*[-{UNICODE_DASHES}]\s*")
# The original design's names of the search filters, which a model (the
# search_knowledge tool) or an API client may still send.
FILTER_ALIASES = {"typeFilter": "type_filter", "serviceFilter": "service_filter",
                  "tagFilter": "tag_filter"}  # fmt: skip


def normalize_document_id(raw: str) -> str:
    """`kb\u2011rb\u2011013` → `KB-RB-013`."""
    return _DASHES_RE.sub("-", raw.strip()).upper()


def find_document_ids(text: str) -> list[str]:
    """Every KB-XX-NNN document id mentioned in `text`, normalised, once each."""
    found = (normalize_document_id(m.group(0)) for m in DOCUMENT_ID_IN_TEXT_RE.finditer(text))
    return list(dict.fromkeys(found))
