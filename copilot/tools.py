"""The copilot's tools: thin wrappers over the retrieval selectors, and
`search_logs` over a log backend when one is configured.

Each tool's docstring is its description for the model. A tool validates its
arguments, calls one selector and returns `ToolResult(text, data)`: text for
the model, data for the UI and API. Errors come back as text, never as an
exception to the model (`run_tool`).
"""

from __future__ import annotations

import datetime as dt
import inspect
import json
import logging
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from django.db import connection, transaction

from copilot import logsearch
from incidents import selectors as incident_selectors
from incidents.models import DatasetVersion
from incidents.parsing import find_incident_ids
from incidents.rendering import incident_data, incident_text, incidents_text
from knowledge import selectors as knowledge_selectors
from knowledge.parsing import FILTER_ALIASES, find_document_ids

logger = logging.getLogger(__name__)

MAX_LIMIT = 100
MAX_DAYS = 36500
MAX_QUERY_CHARS = 2000
# Listings longer than this leave out each incident's details (see incident_text).
BRIEF_OVER = 5


@dataclass(frozen=True)
class ToolContext:
    """What every tool call shares: "now" and pinned dataset versions.

    Empty in production (today, active versions); the evaluation pins both.
    """

    now: dt.date | None = None
    incident_version: DatasetVersion | None = None
    knowledge_version: DatasetVersion | None = None
    # Where intake stores reports: "" is the live "reported" dataset; the
    # evaluation names its own, never activated, so a report-like turn of a
    # multi-turn question leaves nothing in live search.
    reported_dataset: str = ""


@dataclass(frozen=True)
class ToolResult:
    text: str
    data: dict[str, Any] = field(default_factory=dict)
    count: int = 0
    ids: tuple[str, ...] = ()  # incident and document ids returned (citable)
    error: str = ""
    broadened: bool = False  # the tool had to widen its search to find anything


class ToolArgumentError(ValueError):
    """Arguments the model sent that the tool cannot use."""


# --- argument checks ----------------------------------------------------------------


def _text(arguments: dict[str, Any], name: str, *, required: bool = True) -> str:
    value = arguments.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise ToolArgumentError(f"'{name}' is required")
        return ""
    if not isinstance(value, str):
        raise ToolArgumentError(f"'{name}' must be a string, got {type(value).__name__}")
    if len(value) > MAX_QUERY_CHARS:
        raise ToolArgumentError(f"'{name}' is longer than {MAX_QUERY_CHARS} characters")
    return value.strip()


def _integer(arguments: dict[str, Any], name: str, default: int, maximum: int) -> int:
    value = arguments.get(name, default)
    if value is None:
        return default
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ToolArgumentError(f"'{name}' must be an integer, got {value!r}")
    if not 1 <= value <= maximum:
        raise ToolArgumentError(f"'{name}' must be between 1 and {maximum}, got {value}")
    return value


def _reject_unknown(arguments: dict[str, Any], allowed: set[str]) -> None:
    unknown = sorted(set(arguments) - allowed)
    if unknown:
        raise ToolArgumentError(f"unknown argument(s): {', '.join(unknown)}")


# --- the tools ------------------------------------------------------------------------


def lookup_incident_by_id(arguments: dict[str, Any], context: ToolContext) -> ToolResult:
    """Fetch one incident by its id (INC-YYYY-MM-DD-NNN), with every field.

    Use it when the user names an incident id, or to re-read an incident that
    an earlier answer found (root cause, mitigation, impact, who was accountable).
    """
    _reject_unknown(arguments, {"incident_id"})
    raw = _text(arguments, "incident_id")
    incident = incident_selectors.incident_get_by_public_id(
        incident_id=raw, version=context.incident_version
    )
    if incident is None:
        return ToolResult(f"No incident found with ID {raw}.", {"incident": None})
    return ToolResult(
        "Found 1 incident:\n\n" + incident_text(incident),
        {"incident": incident_data(incident, body=incident.body)},
        count=1,
        ids=(incident.incident_id,),
    )


