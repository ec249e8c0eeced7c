"""Log search for the `search_logs` tool: Grafana Loki or Elasticsearch/OpenSearch.

Stdlib HTTP (urllib), like the Jira adapter: one endpoint per backend does not
justify a client dependency. A search is bounded three ways before anything
reaches a model or a page: the time range (LOG_SEARCH_MAX_HOURS), the lines
(LOG_SEARCH_MAX_LINES) and the bytes (LOG_SEARCH_MAX_BYTES, and a cap on the
response read), and every line has its secrets redacted here, first.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlencode

from django.conf import settings
from django.utils import timezone

MAX_LINE_CHARS = 1000
REDACT_MARGIN_CHARS = 200
# A response this large is refused unread: the requested lines never need it.
MAX_RESPONSE_BYTES = 4 * 1024 * 1024
REDACTED = "[REDACTED]"

# A name that says its value is a secret: a secret word, with more glued before it
# (PGPASSWORD, csrftoken) or parts after it (SECRET_KEY), never glued after it
# (author, tokenizer). Names are at most 100 characters, so this stays cheap.
_SECRET_NAME_RE = re.compile(
    r"""(?ix)
    ^[\w.-]*?(?:password|passwd|pwd|secret|token|api[_-]?key|apikey|access[_-]?key|
        private[_-]?key|account[_-]?key|credentials?|auth|session(?:id)?|signature)
    (?:[_.-][a-z0-9]+)*$"""
)
# name=value or "name": "value" (a quoted value goes whole). A name starts only
# where a word starts, so a long run of "a.a.a." is read once, not from each letter.
_ASSIGNMENT_RE = re.compile(
    r"""(?<![\w.-])([\w.-]{1,100})(["']?[ \t]*[:=][ \t]*)"""
    r"""("[^"\n]{0,1000}"|'[^'\n]{0,1000}'|[^\s"',;&}]{1,1000})"""
)

_SECRET_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    # PEM private keys, whole
    (re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)",
                re.S), REDACTED),
    # Authorization headers: Bearer/Basic and the credential after it
    (re.compile(r"\b(Bearer|Basic|Token)\s+[A-Za-z0-9._~+/=-]{8,}", re.I), rf"\1 {REDACTED}"),
    # user:password@ in URLs
    (re.compile(r"(://[^/\s:@]+):[^/\s@]+@"), rf"\1:{REDACTED}@"),
    # well-known key shapes: JWTs, AWS access keys, OpenAI/Stripe/GitHub/Slack tokens
    (re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}"), REDACTED),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), REDACTED),
    (re.compile(r"\b(?:sk|pk|rk)[-_](?:live[-_]|test[-_])?[A-Za-z0-9_-]{16,}"), REDACTED),
    (re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"), REDACTED),
    (re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}"), REDACTED),
    (re.compile(r"\b(?:npm_[A-Za-z0-9]{30,}|glpat-[A-Za-z0-9_-]{20,}|AIza[0-9A-Za-z_-]{30,})"),
     REDACTED),
    # incoming-webhook URLs carry their secret in the path
    (re.compile(r"(hooks\.slack\.com/services/|discord(?:app)?\.com/api/webhooks/)\S+"),
     rf"\1{REDACTED}"),
]  # fmt: skip


class LogSearchError(Exception):
    """The log backend failed: unreachable, slow, refusing, or answering nonsense."""


@dataclass(frozen=True)
class LogLine:
    at: dt.datetime
    service: str
    text: str  # redacted


