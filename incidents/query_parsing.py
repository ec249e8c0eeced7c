"""Query understanding: time windows, repeats, severity, category, application.

Pure text in, small frozen dataclasses out; no ORM. The selectors turn the
result into filters, and the copilot's router uses it to pick a tool.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

NUMBER_WORDS = {
    "a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "fourteen": 14, "fifteen": 15, "twenty": 20, "thirty": 30, "couple": 2, "few": 3,
}  # fmt: skip
UNIT_DAYS = {"hour": 1 / 24, "day": 1, "week": 7, "fortnight": 14, "month": 30, "quarter": 91,
             "year": 365}  # fmt: skip
MONTHS = {name: i for i, name in enumerate(
    ["january", "february", "march", "april", "may", "june", "july", "august", "september",
     "october", "november", "december"], start=1)}  # fmt: skip
_MONTH_RE = "|".join(list(MONTHS) + [m[:3] for m in MONTHS if m != "may"])
_NUMBER_RE = r"\d+|" + "|".join(NUMBER_WORDS)


@dataclass(frozen=True)
class TimeWindow:
    """Inclusive date range; None on a side means open."""

    start: dt.date | None
    end: dt.date | None
    label: str

    @property
    def days(self) -> int | None:
        if self.start is None or self.end is None:
            return None
        return (self.end - self.start).days


def _number(word: str) -> int:
    return int(word) if word.isdigit() else NUMBER_WORDS[word]


def _month_start(year: int, month_name: str) -> dt.date:
    month = next(n for name, n in MONTHS.items() if name.startswith(month_name[:3]))
    return dt.date(year, month, 1)


_RELATIVE_RE = re.compile(
    rf"\b(?:in\s+|over\s+|during\s+|within\s+)?(?:the\s+)?(?:last|past|previous|recent)\s+"
    rf"(?:(?P<n>{_NUMBER_RE})\s+)?(?P<unit>hour|day|week|fortnight|month|quarter|year)s?\b",
    re.IGNORECASE,
)
_THIS_RE = re.compile(r"\bthis\s+(?P<unit>week|month|year)\b", re.IGNORECASE)
_DAY_RE = re.compile(r"\b(?P<word>yesterday|today|tonight|last night)\b", re.IGNORECASE)
_IN_YEAR_RE = re.compile(r"\b(?:in|during|from)\s+(?P<year>(?:19|20)\d\d)\b", re.IGNORECASE)
_SINCE_RE = re.compile(
    rf"\b(?P<op>since|after|before|until|prior to)\s+(?:(?P<month>{_MONTH_RE})[a-z]*\s+)?"
    rf"(?P<year>(?:19|20)\d\d)\b",
    re.IGNORECASE,
)


DEFAULT_RECENT_DAYS = 30
_RECENT_RE = re.compile(r"\b(?:recent(?:ly)?|latest)\b", re.IGNORECASE)


def parse_time_window(text: str, today: dt.date) -> tuple[TimeWindow | None, str]:
    """The first time window in `text`, and the text without it.

    A bare "recent" means the last 30 days.
    """
    parsers = (
        _relative_window, _this_window, _day_window, _year_window, _since_window, _recent_window,
    )  # fmt: skip
    for parser in parsers:
        found = parser(text, today)
        if found is not None:
            window, match = found
            return window, _cut(text, match)
    return None, text


def _cut(text: str, match: re.Match[str]) -> str:
    return re.sub(r"\s{2,}", " ", text[: match.start()] + " " + text[match.end() :]).strip()


def _relative_window(text: str, today: dt.date) -> tuple[TimeWindow, re.Match[str]] | None:
    match = _RELATIVE_RE.search(text)
    if not match:
        return None
    count = _number(match.group("n").lower()) if match.group("n") else 1
    days = max(round(count * UNIT_DAYS[match.group("unit").lower()]), 1)
    return TimeWindow(today - dt.timedelta(days=days), today, f"last {days} days"), match


def _recent_window(text: str, today: dt.date) -> tuple[TimeWindow, re.Match[str]] | None:
    match = _RECENT_RE.search(text)
    if not match:
        return None
    start = today - dt.timedelta(days=DEFAULT_RECENT_DAYS)
    return TimeWindow(start, today, f"last {DEFAULT_RECENT_DAYS} days"), match


def _this_window(text: str, today: dt.date) -> tuple[TimeWindow, re.Match[str]] | None:
    match = _THIS_RE.search(text)
    if not match:
        return None
    days = UNIT_DAYS[match.group("unit").lower()]
    return TimeWindow(today - dt.timedelta(days=days), today, f"last {days:.0f} days"), match


def _day_window(text: str, today: dt.date) -> tuple[TimeWindow, re.Match[str]] | None:
    match = _DAY_RE.search(text)
    if not match:
        return None
    days = 0 if match.group("word").lower() in {"today", "tonight"} else 1
    return TimeWindow(today - dt.timedelta(days=days), today, match.group("word").lower()), match


def _year_window(text: str, today: dt.date) -> tuple[TimeWindow, re.Match[str]] | None:
    match = _IN_YEAR_RE.search(text)
    if not match:
        return None
    year = int(match.group("year"))
    return TimeWindow(dt.date(year, 1, 1), dt.date(year, 12, 31), f"in {year}"), match


def _since_window(text: str, today: dt.date) -> tuple[TimeWindow, re.Match[str]] | None:
    match = _SINCE_RE.search(text)
    if not match:
        return None
    year = int(match.group("year"))
    month = match.group("month")
    start = _month_start(year, month.lower()) if month else dt.date(year, 1, 1)
    label = f"{match.group('op').lower()} {month + ' ' if month else ''}{year}"
    if match.group("op").lower() in {"since", "after"}:
        return TimeWindow(start, today, label), match
    return TimeWindow(None, start - dt.timedelta(days=1), label), match


# --- other filters ----------------------------------------------------------------

_REPEAT_RE = re.compile(
    r"\b(?:repeat(?:ed)?\s+incidents?|repeats?\b|recurr(?:ing|ence|ences|ed)|happened\s+again"
    r"|flagged\s+as\s+(?:a\s+)?repeat)",
    re.IGNORECASE,
)
_SEVERITY_RE = re.compile(
    r"\b(?:sev(?:erity)?\s*-?\s*(?P<sev>[1-4])|p(?P<p>[1-4]))\b", re.IGNORECASE
)
# "<category> incidents", "<category>-related incidents": explicit listings only,
# so a symptom that merely mentions a database is not filtered by category.
CATEGORY_WORDS = {
    "certificate": "certificate", "cert": "certificate", "tls": "certificate", "ssl": "certificate",
    "database": "database", "db": "database", "dns": "dns", "network": "network",
    "networking": "network", "config": "config", "configuration": "config", "deploy": "deploy",
    "deployment": "deploy", "security": "security", "hardware": "hardware", "power": "hardware",
    "capacity": "capacity", "dependency": "dependency", "third-party": "dependency",
    "human-error": "human-error", "time": "time", "software-bug": "software-bug",
    "bug": "software-bug",
}  # fmt: skip
_CATEGORY_RE = re.compile(
    rf"\b(?P<word>{'|'.join(re.escape(w) for w in CATEGORY_WORDS)})(?:[- ]related)?\s+"
    r"(?:incidents?|outages?|issues|problems|failures)\b",
    re.IGNORECASE,
)


def parse_repeat(text: str) -> bool | None:
    return True if _REPEAT_RE.search(text) else None


def parse_severity(text: str) -> str | None:
    match = _SEVERITY_RE.search(text)
    if not match:
        return None
    return f"SEV{match.group('sev') or match.group('p')}"


def parse_category(text: str) -> str | None:
    match = _CATEGORY_RE.search(text)
    return CATEGORY_WORDS[match.group("word").lower()] if match else None


def is_category_phrase(subject: str) -> bool:
    words = re.sub(r"[- ]related$", "", subject.strip().lower())
    return words in CATEGORY_WORDS


def strip_filter_words(text: str) -> str:
    """The question without its repeat, severity and category phrases."""
    for pattern in (_REPEAT_RE, _SEVERITY_RE, _CATEGORY_RE):
        text = pattern.sub(" ", text)
    return re.sub(r"\s{2,}", " ", text).strip()


# --- applications ---------------------------------------------------------------

# Common abbreviations engineers type; expanded before matching names.
APPLICATION_ALIASES = {
    "gce": "google compute engine", "gke": "google kubernetes engine",
    "gcs": "google cloud storage", "gcp": "google cloud", "aws": "amazon web services",
    "ec2": "amazon ec2", "ebs": "amazon ebs", "rds": "amazon rds", "elb": "elastic load balancing",
    "aks": "azure kubernetes service", "gh": "github", "k8s": "kubernetes",
}  # fmt: skip
_GENERIC_WORDS = {
    "the", "our", "platform", "service", "services", "system", "systems", "product",
    "products", "app", "application", "website", "site", "on", "record", "file", "we", "have",
    "any", "all", "every", "incidents", "incident", "outages", "outage",
}  # fmt: skip
_LISTING_PATTERNS = [
    r"^(?:(?:what|which|any|list|show|find|get)\s+)?(?:me\s+)?(?:all\s+|every\s+|the\s+)?"
    r"(?:past\s+)?(?:incidents?|outages?)\s+(?:that\s+)?(?:have\s+|has\s+)?"
    r"(?:for|with|affecting|affected|impacted|impacting|hit|hitting|involving|of|on|in|at)\s+"
    r"(?P<app>.+)$",
    r"^(?:anything|any\s+incidents?|any\s+outages?)\s+(?:affecting|with|for|on|involving|in)\s+"
    r"(?P<app>.+)$",
    r"^has\s+(?P<app>.+?)\s+(?:had|seen)\s+any\b.*$",
    r"^(?:(?:show|list|get|find|give)\s+(?:me\s+)?)?(?:all\s+|every\s+|any\s+)?(?:the\s+)?"
    r"(?P<app>.+?)\s+(?:incidents?|outages?|failures?)\b(?:\s+(?:we\s+have\s+)?on\s+"
    r"(?:record|file))?(?:\s+we\s+have\s+on\s+file)?$",
]
_LISTING_RES = [re.compile(p, re.IGNORECASE) for p in _LISTING_PATTERNS]
_LEADING_RE = re.compile(r"^(?:please\s+)?(?:can\s+you\s+)?(?:show|list)\s+(?:me\s+)?", re.I)


def listing_subject(text: str) -> str | None:
    """The thing a listing question is about: "Incidents for Honeycomb" → "Honeycomb"."""
    cleaned = re.sub(r"[?!.]+$", "", text.strip()).strip()
    cleaned = _LEADING_RE.sub("", cleaned)
    for pattern in _LISTING_RES:
        match = pattern.match(cleaned)
        if match:
            subject = re.sub(r"\s+(?:on\s+record|we\s+have\s+on\s+file)$", "", match.group("app"))
            subject = subject.strip(" ,")
            if subject and len(subject.split()) <= 6:
                return subject
    return None


def _words(text: str) -> set[str]:
    """Words of a name, with dotted names both whole and split (GitHub.com)."""
    tokens = re.findall(r"[a-z0-9][a-z0-9.&'+-]*[a-z0-9]|[a-z0-9]", text.lower())
    split = {part for token in tokens for part in re.split(r"[.\-]", token) if part}
    return set(tokens) | split


def application_terms(subject: str) -> list[str]:
    """Lower-case tokens to match, with aliases expanded and generic words dropped."""
    expanded = " ".join(APPLICATION_ALIASES.get(t, t) for t in subject.lower().split())
    tokens = re.findall(r"[a-z0-9][a-z0-9.&'+-]*[a-z0-9]|[a-z0-9]", expanded)
    return [t for t in tokens if t not in _GENERIC_WORDS]


@dataclass(frozen=True)
class ApplicationEntry:
    """One known (impacted_application, company) pair."""

    application: str
    company: str = ""
    words: frozenset[str] = field(default_factory=frozenset)
    company_words: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def of(cls, application: str, company: str = "") -> ApplicationEntry:
        return cls(application, company, frozenset(_words(application)), frozenset(_words(company)))


@dataclass(frozen=True)
class ApplicationMatch:
    applications: tuple[str, ...]
    how: str  # exact | partial


def match_applications(
    subject: str, catalog: Sequence[ApplicationEntry]
) -> ApplicationMatch | None:
    """Known applications named by `subject`: exact names first, then by words.

    By words, every term must be a word of the application or of its
    company, and at least one must name the application or the whole
    company: "github actions" matches "GitHub.com (Actions, API, ...)" of
    GitHub. A term that names some company must name this entry's company,
    so "slack" does not match "incident.io (Slack app)".
    """
    wanted = subject.strip().lower()
    exact = [e.application for e in catalog if e.application.lower() == wanted]
    terms = application_terms(subject)
    company_terms = {t for t in terms if any(t in e.company_words for e in catalog)}
    partial = [e.application for e in catalog if _entry_matches(e, terms, company_terms, wanted)]
    found = tuple(dict.fromkeys(exact + partial))
    if not found:
        return None
    return ApplicationMatch(found, "exact" if exact else "partial")


def _entry_matches(
    entry: ApplicationEntry, terms: list[str], company_terms: set[str], wanted: str
) -> bool:
    if not terms or not all(t in entry.words or t in entry.company_words for t in terms):
        return False
    if not all(t in entry.company_words for t in company_terms):
        return False
    names_company = entry.company.lower() == wanted or " ".join(terms) == entry.company.lower()
    return names_company or any(t in entry.words for t in terms)
