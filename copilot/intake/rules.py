"""The offline intake's text rules: turn kinds, severity, fields, decisions. No ORM.

Every rule reads only what the user typed (or, for fields, the report's
description); none reads retrieved documents, so nothing inside an incident,
a runbook or a screenshot can change what a turn is or file a ticket.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from copilot.chat_models.offline.intents import QUESTION_INTENTS, IntentGuess
from copilot.intake.state import TurnKind
from incidents import query_parsing as qp
from incidents.parsing import UNICODE_DASHES, find_incident_ids

MAX_DESCRIPTION_CHARS = 4000
MAX_TITLE_CHARS = 120
_I = re.IGNORECASE


def _any(*patterns: str) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{p})" for p in patterns), _I)


def _http_code(first_digit: str) -> str:
    """An HTTP status ("502", "HTTP 503", "504s"), not a count ("500 users") or a size."""
    return (
        rf"\b(?:HTTP\s*)?({first_digit}\d\d)(?:s|'s)?\b"
        r"(?!\s*(?:ms|%|mb|kb|gb|seconds|users|customers|merchants|requests|orders|times))"
    )


# --- what kind of turn is this? --------------------------------------------------

# Saying so: "report a new incident", "declare a SEV1", "file a ticket".
_EXPLICIT_REPORT_RE = _any(
    r"\b(?:report(?:ing)?|declar(?:e|ing)|rais(?:e|ing)|log(?:ging)?|open(?:ing)?)\s+"
    r"(?:a\s+|an\s+)?(?:new\s+)?(?:incident|outage|sev\s*-?[1-4]|p[1-4])\b",
    r"\bnew\s+(?:incident|outage)\b",
    r"^\s*(?:incident|outage)\s*(?:report)?\s*:",
)
# Something happening now. Present tense alone is not enough: the evaluation's
# symptom questions ("Uploads suddenly fail on insert ...") read like reports
# but ask for past incidents.
_ONGOING_RE = _any(
    r"\b(?:right\s+now|currently|at\s+the\s+moment|as\s+we\s+speak|ongoing|in\s+progress)\b",
    r"\bsince\s+(?:the\s+)?\d{1,2}:\d{2}\b",
    r"\b(?:this\s+(?:morning|afternoon|evening)|today|tonight)\b",
    r"\b\d+\s+(?:minutes?|mins?|hours?)\s+ago\b",
    r"\b(?:we(?:'re|\s+are)|i(?:'m|\s+am))\s+(?:seeing|getting|having|experiencing|observing)\b",
    r"\b(?:is|are)\s+(?:completely\s+|totally\s+)?down\b",
    r"\b(?:pager|alert)s?\s+(?:is\s+|are\s+)?firing\b",
)
# A clock time a thing started from says when, not that it is still going on:
# past incidents are told that way too ("500s from 08:47 UTC"). It counts as a
# sign of now only where the model itself read a report.
_STARTED_AT_RE = _any(r"\b(?:after|from)\s+(?:the\s+|just\s+after\s+)?\d{1,2}:\d{2}\b")
_TICKET_REQUEST_RE = _any(
    r"\b(?:file|create|open|raise|log|cut|make)\s+(?:a\s+|an\s+|the\s+)?(?:new\s+|separate\s+)?"
    r"(?:ticket|jira(?:\s+issue)?)\b",
    r"\bticket\s+(?:it|this|that)\b",
)
_NEW_TICKET_ANYWAY_RE = _any(
    r"\b(?:new|separate|another|second)\s+ticket\b", r"\bticket\s+anyway\b"
)
_CONFIRM_RE = _any(
    r"^\s*(?:y(?:es|ep|eah|up)?|ok(?:ay)?|sure|confirm(?:ed)?|correct|please\s+do|do\s+it"
    r"|go\s+(?:ahead|for\s+it)|sounds\s+good|approved?)\b",
    r"\b(?:file|create|open|raise|log)\s+it\b",
    r"^\s*(?:please\s+)?comment\s+on\s+(?:it|that|the\s+(?:existing|open)\s+(?:one|ticket))\b",
)
# The user's own words that they add to the incident at hand ("add a comment: …").
_COMMENT_RE = _any(
    r"^\s*(?:please\s+)?(?:add\s+(?:a\s+|this\s+)?(?:comment|note|update)|comment|note|update"
    r"|status\s+update|fyi)\b",
    r"\badd\s+(?:this|that|it)?\s*(?:to|on)\s+the\s+ticket\b",
    r"^\s*(?:decision|action(?:\s+item)?|todo|next\s+steps?)s?\s*:",
    r"\b(?:we|i)\s+(?:have\s+)?(?:decided|agreed)\b",
    r"^\s*let'?s\b",
    r"\b(?:[A-Z][a-z]+|I|we)\s+(?:will|'ll)\s+(?:roll|restart|revert|rotate|page|own|check|fix|"
    r"monitor|investigate|deploy|scale|disable|enable|follow)\b",
)
_DECISION_QUESTION_RE = _any(
    r"\bwhat\s+(?:did|have|had)\s+we\s+(?:decide|decided|agree|agreed)\b",
    r"\bwhat\s+(?:was|were|has\s+been|have\s+been)\s+(?:decided|agreed)\b",
    r"\bdecisions?\s+(?:so\s+far|log|ledger)\b",
    r"\b(?:list|show)\s+(?:the\s+|our\s+)?(?:decisions|action\s+items)\b",
)
# The user's own words asking about the incident at hand.
_SUMMARY_RE = _any(
    r"\b(?:summar(?:y|ise|ize)|recap)\b",
    r"\b(?:status|state)\s+(?:of|on)\s+(?:the|this|our|my)\s+(?:ticket|incident)\b",
    r"\bwhere\s+are\s+we\b",
)
_QUESTION_START_RE = _any(
    r"^\s*(?:what|which|who|whom|when|where|why|how|has|have|had|did|does|do|is|are|was|were"
    r"|can|could|should|would|any|anything|show|list|find|pull|look|give|tell|open|get|search"
    r"|summary|root\s+cause)\b"
)


@dataclass(frozen=True)
class TurnDecision:
    """A turn's kind, and what the user asked of the ticket in their own words."""

    kind: TurnKind
    confirms: bool = False  # accepts the pending proposal ("yes, file it")
    wants_ticket: bool = False  # asked for a ticket ("... please file a ticket")
    new_ticket_anyway: bool = False  # "create a new ticket" despite a duplicate
    reason: str = ""


