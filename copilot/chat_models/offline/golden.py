"""Golden examples in offline answers: the verified answer leads.

The agent puts the golden examples nearest the question (top 2, cosine at
least 0.6) in the system prompt under "Verified Knowledge". The offline
engine reads them there, as a model would, looks up the incidents the
verified answer cites (so their ids are re-verified against the current
data, like any citation), and leads its answer with it under a "Verified
answer" heading, the tools' evidence after. Without a match nothing changes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from copilot.chat_models.base import ChatMessage
from copilot.chat_models.offline.reading import ToolOutcome
from copilot.chat_models.offline.routes import Route
from copilot.prompts import GOLDEN_EXAMPLE_HEADING, GOLDEN_HEADING
from incidents.parsing import find_incident_ids

MAX_VERIFIED_LOOKUPS = 3
_EXAMPLE_RE = re.compile(
    rf"^{re.escape(GOLDEN_EXAMPLE_HEADING)}\nQuestion: (?P<question>.*?)\nVerified answer: "
    rf"(?P<answer>.*?)(?=\n\n{re.escape(GOLDEN_EXAMPLE_HEADING)}|\n*\Z)",
    re.S | re.M,
)


@dataclass(frozen=True)
class VerifiedAnswer:
    question: str
    answer: str

    @property
    def incident_ids(self) -> list[str]:
        return find_incident_ids(self.answer)


def verified_answers(messages: Sequence[ChatMessage]) -> list[VerifiedAnswer]:
    """The golden examples of the system prompt, nearest first."""
    system = next((m for m in messages if m["role"] == "system"), None)
    text = str(system.get("content") or "") if system else ""
    _, found, block = text.partition(GOLDEN_HEADING)
    if not found:
        return []
    return [
        VerifiedAnswer(m.group("question").strip(), m.group("answer").strip())
        for m in _EXAMPLE_RE.finditer(block)
    ]


def golden_lookups(golden: Sequence[VerifiedAnswer], outcomes: list[ToolOutcome]) -> list[Route]:
    """Lookups of the incidents the leading verified answer cites that this turn's
    tools neither returned nor already looked up."""
    if not golden:
        return []
    found = {r.id for o in outcomes for r in o.records}
    asked = {_looked_up(o) for o in outcomes if o.name == "lookup_incident_by_id"}
    wanted = [i for i in golden[0].incident_ids if i not in found | asked]
    return [
        Route("lookup_incident_by_id", {"incident_id": i}, "verified answer")
        for i in wanted[:MAX_VERIFIED_LOOKUPS]
    ]


def _looked_up(outcome: ToolOutcome) -> str:
    try:
        return str(json.loads(outcome.arguments or "{}").get("incident_id", ""))
    except (ValueError, AttributeError):
        return ""


def lead_with_verified(golden: VerifiedAnswer, answer: str, outcomes: list[ToolOutcome]) -> str:
    """The verified answer first (ids not in the current data said so), then the evidence."""
    found = {r.id for o in outcomes for r in o.records}
    missing = [i for i in golden.incident_ids if i not in found]
    # The ids themselves are marked by the citation check; say what that means.
    note = (
        f"\n\n({len(missing)} of the incidents it cites "
        f"{'is' if len(missing) == 1 else 'are'} not in the current data.)"
        if missing
        else ""
    )
    # "No incident matched severity SEV1." is said first, even before a verified answer.
    notice = _NOTHING_MATCHED_RE.match(answer)
    first, answer = (
        (notice.group(0).strip() + "\n\n", answer[notice.end() :]) if notice else ("", answer)
    )
    return (
        f"{first}### Verified answer\n\n{golden.answer}{note}\n\n### From the records\n\n{answer}"
    )


_NOTHING_MATCHED_RE = re.compile(r"\*\*No (?:incident|document) matched [^*]+\*\*\s*")
