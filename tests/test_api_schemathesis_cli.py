"""schemathesis's own CLI, `st run --checks all`, on every operation of a real daphne with
throttling off (issue 17 item 13): what is sent matches the schema, and the schema says
what is refused. test_api_schema drives the same schema in-process, faster, with the
checks that need no second request.

bob (staff) calls, so the staff operations are reached too; tests/schemathesis.toml holds
the one setting the schema cannot express (what a screenshot's content may be).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.processes import BASE_DIR, Daphne, Stack

EXAMPLES = 4  # per operation and phase: every status path is met, bounded for CI
RUN_SECONDS = 900
CONFIG = Path(__file__).with_name("schemathesis.toml")
BOB = """
from django.contrib.auth.models import User
from rest_framework.authtoken.models import Token
bob = User.objects.create_user("bob", password="curates-2025", is_staff=True)
print(Token.objects.create(user=bob))
"""


def test_st_run_with_every_check_finds_nothing_on_any_operation(stack: Stack) -> None:
    # Throttling off: rates no run reaches, so a 429 never stands in for an answer.
    stack.env.update(
        API_THROTTLE_ANON="1000000/second",
        API_THROTTLE_USER="1000000/second",
        API_THROTTLE_CHAT="1000000/second",
        CHAT_QUESTIONS_PER_MINUTE="1000000",
    )
    daphne = Daphne(stack)
    token = stack.manage("shell", "--no-imports", "-c", BOB).stdout.strip()
    report = stack.var_dir / "st.out"
    st = Path(sys.executable).parent / "st"
    with report.open("wb") as out:
        run = subprocess.run(  # noqa: S603 - our argv
            [str(st), "--config-file", str(CONFIG), "run",
             f"{daphne.base}/api/schema/?format=json", "--url", daphne.base,
             "--checks", "all", "--header", f"Authorization: Token {token}",
             "--max-examples", str(EXAMPLES), "--workers", "1",
             "--generation-deterministic", "--no-color"],
            cwd=BASE_DIR, stdout=out, stderr=subprocess.STDOUT, timeout=RUN_SECONDS,
            check=False,
        )  # fmt: skip
    assert run.returncode == 0, report.read_text(errors="replace")
