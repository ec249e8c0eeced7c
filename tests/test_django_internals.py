"""The Django internals this project relies on are still there and still behave.

A Django upgrade that renames or reshapes any of them fails here first, with
a message naming the module to fix, rather than deep inside a chat answer.
The behaviour itself is covered where it is used: `rows_insert` and `rows_select` in
tests/test_database.py, the shared Redis client in tests/copilot/test_asking.py.
"""

from __future__ import annotations

import inspect

from django.core.cache import cache
from django.core.cache.backends.redis import RedisCacheClient
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.http import request as http_request

from copilot.models import Message


def test_rows_insert_finds_the_model_metadata_it_builds_its_insert_from() -> None:
    """incidentdesk/db.py builds Django's INSERT itself from `_meta` and `_state`."""
    meta = Message._meta
    for name in ("db_returning_fields", "local_concrete_fields", "parents"):
        assert hasattr(meta, name), f"Options.{name} is gone: fix incidentdesk/db.py rows_insert"
    assert all(hasattr(field, "generated") for field in meta.local_concrete_fields), (
        "Field.generated is gone: fix incidentdesk/db.py _insert_statement"
    )
    state = Message()._state
    assert hasattr(state, "adding") and hasattr(state, "db"), (
        "ModelState.adding/db are gone: fix incidentdesk/db.py _insert_many"
    )
    assert callable(connection.ops.quote_name)


def test_rows_select_finds_the_model_metadata_it_loads_rows_with() -> None:
    """incidentdesk/db.py rows_select matches columns to `_meta.concrete_fields`."""
    fields = Message._meta.concrete_fields
    assert all(hasattr(field, "column") and hasattr(field, "attname") for field in fields), (
        "Field.column/attname are gone: fix incidentdesk/db.py _select_plan"
    )
    assert hasattr(Message._meta.get_field("data"), "from_db_value"), (
        "JSONField.from_db_value is gone: fix incidentdesk/db.py _select_plan"
    )


def test_the_shared_redis_client_finds_the_cache_clients_private_helpers() -> None:
    """incidentdesk/cache.py reads RedisCacheClient's private server list and pools."""
    client = cache._cache  # type: ignore[attr-defined]  # our ReusedClientRedisCache
    assert isinstance(client, RedisCacheClient)
    for name in ("_servers", "_get_connection_pool_index", "_get_connection_pool", "_client"):
        assert hasattr(client, name), (
            f"RedisCacheClient.{name} is gone: fix incidentdesk/cache.py get_client"
        )
    assert client.get_client(write=True) is client.get_client(write=True)
    for name in ("_servers", "_options"):  # what ReusedClientRedisCache._cache builds from
        assert hasattr(cache, name), f"RedisCache.{name} is gone: fix incidentdesk/cache.py _cache"


def test_the_websocket_origin_check_finds_the_host_helpers() -> None:
    """incidentdesk/websocket_origin.py reuses the helpers behind ALLOWED_HOSTS."""
    for name in ("split_domain_port", "validate_host"):
        assert callable(getattr(http_request, name, None)), (
            f"django.http.request.{name} is gone: fix incidentdesk/websocket_origin.py"
        )
    assert http_request.split_domain_port("example.com:8000") == ("example.com", "8000")


def test_the_startup_migration_check_finds_the_migration_executor() -> None:
    """incidentdesk/migrating.py asks MigrationExecutor for the pending plan."""
    parameters = inspect.signature(MigrationExecutor.migration_plan).parameters
    assert "targets" in parameters, "MigrationExecutor.migration_plan changed: fix migrating.py"
