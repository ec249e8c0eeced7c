"""Markdown to safe HTML, with incident and document ids turned into links.

Used for the copilot's answers and for knowledge documents. Model and
imported text is untrusted: Markdown renders it, nh3 then keeps only the
tags and attributes below, so nothing else ever reaches a page.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET  # builds elements; parses nothing

import markdown
import nh3
from django.urls import reverse
from django.utils.safestring import SafeString, mark_safe
from markdown.extensions import Extension
from markdown.inlinepatterns import InlineProcessor
from markdown.util import AtomicString

from incidents.parsing import INCIDENT_ID_IN_TEXT_RE, normalize_incident_id
from knowledge.parsing import DOCUMENT_ID_IN_TEXT_RE

ALLOWED_TAGS = {
    "a", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr",
    "li", "ol", "p", "pre", "strong", "table", "tbody", "td", "th", "thead", "tr", "ul",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {"a": {"href", "title", "class"}, "code": {"class"}, "td": {"align"}}
_DOC_DASHES_RE = re.compile(r"\s*[-\u2010-\u2015\u2212\ufe58\ufe63\uff0d\u00ad]\s*")


def incident_url(incident_id: str) -> str:
    return reverse("incident-detail", args=[normalize_incident_id(incident_id)])


def document_url(doc_id: str) -> str:
    return reverse("knowledge-detail", args=[normalize_document_id(doc_id)])


def normalize_document_id(raw: str) -> str:
    return _DOC_DASHES_RE.sub("-", raw.strip()).upper()


class _IdLink(InlineProcessor):
    """Turns an id written anywhere in prose (not in code) into a link."""

    def __init__(self, pattern: re.Pattern[str], kind: str) -> None:
        super().__init__(pattern.pattern)
        self.compiled_re = pattern  # keep the IGNORECASE flag of the original
        self.kind = kind

    def handleMatch(  # type: ignore[override]  # Markdown's API
        self, m: re.Match[str], data: str
    ) -> tuple[ET.Element, int, int]:
        if self.kind == "incident":
            label, href = normalize_incident_id(m.group(0)), incident_url(m.group(0))
        else:
            label, href = normalize_document_id(m.group(0)), document_url(m.group(0))
        link = ET.Element("a", {"href": href, "class": f"ref ref-{self.kind}"})
        link.text = AtomicString(label)  # not matched again inside the link
        return link, m.start(0), m.end(0)


class IdLinkExtension(Extension):
    def extendMarkdown(self, md: markdown.Markdown) -> None:  # Markdown's API
        md.inlinePatterns.register(_IdLink(INCIDENT_ID_IN_TEXT_RE, "incident"), "incident-id", 5)
        md.inlinePatterns.register(_IdLink(DOCUMENT_ID_IN_TEXT_RE, "document"), "document-id", 5)


_LIST_ITEM_RE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")
_TABLE_DELIMITER_CELL_RE = re.compile(r"^\s*:?-+:?\s*$")


def _blank_line_before_blocks(text: str) -> str:
    """Python-Markdown needs a blank line before a list or a table; models (CommonMark,
    GFM) often omit it. The streaming renderer (static/js/markdown.js) needs none, so
    without this an answer's table would turn back into text when it ends."""
    lines, in_fence, previous = [], False, ""
    source = text.splitlines()
    for i, line in enumerate(source):
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        starts_list = not in_fence and _LIST_ITEM_RE.match(line)
        after_text = previous.strip() and not _LIST_ITEM_RE.match(previous)
        starts_table = not in_fence and _is_table_start(line, source[i + 1 : i + 2])
        if (starts_list and after_text) or (starts_table and previous.strip()):
            lines.append("")
        lines.append(line)
        previous = line
    return "\n".join(lines)


def _is_table_start(line: str, following: list[str]) -> bool:
    """A GFM table header: a row with pipes, then a delimiter row of as many cells."""
    if not following or "|" not in line or "|" not in following[0]:
        return False
    header, delimiter = _table_cells(line), _table_cells(following[0])
    return len(header) == len(delimiter) and all(
        _TABLE_DELIMITER_CELL_RE.match(cell) for cell in delimiter
    )


def _table_cells(line: str) -> list[str]:
    """A row's cells: split on pipes, outer pipes optional (enough to count them)."""
    inner = line.strip().removeprefix("|")
    inner = inner if inner.endswith("\\|") else inner.removesuffix("|")
    return re.split(r"(?<!\\)\|", inner)


def render_markdown(text: str) -> SafeString:
    """Sanitised HTML for untrusted Markdown; ids link to their pages."""
    html = markdown.markdown(
        _blank_line_before_blocks(text),
        extensions=["fenced_code", "tables", "sane_lists", IdLinkExtension()],
    )
    clean = nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
    return mark_safe(clean)  # noqa: S308  # nh3 has just sanitised it
