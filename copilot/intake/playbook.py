"""PLAYBOOK: likely causes, next actions and an owner team, from what retrieval found.

Every item cites its source (an incident id or a document id), so the user
can check it. Text from sources is quoted, trimmed and never acted on.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from knowledge.selectors import KnowledgeHit

MAX_CAUSES = 3
MAX_ACTIONS = 6
STEPS_PER_DOCUMENT = 3
ITEM_MAX_CHARS = 300
PLAYBOOK_TYPES = ("runbook", "known_issue")
_SENTENCE_RE = re.compile(r"(?<=[.!?])\s+")
_NUMBERED_STEP_RE = re.compile(r"^\s*\d+[.)]\s+(?P<step>.+)$", re.MULTILINE)
# Parts of a body a reader never sees as steps: HTML comments and code blocks.
_HIDDEN_RE = re.compile(r"<!--.*?(?:-->|\Z)|^\s*(`{3,}|~{3,}).*?(?:^\s*\1|\Z)", re.S | re.M)
# Text that talks to the assistant rather than to an engineer: a role tag, a
# claim of the user's consent, an order to drop instructions. No runbook step
# needs one, and shown as a proposed action it reads as if the user said it.
_INSTRUCTION_RE = re.compile(
    "|".join(
        [
            r"^\W*(?:system|assistant|developer|user|ai|model|bot|copilot)\b\W*(?:message|"
            r"prompt|note|instructions?|override)?\s*[:>\]]",
            r"\b(?:ignore|disregard|forget|override)\b.{0,20}\b(?:previous|prior|above|earlier|"
            r"all|any|your|these|those)\s+(?:instructions?|prompts?|rules|guidelines)\b",
            r"\bthe\s+user\s+(?:has\s+|had\s+)?(?:already\s+)?"
            r"(?:confirmed|approved|agreed|authori[sz]ed|consented|said\s+yes)\b",
            r"\bconfirm(?:ed|ation)?\s*[:=]\s*(?:yes|true)\b",
            r"\byes,?\s+(?:file|create|open|submit|raise)\s+(?:it|the\s+ticket)\b",
            r"\b(?:you\s+are|you're)\s+(?:now\s+)?(?:an?\s+)?(?:ai|assistant|language\s+model|"
            r"chatbot|copilot)\b",
            r"\b(?:new|updated|hidden|secret)\s+instructions?\b|\bsystem\s+prompt\b",
            r"\bdo\s+not\s+(?:tell|inform|show|alert)\s+the\s+user\b",
        ]
    ),
    re.IGNORECASE,
)
# When nothing similar is known, the first moves every on-call makes.
GENERIC_ACTIONS = (
    "Check what changed just before the start (deploys, config pushes, key rotations) "
    "and roll back the most recent one if it lines up.",
    "Confirm the blast radius: error rate and share of affected requests per region.",
    "Page the owning team and open a status page update if customers are affected.",
)


@dataclass(frozen=True)
class PlaybookItem:
    text: str
    source: str  # an incident id, a document id, or "severity rules"

    def as_dict(self) -> dict[str, str]:
        return {"text": self.text, "source": self.source}


@dataclass(frozen=True)
class Playbook:
    causes: list[PlaybookItem]
    actions: list[PlaybookItem]
    owner_team: str


def playbook_for(
    similar: Sequence[dict[str, Any]],
    documents: Sequence[KnowledgeHit],
    incident: dict[str, Any],
    *,
    logs_searchable: bool = False,
    logs: PlaybookItem | None = None,
) -> Playbook:
    """Causes from similar incidents' root causes; actions from the steps of a runbook
    for the service and from their mitigations; the team most accountable for them.
    The last action is what the service's logs showed (`logs`, from LOG_SEARCH), or,
    with no log search configured, that nobody read them."""
    causes = [
        PlaybookItem(_first_sentence(item["root_cause"]), item["incident_id"])
        for item in similar[:MAX_CAUSES]
        if item.get("root_cause")
    ]
    causes = [item for item in causes if not instruction_like(item.text)]
    actions = _document_actions(documents, incident) + _incident_actions(similar)
    actions = [item for item in actions if not instruction_like(item.text)]
    if not actions:
        actions = [PlaybookItem(text, "severity rules") for text in GENERIC_ACTIONS]
    if after_a_change(incident):
        actions.insert(0, PlaybookItem(ROLLBACK_ACTION, "change rule"))
    last = logs if logs_searchable else PlaybookItem(LOGS_UNAVAILABLE, LOG_SOURCE)
    actions = _unique(actions)[: MAX_ACTIONS - (1 if last else 0)]
    if last:
        actions.append(last)
    return Playbook(causes, actions, owner_team(similar))


LOG_SOURCE = "log search"
# Said, not hidden: nothing here read the logs, so the engineer must.
LOGS_UNAVAILABLE = (
    "Logs unavailable: no log search is configured, so none were checked. "
    "Read the service's logs around the first errors."
)
LOG_QUOTE_CHARS = 160


def logs_action(
    *, service: str, query: str, window: str, lines: Sequence[dict[str, Any]], error: str = ""
) -> PlaybookItem:
    """What LOG_SEARCH found in the service's logs, as the playbook's last action.

    The lines are redacted by the search; the newest is quoted unless it talks to
    the assistant (a log line is as untrusted as a document)."""
    if not service:
        text = "Logs not checked: the report names no service to search. " + _READ_LOGS
    elif error:
        text = f"Logs unavailable: {service}'s logs could not be read ({error}). " + _READ_LOGS
    else:
        what = f"{service}'s logs" + (f' matching "{query}"' if query else "")
        if not lines:
            text = f"No lines in {what} from the last {window}. " + _READ_LOGS
        else:
            newest = " ".join(str(lines[0]["text"]).split())
            if len(newest) > LOG_QUOTE_CHARS:
                newest = newest[: LOG_QUOTE_CHARS - 1].rstrip() + "…"
            quote = "" if instruction_like(newest) else f"; the newest: “{newest}”"
            text = f"Read {what}: {len(lines)} lines in the last {window}{quote}."
    return PlaybookItem(_trim(text), LOG_SOURCE)


_READ_LOGS = "Read the service's logs around the first errors."


# A report that follows a change gets the one move that is right more often
# than any other: undo the change (GENERIC_ACTIONS says the same when nothing
# similar is known; de-duplicated there).
ROLLBACK_ACTION = GENERIC_ACTIONS[0]
_CHANGE_RE = re.compile(
    r"\b(?:deploy\w*|release[ds]?|roll(?:ed)?[- ]?outs?|rolled\s+out|upgrad\w*|migrat\w*|"
    r"config(?:uration)?\s+(?:change|push)\w*|pushed|shipped|merged|feature\s+flag)\b",
    re.IGNORECASE,
)


def after_a_change(incident: dict[str, Any]) -> bool:
    """Whether the report ties the trouble to a change (a deploy, a config push)."""
    text = " ".join(str(incident.get(k) or "") for k in ("description", "title", "impact"))
    return bool(_CHANGE_RE.search(text))


def _incident_actions(similar: Sequence[dict[str, Any]]) -> list[PlaybookItem]:
    fixes = [(_first_sentence(item.get("mitigation") or ""), item) for item in similar[:MAX_CAUSES]]
    # Screened as written: "Past fix: SYSTEM: …" would hide the role tag at the start.
    return [
        PlaybookItem(as_instruction(fix), item["incident_id"])
        for fix, item in fixes
        if fix and not instruction_like(fix)
    ]


# Verbs of operations, as a mitigation reports them ("Rolled back", "Raised");
# the imperative is what the next on-call should consider doing.
_VERBS = (
    "add apply block cap clear correct cordon deploy disable disconnect drain enable "
    "evacuate expand extend fail fix flush increase isolate kill limit lower migrate move "
    "patch pause pin promote purge raise reattach reboot rebuild reconfigure recreate "
    "redeploy reduce reindex reload remove renew repair replace reroute reset resize "
    "restart restore resume retry revert revoke roll rotate scale shift shed split stop "
    "switch throttle update upgrade"
)
OPERATION_VERBS = frozenset(_VERBS.split())


def as_instruction(mitigation: str) -> str:
    """ "Rolled back the chart." → "Roll back the chart."; a subject before the
    verb is dropped ("Engineers restarted…" → "Restart…"). A sentence whose verb
    is not recognised is kept as what was done: "Past fix: …"."""
    words = mitigation.split()
    for start in (0, 1, 2):
        passive = start > 0 and words[start - 1].lower() in _AUXILIARIES
        if start < len(words) and not passive and (verb := _present(words[start].lower())):
            rest = [_present_word(w) for w in words[start + 1 :]]
            return " ".join([verb.capitalize(), *_joined_verbs(words[start + 1 :], rest)])
    return f"Past fix: {mitigation}"


def _present_word(word: str) -> str:
    """One word of a sentence in the present, its punctuation kept ("redeployed." → "redeploy.")."""
    core = word.rstrip(".,;:")
    verb = _present(core.lower())
    return verb + word[len(core) :] if verb else word


_AUXILIARIES = frozenset({"was", "were", "been", "is", "are", "had", "has", "have"})


def _joined_verbs(words: list[str], converted: list[str]) -> list[str]:
    """Later verbs of the same sentence, after "and", "then" or a comma, in the
    imperative too ("… and restored service" → "… and restore service")."""
    out = []
    for i, (word, new) in enumerate(zip(words, converted, strict=True)):
        joined = i > 0 and (words[i - 1].lower() in {"and", "then"} or words[i - 1].endswith(","))
        out.append(new if joined else word)
    return out


def _present(word: str) -> str:
    """The present of a past-tense operation verb ("rolled" → "roll"), or ""."""
    if not word.endswith("ed"):
        return ""
    stem = word[:-2]
    for candidate in (word[:-1], stem, stem[:-1], stem[:-1] + "y" if stem.endswith("i") else ""):
        if candidate in OPERATION_VERBS:
            return candidate
    return ""


def _document_actions(
    documents: Sequence[KnowledgeHit], incident: dict[str, Any]
) -> list[PlaybookItem]:
    """The first numbered steps of the best matching runbook or known issue that fits."""
    for hit in documents:
        if not fits(hit, incident):
            continue
        steps = [step for step in step_lines(hit.document.body) if not instruction_like(step)]
        if steps:
            return [
                PlaybookItem(_trim(step), hit.document.doc_id)
                for step in steps[:STEPS_PER_DOCUMENT]
            ]
    return []


def step_lines(body: str) -> list[str]:
    """The numbered steps a reader of the document sees (not in comments or code)."""
    visible = _HIDDEN_RE.sub("", body)
    return [match.group("step") for match in _NUMBERED_STEP_RE.finditer(visible)]


def instruction_like(text: str) -> bool:
    """True for text addressed to the assistant (a prompt injection), never a real step."""
    return bool(_INSTRUCTION_RE.search(" ".join(text.split())))


def fits(hit: KnowledgeHit, incident: dict[str, Any]) -> bool:
    """A runbook of the incident's service that names its error codes, if it has any.

    Close words are not enough: a 403 key-rotation runbook for the same gateway
    is noise when the gateway returns 502s.
    """
    document = hit.document
    services = {name.lower() for name in document.services}
    if (
        document.type not in PLAYBOOK_TYPES
        or str(incident.get("service", "")).lower() not in services
    ):
        return False
    codes = [code.lower().removeprefix("http ") for code in incident.get("error_codes") or []]
    text = " ".join([document.title, *document.tags, document.body]).lower()
    return not codes or any(code in text for code in codes)


def owner_team(similar: Sequence[dict[str, Any]]) -> str:
    """The internal team accountable for most of the similar incidents, by score.

    Vendors ("Vendor: SMSly") are left out: a vendor cannot own our ticket.
    """
    weights: dict[str, float] = defaultdict(float)
    for rank, item in enumerate(similar):
        party = str(item.get("accountable_party") or "").strip()
        if party and not party.lower().startswith("vendor"):
            weights[party] += float(item.get("score") or 0.0) + 1.0 / (rank + 1)
    return max(weights, key=lambda party: weights[party]) if weights else ""


def _first_sentence(text: str) -> str:
    return _trim(_SENTENCE_RE.split(" ".join(text.split()), maxsplit=1)[0])


def _trim(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= ITEM_MAX_CHARS else flat[: ITEM_MAX_CHARS - 1].rstrip() + "…"


def _unique(items: list[PlaybookItem]) -> list[PlaybookItem]:
    seen: set[str] = set()
    kept = []
    for item in items:
        if item.text.lower() not in seen:
            seen.add(item.text.lower())
            kept.append(item)
    return kept
