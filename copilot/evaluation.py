"""Retrieval evaluation over labelled questions (the format of shared/eval).

The corpus is loaded into its own datasets (never activated, never touching
other datasets) and every selector is pinned to those versions.
"""

from __future__ import annotations

import datetime as dt
import json
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.contrib.auth.models import User
from django.utils import timezone

from copilot.chat_models.offline import OfflineChatModel
from copilot.chat_models.offline.router import Route
from copilot.events import Collected, events_collect
from copilot.models import Conversation, GoldenExample, Ticket
from copilot.replies import conversation_reply
from copilot.selectors import golden_example_list
from copilot.services import conversation_create, conversation_remove
from copilot.tools import TOOLS, ToolContext, cited_ids_in
from incidents.importers import read_rows
from incidents.importing import INCIDENT_SPEC
from incidents.models import Dataset, DatasetVersion
from incidents.services import dataset_import_rows
from knowledge.services import KNOWLEDGE_SPEC

EVAL_INCIDENTS = "evaluation-incidents"
EVAL_KNOWLEDGE = "evaluation-knowledge"
# A report-like turn is stored here (never activated), not in the live "reported" dataset.
EVAL_REPORTED = "evaluation-reported"
SET_LIMIT = 100  # by-application and recent questions are scored on the whole set
RANK_DEPTH = 10

GOALS = {
    "routing_accuracy": 0.97,
    "symptom_search.hit@5": 0.97,
    "symptom_search.mrr@10": 0.95,
    "knowledge.hit@1": 0.95,
    "set.precision": 0.95,
    "set.recall": 0.98,
    "multi_turn.score": 0.9,
}
EVAL_USERNAME = "evaluation"


@dataclass(frozen=True)
class Corpus:
    incidents: DatasetVersion
    knowledge: DatasetVersion


def corpus_load(*, incidents_path: Path, knowledge_path: Path) -> Corpus:
    """Import (idempotently) into the evaluation datasets."""
    incident_version, _ = dataset_import_rows(
        spec=INCIDENT_SPEC,
        kind=Dataset.Kind.INCIDENTS,
        rows=list(read_rows(incidents_path)),
        dataset_name=EVAL_INCIDENTS,
    )
    knowledge_version, _ = dataset_import_rows(
        spec=KNOWLEDGE_SPEC,
        kind=Dataset.Kind.KNOWLEDGE,
        rows=list(read_rows(knowledge_path)),
        dataset_name=EVAL_KNOWLEDGE,
    )
    return Corpus(incident_version, knowledge_version)


def load_questions(path: Path) -> list[dict[str, Any]]:
    return [
        json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()
    ]


# --- running one question ---------------------------------------------------------


@dataclass
class QuestionResult:
    qid: str
    kind: str
    route: Route
    routed_ok: bool
    ranked: list[str] = field(default_factory=list)
    returned: list[str] = field(default_factory=list)
    conversation: ConversationResult | None = None
    explanation: str = ""


def _today(question: dict[str, Any]) -> dt.date:
    as_of = question.get("as_of")
    return dt.date.fromisoformat(as_of) if as_of else timezone.localdate()


def run_tool(
    decision: Route, corpus: Corpus, *, today: dt.date, limit: int | None = None
) -> list[str]:
    """Run the routed tool, as the chat runs it, on the evaluation corpus; the ids
    it found, in order. One definition of each tool: the registry's runner."""
    args = dict(decision.arguments)
    if limit is not None and "limit" in args:
        args["limit"] = limit
    context = ToolContext(today, corpus.incidents, corpus.knowledge, EVAL_REPORTED)
    return list(TOOLS[decision.tool].runner(args, context).ids)


def evaluate_question(question: dict[str, Any], corpus: Corpus) -> QuestionResult:
    """Route the question, then run what its kind is scored on."""
    kind = question["kind"]
    today = _today(question)
    text = question["query"] if isinstance(question["query"], str) else question["query"][0]
    model = OfflineChatModel(
        today=today, incident_version=corpus.incidents, knowledge_version=corpus.knowledge
    )
    # Routed exactly as the chat routes it (the same vocabulary of topics too).
    understood = model.understand(text, [{"role": "user", "content": text}], chat=False)
    decision = understood.routes[0]
    acceptable = {question["expected_tool"], *question.get("also_acceptable_tools", [])}
    result = QuestionResult(question["qid"], kind, decision, decision.tool in acceptable)
    result.explanation = understood.explain()
    if kind == "multi_turn":
        result.conversation = run_conversation(question, corpus, today)
    elif kind in {"by_application", "recent"}:
        result.returned = run_tool(decision, corpus, today=today, limit=SET_LIMIT)
    elif kind in {"symptom_search", "knowledge", "id_lookup"}:
        expected = _expected_route(question, text, decision)
        result.ranked = run_tool(expected, corpus, today=today, limit=RANK_DEPTH)
    return result


