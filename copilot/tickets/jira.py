"""The Jira adapter: REST API v2 (create issue, add comment, transitions) with timeouts
and retries.

Stdlib HTTP (urllib) on purpose: three endpoints do not justify a client
dependency. Basic auth with JIRA_USER and JIRA_TOKEN works for Jira Cloud
(an API token) and Data Center (a personal access token or password).

Retries: creating an issue or a comment is not idempotent in Jira, so a
request is retried only when Jira cannot have acted on it: the connection was
refused, or Jira answered 429, 502, 503 or 504. A read timeout or a 500 may
follow a ticket that was in fact created, so those fail at once with the
reason, and the user can try again knowing that.
"""

from __future__ import annotations

import base64
import json
import logging
import socket
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

from django.conf import settings

from copilot.models import Ticket
from copilot.tickets.base import RemoteComment, RemoteTicket, TicketDraft, TrackerError

logger = logging.getLogger(__name__)

RETRY_STATUSES = frozenset({429, 502, 503, 504})
BACKOFF_SECONDS = 0.5
MAX_RETRY_AFTER_SECONDS = 5.0  # longer would leave the user looking at a spinner
SUMMARY_MAX_CHARS = 255  # Jira's limit on an issue's summary
# Our statuses as Jira's fixed status categories (new, indeterminate, done).
STATUS_CATEGORIES: dict[str, str] = {
    Ticket.Status.OPEN: "new",
    Ticket.Status.IN_PROGRESS: "indeterminate",
    Ticket.Status.RESOLVED: "done",
    Ticket.Status.CLOSED: "done",
}


@dataclass(frozen=True)
class _Attempt:
    """One request's outcome: a body, or a problem and whether to try again."""

    body: dict[str, Any] | None = None
    problem: TrackerError | None = None
    retry: bool = False
    wait: float | None = None


