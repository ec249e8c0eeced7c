"""The listening sockets `manage.py serve` hands its daphne processes."""

import socket

import pytest

from incidentdesk.supervisor import (
    CELERY_MAX_MEMORY_KIB,
    celery_command,
    daphne_command,
    listening_sockets,
)


def test_every_worker_gets_its_own_socket_on_one_port() -> None:
    sockets = listening_sockets("127.0.0.1", 0, 3)
    try:
        ports = {sock.getsockname() for sock in sockets}
        assert len(ports) == 1 and len({sock.fileno() for sock in sockets}) == 3
        assert daphne_command(sockets[0])[-3:] == [
            "--fd", str(sockets[0].fileno()), "incidentdesk.asgi:application",
        ]  # fmt: skip
    finally:
        for sock in sockets:
            sock.close()


def test_a_port_another_program_holds_is_refused() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(OSError, match="in use"):
            listening_sockets("127.0.0.1", taken.getsockname()[1], 2)


def test_an_ipv6_address_is_refused_with_a_reason() -> None:
    with pytest.raises(OSError, match="IPv6 address; serve listens on IPv4"):
        listening_sockets("::1", 0, 1)


def test_the_celery_worker_recycles_its_one_pool_process_past_the_memory_limit() -> None:
    argv = celery_command("imports")
    assert argv[argv.index("--concurrency") + 1] == "1"
    assert argv[argv.index("--max-memory-per-child") + 1] == str(CELERY_MAX_MEMORY_KIB)
    assert argv[argv.index("-Q") + 1] == "imports"