def search_similar_incidents(arguments: dict[str, Any], context: ToolContext) -> ToolResult:
    """Search past incidents similar to a description of symptoms or causes.

    Application names, time windows ("last week", "in 2019", "since March
    2024"), repeat incidents and severity written in the query become filters.
    """
    _reject_unknown(arguments, {"query", "limit"})
    query = _text(arguments, "query")
    limit = _integer(arguments, "limit", 5, MAX_LIMIT)
    found = incident_selectors.incident_search_similar(
        query=query, limit=limit, now=context.now, version=context.incident_version
    )
    ids = tuple(hit.incident.incident_id for hit in found.hits)
    data = found.as_data()
    return ToolResult(
        found.as_text(), data, len(found.hits), ids, broadened=bool(data.get("expanded"))
    )


def get_incidents_by_application(arguments: dict[str, Any], context: ToolContext) -> ToolResult:
    """List incidents of one application or company, newest first.

    Matches the name case-insensitively, then partially, then by meaning.
    """
    _reject_unknown(arguments, {"app_name", "limit"})
    app_name = _text(arguments, "app_name")
    limit = _integer(arguments, "limit", 5, MAX_LIMIT)
    found = incident_selectors.incident_list_by_application(
        application=app_name, limit=limit, version=context.incident_version
    )
    heading = f"Incidents for application {app_name!r} (matched: {found.how}), newest first:"
    data = {
        "app_name": app_name,
        "how": found.how,
        "applications": list(found.applications),
        "results": [incident_data(incident) for incident in found.incidents],
    }
    ids = tuple(incident.incident_id for incident in found.incidents)
    text = incidents_text(list(found.incidents), heading=heading, brief=len(ids) > BRIEF_OVER)
    # An exact (case-insensitive) name match is the plain search; the partial
    # and semantic fallbacks are the design's "broader search".
    return ToolResult(text, data, len(ids), ids, broadened=found.how != "exact")


def get_recent_incidents(arguments: dict[str, Any], context: ToolContext) -> ToolResult:
    """List incidents that occurred in the last `days` days, newest first; only
    those of `app_name` when given."""
    _reject_unknown(arguments, {"days", "limit", "app_name"})
    days = _integer(arguments, "days", 7, MAX_DAYS)
    limit = _integer(arguments, "limit", 10, MAX_LIMIT)
    app_name = _text(arguments, "app_name", required=False) or None
    incidents = incident_selectors.incident_list_recent(
        days=days,
        limit=limit,
        now=context.now,
        application=app_name,
        version=context.incident_version,
    )
    of = f" of '{app_name}'" if app_name else ""
    heading = f"Incidents{of} from the last {days} days, newest first:"
    data = {
        "days": days,
        "app_name": app_name,
        "results": [incident_data(incident) for incident in incidents],
    }
    ids = tuple(incident.incident_id for incident in incidents)
    text = incidents_text(list(incidents), heading=heading, brief=len(ids) > BRIEF_OVER)
    return ToolResult(text, data, len(ids), ids)


def search_knowledge(arguments: dict[str, Any], context: ToolContext) -> ToolResult:
    """Search runbooks, postmortems, architecture notes and known issues.

    Filters, each one value or a list (any of them matches): type_filter
    (runbook, postmortem, architecture, known_issue), service_filter,
    tag_filter. An empty query with filters lists documents.
    """
    arguments = _design_names(arguments)
    _reject_unknown(arguments, {"query", "limit", *KNOWLEDGE_FILTERS})
    query = _text(arguments, "query", required=False)
    filters = {name: _texts(arguments, name) for name in KNOWLEDGE_FILTERS}
    if not query and not any(filters.values()):
        raise ToolArgumentError("give a query or at least one filter")
    for value in filters["type_filter"]:
        if value.lower().replace(" ", "_") not in knowledge_selectors.TYPES:
            raise ToolArgumentError(
                f"'type_filter' must be one of {', '.join(knowledge_selectors.TYPES)}"
            )
    found = knowledge_selectors.knowledge_search(
        query=query,
        limit=_integer(arguments, "limit", 10, MAX_LIMIT),
        **filters,
        version=context.knowledge_version,
    )
    ids = tuple(hit.document.doc_id for hit in found.hits)
    data = {"query": query, "filters": found.filters, "groups": found.grouped(design_names=True)}
    return ToolResult(found.as_text(), data, len(ids), ids)


KNOWLEDGE_FILTERS = ("type_filter", "service_filter", "tag_filter")
MAX_FILTER_VALUES = 20