def is_question(text: str) -> bool:
    """A question mark, a sentence or last clause that opens as a question ("ddos
    hitting our edge right now, what's the procedure"), or an ask for what to do
    anywhere in it ("if someone announces our prefixes whats the play")."""
    last_clause = _LAST_CLAUSE_RE.split(text.strip())[-1]
    return (
        "?" in text
        or any(_QUESTION_START_RE.search(part) for part in (text, last_clause))
        or bool(_ASKS_WHAT_TO_DO_RE.search(text))
    )


_ASKS_WHAT_TO_DO_RE = _any(
    r"\bwhat(?:'?s|\s+is)\s+the\s+(?:play|drill|procedure|process|plan|runbook|playbook|"
    r"standard\s+(?:response|procedure))\b",
    r"\bwhat\s+(?:now|next|do\s+(?:we|i)\s+do|should\s+(?:we|i)\s+do)\b",
)
# "If someone starts announcing our prefixes tonight…", "in case the primary dies…":
# what might happen, which nobody is reporting.
_HYPOTHETICAL_RE = _any(
    r"^\W*(?:(?:so|ok|okay|hey|q)\W+)?(?:if|in\s+case|suppose|supposing|imagine|hypothetically|"
    r"what\s+if|say)\b"
)


# Where a message's last clause starts: after a sentence's end, a comma or a dash.
_LAST_CLAUSE_RE = re.compile(r"[.!;:,\n]\s*|\s[-\u2013\u2014]+\s")


def wants_ticket(text: str) -> bool:
    return _asked(_TICKET_REQUEST_RE, text)