@dataclass(frozen=True)
class LogSearch:
    service: str
    query: str
    since: dt.datetime
    until: dt.datetime
    lines: list[LogLine]
    truncated: bool  # more lines or bytes than the bounds allowed

    def as_text(self) -> str:
        window = f"{self.since:%Y-%m-%d %H:%M} to {self.until:%Y-%m-%d %H:%M} UTC"
        what = f"Log lines of {self.service}" + (f" matching {self.query!r}" if self.query else "")
        if not self.lines:
            return f"No log lines of {self.service} in {window}" + (
                f" matching {self.query!r}." if self.query else "."
            )
        lines = [f"{line.at:%Y-%m-%dT%H:%M:%S}Z {line.text}" for line in self.lines]
        note = "\n(More lines matched; narrow the query or the time range.)" * self.truncated
        return f"{what}, {window}, newest first:\n" + "\n".join(lines) + note

    def as_data(self) -> dict[str, Any]:
        return {
            "service": self.service,
            "query": self.query,
            "since": self.since.isoformat(),
            "until": self.until.isoformat(),
            "truncated": self.truncated,
            "lines": [{"at": line.at.isoformat(), "text": line.text} for line in self.lines],
        }


def log_search_configured() -> bool:
    return bool(settings.LOG_SEARCH_URL) and settings.LOG_SEARCH_BACKEND in BACKENDS


def redact(text: str) -> str:
    """The text with tokens, passwords and keys replaced by [REDACTED]; keep it
    short (`redact_line`)."""
    for pattern, replacement in _SECRET_PATTERNS:
        text = pattern.sub(replacement, text)
    return _redact_assignments(text)


def redact_line(text: str) -> str:
    """A log line as it may be shown: spaces folded, redacted, cut to MAX_LINE_CHARS.

    Only what can be shown is read, with a margin so that a key across the cut
    is still recognised: the patterns backtrack on long runs of some shapes
    (20 KB of "a.a.a." took 42 s), and a line may be megabytes long.
    """
    shown = " ".join(text.split())[: MAX_LINE_CHARS + REDACT_MARGIN_CHARS]
    return redact(shown)[:MAX_LINE_CHARS]


def _redact_assignments(text: str) -> str:
    """Values whose name says they are secret. A name that does not is passed
    without its value, which may hold one ("Cookie: sessionid=...", "url=...?token=")."""
    kept: list[str] = []
    at = 0
    while match := _ASSIGNMENT_RE.search(text, at):
        if _SECRET_NAME_RE.match(match[1]):
            value = match[3]
            quote = value[0] if value[0] in "\"'" else ""
            kept += [text[at : match.start(3)], f"{quote}{REDACTED}{quote}"]
            at = match.end()
        else:
            kept.append(text[at : match.end(2)])
            at = match.end(2)
    return "".join(kept) + text[at:]


def search_logs(
    *, service: str, query: str, hours: float, limit: int, now: dt.datetime | None = None
) -> LogSearch:
    """The newest `limit` lines of `service` in the last `hours` (both capped)
    that contain `query`, redacted and cut to LOG_SEARCH_MAX_BYTES."""
    until = now or timezone.now()
    since = until - dt.timedelta(hours=min(hours, settings.LOG_SEARCH_MAX_HOURS))
    limit = min(limit, settings.LOG_SEARCH_MAX_LINES)
    raw = BACKENDS[settings.LOG_SEARCH_BACKEND](service, query, since, until, limit + 1)
    raw.sort(key=lambda line: line[0], reverse=True)
    lines, size = [], 0
    for at, text in raw[:limit]:
        clean = redact_line(text)
        size += len(clean.encode()) + 1
        if size > settings.LOG_SEARCH_MAX_BYTES:
            break
        lines.append(LogLine(at, service, clean))
    return LogSearch(service, query, since, until, lines, truncated=len(raw) > len(lines))


# --- backends -----------------------------------------------------------------------------

RawLine = tuple[dt.datetime, str]


