"""Staff see tickets with their comments and decisions, and close them."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from copilot.models import Ticket
from tests.copilot.intake.conftest import reported

pytestmark = pytest.mark.usefixtures("payments_desk")


def test_bob_reads_a_ticket_and_resolves_it(client: Client, alice: User, bob: User) -> None:
    reported(
        alice, "Checkout 502s right now, file a ticket", "add a comment: we decided to roll back"
    )
    ticket = Ticket.objects.get()
    client.force_login(bob)
    listing = client.get("/admin/copilot/ticket/").content.decode()
    assert ticket.key in listing
    page = client.get(f"/admin/copilot/ticket/{ticket.pk}/change/").content.decode()
    assert "we decided to roll back" in page and "roll back" in page
    inlines: dict[str, str] = {}
    for prefix, rows in (("comments", 1), ("decisions", 2)):  # the read-only inlines' forms
        inlines |= {f"{prefix}-TOTAL_FORMS": str(rows), f"{prefix}-INITIAL_FORMS": str(rows)}
    response = client.post(
        f"/admin/copilot/ticket/{ticket.pk}/change/", {"status": "resolved", **inlines}
    )
    assert response.status_code == 302
    ticket.refresh_from_db()
    assert ticket.status == "resolved"
    assert client.get("/admin/copilot/ticket/add/").status_code == 403
    assert "roll back" in client.get("/admin/copilot/decision/").content.decode()