def _design_names(arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments with camelCase names (typeFilter) under their snake_case ones."""
    renamed = dict(arguments)
    for camel, snake in FILTER_ALIASES.items():
        if camel in renamed:
            if snake in renamed:
                raise ToolArgumentError(f"give '{snake}' or '{camel}', not both")
            renamed[snake] = renamed.pop(camel)
    return renamed


def _texts(arguments: dict[str, Any], name: str) -> list[str]:
    """A filter given as a string (commas separate values) or a list of strings."""
    value = arguments.get(name)
    items = value if isinstance(value, list) else [value]
    if len(items) > MAX_FILTER_VALUES:
        raise ToolArgumentError(f"'{name}' takes at most {MAX_FILTER_VALUES} values")
    if any(item is not None and not isinstance(item, str) for item in items):
        raise ToolArgumentError(f"'{name}' must be a string or a list of strings")
    texts = [_text({name: item}, name, required=False) for item in items]
    return knowledge_selectors.filter_values(texts)


def search_logs(arguments: dict[str, Any], context: ToolContext) -> ToolResult:
    """Search one service's application logs (newest first) for what happened now.

    time_range: how far back, such as "30m", "6h" or "2d" (default "1h"; long
    ranges are cut to the configured maximum). query: text the lines must
    contain (optional). Secrets in the lines are redacted.
    """
    _reject_unknown(arguments, {"service", "query", "time_range", "limit"})
    found = logsearch.search_logs(
        service=_text(arguments, "service"),
        query=_text(arguments, "query", required=False),
        hours=_hours(arguments),
        # The backend's own bound (LOG_SEARCH_MAX_LINES) applies quietly.
        limit=_integer(arguments, "limit", 50, MAX_LOG_LINES),
    )
    return ToolResult(found.as_text(), found.as_data(), len(found.lines))


MAX_LOG_LINES = 1000
_TIME_RANGE_RE = re.compile(
    r"^(?:last\s+)?(?P<amount>\d+(?:\.\d+)?)\s*(?P<unit>m|min|mins|minutes?|h|hrs?|hours?|"
    r"d|days?|w|weeks?)$",
    re.IGNORECASE,
)
_HOURS_PER = {"m": 1 / 60, "h": 1, "d": 24, "w": 24 * 7}


def _hours(arguments: dict[str, Any]) -> float:
    """`time_range` ("30m", "6h", "2 days") in hours."""
    value = _text(arguments, "time_range", required=False) or "1h"
    match = _TIME_RANGE_RE.match(value.strip())
    if match is None or float(match["amount"]) <= 0:
        raise ToolArgumentError(f"'time_range' must look like 30m, 6h or 2d, got {value!r}")
    return float(match["amount"]) * _HOURS_PER[match["unit"][0].lower()]


# --- registry ---------------------------------------------------------------------------

Runner = Callable[[dict[str, Any], ToolContext], ToolResult]
TOOL_ERROR_PREFIX = "An error occurred while "


@dataclass(frozen=True)
class Wording:
    """A tool's status lines (DESIGN "Status events"), formatted with its
    arguments, `n` (results) and `first` (the first id returned)."""

    activity: str  # "searching incidents", for "An error occurred while ..."
    before: str
    found: str
    nothing: str
    broader: str = ""  # said when the tool had to widen its search


@dataclass(frozen=True)
class Tool:
    """Everything about one tool, in one place: the agent offers and runs it from
    here, the offline engine and the evaluation take its default limit, and the
    chat page learns from `card` whether to draw its result (`search_tools`).

    The description for the model is the runner's docstring.
    """

    name: str
    runner: Runner
    parameters: dict[str, Any]  # JSON Schema properties
    required: tuple[str, ...]
    wording: Wording
    card: bool = False  # the page draws the result; search results show as citations instead

    @property
    def default_limit(self) -> int | None:
        """The `limit` a call without one gets (None: the tool takes no limit)."""
        limit = self.parameters.get("limit")
        return int(limit["default"]) if limit else None


_LIMIT = {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT}


def _one_or_many(item: dict[str, Any]) -> dict[str, Any]:
    """A value or a list of them (DESIGN's filters take either)."""
    return {"anyOf": [item, {"type": "array", "items": item, "maxItems": MAX_FILTER_VALUES}]}


_REGISTRY = (
    Tool(
        name="lookup_incident_by_id",
        runner=lookup_incident_by_id,
        parameters={"incident_id": {"type": "string"}},
        required=("incident_id",),
        wording=Wording(
            activity="looking up the incident",
            before="Searching for {incident_id}...",
            found="Found incident {first}",
            nothing="No incident found with ID {incident_id}",
        ),
    ),
    Tool(
        name="search_similar_incidents",
        runner=search_similar_incidents,
        parameters={"query": {"type": "string"}, "limit": _LIMIT | {"default": 5}},
        required=("query",),
        wording=Wording(
            activity="searching incidents",
            before="Searching for Similar Incidents...",
            found="Found {n} relevant incidents...",
            nothing="No similar incidents found",
            broader="Expanding search...",
        ),
    ),
    Tool(
        name="get_incidents_by_application",
        runner=get_incidents_by_application,
        parameters={"app_name": {"type": "string"}, "limit": _LIMIT | {"default": 5}},
        required=("app_name",),
        wording=Wording(
            activity="listing the application's incidents",
            before="Searching incidents for {app_name}...",
            found="Found {n} incidents for {app_name}...",
            nothing="No incidents found for {app_name}",
            broader="Trying broader search...",
        ),
    ),
    Tool(
        name="get_recent_incidents",
        runner=get_recent_incidents,
        parameters={
            "days": {"type": "integer", "minimum": 1, "maximum": MAX_DAYS, "default": 7},
            "limit": _LIMIT | {"default": 10},
            # Optional: "recent GitHub incidents" lists one application's only.
            "app_name": {"type": "string"},
        },
        required=(),
        wording=Wording(
            activity="listing recent incidents",
            before="Searching incidents from the last {days} days...",
            found="Found {n} incidents from the last {days} days...",
            nothing="No incidents found from the last {days} days",
        ),
    ),
    Tool(
        name="search_knowledge",
        runner=search_knowledge,
        parameters={
            "query": {"type": "string"},
            "limit": _LIMIT | {"default": 10},
            "type_filter": _one_or_many(
                {"type": "string", "enum": list(knowledge_selectors.TYPES)}
            ),
            "service_filter": _one_or_many({"type": "string"}),
            "tag_filter": _one_or_many({"type": "string"}),
        },
        required=(),
        wording=Wording(
            activity="searching the knowledge base",
            before="Searching runbooks and known issues...",
            found="Found {n} relevant documents...",
            nothing="No matching documents found",
        ),
    ),
    Tool(
        name="search_logs",
        runner=search_logs,
        parameters={
            "service": {"type": "string"},
            "query": {"type": "string"},
            "time_range": {"type": "string", "default": "1h"},
            "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LOG_LINES, "default": 50},
        },
        required=("service",),
        wording=Wording(
            activity="searching logs",
            before="Searching logs of {service}...",
            found="Found {n} log lines...",
            nothing="No log lines found",
        ),
        card=True,
    ),
)
TOOLS: dict[str, Tool] = {tool.name: tool for tool in _REGISTRY}


def default_limit(name: str) -> int:
    """The `limit` tool `name` uses when a call gives none."""
    limit = TOOLS[name].default_limit
    if limit is None:
        raise KeyError(f"{name} takes no limit")
    return limit


def search_tools() -> list[str]:
    """The tools whose results the chat page does not draw (their answers cite them);
    the page reads them from `data-search-tools` (copilot/templatetags/tool_tags.py)."""
    return [name for name, tool in TOOLS.items() if not tool.card]


# --- what the agent says about each tool -------------------------------------------------

# The turn's own status lines (DESIGN "Status events"), the agent's and intake's alike.
ANALYZING = "Analyzing your request... please hold on."
TITLING = "Generating title for the incident report..."
WRAPPING_UP = "Almost done, wrapping up the details"

_DEFAULT_ARGUMENTS = {
    "incident_id": "the incident", "app_name": "the application", "days": 7,
    "service": "the service",
}  # fmt: skip


def status_before(name: str, arguments: dict[str, Any]) -> str:
    """What the agent is about to do."""
    tool = TOOLS.get(name)
    return _format(tool.wording.before, arguments) if tool else f"Running {name}..."


def statuses_after(name: str, arguments: dict[str, Any], result: ToolResult) -> list[str]:
    """What it found: a wider search first when there was one, then the count.
    A call the model must fix says nothing; a failure says what failed."""
    tool = TOOLS.get(name)
    if tool is None or (result.error and not result.error.startswith(TOOL_ERROR_PREFIX)):
        return []
    wording = tool.wording
    if result.error:
        return [f"{TOOL_ERROR_PREFIX}{wording.activity}"]
    first = result.ids[0] if result.ids else ""
    line = wording.found if result.count else wording.nothing
    done = _format(line, arguments, n=result.count, first=first)
    return [wording.broader, done] if result.broadened and wording.broader else [done]


def _format(template: str, arguments: dict[str, Any], **figures: Any) -> str:
    values = {**_DEFAULT_ARGUMENTS, **{k: v for k, v in arguments.items() if v}, **figures}
    return template.format_map(values)


def tool_specs() -> list[dict[str, Any]]:
    """The tools in the OpenAI function-calling format (built at every model turn)."""
    offered = offered_tools()
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": _description(tool.runner),
                "parameters": {
                    "type": "object",
                    "properties": tool.parameters,
                    "required": list(tool.required),
                    "additionalProperties": False,
                },
            },
        }
        for name, tool in TOOLS.items()
        if name in offered
    ]