def _loki(
    service: str, query: str, since: dt.datetime, until: dt.datetime, limit: int
) -> list[RawLine]:
    """LogQL over /loki/api/v1/query_range: the service's stream, a line filter."""
    selector = f"{{{settings.LOG_SEARCH_SERVICE_FIELD}={_quoted(service)}}}"
    logql = selector + (f" |= {_quoted(query)}" if query else "")
    params = {
        "query": logql,
        "start": str(_nanoseconds(since)),
        "end": str(_nanoseconds(until)),
        "limit": str(limit),
        "direction": "backward",
    }
    body = _request(f"/loki/api/v1/query_range?{urlencode(params)}")
    try:
        streams = body["data"]["result"]
        return [
            (dt.datetime.fromtimestamp(int(stamp) / 1e9, tz=dt.UTC), str(line))
            for stream in streams
            for stamp, line in stream["values"]
        ]
    except (KeyError, TypeError, ValueError) as exc:
        raise LogSearchError(f"Loki answered an unexpected body ({exc!r})") from None


def _elasticsearch(
    service: str, query: str, since: dt.datetime, until: dt.datetime, limit: int
) -> list[RawLine]:
    """_search on LOG_SEARCH_INDEX: a time range, the service field, a match on message."""
    filters: list[dict[str, Any]] = [
        {"range": {"@timestamp": {"gte": since.isoformat(), "lte": until.isoformat()}}},
        {"term": {settings.LOG_SEARCH_SERVICE_FIELD: service}},
    ]
    if query:
        filters.append({"match_phrase": {"message": query}})
    search = {
        "size": limit,
        "sort": [{"@timestamp": {"order": "desc"}}],
        "query": {"bool": {"filter": filters}},
        "_source": ["@timestamp", "message"],
    }
    index = quote(settings.LOG_SEARCH_INDEX, safe="*,-_.")
    body = _request(f"/{index}/_search", search)
    try:
        hits = body["hits"]["hits"]
        return [
            (_timestamp(hit["_source"]["@timestamp"]), str(hit["_source"].get("message", "")))
            for hit in hits
        ]
    except (KeyError, TypeError, ValueError) as exc:
        raise LogSearchError(f"Elasticsearch answered an unexpected body ({exc!r})") from None


BACKENDS: dict[str, Callable[[str, str, dt.datetime, dt.datetime, int], list[RawLine]]] = {
    "loki": _loki,
    "elasticsearch": _elasticsearch,
}


def _request(path: str, payload: dict[str, Any] | None = None) -> Any:
    """GET (or POST `payload`) as JSON, within LOG_SEARCH_TIMEOUT_SECONDS."""
    headers = {"Accept": "application/json"}
    if settings.LOG_SEARCH_TOKEN:
        headers["Authorization"] = f"Bearer {settings.LOG_SEARCH_TOKEN}"
    data = None
    if payload is not None:
        data = json.dumps(payload).encode()
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(  # noqa: S310  # the URL is the operator's setting, http(s) checked
        settings.LOG_SEARCH_URL + path, data=data, headers=headers
    )
    timeout = settings.LOG_SEARCH_TIMEOUT_SECONDS
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310  # as above
            raw = response.read(MAX_RESPONSE_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise LogSearchError(f"the log backend answered HTTP {exc.code}") from None
    except TimeoutError:
        raise LogSearchError(f"the log backend did not answer within {timeout:g} s") from None
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, TimeoutError):
            raise LogSearchError(f"the log backend did not answer within {timeout:g} s") from None
        raise LogSearchError(f"the log backend is unreachable ({exc.reason})") from None
    if len(raw) > MAX_RESPONSE_BYTES:
        raise LogSearchError(f"the log backend answered more than {MAX_RESPONSE_BYTES} bytes")
    try:
        return json.loads(raw)
    except ValueError:
        raise LogSearchError("the log backend did not answer JSON") from None


def _quoted(value: str) -> str:
    """A LogQL string literal."""
    return json.dumps(value)


def _nanoseconds(moment: dt.datetime) -> int:
    return int(moment.timestamp()) * 1_000_000_000 + moment.microsecond * 1000


def _timestamp(value: str) -> dt.datetime:
    parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)