def _expected_route(question: dict[str, Any], text: str, decision: Route) -> Route:
    """Ranking is scored with the expected tool, so routing and ranking stay separate."""
    if decision.tool == question["expected_tool"]:
        return decision
    if question["expected_tool"] == "search_knowledge":
        return Route("search_knowledge", {"query": text, "limit": RANK_DEPTH})
    if question["expected_tool"] == "lookup_incident_by_id":
        return Route("lookup_incident_by_id", {"incident_id": question["relevant_ids"][0]})
    return Route("search_similar_incidents", {"query": text, "limit": RANK_DEPTH})


# --- metrics ----------------------------------------------------------------------


def _first_hit_rank(ranked: list[str], relevant: set[str]) -> int | None:
    return next((i for i, item in enumerate(ranked, start=1) if item in relevant), None)


def _mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0


def summarise(
    results: list[QuestionResult], questions: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """Per-kind figures and the overall ones the goals are set on."""
    by_kind: dict[str, list[QuestionResult]] = defaultdict(list)
    for result in results:
        by_kind[result.kind].append(result)
    report: dict[str, Any] = {"questions": len(results), "kinds": {}}
    precision, recall = [], []
    for kind, items in sorted(by_kind.items()):
        figures = _kind_figures(kind, items, questions)
        precision.extend(figures.pop("_precision", []))
        recall.extend(figures.pop("_recall", []))
        report["kinds"][kind] = figures
    scored_routes = [r.routed_ok for r in results]
    report["routing_accuracy"] = _mean([float(ok) for ok in scored_routes])
    report["set"] = {"precision": _mean(precision), "recall": _mean(recall)}
    report["goals"] = goals_report(report)
    return report


def _kind_figures(
    kind: str, items: list[QuestionResult], questions: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    figures: dict[str, Any] = {
        "count": len(items),
        "routing_accuracy": _mean([float(r.routed_ok) for r in items]),
    }
    if kind == "multi_turn":
        return figures | _conversation_figures(items, questions)
    if kind in {"by_application", "recent"}:
        return figures | _set_figures(items, questions)
    ranks = [_first_hit_rank(r.ranked, set(questions[r.qid]["relevant_ids"])) for r in items]
    figures["hit@1"] = _mean([float(rank == 1) for rank in ranks])
    figures["hit@5"] = _mean([float(rank is not None and rank <= 5) for rank in ranks])
    figures["mrr@10"] = _mean([1.0 / rank if rank else 0.0 for rank in ranks])
    figures["misses"] = [r.qid for r, rank in zip(items, ranks, strict=True) if rank != 1]
    return figures


def _set_figures(
    items: list[QuestionResult], questions: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    precision, recall, misses = [], [], []
    for result in items:
        relevant = set(questions[result.qid]["relevant_ids"])
        returned = set(result.returned)
        found = len(returned & relevant)
        precision.append(found / len(returned) if returned else 0.0)
        recall.append(found / len(relevant) if relevant else 1.0)
        if returned != relevant:
            misses.append(result.qid)
    return {
        "precision": _mean(precision),
        "recall": _mean(recall),
        "misses": misses,
        "_precision": precision,
        "_recall": recall,
    }


def goals_report(report: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each goal with the measured figure and whether it is met."""
    measured = {
        "routing_accuracy": report["routing_accuracy"],
        "symptom_search.hit@5": report["kinds"].get("symptom_search", {}).get("hit@5", 0.0),
        "symptom_search.mrr@10": report["kinds"].get("symptom_search", {}).get("mrr@10", 0.0),
        "knowledge.hit@1": report["kinds"].get("knowledge", {}).get("hit@1", 0.0),
        "set.precision": report["set"]["precision"],
        "set.recall": report["set"]["recall"],
        "multi_turn.score": report["kinds"].get("multi_turn", {}).get("score", 0.0),
    }
    return {
        name: {"goal": goal, "measured": measured[name], "met": measured[name] >= goal}
        for name, goal in GOALS.items()
    }


def evaluate(*, incidents_path: Path, knowledge_path: Path, queries_path: Path) -> dict[str, Any]:
    """Load the corpus, run every question, return the report."""
    started = time.perf_counter()
    corpus = corpus_load(incidents_path=incidents_path, knowledge_path=knowledge_path)
    questions = load_questions(queries_path)
    results = [evaluate_question(q, corpus) for q in questions]
    report = summarise(results, {q["qid"]: q for q in questions})
    report["routing_misses"] = [
        {"qid": r.qid, "routed": r.route.tool, "why": r.route.reason}
        for r in results
        if not r.routed_ok
    ]
    report["explanations"] = {r.qid: _explained(r) for r in results}
    report["seconds"] = round(time.perf_counter() - started, 1)
    conversation_cleanup()
    return report


def _explained(result: QuestionResult) -> str:
    turns = result.conversation.turns if result.conversation else []
    later = " || ".join(f"{t.tool}{'' if t.acceptable else ' (WRONG)'}" for t in turns[1:])
    mark = "ok " if result.routed_ok else "MISS"
    explained = f"{mark} {result.explanation}" + (f" || later turns: {later}" if later else "")
    return explained + _conversation_gaps(result.conversation)


def _conversation_gaps(conversation: ConversationResult | None) -> str:
    """What a failed conversation lacked: the words its answers never said, the ids never cited."""
    if conversation is None:
        return ""
    gaps = [
        f"{label}: {', '.join(items)}"
        for label, items in (
            ("never said", conversation.missing_mentions),
            ("never cited", conversation.missing_citations),
        )
        if items
    ]
    return f" || {'; '.join(gaps)}" if gaps else ""


# --- multi-turn conversations through the copilot ------------------------------------


@dataclass
class TurnResult:
    tool: str | None
    acceptable: bool
    answer: str
    citations: list[str]


@dataclass
class ConversationResult:
    turns: list[TurnResult]
    missing_mentions: list[str]
    missing_citations: list[str]

    @property
    def mentions_ok(self) -> bool:
        return not self.missing_mentions

    @property
    def cited_ok(self) -> bool:
        return not self.missing_citations

    @property
    def tools_ok(self) -> bool:
        return all(turn.acceptable for turn in self.turns)

    @property
    def passed(self) -> bool:
        return self.tools_ok and self.mentions_ok and self.cited_ok


def _evaluation_user() -> User:
    user, _ = User.objects.get_or_create(
        username=EVAL_USERNAME, defaults={"is_active": False, "password": "!"}
    )
    return user


def conversation_cleanup() -> None:
    """Evaluation conversations are throwaway: nothing is left behind (tickets a
    report-like turn filed would outlive them: their foreign key is SET_NULL)."""
    Ticket.objects.filter(created_by__username=EVAL_USERNAME).delete()
    owned = Conversation.objects.filter(owner__username=EVAL_USERNAME)
    conversation_remove(conversation_ids=list(owned.values_list("pk", flat=True)))


def run_conversation(
    question: dict[str, Any], corpus: Corpus, today: dt.date
) -> ConversationResult:
    """Every turn through conversation_reply with the offline engine, pinned to the corpus."""
    user = _evaluation_user()
    conversation = conversation_create(owner=user)
    model = OfflineChatModel(
        today=today, incident_version=corpus.incidents, knowledge_version=corpus.knowledge
    )
    context = ToolContext(today, corpus.incidents, corpus.knowledge, EVAL_REPORTED)
    turns = [
        _run_turn(conversation, user, text, expected, model, context)
        for text, expected in zip(
            question["query"], question["expected_tools_per_turn"], strict=True
        )
    ]
    answers = " ".join(turn.answer for turn in turns).lower()
    cited = {cited for turn in turns for cited in turn.citations}
    return ConversationResult(
        turns,
        [word for word in question.get("answer_must_mention", []) if word.lower() not in answers],
        sorted(set(question["relevant_ids"]) - cited),
    )


def _run_turn(
    conversation: Conversation,
    user: User,
    text: str,
    expected: str,
    model: OfflineChatModel,
    context: ToolContext,
) -> TurnResult:
    collected = events_collect(
        conversation_reply(
            conversation=conversation, user=user, text=text, model=model, context=context
        )
    )
    tool = collected.tool_calls[0].name if collected.tool_calls else None
    windowed = any(
        "window" in result.data.get("applied_filters", {}) for result in collected.tool_results
    )
    answer, citations = _answer_of(collected)
    return TurnResult(tool, _tool_acceptable(tool, expected, windowed), answer, citations)


def _answer_of(collected: Collected) -> tuple[str, list[str]]:
    """The answer and its citations; a turn that failed is scored on its error's words."""
    if collected.done is not None:
        return collected.done.content, collected.done.citations
    return (collected.error.message if collected.error else ""), []


def _tool_acceptable(tool: str | None, expected: str, windowed: bool) -> bool:
    """As for single `recent` questions (eval README): a search with a parsed date
    range is an acceptable alternative to get_recent_incidents."""
    if tool == expected:
        return True
    return expected == "get_recent_incidents" and tool == "search_similar_incidents" and windowed


def _conversation_figures(
    items: list[QuestionResult], questions: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    results = [r.conversation for r in items if r.conversation is not None]
    turns = [turn for result in results for turn in result.turns]
    return {
        "score": _mean([float(c.passed) for c in results]),
        "tools_per_turn": _mean([float(t.acceptable) for t in turns]),
        "answer_mentions": _mean([float(c.mentions_ok) for c in results]),
        "relevant_cited": _mean([float(c.cited_ok) for c in results]),
        "misses": [r.qid for r in items if r.conversation and not r.conversation.passed],
    }


# --- golden examples as regression cases (manage.py evaluate --golden) -------------------


@dataclass(frozen=True)
class GoldenResult:
    """One golden question replayed: the ids its verified answer cites vs the copilot's."""

    example_id: int
    question: str
    expected: list[str]
    cited: list[str]
    error: str = ""

    @property
    def missing(self) -> list[str]:
        return sorted(set(self.expected) - set(self.cited))

    @property
    def extra(self) -> list[str]:
        return sorted(set(self.cited) - set(self.expected))

    @property
    def scored(self) -> bool:
        """A golden answer that cites no id (a procedure) has nothing to compare."""
        return bool(self.expected)

    @property
    def passed(self) -> bool:
        """Every id of the golden answer is cited again; extra ids are reported, not failed."""
        return not self.error and not self.missing

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.example_id,
            "question": self.question,
            "expected": self.expected,
            "cited": self.cited,
            "missing": self.missing,
            "extra": self.extra,
            "same_ids": set(self.expected) == set(self.cited),
            "scored": self.scored,
            "passed": self.passed,
            "error": self.error,
        }


def golden_replay(example: GoldenExample) -> GoldenResult:
    """Ask the golden question in a throwaway conversation of the evaluation user (offline)."""
    user = _evaluation_user()
    conversation = conversation_create(owner=user)
    collected = events_collect(
        conversation_reply(
            conversation=conversation,
            user=user,
            text=example.question,
            model=OfflineChatModel(),
            context=ToolContext(reported_dataset=EVAL_REPORTED),
        )
    )
    answer = collected.done.content if collected.done else ""
    error = collected.error.message if collected.error else ""
    return GoldenResult(
        example.pk,
        example.question,
        list(dict.fromkeys(cited_ids_in(example.answer))),
        list(dict.fromkeys(cited_ids_in(answer))),
        error,
    )


def evaluate_golden() -> dict[str, Any]:
    """1. replay every active golden question; 2. compare cited ids; 3. clean up."""
    started = time.perf_counter()
    examples = golden_example_list(filters={"is_active": "true"}).order_by("pk")
    try:
        results = [golden_replay(example) for example in examples]
    finally:
        conversation_cleanup()
    scored = [r for r in results if r.scored]
    return {
        "examples": len(results),
        "scored": len(scored),
        "passed": sum(r.passed for r in scored),
        "failed": [r.example_id for r in scored if not r.passed],
        "results": [r.as_dict() for r in results],
        "seconds": round(time.perf_counter() - started, 1),
    }