# Ticket words that ask for nothing: refused ("don't open a ticket yet", "no need
# to file a ticket") or asked about ("should I open a ticket?", "did we open a
# ticket?"). "Can you open a ticket?" and "don't forget to file a ticket" still ask.
_NOT_ASKING_RE = _any(
    r"\b(?:do(?:es)?\s*n[o']?t|not|never|no\s+need\s+to|without|hold\s+off\s+on)\b"
    r"(?!\s+forget)",
    r"\b(?:should|shall|must|did|do|does|have|has|was|were|is|are)\s+"
    r"(?:i|we|they|anyone|someone|somebody|you\s+think)\b",
    r"\bwhether\b",
)
# A request is read within its clause: "Don't panic, but please file a ticket".
_CLAUSE_START_RE = re.compile(r"[.!?;,:\n]|\s[-\u2013\u2014]\s|\b(?:but|and|then|so)\b", _I)


def _asked(pattern: re.Pattern[str], text: str) -> bool:
    """Whether `pattern` matches where the user asks for it, not refuses or asks about it."""
    for match in pattern.finditer(text):
        starts = [m.end() for m in _CLAUSE_START_RE.finditer(text, 0, match.start())]
        if not _NOT_ASKING_RE.search(text, starts[-1] if starts else 0, match.start()):
            return True
    return False


# A symptom search reads like a report ("Uploads fail on insert; the key
# reached 2147483647"), and a wrong report files an incident. So the model's
# report needs the user's own sign that it is happening now (`_ONGOING_RE`),
# a screenshot, or report/ticket wording; and a statement is added to the
# open incident as a comment only when the model is this sure.
COMMENT_SURE = 0.6


def classify_turn(
    text: str,
    *,
    has_image: bool,
    has_incident: bool,
    has_proposal: bool,
    guess: IntentGuess,
) -> TurnDecision:
    """The user's own words about tickets first, then the intent model."""
    ticket = wants_ticket(text)
    anyway = bool(_NEW_TICKET_ANYWAY_RE.search(text))
    confirms = ticket or (has_proposal and _asked(_CONFIRM_RE, text))
    if has_incident and confirms and not _looks_like_a_report(text):
        return TurnDecision(TurnKind.NEW_INCIDENT, True, ticket, anyway, "confirms the proposal")
    if find_incident_ids(text):
        return TurnDecision(TurnKind.QUERY_PAST, reason="names a past incident")
    if _EXPLICIT_REPORT_RE.search(text) or ticket:
        return TurnDecision(TurnKind.NEW_INCIDENT, False, ticket, anyway, "reports an incident")
    return _by_intent(text, guess, has_image=has_image, has_incident=has_incident, ticket=ticket)


def turn_probabilities(guess: IntentGuess) -> dict[str, float]:
    """The intake's view of the intents: every kind of question is one "question"."""
    merged = {"question": sum(guess.probability(i) for i in QUESTION_INTENTS)}
    return merged | {i: guess.probability(i) for i in ("report", "comment", "decision_summary",
                                                       "chit_chat")}  # fmt: skip


def _by_intent(
    text: str, guess: IntentGuess, *, has_image: bool, has_incident: bool, ticket: bool
) -> TurnDecision:
    probabilities = turn_probabilities(guess)
    top = max(probabilities, key=lambda name: probabilities[name])
    if has_incident and _SUMMARY_RE.search(text):
        return TurnDecision(TurnKind.ASK_SUMMARY, reason="asks for a summary")
    if has_incident and _COMMENT_RE.search(text):
        return TurnDecision(TurnKind.ADD_COMMENT, reason="adds to the current incident")
    if has_image and not is_question(text):
        return TurnDecision(TurnKind.NEW_INCIDENT, False, ticket, False, "attaches a screenshot")
    if top == "decision_summary" and (has_incident or _DECISION_QUESTION_RE.search(text)):
        # Without an incident at hand only an explicit "what did we decide?" is
        # about this conversation's ledger; "what should we have had in place?" is not.
        return TurnDecision(TurnKind.ASK_SUMMARY, reason="asks for the decisions")
    if top == "comment" and has_incident and probabilities["comment"] >= COMMENT_SURE:
        return TurnDecision(TurnKind.ADD_COMMENT, reason="adds to the current incident")
    if guess.is_greeting:
        return TurnDecision(TurnKind.CHIT_CHAT, reason="a greeting or thanks")
    if top in {"report", "question"} and _reads_as_ongoing(
        text, model_reads_report=top == "report"
    ):
        return TurnDecision(
            TurnKind.NEW_INCIDENT, False, ticket, False, "describes something ongoing"
        )
    return TurnDecision(
        TurnKind.QUERY_PAST, reason=f"asks about past incidents ({guess.describe(2)})"
    )


