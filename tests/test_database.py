"""How the project talks to PostgreSQL."""

import pytest
from django.contrib.auth.models import User
from django.contrib.sessions.models import Session
from django.db import connection
from django.utils import timezone

from copilot.models import AgentRun, Conversation, Message, ToolCall
from incidentdesk.db import (
    declared_indexes_ensure,
    indexes_in_database,
    row_update,
    rows_insert,
    rows_select,
)


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


def test_rows_select_loads_rows_as_the_orm_does(db: None) -> None:
    """The copilot reads each question's conversation and history through
    incidentdesk.db.rows_select: the same instances as the ORM's, unselected
    columns deferred, whatever the order of the columns."""
    owner = User.objects.create(username="reader")
    conversation = Conversation.objects.create(owner=owner, title="t")
    Message.objects.create(conversation=conversation, role="tool", data={"ids": [1]},
                           tool_calls=[{"id": "c1"}], citations=["INC-1"])  # fmt: skip
    whole = rows_select(Conversation, 'SELECT * FROM "copilot_conversation" WHERE "id" = %s',
                        [conversation.pk])  # fmt: skip
    fields = [f.attname for f in Conversation._meta.concrete_fields]
    orm = Conversation.objects.get(pk=conversation.pk)
    assert [[getattr(c, f) for f in fields] for c in whole] == [[getattr(orm, f) for f in fields]]
    assert (whole[0]._state.adding, whole[0]._state.db) == (False, "default")
    some = 'SELECT "citations", "data", "id" FROM "copilot_message" WHERE "conversation_id" = %s'
    (message,) = rows_select(Message, some, [conversation.pk])
    assert (message.data, message.citations) == ({"ids": [1]}, ["INC-1"])
    assert message.get_deferred_fields() == (
        Message.objects.only("citations", "data").get().get_deferred_fields()
    )
    assert message.tool_calls == [{"id": "c1"}]  # a deferred field loads when read
    with pytest.raises(TypeError):
        rows_select(Message, 'SELECT "id", 1 AS "other" FROM "copilot_message"', [])


def test_rows_select_sets_the_extra_columns_named_last_as_raw_does(db: None) -> None:
    """The searches' winners (incidents.ranking._fused_winners) come with their
    score and text: columns that are not the model's, named as `extra`."""
    owner = User.objects.create(username="ranker")
    conversation = Conversation.objects.create(owner=owner, title="t")
    sql = 'SELECT *, 0.5::float8 AS "score", \'why\' AS "why" FROM "copilot_conversation"'
    (row,) = rows_select(Conversation, sql, [], extra=("score", "why"))
    (raw,) = Conversation.objects.raw(sql)
    assert (row.pk, row.title, row.score, row.why) == (conversation.pk, "t", raw.score, raw.why)
    with pytest.raises(TypeError):  # named, but not last
        rows_select(Conversation, sql, [], extra=("why", "score"))


def test_rows_insert_writes_consecutive_rows_of_a_model_in_one_statement(
    db: None, django_assert_num_queries
) -> None:
    owner = User.objects.create(username="batcher")
    conversation = Conversation.objects.create(owner=owner)
    run = AgentRun.objects.create(conversation=conversation, model="offline")
    rows = [Message(conversation=conversation, role="tool", content=str(n)) for n in range(3)]
    calls = [ToolCall(run=run, round=1, call_id=f"c{n}", name="search") for n in range(2)]
    last = Message(conversation=conversation, role="assistant", content="3")
    with django_assert_num_queries(3):  # messages, trace rows, the last message
        rows_insert(*rows, *calls, last)
    assert [row.pk for row in [*rows, last]] == sorted(row.pk for row in [*rows, last])
    stored = Message.objects.filter(conversation=conversation).order_by("pk")
    assert [(m.pk, m.content) for m in stored] == [(m.pk, m.content) for m in [*rows, last]]
    assert sorted(ToolCall.objects.values_list("pk", "call_id")) == [
        (c.pk, c.call_id) for c in calls
    ]


def test_rows_insert_refuses_a_model_whose_key_it_cannot_read_back(db: None) -> None:
    """A session's key is not generated by the database: save() it instead."""
    with pytest.raises(TypeError, match="cannot write sessions"):
        rows_insert(Session(session_key="k", session_data="", expire_date=timezone.now()))


def test_row_update_writes_every_field_as_save_would(db: None) -> None:
    """The copilot's hot path closes its run through incidentdesk.db.row_update."""
    owner = User.objects.create(username="closer")
    conversation = Conversation.objects.create(owner=owner)
    run = AgentRun.objects.create(conversation=conversation, model="offline")
    run.status, run.latency_ms, run.citations_kept = "done", 42, ["INC-1"]
    run.finished_at = timezone.now()
    assert row_update(run) == 1
    twin = AgentRun.objects.get(pk=run.pk)
    fields = [f.attname for f in AgentRun._meta.concrete_fields]
    assert [getattr(twin, name) for name in fields] == [getattr(run, name) for name in fields]


def test_row_update_writes_only_the_fields_named(db: None, django_assert_num_queries) -> None:
    owner = User.objects.create(username="toucher")
    conversation = Conversation.objects.create(owner=owner, title="kept")
    Conversation.objects.filter(pk=conversation.pk).update(title="renamed in another tab")
    before = conversation.updated_at
    with django_assert_num_queries(1):
        assert row_update(conversation, "updated_at") == 1
    stored = Conversation.objects.get(pk=conversation.pk)
    assert stored.title == "renamed in another tab"
    assert stored.updated_at == conversation.updated_at > before  # auto_now, as save() sets it


def test_row_update_of_a_deleted_row_changes_nothing(db: None) -> None:
    owner = User.objects.create(username="late")
    conversation = Conversation.objects.create(owner=owner)
    Conversation.objects.filter(pk=conversation.pk).delete()
    assert row_update(conversation, "title") == 0
    assert not Conversation.objects.exists()


def test_a_declared_index_lost_outside_migrations_is_built_again(db: None) -> None:
    """A bulk import killed between dropping its HNSW index and rebuilding it lost the index."""
    with connection.cursor() as cursor:
        cursor.execute('DROP INDEX "incidents_chunk_embedding_hnsw"')
    assert "incidents_chunk_embedding_hnsw" not in indexes_in_database()

    assert declared_indexes_ensure() == ["incidents_chunk_embedding_hnsw"]
    assert indexes_in_database()["incidents_chunk_embedding_hnsw"] is True
    assert declared_indexes_ensure() == []  # nothing else is missing


def test_an_invalid_index_left_by_a_cut_concurrent_build_is_replaced(db: None) -> None:
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE pg_index SET indisvalid = false WHERE indexrelid = "
            "'incidents_chunk_fts_ver_gin'::regclass"
        )
    assert indexes_in_database()["incidents_chunk_fts_ver_gin"] is False

    assert declared_indexes_ensure() == ["incidents_chunk_fts_ver_gin"]
    assert indexes_in_database()["incidents_chunk_fts_ver_gin"] is True
