"""search_knowledge: grouped, filtered, hybrid."""

from pathlib import Path

import pytest

from incidentdesk.demo import DEMO_DIR
from knowledge.selectors import (
    PASSAGE_HITS,
    PREVIEW_CHARS,
    best_passage,
    document_ids_existing,
    knowledge_search,
)
from knowledge.services import knowledge_import_file
from tests.factories import (
    documents_import,
    key_rotation_runbook,
    payment_flow_architecture,
    secret_cache_known_issue,
)

pytestmark = pytest.mark.django_db

DOCS = [key_rotation_runbook(), secret_cache_known_issue(), payment_flow_architecture()]


@pytest.fixture
def documents(tmp_path: Path) -> None:
    documents_import(tmp_path / "kb.jsonl", DOCS, activate=True)


def test_results_are_grouped_by_type_with_relevance_between_0_and_1(documents) -> None:
    result = knowledge_search(query="how do I rotate an api key without forbidden errors")
    assert result.hits[0].document.doc_id == "KB-RB-001"
    groups = result.grouped()
    assert list(groups) == ["runbooks", "postmortems", "architecture", "known_issues"]
    first = groups["runbooks"][0]
    assert set(first) == {"id", "title", "type", "services", "relevance", "preview", "path"}
    assert first["relevance"] == 1.0
    # Scaled within the candidates: the weakest one found may be 0.
    assert all(0 <= hit.relevance <= 1 for hit in result.hits)
    assert [h.relevance for h in result.hits] == sorted(
        (h.relevance for h in result.hits), reverse=True
    )


def test_filters_combine(documents) -> None:
    result = knowledge_search(query="secret", type_filter="runbook", service_filter="PayU Core")
    assert [h.document.doc_id for h in result.hits] == ["KB-RB-001"]
    assert result.filters == {"type": "runbook", "service": "PayU Core"}
    assert knowledge_search(query="secret", type_filter="runbook", tag_filter="secrets").hits == []


def test_an_empty_query_with_filters_lists_documents(documents) -> None:
    listed = knowledge_search(query="", service_filter="payu core")
    assert [h.document.doc_id for h in listed.hits] == ["KB-AR-001", "KB-RB-001"]
    assert knowledge_search(query="").hits == []


CHUNK = (
    "Runbook: Queue backlog — Actions\n"
    "1. Page the owning team before touching anything. 2. Pause the producers that "
    "write to the backlogged queue. 3. Scale consumers out only after the dead-letter "
    "queue is drained, or retries will flood it again. - Write down every change in "
    "the incident channel as you make it."
)


def test_a_passage_quotes_the_items_that_answer_in_whole() -> None:
    passage = best_passage(CHUNK, "should I scale the consumers out while the DLQ is full?")
    assert passage.startswith("Actions: ")
    assert "Scale consumers out only after the dead-letter queue is drained" in passage
    assert "or retries will flood it again." in passage  # never cut mid-item
    assert "Page the owning team" not in passage  # only the best two items


def test_a_preview_ends_on_a_whole_sentence() -> None:
    passage = best_passage(CHUNK, "queue", rank=PASSAGE_HITS)  # past the ranked few
    assert passage.endswith(".") and len(passage) <= PREVIEW_CHARS


def test_what_to_do_quotes_the_steps_not_the_prevention(tmp_path: Path) -> None:
    runbook = {
        "doc_id": "KB-RB-050", "title": "Message queue backlog", "type": "runbook",
        "services": ["Webhooks"], "tags": ["queue"],
        "body": "## Prevention\nAlert on the age of the oldest message in the webhook queue "
                "long before the backlog grows.\n\n## Actions\n1. Pause the producers.\n"
                "2. Scale the consumers out.\n3. Drain the dead-letter queue last.",
    }  # fmt: skip
    documents_import(tmp_path / "kb.jsonl", [runbook], dataset_name="kb-steps", activate=True)
    question = "the webhook queue backlog keeps growing, oldest message age climbing: what do I do?"
    preview = knowledge_search(query=question).hits[0].preview
    assert preview.startswith("Actions: ")
    assert "Pause the producers." in preview
    # Asking for the runbook asks for its steps too.
    asked = knowledge_search(query="do we have a runbook for oldest message age alerts?")
    assert asked.hits[0].preview.startswith("Actions: ")
    # The same words without asking what to do keep the closest section.
    assert "Prevention" in knowledge_search(query="oldest message age alert").hits[0].preview