def _reads_as_ongoing(text: str, *, model_reads_report: bool) -> bool:
    """A statement, not a question, that says it is happening now."""
    now = _ONGOING_RE.search(text) or (model_reads_report and _STARTED_AT_RE.search(text))
    return not is_question(text) and not _HYPOTHETICAL_RE.search(text) and bool(now)


def _looks_like_a_report(text: str) -> bool:
    return bool(
        _EXPLICIT_REPORT_RE.search(text) or _ONGOING_RE.search(text) or _STARTED_AT_RE.search(text)
    )


# --- normalising the description --------------------------------------------------

_DASH_TABLE = str.maketrans(dict.fromkeys(UNICODE_DASHES, "-"))
_CONTROL_RE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def normalise_description(text: str, screenshot_text: str = "") -> str:
    """One clean paragraph: dashes unified, control characters and runs of spaces gone."""
    parts = [_clean(text)]
    if screenshot_text.strip():
        parts.append(f"Screenshot text: {_clean(screenshot_text)}")
    joined = "\n".join(part for part in parts if part)
    return joined[:MAX_DESCRIPTION_CHARS]


def _clean(text: str) -> str:
    text = _CONTROL_RE.sub(" ", text.translate(_DASH_TABLE))
    return " ".join(text.split())


# --- severity ------------------------------------------------------------------------

# The rules, first match wins; the README repeats them.
SEVERITY_RULES: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    (
        "SEV4",
        "no customer impact (non-production, cosmetic or internal only)",
        _any(
            r"\b(?:staging|sandbox|dev(?:elopment)?\s+env(?:ironment)?|test\s+env(?:ironment)?)\b",
            r"\b(?:cosmetic|typo|internal\s+only|no\s+(?:customer|user|merchant)\s+impact)\b",
        ),
    ),
    (
        "SEV1",
        "a customer-facing service is down for everyone, or money, data or security is at risk",
        _any(
            r"\b(?:is|are|went)\s+(?:completely\s+|totally\s+)?down\b",
            r"\b(?:full|complete|total|global)\s+outage\b",
            r"\b(?:all|every|no)\s+(?:users?|customers?|merchants?|payments?|requests?|checkouts?)"
            r"\b.{0,30}\b(?:fail|down|can(?:no|')t|unable|error)",
            r"\bnobody\s+can\b",
            r"\b(?:data\s+(?:loss|corruption|leak)|security\s+(?:breach|incident)|double[-\s]charg)",
        ),
    ),
    (
        "SEV2",
        "a core flow is failing for many users (HTTP 5xx, failed payments, timeouts)",
        _any(
            _http_code("5"),
            r"\b(?:payments?|checkouts?|logins?|payouts?|transactions?)\s+(?:are\s+|is\s+)?"
            r"(?:failing|failed|declined|timing\s+out)\b",
            r"\b(?:most|many)\s+(?:users|customers|merchants|requests)\b",
        ),
    ),
    (
        "SEV3",
        "partial degradation with a workaround (slowness, some users, 4xx errors)",
        _any(
            r"\b(?:slow|latency|degraded|intermittent|some\s+users|a\s+few|workaround)\b",
            _http_code("4"),
        ),
    ),
)
DEFAULT_SEVERITY = ("SEV3", "no impact stated: treated as partial degradation until triaged")
_FAILING_SHARE_RE = re.compile(
    r"(\d{1,3}(?:\.\d+)?)\s?%\s+(?:of\s+)?(?:the\s+|all\s+)?(?:requests|calls|traffic|users"
    r"|customers|merchants|payments|transactions|checkouts|orders|logins)"
    r"|error\s+rate\s+(?:of\s+|at\s+|is\s+|to\s+)?(\d{1,3}(?:\.\d+)?)\s?%",
    _I,
)


