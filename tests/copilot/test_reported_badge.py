"""An answer citing a chat report badges it "reported, not reviewed" on the chat page."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from copilot.chat_models.offline import OfflineChatModel
from copilot.services import conversation_create
from incidents.importers import SourceRow
from incidents.models import Dataset
from incidents.services import INCIDENT_SPEC, dataset_import_rows, incident_mark_reported
from tests.copilot.conftest import ask
from tests.factories import incident_row

pytestmark = pytest.mark.django_db
REPORT_ID = "INC-2025-03-04-900001"


def test_a_cited_report_is_badged_in_the_answer(client: Client, alice: User) -> None:
    rows = [SourceRow(1, incident_row(REPORT_ID, title="Refund webhooks failing"))]
    version, _ = dataset_import_rows(
        spec=INCIDENT_SPEC, kind=Dataset.Kind.INCIDENTS, rows=rows, dataset_name="reported",
        activate=True,
    )  # fmt: skip
    incident_mark_reported(version=version, incident_id=REPORT_ID)
    conversation = conversation_create(owner=alice)
    events = ask(conversation, alice, f"Look up {REPORT_ID}", model=OfflineChatModel())
    assert events[-1].type == "done"
    client.force_login(alice)
    page = client.get(f"/conversations/{conversation.pk}/").content.decode()
    chips = page[page.index('aria-label="Sources"') :]
    assert REPORT_ID in chips and "reported, not reviewed" in chips
