"""How the project talks to PostgreSQL."""

from django.contrib.auth.models import User
from django.db import connection


def test_a_statement_a_connection_runs_often_is_prepared(db: None) -> None:
    """PostgreSQL then skips parsing and planning it (settings: prepare_threshold)."""
    for _ in range(6):
        list(User.objects.filter(username="nobody"))
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        statements = [row[0] for row in cursor.fetchall()]
    assert any('FROM "auth_user"' in statement for statement in statements), statements