def severity_for(text: str) -> tuple[str, str]:
    """SEV1-SEV4 and the rule that decided it.

    A stated failing share wins over wording: >= 50% is SEV1, >= 10% SEV2,
    less SEV3.
    """
    share = failing_share(text)
    if share is not None and not SEVERITY_RULES[0][2].search(text):
        if share >= 50:
            return "SEV1", f"{share:g}% failing (>= 50%)"
        if share >= 10:
            return "SEV2", f"{share:g}% failing (>= 10%)"
        return "SEV3", f"{share:g}% failing (< 10%)"
    for severity, reason, pattern in SEVERITY_RULES:
        if pattern.search(text):
            return severity, reason
    return DEFAULT_SEVERITY


def failing_share(text: str) -> float | None:
    shares = [float(a or b) for a, b in _FAILING_SHARE_RE.findall(text)]
    return max(shares) if shares else None


# --- structured fields ----------------------------------------------------------------

_SENTENCE_END_RE = re.compile(r"(?<=[.!?;])\s+|\n")
_REPORT_PREFIX_RE = _any(
    r"^\s*(?:hi|hello|hey)\b[,!.\s]*",
    r"^\s*(?:(?:i\s+want\s+to\s+|i'?d\s+like\s+to\s+)?report(?:ing)?\s+(?:a\s+|an\s+)?(?:new\s+)?"
    r"(?:incident|outage)\s*[:,-]?\s*)",
    r"^\s*(?:new\s+)?(?:incident|outage)\s*(?:report)?\s*:\s*",
    r"^\s*(?:we(?:'re|\s+are)|i(?:'m|\s+am))\s+(?:seeing|getting|having|experiencing)\s+",
)
_TICKET_CLAUSE_RE = _any(
    r"[,;.]?\s*(?:please\s+)?(?:and\s+)?(?:file|create|open|raise|log)\s+(?:a\s+|an\s+)?"
    r"(?:new\s+)?(?:ticket|jira(?:\s+issue)?)\b[^.]*"
)
COMPONENTS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern, _I))
    for name, pattern in (
        ("API", r"\bapis?\b|\bendpoints?\b"),
        ("gateway", r"\bgateways?\b|\bgw-pool"),
        ("database", r"\b(?:database|db|postgres(?:ql)?|mysql|replica|primary)\b"),
        ("cache", r"\b(?:cache|redis|memcached)\b"),
        ("DNS", r"\bdns\b"),
        ("load balancer", r"\bload\s+balancers?\b|\blb\b"),
        ("queue", r"\b(?:queues?|kafka|rabbitmq|consumers?)\b"),
        ("TLS certificates", r"\b(?:tls|ssl|certs?|certificates?)\b"),
        ("deployment", r"\b(?:deploy(?:ment|ed)?|release|rollout|roll-out)\b"),
        ("Kubernetes", r"\b(?:kubernetes|k8s|pods?|kubectl)\b"),
        ("authentication", r"\b(?:auth|login|log\s+in|sso|oauth|api\s+keys?|403)\b"),
        ("webhooks", r"\bwebhooks?\b"),
        ("network", r"\b(?:network|firewall|bgp|packet\s+loss)\b"),
        ("storage", r"\b(?:storage|disk|s3|bucket)\b"),
        ("payments", r"\b(?:payments?|checkout|payouts?|settlements?|refunds?)\b"),
    )
)
_HTTP_CODE_RE = re.compile(_http_code("[45]"), _I)
_ERROR_CODE_RE = re.compile(
    r"\b(?:[A-Z]{2,10}-\d{2,6}|E\d{3,6}|ERR_[A-Z_]{3,40}|[a-z]+(?:_[a-z]+){1,4})\b"
)
_ERROR_CONTEXT_WORDS = {"error", "code", "failed", "exception", "denied"}