@cache
def _description(runner: Callable[..., Any]) -> str:
    return inspect.cleandoc(runner.__doc__ or "")


def offered_tools() -> list[str]:
    """The tools a model is given: search_logs only with a log backend."""
    return [name for name in TOOLS if name != "search_logs" or logsearch.log_search_configured()]


def parse_arguments(raw: str) -> dict[str, Any]:
    """The model's JSON arguments as a dict, or ToolArgumentError saying what is wrong."""
    try:
        parsed = json.loads(raw or "{}")
    except json.JSONDecodeError as exc:
        raise ToolArgumentError(f"arguments are not valid JSON ({exc.msg} at {exc.pos})") from None
    if not isinstance(parsed, dict):
        raise ToolArgumentError("arguments must be a JSON object")
    return parsed


def run_tool(name: str, raw_arguments: str, context: ToolContext) -> ToolResult:
    """Run a tool by name; every failure comes back as text the model can act on:
    arguments it can fix, or an error (a database error, a timeout, a backend
    down) it can work around by retrying or answering with what it has."""
    tool = TOOLS.get(name) if name in offered_tools() else None
    if tool is None:
        known = ", ".join(offered_tools())
        error = f"Unknown tool {name!r}. Available tools: {known}."
        return ToolResult(f"Error: {error}", error=error)
    try:
        with _undone_on_error():
            return tool.runner(parse_arguments(raw_arguments), context)
    except ToolArgumentError as exc:
        error = f"{name}: {exc}."
        return ToolResult(f"Error: {error} Fix the arguments and call it again.", error=error)
    except Exception as exc:  # any failure is the model's to work around
        logger.warning("tool %s failed", name, exc_info=True)
        return tool_failure(name, exc)


def tool_failure(name: str, exc: BaseException) -> ToolResult:
    """DESIGN's "An error occurred while ..." result, with the cause's first line."""
    cause = (str(exc).strip().splitlines() or [""])[0][:300]
    error = f"{TOOL_ERROR_PREFIX}{TOOLS[name].wording.activity}: {type(exc).__name__}" + (
        f": {cause}" if cause else ""
    )
    return ToolResult(
        f"{error}\nTry again later or another way, or answer with what the other tools "
        "found and say what you could not look up.",
        error=error,
    )


@contextmanager
def _undone_on_error() -> Iterator[None]:
    """A failed query inside a transaction (a test's, a caller's) would poison
    it; a savepoint undoes just the tool. In autocommit nothing needs undoing,
    so no BEGIN/COMMIT is spent there."""
    if not connection.in_atomic_block:
        yield
        return
    with transaction.atomic():
        yield


def cited_ids_in(text: str) -> list[str]:
    """Incident and document ids written in `text` (any dash), in order."""
    return find_incident_ids(text) + find_document_ids(text)