class JiraTracker:
    """Files tickets in one Jira project."""

    name = Ticket.Tracker.JIRA.value

    def __init__(
        self,
        *,
        base_url: str,
        user: str,
        token: str,
        project: str,
        issue_type: str = "Task",
        timeout: float = 10.0,
        retries: int = 2,
        backoff: float = BACKOFF_SECONDS,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.project = project
        self.issue_type = issue_type
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        credentials = base64.b64encode(f"{user}:{token}".encode()).decode()
        self._headers = {
            "Authorization": f"Basic {credentials}",
            "Content-Type": "application/json",
            "Accept": "application/json",
        }

    @classmethod
    def from_settings(cls) -> JiraTracker:
        return cls(
            base_url=settings.JIRA_URL,
            user=settings.JIRA_USER,
            token=settings.JIRA_TOKEN,
            project=settings.JIRA_PROJECT,
            issue_type=settings.JIRA_ISSUE_TYPE,
            timeout=settings.JIRA_TIMEOUT_SECONDS,
            retries=settings.JIRA_RETRIES,
        )

    def create_issue(self, draft: TicketDraft) -> RemoteTicket:
        fields = {
            "project": {"key": self.project},
            "summary": f"[{draft.severity}] {draft.title}"[:SUMMARY_MAX_CHARS],
            "description": draft.description,
            "issuetype": {"name": self.issue_type},
            "labels": [_label(label) for label in draft.labels],
        }
        body = self._post("/rest/api/2/issue", {"fields": fields})
        key = str(body.get("key", ""))
        if not key:
            raise TrackerError("Jira created no issue key.", kind="rejected")
        return RemoteTicket(key, f"{self.base_url}/browse/{key}")

    def add_comment(self, key: str, body: str) -> RemoteComment:
        answer = self._post(f"/rest/api/2/issue/{quote(key)}/comment", {"body": body})
        return RemoteComment(str(answer.get("id", "")))

    def transition(self, key: str, status: str) -> None:
        """Apply the issue's workflow transition that leads to a status of the wanted
        category (Jira's workflows name their statuses freely; categories are fixed)."""
        path = f"/rest/api/2/issue/{quote(key)}/transitions"
        wanted = STATUS_CATEGORIES[status]
        offered = self._request("GET", path, None).get("transitions", [])
        match = next((t for t in offered if _category(t) == wanted), None)
        if match is None:
            names = ", ".join(str(t.get("name", "")) for t in offered) or "none"
            raise TrackerError(
                f"Jira offers no transition of {key} to {status} (offered: {names}).",
                kind="rejected",
            )
        self._post(path, {"transition": {"id": str(match.get("id", ""))}})

    # --- HTTP ---------------------------------------------------------------------

    def _post(self, path: str, payload: dict[str, Any]) -> dict[str, Any]:
        return self._request("POST", path, payload)

    def _request(self, method: str, path: str, payload: dict[str, Any] | None) -> dict[str, Any]:
        """One call with the retry policy in the module docstring (a GET alike)."""
        for attempt in range(self.retries + 1):
            outcome = self._attempt(method, path, payload)
            if outcome.problem is None:
                return outcome.body or {}
            if not outcome.retry or attempt == self.retries:
                raise outcome.problem
            logger.warning("Jira %s: %s; retrying", path, outcome.problem.message)
            time.sleep(outcome.wait if outcome.wait is not None else self.backoff * 2**attempt)
        raise TrackerError("Jira could not be reached.")  # unreachable: the loop raises

    def _attempt(self, method: str, path: str, payload: dict[str, Any] | None) -> _Attempt:
        request = urllib.request.Request(  # noqa: S310 - the URL is JIRA_URL, http(s) only
            self.base_url + path,
            data=json.dumps(payload).encode() if payload is not None else None,
            headers=self._headers,
            method=method,
        )
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310
                return _Attempt(body=_json(response.read()))
        except urllib.error.HTTPError as exc:
            return self._http_error(exc)
        except TimeoutError:
            return _Attempt(problem=self._timed_out())
        except urllib.error.URLError as exc:
            return self._unreachable(exc)

    def _http_error(self, exc: urllib.error.HTTPError) -> _Attempt:
        detail = _error_detail(exc.read())
        status = exc.code
        if status in {401, 403}:
            message = f"Jira refused the credentials (HTTP {status})."
            return _Attempt(problem=TrackerError(message, kind="auth"))
        if status in {400, 404}:
            message = f"Jira rejected the request (HTTP {status}): {detail or 'no detail'}"
            return _Attempt(problem=TrackerError(message, kind="rejected"))
        message = f"Jira failed with HTTP {status}" + (f": {detail}" if detail else ".")
        wait = _retry_after(exc.headers.get("Retry-After"))
        problem = TrackerError(message, kind="unavailable")
        return _Attempt(problem=problem, retry=status in RETRY_STATUSES, wait=wait)

    def _timed_out(self) -> TrackerError:
        return TrackerError(f"Jira did not answer within {self.timeout:g} s.", kind="timeout")

    def _unreachable(self, exc: urllib.error.URLError) -> _Attempt:
        if isinstance(exc.reason, TimeoutError):
            return _Attempt(problem=self._timed_out())
        host = urlsplit(self.base_url).netloc
        message = f"Could not reach Jira at {host}: {exc.reason}"
        refused = isinstance(exc.reason, ConnectionRefusedError | socket.gaierror)
        return _Attempt(problem=TrackerError(message, kind="unavailable"), retry=refused)


def _category(transition: Any) -> str:
    """The status category a transition leads to ("" when Jira leaves it out)."""
    if not isinstance(transition, dict):
        return ""
    to = transition.get("to") or {}
    return str((to.get("statusCategory") or {}).get("key", "")) if isinstance(to, dict) else ""


def _label(text: str) -> str:
    """Jira labels cannot contain spaces."""
    return "-".join(text.split())[:255]


def _json(raw: bytes) -> dict[str, Any]:
    try:
        value = json.loads(raw or b"{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _error_detail(raw: bytes) -> str:
    """Jira's errorMessages and field errors, joined; never the request (it holds no secret)."""
    body = _json(raw)
    messages = [str(m) for m in body.get("errorMessages", []) if m]
    errors = body.get("errors", {})
    if isinstance(errors, dict):
        messages += [f"{field}: {reason}" for field, reason in errors.items()]
    return "; ".join(messages)[:300]


def _retry_after(value: str | None) -> float | None:
    try:
        seconds = float(value) if value else None
    except ValueError:
        return None
    return None if seconds is None else min(max(seconds, 0.0), MAX_RETRY_AFTER_SECONDS)