def without_ticket_ask(text: str) -> str:
    """The report without its ask for a ticket ("…, file a ticket"): the ask is no
    part of the problem, and its words pull a search away from it."""
    return _TICKET_CLAUSE_RE.sub("", text).strip(" ,;-")


def title_for(text: str, fallback: str = "") -> str:
    """The report's first sentence, without greetings, "report an incident" and ticket asks."""
    cleaned = _TICKET_CLAUSE_RE.sub("", _clean(text))
    while (shorter := _REPORT_PREFIX_RE.sub("", cleaned, count=1)) != cleaned:
        cleaned = shorter  # "Hi! I want to report an incident: ..." has two prefixes
    cleaned = cleaned.strip(" ,;-")
    first = _SENTENCE_END_RE.split(cleaned, maxsplit=1)[0].strip(" .;") if cleaned else ""
    title = first or _clean(fallback)
    title = title[:1].upper() + title[1:] if title else "Untitled incident report"
    if len(title) <= MAX_TITLE_CHARS:
        return title
    return title[: MAX_TITLE_CHARS - 1].rsplit(" ", 1)[0] + "…"


# The symptom a short title names, first match wins: (pattern, words).
_SYMPTOMS: tuple[tuple[re.Pattern[str], str], ...] = (
    (_any(r"\b(?:is|are|went|goes|was)\s+down\b", r"\boutage\b", r"\bunavailable\b"), "outage"),
    (_any(r"\btim(?:e|ed|ing)[\s-]?outs?\b", r"\btiming out\b"), "timeouts"),
    (_any(r"\bslow\b", r"\blatency\b"), "latency"),
    (_any(r"\bdeclin"), "declines"),
    (_any(r"\bdouble[\s-]charg"), "double charges"),
    (_any(r"\bfail(?:s|ing|ed|ures?)?\b"), "failures"),
    (_any(r"\bbroken\b", r"\bbroke\b"), "broken"),
    (_any(r"\berrors?\b", r"\bexceptions?\b"), "errors"),
)
MAX_SHORT_TITLE_WORDS = 4


def short_title(*, subject: str, text: str, codes: Sequence[str]) -> str:
    """2-4 words naming what fails and how ("Checkout Gateway 502 errors"), not the
    report's raw sentence: `subject` is the service (or the report's key words),
    the symptom its first error code, else the first symptom word found; "" when
    there is neither a subject nor a symptom.
    """
    http = next((code.removeprefix("HTTP ") for code in codes if code.startswith("HTTP ")), "")
    symptom = f"{http} errors" if http else ""
    symptom = symptom or next((words for rule, words in _SYMPTOMS if rule.search(text)), "")
    subject_words = subject.split()[: MAX_SHORT_TITLE_WORDS - len(symptom.split())]
    if not subject_words:
        return symptom.capitalize() if len(symptom.split()) > 1 else ""
    title = " ".join([*subject_words, *symptom.split()])
    return title[:1].upper() + title[1:] if len(title.split()) > 1 else ""


def components_for(text: str) -> list[str]:
    return [name for name, pattern in COMPONENTS if pattern.search(text)]


def error_codes(text: str) -> list[str]:
    """HTTP status codes and error identifiers (ORA-00942, ERR_TIMEOUT, invalid_api_key)."""
    found = [f"HTTP {code}" for code in _HTTP_CODE_RE.findall(text)]
    lowered = text.lower()
    has_error_context = any(word in lowered for word in _ERROR_CONTEXT_WORDS)
    for match in _ERROR_CODE_RE.findall(text):
        if "_" in match and match.islower() and not has_error_context:
            continue  # snake_case words are error codes only next to "error", "code", ...
        found.append(match)
    return list(dict.fromkeys(found))


def tags_for(text: str, components: Sequence[str]) -> list[str]:
    codes = [code.lower().replace("http ", "http-") for code in error_codes(text)]
    words = [name.lower().replace(" ", "-") for name in components]
    return list(dict.fromkeys(codes + words))[:12]