def test_a_known_issue_is_quoted_with_its_workaround(tmp_path: Path) -> None:
    known_issue = {
        "doc_id": "KB-KI-050", "title": "Known issue: scheduler skips jobs on DST day",
        "type": "known_issue", "services": ["Payouts"], "tags": ["dst"],
        "body": "**Behaviour:** Jobs scheduled in local time do not run when the clocks skip "
                "an hour in spring.\n\n**Why it matters:** Payout batches are silently "
                "missed.\n\n**Workaround:**\n- Run the missed batch by hand with the payout CLI."
                "\n- Schedule every job in UTC.",
    }  # fmt: skip
    documents_import(tmp_path / "kb.jsonl", [known_issue], dataset_name="kb-known", activate=True)
    preview = knowledge_search(query="jobs in local time do not run in spring").hits[0].preview
    assert "Jobs scheduled in local time" in preview
    assert preview.endswith("Workaround: Run the missed batch by hand with the payout CLI.")


def test_a_question_naming_a_section_quotes_that_section_not_the_overview() -> None:
    """The demo's architecture notes: their Overview reads closest to any question."""
    knowledge_import_file(path=DEMO_DIR / "knowledge.jsonl", dataset_name="kb", activate=True)
    path = knowledge_search(query="What is the request path of a payment through PayU Core?")
    assert path.hits[0].document.doc_id == "KB-AR-001"
    assert path.hits[0].preview.startswith("Request path: ")
    assert "The gateway pool validates the key" in path.hits[0].preview
    retries = knowledge_search(query="What is the webhook retry policy of the Notifications Hub?")
    assert retries.hits[0].preview.startswith("Retry policy: Webhook retries back off")
    # A question naming no heading keeps the section that reads closest.
    authorized = knowledge_search(query="How is a payment authorized in PayU Core?")
    assert authorized.hits[0].preview.startswith("Overview: PayU Core authorizes")


def test_asked_what_to_do_a_runbook_outranks_an_incident_review(tmp_path: Path) -> None:
    review = {
        "doc_id": "KB-PM-050", "title": "Incident review: waf rule releases that pinned cpu",
        "type": "postmortem", "services": ["Edge"], "tags": ["waf", "cpu"],
        "body": "## Pattern\nEvery waf rule release that pinned cpu at 100% on the edge nodes "
                "came from one rule with catastrophic backtracking.",
    }  # fmt: skip
    runbook = {
        "doc_id": "KB-RB-050", "title": "Runbook: cpu pinned on waf nodes after a rule release",
        "type": "runbook", "services": ["Edge"], "tags": ["waf", "cpu"],
        "body": "## Actions\n1. Roll back the latest waf rule release.\n"
                "2. Profile one edge node where cpu is pinned at 100%.",
    }  # fmt: skip
    # Others, as any knowledge base holds: fusion scales scores within the candidates.
    others = [
        {"doc_id": f"KB-RB-05{i}", "title": f"Runbook: {topic}", "type": "runbook",
         "services": [], "tags": [], "body": f"## Actions\n1. Check the {topic} dashboard."}
        for i, topic in enumerate(
            ["dns resolver timeouts", "disk full on log volumes", "expired tls certificates",
             "kafka consumer lag", "database connection pool exhausted"], start=1)
    ]  # fmt: skip
    documents_import(
        tmp_path / "kb.jsonl", [review, runbook, *others], dataset_name="kb-types", activate=True
    )
    question = "cpu pinned at 100% on every waf node after the rule release"
    assert knowledge_search(query=question).hits[0].document.doc_id == "KB-PM-050"
    asked = knowledge_search(query=f"{question}, what do I check first?").hits
    assert asked[0].document.doc_id == "KB-RB-050"
    assert all(0 <= hit.relevance <= 1 for hit in asked)


def test_words_joined_by_a_slash_are_searched_apart(tmp_path: Path) -> None:
    """PostgreSQL reads "power/cooling" as one file-path token; people mean either word."""
    documents = [
        {"doc_id": "KB-RB-060", "title": "Data center power or cooling failure",
         "type": "runbook", "services": [], "tags": ["datacenter"],
         "body": "## Actions\n1. Fail over stateful services to another site."},
        {"doc_id": "KB-RB-061", "title": "Clock discontinuities during events",
         "type": "runbook", "services": [], "tags": ["time"],
         "body": "## During the event\n1. Watch for negative durations in events."},
    ]  # fmt: skip
    documents_import(tmp_path / "kb.jsonl", documents, dataset_name="kb-slash", activate=True)
    hits = knowledge_search(query="runbook for power/cooling events?").hits
    assert hits[0].document.doc_id == "KB-RB-060"


