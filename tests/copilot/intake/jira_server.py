"""A local server speaking the two Jira REST endpoints the adapter uses, scripted per test.

    jira.script(jira_reply(401))             # the next request gets a 401
    jira.script(created("OPS-7"))            # then an issue is created
    jira.requests[0].json["fields"]["summary"]

POST /rest/api/2/issue and POST /rest/api/2/issue/{key}/comment answer
with Jira's bodies (201 with id/key/self; errors as errorMessages/errors).
GET /rest/api/2/issue/{key}/transitions lists a simple workflow's three
transitions (To Do, In Progress, Done, one per status category) and POST to
it answers 204 with no body, as Jira does.
A request with nothing scripted gets the default: success.
"""

from __future__ import annotations

import itertools
import json
import re
import time
from collections import deque
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from pytest_django.fixtures import Settings

from tests.http_servers import LocalServer, Seen

_ISSUE_RE = re.compile(r"^/rest/api/2/issue/?$")
_COMMENT_RE = re.compile(r"^/rest/api/2/issue/(?P<key>[A-Z]+-\d+)/comment$")
_TRANSITIONS_RE = re.compile(r"^/rest/api/2/issue/(?P<key>[A-Z]+-\d+)/transitions$")
WORKFLOW = [
    {"id": "11", "name": "To Do", "to": {"name": "To Do", "statusCategory": {"key": "new"}}},
    {
        "id": "21",
        "name": "Start progress",
        "to": {"name": "In Progress", "statusCategory": {"key": "indeterminate"}},
    },
    {"id": "31", "name": "Done", "to": {"name": "Done", "statusCategory": {"key": "done"}}},
]


@dataclass(frozen=True)
class Reply:
    status: int = 201
    body: dict[str, Any] | None = None  # None: Jira's success body for the endpoint
    delay: float = 0.0
    headers: tuple[tuple[str, str], ...] = ()


def jira_reply(
    status: int, messages: tuple[str, ...] = (), *, retry_after: str | None = None
) -> Reply:
    body = {"errorMessages": list(messages), "errors": {}}
    headers = (("Retry-After", retry_after),) if retry_after else ()
    return Reply(status=status, body=body, headers=headers)


def slow(seconds: float) -> Reply:
    return Reply(delay=seconds)


@dataclass
class JiraServer(LocalServer):
    replies: deque[Reply] = field(default_factory=deque)
    requests: list[Seen] = field(default_factory=list)
    _numbers: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    def script(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        seen = self._record(handler)
        reply = self.replies.popleft() if self.replies else self._default(seen.method, seen.path)
        time.sleep(reply.delay)
        body = reply.body if reply.body is not None else self._success(seen.path)
        data = b"" if reply.status == 204 else json.dumps(body).encode()
        self._send(handler, reply.status, data, reply.headers)

    def _default(self, method: str, path: str) -> Reply:
        """Jira's success for the endpoint: a transition POST is 204, a GET is 200."""
        if _TRANSITIONS_RE.match(path):
            return Reply(status=204 if method == "POST" else 200)
        return Reply()

    def _success(self, path: str) -> dict[str, Any]:
        if _TRANSITIONS_RE.match(path):
            return {"transitions": WORKFLOW}
        number = next(self._numbers)
        if _ISSUE_RE.match(path):
            key = f"OPS-{number}"
            return {
                "id": str(10000 + number),
                "key": key,
                "self": f"{self.url}/rest/api/2/issue/{key}",
            }
        if _COMMENT_RE.match(path):
            return {"id": str(20000 + number), "body": "..."}
        return {"errorMessages": [f"No endpoint {path}"], "errors": {}}


def jira_configure(settings: Settings, server: JiraServer, *, retries: int) -> Settings:
    """The project's Jira settings, pointing at `server`, with a short timeout."""
    settings.JIRA_URL = server.url
    settings.JIRA_USER = "desk-bot@example.com"
    settings.JIRA_TOKEN = "jira-test-token"
    settings.JIRA_PROJECT = "OPS"
    settings.JIRA_TIMEOUT_SECONDS = 0.5
    settings.JIRA_RETRIES = retries
    return settings
