"""The chat page shows intake turns as cards, after a reload too."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from copilot.models import Ticket
from copilot.services import conversation_create
from tests.copilot.intake.conftest import error_dialog_png, reported, say

pytestmark = pytest.mark.usefixtures("payments_desk")


def test_a_reloaded_conversation_shows_the_intake_card(client: Client, alice: User) -> None:
    conversation = conversation_create(owner=alice)
    for text, image in [
        ("Checkout API returns 502 after the 14:00 deploy", error_dialog_png()),
        ("yes, file it", None),
    ]:
        say(conversation, alice, text, image)
    client.force_login(alice)
    page = client.get(f"/conversations/{conversation.pk}/").content.decode()
    key = Ticket.objects.get().key
    assert page.count('class="intake-card"') == 2
    assert "Similar incidents" in page and "Proposed actions" in page
    assert 'href="/incidents/INC-2024-11-04-001/"' in page
    assert f'<a href="/tickets/{key}/" class="id">{key}</a>' in page
    assert '<span class="pill">screenshot</span>' in page
    assert 'data-intake-url="/api/incident"' in page
    assert 'data-max-image-bytes="5242880"' in page


def test_the_ticket_page_shows_comments_and_decisions(client: Client, alice: User) -> None:
    reported(
        alice,
        "Checkout API returns 502 right now, please file a ticket",
        "add a comment: we decided to roll back the 14:00 deploy",
    )
    ticket = Ticket.objects.get()
    client.force_login(alice)
    page = client.get(f"/tickets/{ticket.key}/").content.decode()
    assert ticket.title in page
    assert "we decided to roll back the 14:00 deploy" in page
    assert "Decision: roll back the 14:00 deploy" in page
    assert client.get("/tickets/DESK-999999/").status_code == 404
