"""A user's answer turn (one running answer per user, in Redis) that a killed process
left taken is freed by start-up and by the periodic check (`manage.py recover`), so her
next question starts at once instead of waiting until the turn expires."""

from __future__ import annotations

import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from io import StringIO

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.core.management import call_command

from copilot.asking import user_turn_release, user_turn_take
from incidentdesk import owners
from incidentdesk.management.commands.serve_prepare import Command
from tests.processes import BASE_DIR, WAIT_SECONDS

pytestmark = pytest.mark.django_db


def recover() -> str:
    """Start-up's repairs (serve_prepare), before any worker runs."""
    out = StringIO()
    Command(stdout=out).recover()
    return out.getvalue()


def check() -> str:
    """The periodic check, while workers run."""
    out = StringIO()
    call_command("recover", stdout=out)
    return out.getvalue()


# A daphne process answering alice's question: it takes her turn the way the chat
# websocket does, says so, and keeps it until it is killed.
HOLD_TURN = """
import asyncio
from copilot.asking import user_turn

async def nobody(message):
    pass

async def main():
    question = {{"type": "ask", "text": "Have we seen PayU 403s before?"}}
    async with user_turn(user_id={user_id}, payload=question, waiting=nobody):
        print("holding", flush=True)
        await asyncio.sleep(600)

asyncio.run(main())
"""


@pytest.fixture
def turn_killed_mid_answer(alice: User) -> Iterator[None]:
    """alice's turn, taken by a real process that was then killed with SIGKILL."""
    code = HOLD_TURN.format(user_id=alice.pk)
    process = subprocess.Popen(  # noqa: S603 - our argv
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", code],
        cwd=BASE_DIR, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stdout is not None and process.stdout.readline().strip() == "holding"
    process.send_signal(signal.SIGKILL)
    process.wait(WAIT_SECONDS)
    assert not user_turn_take(user_id=alice.pk, token="probe")  # her next question would wait
    yield
    cache.delete(f"chat-user-turn:{alice.pk}")


@pytest.mark.usefixtures("turn_killed_mid_answer")
def test_the_periodic_check_frees_the_turn_of_a_user_whose_answering_process_died(
    alice: User, bob: User
) -> None:
    assert user_turn_take(user_id=bob.pk, token=f"{owners.current()} live")  # a live answer

    assert "Freed the answer turn of 1 user(s)" in check()
    assert user_turn_take(user_id=alice.pk, token="next")  # her next question starts at once
    assert not user_turn_take(user_id=bob.pk, token="other")  # bob's answer still runs
    user_turn_release(user_id=bob.pk, token=f"{owners.current()} live")


@pytest.mark.usefixtures("turn_killed_mid_answer")
def test_start_up_frees_the_turn_a_crash_left(alice: User) -> None:
    assert "Freed the answer turn of 1 user(s)" in recover()
    assert user_turn_take(user_id=alice.pk, token="next")


def test_start_up_frees_a_turn_that_names_no_process(alice: User) -> None:
    """Taken before turns named their process (a bare uuid): only start-up, when no
    answer of this server can be running, may free it."""
    cache.set(f"chat-user-turn:{alice.pk}", uuid.uuid4().hex)
    assert "Freed" not in check()
    assert "Freed the answer turn of 1 user(s)" in recover()
    assert user_turn_take(user_id=alice.pk, token="next")
    cache.delete(f"chat-user-turn:{alice.pk}")
