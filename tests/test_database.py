"""How the project talks to PostgreSQL."""

from django.contrib.auth.models import User
from django.db import connection

from copilot.models import Conversation, Message
from incidentdesk.db import rows_insert


def test_a_statement_a_connection_runs_often_is_prepared(db: None) -> None:
    """PostgreSQL then skips parsing and planning it (settings: prepare_threshold)."""
    for _ in range(6):
        list(User.objects.filter(username="nobody"))
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        statements = [row[0] for row in cursor.fetchall()]
    assert any('FROM "auth_user"' in statement for statement in statements), statements


def test_rows_insert_stores_each_row_in_order_as_save_would(db: None) -> None:
    """The copilot's hot path (incidentdesk.db.rows_insert) against the ORM's own reading."""
    owner = User.objects.create(username="writer")
    conversation = Conversation.objects.create(owner=owner)
    first = Message(conversation=conversation, role="tool", content="found", data={"ids": [1]})
    second = Message(conversation=conversation, role="assistant", citations=["INC-1"])
    rows_insert(first, second)
    assert first.pk is not None and second.pk > first.pk
    assert first.created_at is not None  # auto_now_add, as save() sets it
    stored = Message.objects.get(pk=first.pk)
    assert (stored.content, stored.data, stored.is_complete) == ("found", {"ids": [1]}, True)
    assert Message.objects.get(pk=second.pk).citations == ["INC-1"]
    second.content = "done"
    second.save()  # an update now, not a second row
    assert list(conversation.messages.values_list("content", flat=True)) == ["found", "done"]