def test_a_service_no_document_lists_is_loosened_and_said(documents) -> None:
    kept = knowledge_search(query="rotate an api key", service_filter="PayU Core")
    assert kept.loosened == ""
    assert {h.document.doc_id for h in kept.hits} == {"KB-RB-001", "KB-AR-001"}
    loosened = knowledge_search(query="rotate an api key", service_filter=["Ledger"])
    assert loosened.loosened == "Ledger"
    assert loosened.hits[0].document.doc_id == "KB-RB-001"
    assert loosened.as_text().startswith("No document matched service Ledger, so it was loosened")


def test_existing_document_ids_are_those_of_the_active_or_the_named_version(
    tmp_path: Path,
) -> None:
    """What an answer may cite although no tool returned it (copilot._verifiable)."""
    active = documents_import(tmp_path / "kb.jsonl", DOCS, activate=True)
    staged = documents_import(tmp_path / "next.jsonl", DOCS[:1], dataset_name="next")
    ids = [str(row["doc_id"]) for row in DOCS]
    asked = {ids[0], ids[1], "KB-NOPE-404"}
    assert document_ids_existing(doc_ids=asked) == {ids[0], ids[1]}
    assert document_ids_existing(doc_ids=asked, version=active) == {ids[0], ids[1]}
    assert document_ids_existing(doc_ids=asked, version=staged) == {ids[0]}
    assert document_ids_existing(doc_ids=set()) == set()


def test_each_document_block_names_the_incidents_it_draws_on(tmp_path: Path) -> None:
    """A model asked "which incident was that based on?" looks them up by these ids."""
    drawn = {**secret_cache_known_issue(), "related_incidents": ["INC-2025-08-24-001"]}
    documents_import(tmp_path / "kb.jsonl", [drawn, key_rotation_runbook()], activate=True)
    blocks = knowledge_search(query="secret cache rotation").as_text().split("\n\n---\n\n")
    related = [line for block in blocks for line in block.splitlines() if "Related" in line]
    assert related == ["Related incidents: INC-2025-08-24-001"]  # none for the runbook


def test_quotes_carry_the_sections_a_reader_needs_beside_them(tmp_path: Path) -> None:
    known_issue = {
        "doc_id": "KB-KI-051", "title": "Known issue: broker closes slow consumers",
        "type": "known_issue", "services": ["Jobs"], "tags": ["broker"],
        "body": "**Affects:** Broker 4.2 and later.\n\n**Behaviour:** A default ack timeout "
                "of 30 minutes closes any consumer that holds a message longer.\n\n"
                "**Workaround:** Raise the ack timeout in the broker config. "
                "**Seen in:** A cleanup queue that lost every consumer in 2024.",
    }  # fmt: skip
    runbook = {
        "doc_id": "KB-RB-051", "title": "Runbook: reconnect storms", "type": "runbook",
        "services": ["Gateway"], "tags": ["storm"],
        "body": "## Actions\n1. Cap new connections at the edge per client.\n"
                "2. Restart the gateway nodes in stages.\n\n## Prevention\n"
                "- Exponential backoff with jitter in every client.\n- Retry budgets per layer.",
    }  # fmt: skip
    documents_import(
        tmp_path / "kb.jsonl", [known_issue, runbook], dataset_name="kb-pairs", activate=True
    )
    # A known issue quoted at its workaround says what it does too, and the inline
    # label's own line is the workaround (not the next label's).
    preview = knowledge_search(query="raise the ack timeout in the broker config").hits[0].preview
    assert "A default ack timeout of 30 minutes" in preview
    assert "Raise the ack timeout" in preview and "Seen in" not in preview
    # A runbook quoted at its steps says how to stop a repeat.
    steps = knowledge_search(query="what do I do about a reconnect storm at the gateway?")
    assert steps.hits[0].preview.startswith("Actions: ")
    assert steps.hits[0].preview.endswith(
        "Prevention: Exponential backoff with jitter in every client."
    )
