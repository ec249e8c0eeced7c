"""Local servers speaking Grafana Loki's and Elasticsearch's search APIs, over a fixed
set of log lines, for the search_logs adapters.

    server = LogServer(LINES).start()      # both protocols on one port
    server.url                              # LOG_SEARCH_URL
    server.requests[0].query["query"]       # the LogQL the adapter sent
    server.delay = 2.0                      # a backend that does not answer in time

Each protocol filters the lines the way the real backend would for the queries
the adapters send (Loki: a stream selector on one label and a `|=` line
filter; Elasticsearch: a bool filter of a @timestamp range, a term on the
service field and an optional match_phrase on message), so a wrong query
finds the wrong lines.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tests.http_servers import LocalServer

_LOGQL_RE = re.compile(r'^\{(?P<label>[\w.]+)="(?P<service>[^"]*)"\}(?: \|= (?P<text>".*"))?$')
_SEARCH_RE = re.compile(r"^/(?P<index>[^/]+)/_search$")


@dataclass(frozen=True)
class Line:
    at: dt.datetime
    service: str
    text: str


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    json: dict[str, Any] | None


@dataclass
class LogServer(LocalServer):
    lines: list[Line]
    label: str = "service_name"  # Loki's stream label / Elasticsearch's field for the service
    delay: float = 0.0
    requests: list[Seen] = field(default_factory=list)

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        body: dict[str, Any] | None = None  # a GET's
        if handler.command == "POST":
            length = int(handler.headers.get("Content-Length") or 0)
            body = json.loads(handler.rfile.read(length) or b"{}")
        url = urlsplit(handler.path)
        query = {k: v[0] for k, v in parse_qs(url.query).items()}
        self.requests.append(Seen(handler.command, url.path, query, dict(handler.headers), body))
        time.sleep(self.delay)
        if url.path == "/loki/api/v1/query_range" and handler.command == "GET":
            status, answer = self._loki(query)
        elif _SEARCH_RE.match(url.path) and handler.command == "POST" and body is not None:
            status, answer = self._elasticsearch(body)
        else:
            status, answer = 404, {"error": f"no route for {handler.command} {url.path}"}
        data = json.dumps(answer).encode()
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", "application/json")
            handler.send_header("Content-Length", str(len(data)))
            handler.end_headers()
            handler.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (a timeout test)
            pass

    def _loki(self, query: dict[str, str]) -> tuple[int, dict[str, Any]]:
        match = _LOGQL_RE.match(query.get("query", ""))
        if match is None or match["label"] != self.label:
            return 400, {"status": "error", "error": f"parse error: {query.get('query')!r}"}
        start, end = (
            dt.datetime.fromtimestamp(int(query[k]) / 1e9, tz=dt.UTC) for k in ("start", "end")
        )
        text = json.loads(match["text"]) if match["text"] else ""
        found = [
            line
            for line in self.lines
            if line.service == match["service"] and text in line.text and start <= line.at <= end
        ]
        found.sort(key=lambda line: line.at, reverse=query.get("direction") == "backward")
        found = found[: int(query.get("limit", 100))]
        values = [[str(int(line.at.timestamp() * 1e9)), line.text] for line in found]
        result = [{"stream": {self.label: match["service"]}, "values": values}] if values else []
        return 200, {"status": "success", "data": {"resultType": "streams", "result": result}}

    def _elasticsearch(self, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        found = list(self.lines)
        for clause in body["query"]["bool"]["filter"]:
            if "range" in clause:
                bounds = clause["range"]["@timestamp"]
                since, until = (dt.datetime.fromisoformat(bounds[k]) for k in ("gte", "lte"))
                found = [line for line in found if since <= line.at <= until]
            elif "term" in clause:
                ((name, value),) = clause["term"].items()
                if name != self.label:
                    found = []  # no document has that field
                found = [line for line in found if line.service == value]
            elif "match_phrase" in clause:
                phrase = clause["match_phrase"]["message"].lower()
                found = [line for line in found if phrase in line.text.lower()]
        found.sort(key=lambda line: line.at, reverse=True)
        hits = [
            {"_index": "logs-2026.11", "_id": str(number), "_score": None,
             "_source": {"@timestamp": line.at.isoformat().replace("+00:00", "Z"),
                         "message": line.text},
             "sort": [int(line.at.timestamp() * 1000)]}
            for number, line in enumerate(found[: body.get("size", 10)])
        ]  # fmt: skip
        total = {"value": len(found), "relation": "eq"}
        return 200, {"took": 1, "timed_out": False, "hits": {"total": total, "hits": hits}}
