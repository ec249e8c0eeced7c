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

from tests.http_servers import LocalServer, Seen

_LOGQL_RE = re.compile(r'^\{(?P<label>[\w.]+)="(?P<service>[^"]*)"\}(?: \|= (?P<text>".*"))?$')
_SEARCH_RE = re.compile(r"^/(?P<index>[^/]+)/_search$")


@dataclass(frozen=True)
class Line:
    at: dt.datetime
    service: str
    text: str


@dataclass
class LogServer(LocalServer):
    lines: list[Line]
    label: str = "service_name"  # Loki's stream label / Elasticsearch's field for the service
    delay: float = 0.0
    requests: list[Seen] = field(default_factory=list)

    def _answer(self, handler: BaseHTTPRequestHandler) -> None:
        seen = self._record(handler)
        time.sleep(self.delay)
        if seen.path == "/loki/api/v1/query_range" and seen.method == "GET":
            status, answer = self._loki(seen.query)
        elif _SEARCH_RE.match(seen.path) and seen.method == "POST":
            status, answer = self._elasticsearch(seen.json)
        else:
            status, answer = 404, {"error": f"no route for {seen.method} {seen.path}"}
        self._send(handler, status, json.dumps(answer).encode())

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
