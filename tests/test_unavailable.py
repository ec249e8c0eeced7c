"""Which errors mean "the database or Redis is down" (503 with Retry-After) and which stay 500."""

from __future__ import annotations

import django.db
import psycopg
import pytest
import redis.exceptions
from kombu.exceptions import OperationalError as BrokerError

from incidentdesk.unavailable import is_unavailable


def wrapped(error: psycopg.Error) -> django.db.OperationalError:
    """As Django raises it: its own class, the driver's error as the cause."""
    try:
        raise django.db.OperationalError(str(error)) from error
    except django.db.OperationalError as exc:
        return exc


@pytest.mark.parametrize(
    "error",
    [
        wrapped(psycopg.OperationalError("server closed the connection unexpectedly")),
        wrapped(psycopg.errors.AdminShutdown()),  # 57P01: a fast shutdown
        wrapped(psycopg.errors.CannotConnectNow()),  # 57P03: still recovering
        django.db.InterfaceError("connection already closed"),
        redis.exceptions.ConnectionError("Error 111 connecting to redis.sock"),
        redis.exceptions.BusyLoadingError("Redis is loading the dataset in memory"),
        BrokerError("Error 2 connecting to redis.sock"),
    ],
)
def test_a_lost_connection_is_unavailable(error: Exception) -> None:
    assert is_unavailable(error)


@pytest.mark.parametrize(
    "error",
    [
        wrapped(psycopg.errors.DeadlockDetected()),  # 40P01: a real failure of the request
        wrapped(psycopg.errors.QueryCanceled()),  # 57014: a statement timeout
        django.db.IntegrityError("duplicate key"),
        redis.exceptions.ResponseError("WRONGTYPE"),
        ValueError("a bug"),
    ],
)
def test_other_errors_stay_server_errors(error: Exception) -> None:
    assert not is_unavailable(error)
