"""Curation: a thumbs-down becomes a golden example in two clicks and changes the next
answer; golden questions replay as regression cases (manage.py evaluate --golden)."""

from __future__ import annotations

import json
from io import StringIO
from typing import Any

import pytest
from django.core.management import call_command
from django.test import Client

from copilot.evaluation import evaluate_golden
from copilot.models import AgentRun, Conversation, GoldenExample, Message
from copilot.replies import conversation_reply
from copilot.services import conversation_create, conversation_delete, message_feedback_set
from copilot.tasks import golden_example_embed_task
from tests.factories import GoldenExampleFactory

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("desk")]
QUESTION = "Why did merchants get HTTP 403 after the key rotation?"


def ask(user: Any, text: str) -> Message:
    conversation = conversation_create(owner=user)
    events = list(conversation_reply(conversation=conversation, user=user, text=text))
    return Message.objects.get(pk=events[-1].message_id)  # type: ignore[attr-defined]


def test_a_thumbs_down_becomes_a_golden_example_that_the_next_answer_uses(
    client: Client, alice: Any, bob: Any
) -> None:
    answer = ask(alice, QUESTION)
    message_feedback_set(message=answer, user=alice, feedback="down", comment="Name the runbook")
    client.force_login(bob)

    queue = client.get("/admin/copilot/answerforreview/").content.decode()
    assert QUESTION in queue and "Name the runbook" in queue and "search_similar_incidents" in queue

    # Click 1: the action (or the row's "Promote…" link) opens the pre-filled form.
    form = client.post(
        "/admin/copilot/answerforreview/",
        {"action": "promote", "_selected_action": [answer.pk]},
        follow=True,
    )
    initial = form.context["adminform"].form.initial
    assert (initial["question"], initial["answer"], initial["source"]) == (
        QUESTION, answer.content, "feedback",
    )  # fmt: skip
    corrected = answer.content + "\nFollow KB-RB-001 to rotate keys safely."
    # Click 2: save the corrected answer.
    client.post(
        "/admin/copilot/goldenexample/add/",
        {"question": QUESTION, "answer": corrected, "source": "feedback", "is_active": "on"},
    )
    example = GoldenExample.objects.get(question=QUESTION)
    assert (example.source, example.created_by) == ("feedback", bob)
    golden_example_embed_task.apply(args=[example.pk])  # what the worker runs after the save

    ask(alice, QUESTION)
    run = AgentRun.objects.order_by("-pk").first()
    assert run is not None
    assert any(QUESTION in json.dumps(used) for used in run.golden_examples)


def test_conversations_are_read_only_in_the_admin(client: Client, alice: Any, bob: Any) -> None:
    answer = ask(alice, QUESTION)
    client.force_login(bob)
    page = client.get(f"/admin/copilot/conversation/{answer.conversation_id}/change/")
    assert page.status_code == 200 and QUESTION in page.content.decode()
    assert client.get("/admin/copilot/conversation/add/").status_code == 403
    client.post(f"/admin/copilot/conversation/{answer.conversation_id}/delete/", {"post": "yes"})
    assert Conversation.objects.filter(pk=answer.conversation_id).exists()


def test_evaluate_golden_reports_whether_answers_cite_the_golden_ids(alice: Any) -> None:
    good = GoldenExampleFactory(question=QUESTION, answer="See INC-2025-08-24-001.")
    bad = GoldenExampleFactory(
        question="Why was the settlement report short after DST?",
        answer="INC-2024-01-01-001 explains it.",  # not in the corpus: never cited
    )
    GoldenExampleFactory(question="How do I rotate keys?", answer="Follow the runbook.")
    report = evaluate_golden()
    by_id = {result["id"]: result for result in report["results"]}
    assert by_id[good.pk]["passed"] and by_id[good.pk]["missing"] == []
    assert not by_id[bad.pk]["passed"] and by_id[bad.pk]["missing"] == ["INC-2024-01-01-001"]
    assert (report["examples"], report["scored"], report["failed"]) == (3, 2, [bad.pk])
    assert not Conversation.objects.filter(owner__username="evaluation").exists()


def test_the_command_prints_one_line_per_example_and_fails_on_a_regression() -> None:
    GoldenExampleFactory(question=QUESTION, answer="See INC-2025-08-24-001.")
    out = StringIO()
    call_command("evaluate", "--golden", stdout=out)
    assert "ok" in out.getvalue() and "1/1 golden answers cite the same ids" in out.getvalue()
    GoldenExampleFactory(question="Checkout latency?", answer="INC-2099-01-01-001")
    with pytest.raises(Exception, match="regressed"):
        call_command("evaluate", "--golden", stdout=StringIO())


def test_the_admin_lists_deleted_conversations_waiting_for_the_purge(
    client: Client, alice: Any, bob: Any
) -> None:
    answer = ask(alice, QUESTION)
    conversation_delete(conversation=answer.conversation, user=alice)
    client.force_login(bob)
    page = client.get("/admin/copilot/conversation/", {"deleted_at__isempty": "0"})
    assert page.status_code == 200
    assert f"/admin/copilot/conversation/{answer.conversation_id}/change/" in page.content.decode()
    kept = client.get("/admin/copilot/conversation/", {"deleted_at__isempty": "1"})
    assert f"/{answer.conversation_id}/change/" not in kept.content.decode()
