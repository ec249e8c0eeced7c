"""Pure text helpers for incidents: ids, dates, chunks. No ORM here."""

from __future__ import annotations

import datetime as dt
import re
import unicodedata

# Dashes people paste from chat tools, documents and phones: hyphen,
# non-breaking hyphen, figure dash, en/em dash, horizontal bar, minus sign,
# small and full-width hyphen-minus.
UNICODE_DASHES = "\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d\u00ad"
_DASH_TABLE = str.maketrans(dict.fromkeys(UNICODE_DASHES, "-"))
# ASCII digits only: `\d` alone takes any script's (an Arabic-Indic one looks like no 1).
INCIDENT_ID_RE = re.compile(r"^INC-(\d{4})-(\d{2})-(\d{2})-(\d{3,})$", re.ASCII)
ID_FORM = "INC-YYYY-MM-DD-NNN"
# Finds ids inside free text, whatever dash or spacing was used, with the prefix
# joined any way ("inc 2020-02-19-001", "INC#2020-...") or left out: a date
# followed by a sequence number is an id in this desk.
INCIDENT_ID_IN_TEXT_RE = re.compile(
    rf"(?<![\w{UNICODE_DASHES}])(?:INC\s*[-{UNICODE_DASHES}#:_]?\s*)?\d{{4}}\s*[-{UNICODE_DASHES}]\s*\d{{2}}"
    rf"\s*[-{UNICODE_DASHES}]\s*\d{{2}}\s*[-{UNICODE_DASHES}]\s*\d{{3,}}\b",
    re.IGNORECASE,
)

BODY_WINDOW_WORDS = 120
BODY_WINDOW_OVERLAP = 30


def normalize_incident_id(raw: str) -> str:
    """`inc\u20112025\u201108\u201124\u2011001 ` → `INC-2025-08-24-001` (dashes, case, spaces).

    Look-alikes are folded first (NFKC: fullwidth digits are digits) and invisible
    characters dropped (a zero-width space pasted with the id): before, such ids were
    stored as distinct incidents that displayed identically. What NFKC keeps apart,
    such as a Cyrillic I (U+0406), stays, and `incident_id_problem` names it.
    """
    if INCIDENT_ID_RE.fullmatch(raw):  # already normal, as every id read from the data is
        return raw
    text = _visible(unicodedata.normalize("NFKC", raw).translate(_DASH_TABLE)).strip().upper()
    text = re.sub(r"\s*-\s*", "-", text)
    text = re.sub(r"\s+", "-", text)
    if re.match(r"^(?:INC[-#:_]*)?\d{4}-\d{2}-\d{2}-\d{3,}$", text):
        text = "INC-" + re.sub(r"^INC[-#:_]*", "", text)
    return text


def _visible(text: str) -> str:
    """`text` without format characters (Unicode Cf: zero-width spaces and joiners, BOMs)."""
    return "".join(char for char in text if unicodedata.category(char) != "Cf")


def incident_id_problem(incident_id: str) -> str | None:
    """Why a normalised id is no `INC-YYYY-MM-DD-NNN`, naming a character that has no
    place in one (what is left of a look-alike); None for a good id."""
    if INCIDENT_ID_RE.match(incident_id):
        return None
    for char in incident_id:
        if not (char.isascii() and (char.isalnum() or char == "-")):
            name = unicodedata.name(char, "a control character")
            return f"contains {char!r} (U+{ord(char):04X} {name}); ids look like {ID_FORM}"
    return f"is not an incident id: ids look like {ID_FORM}"


def as_incident_id(raw: str) -> str | None:
    """The normalised id when `raw` is nothing but an incident id, else None.

    The incident list sends such a search straight to the incident page.
    """
    wanted = normalize_incident_id(raw)
    return wanted if INCIDENT_ID_RE.match(wanted) else None


def date_from_incident_id(incident_id: str) -> dt.date | None:
    """The occurrence date encoded in `INC-YYYY-MM-DD-NNN`, if it is a real date."""
    match = INCIDENT_ID_RE.match(normalize_incident_id(incident_id))
    if not match:
        return None
    year, month, day = (int(part) for part in match.groups()[:3])
    try:
        return dt.date(year, month, day)
    except ValueError:
        return None


def find_incident_ids(text: str) -> list[str]:
    """Every incident id mentioned in `text`, normalised, in order, once each."""
    found = (normalize_incident_id(m.group(0)) for m in INCIDENT_ID_IN_TEXT_RE.finditer(text))
    return list(dict.fromkeys(found))


def word_windows(
    text: str, *, size: int = BODY_WINDOW_WORDS, overlap: int = BODY_WINDOW_OVERLAP
) -> list[str]:
    """Split text into overlapping windows of words.

    MiniLM reads at most 256 word pieces; ~120 words stays under that with
    room for the title prefix, and the overlap keeps a sentence that straddles
    a boundary whole in at least one window.
    """
    words = text.split()
    if not words:
        return []
    step = max(size - overlap, 1)
    starts = range(0, max(len(words) - overlap, 1), step)
    return [" ".join(words[start : start + size]) for start in starts]


def incident_summary_text(*, title: str, application: str, root_cause: str, mitigation: str) -> str:
    """The first chunk of every incident: what search should match first."""
    parts = [
        title,
        f"Application: {application}" if application else "",
        f"Root cause: {root_cause}" if root_cause else "",
        f"Mitigation: {mitigation}" if mitigation else "",
    ]
    return "\n".join(part for part in parts if part)


def incident_chunk_texts(
    *, title: str, application: str, root_cause: str, mitigation: str, body: str
) -> list[str]:
    """Summary chunk, then body windows prefixed with the title for context."""
    summary = incident_summary_text(
        title=title, application=application, root_cause=root_cause, mitigation=mitigation
    )
    windows = [f"{title}\n{window}" for window in word_windows(body)]
    return [summary, *windows]


_HEADING_RE = re.compile(r"^(#{1,6})\s+(.*)$", re.MULTILINE)


def markdown_sections(body: str) -> list[tuple[str, str]]:
    """(heading, text) per markdown section; text before any heading has ''."""
    sections: list[tuple[str, str]] = []
    matches = list(_HEADING_RE.finditer(body))
    preamble = body[: matches[0].start()] if matches else body
    if preamble.strip():
        sections.append(("", preamble.strip()))
    for index, match in enumerate(matches):
        end = matches[index + 1].start() if index + 1 < len(matches) else len(body)
        text = body[match.end() : end].strip()
        if text:
            sections.append((match.group(2).strip(), text))
    return sections


def knowledge_chunk_texts(*, title: str, body: str) -> list[str]:
    """One chunk per markdown section (windowed when long), titled for context."""
    chunks = [title]
    for heading, text in markdown_sections(body):
        prefix = f"{title} — {heading}" if heading else title
        chunks.extend(f"{prefix}\n{window}" for window in word_windows(text))
    return chunks