# A sentence that says who is hurt, or how many.
_IMPACT_RE = _any(r"\b(?:users?|customers?|merchants?|everyone|nobody)\b", r"\d\s?%")
IMPACT_BY_SEVERITY = {
    "SEV1": "Customer-facing service unavailable",
    "SEV2": "Core flow failing for many users",
    "SEV3": "Partial degradation",
    "SEV4": "No customer impact",
}


def impact_for(text: str, severity: str) -> str:
    """The sentence that says who is affected, else what the severity implies."""
    for line in text.splitlines():
        for sentence in _SENTENCE_END_RE.split(_clean(line)):
            if _IMPACT_RE.search(sentence) and len(sentence) > 12:
                return sentence.strip(" .;")[:300]
    return IMPACT_BY_SEVERITY[severity]


def service_for(text: str, catalog: Sequence[qp.ApplicationEntry]) -> str:
    """The known application the text names best: most of its name's words present."""
    words = set(re.findall(r"[a-z0-9]+", text.lower()))
    best: tuple[float, int, str] = (0.0, 0, "")
    for entry in catalog:
        name_words = {w for w in re.findall(r"[a-z0-9]+", entry.application.lower()) if len(w) >= 3}
        name_words -= {"and", "the", "service", "services"}
        if not name_words:
            continue
        share = len(name_words & words) / len(name_words)
        candidate = (share, -len(entry.application), entry.application)
        if share > 0 and candidate > best:
            best = candidate
    return best[2]


# --- the decision ledger --------------------------------------------------------------

_ACTION_RE = re.compile(
    r"^(?:(?i:action(?:\s+item)?|todo)\s*:\s*)?(?P<who>[A-Z][a-z]+|I|[Ww]e)\s+(?:will|'ll|is\s+going\s+to"
    r"|are\s+going\s+to|to)\s+(?P<what>.+)$"
)
_DECISION_RE = _any(
    r"^(?:decision|decided|agreed)\s*:\s*(?P<a>.+)$",
    r"\b(?:(?:we|i)\s+(?:have\s+)?)?(?:decided|agreed)\s+(?:to|that|on)\s+(?P<b>.+)$",
    r"^let'?s\s+(?P<c>.+)$",
)
_COMMENT_PREFIX_RE = _any(
    r"^\s*(?:please\s+)?(?:add\s+(?:a\s+|this\s+)?(?:comment|note|update)(?:\s+to\s+the\s+ticket)?"
    r"|comment|note|update|status\s+update|fyi)\s*[:,-]?\s*"
)


@dataclass(frozen=True)
class LedgerEntry:
    kind: str  # decision | action
    what: str
    who: str  # "" means the person who said it


def comment_body(text: str) -> str:
    """The comment without "add a comment:" in front."""
    return _COMMENT_PREFIX_RE.sub("", _clean(text), count=1).strip() or _clean(text)


def ledger_entries(text: str) -> list[LedgerEntry]:
    """Decisions ("we decided to ...", "let's ...") and actions ("Bob will ...") in a comment."""
    entries: list[LedgerEntry] = []
    for clause in _clauses(comment_body(text)):
        entry = _ledger_entry(clause)
        if entry is not None:
            entries.append(entry)
    return entries


def _clauses(text: str) -> list[str]:
    sentences = _SENTENCE_END_RE.split(text)
    parts = [p for s in sentences for p in re.split(r",?\s+and\s+(?=(?:we|i|[A-Z][a-z]+)\s)", s)]
    return [part.strip(" .") for part in parts if part.strip(" .")]


def _ledger_entry(clause: str) -> LedgerEntry | None:
    decision = _DECISION_RE.search(clause)
    if decision is not None:
        what = next(group for group in decision.groups() if group)
        return LedgerEntry("decision", what.strip(" ."), "")
    action = _ACTION_RE.match(clause)
    if action is not None:
        who = action.group("who")
        owner = "" if who.lower() in {"i", "we"} else who
        return LedgerEntry("action", action.group("what").strip(" ."), owner)
    return None
