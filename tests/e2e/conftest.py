"""A live daphne on the test database, and Debian's Chromium driven by Playwright.

Chromium comes from apt (`make test` installs it when missing); never from
`playwright install`. If it is missing the browser tests fail, they never skip.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connection, connections

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip
SCREENSHOTS = Path(settings.BASE_DIR) / "var" / "screenshots"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _database_url() -> str:
    """The test database as a URL, so daphne (another process) reads what the test wrote."""
    db = connection.settings_dict
    host = urllib.parse.quote(str(db["HOST"]), safe="")
    password = f":{db['PASSWORD']}" if db.get("PASSWORD") else ""
    return f"postgres://{db['USER']}{password}@{host}:{db['PORT']}/{db['NAME']}"


def _wait_for_port(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"daphne exited:\n{log.read_text()[-3000:]}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise RuntimeError(f"daphne did not listen on {port}:\n{log.read_text()[-3000:]}")


@pytest.fixture
def daphne_env() -> dict[str, str]:
    """Settings for live_daphne's process; a test module overrides this fixture to change them."""
    return {}


@pytest.fixture
def live_daphne(
    transactional_db: None, tmp_path: Path, daphne_env: dict[str, str]
) -> Iterator[str]:
    """daphne serving the ASGI app (HTTP + websockets, Redis channel layer) on a free port."""
    call_command("collectstatic", interactive=False, verbosity=0)
    port = _free_port()
    log = tmp_path / "daphne.log"
    env = {
        **os.environ,
        "DATABASE_URL": _database_url(),
        "DJANGO_SETTINGS_MODULE": "incidentdesk.settings",
        **daphne_env,
    }
    with log.open("wb") as out:
        process = subprocess.Popen(  # noqa: S603  # our own interpreter and module
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
             "incidentdesk.asgi:application"],
            cwd=settings.BASE_DIR, env=env, stdout=out, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        _wait_for_port(port, process, log)
        yield f"http://127.0.0.1:{port}"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        _wait_for_other_sessions_to_end()


def _wait_for_other_sessions_to_end() -> None:
    """daphne's PostgreSQL backends outlive it briefly; dropping the test DB needs them gone."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
            (others,) = cursor.fetchone() or (0,)
        if not others:
            break
        time.sleep(0.1)
    connection.close()


@pytest.fixture
def browser(monkeypatch: pytest.MonkeyPatch) -> Iterator[object]:
    """Headless Debian Chromium. Fails (never skips) when it is not installed."""
    assert CHROMIUM.exists(), (
        "Chromium is missing: `apt-get install -y chromium` (make test does it)"
    )
    # Playwright's sync API runs an event loop in this thread; the test's own
    # ORM calls are plain blocking calls made between browser steps.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    from playwright.sync_api import sync_playwright

    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        yield launched
        launched.close()
        # Connections opened by the test while Playwright's loop runs belong to
        # that context (Django's connections are context-local); close them here.
        connections.close_all()
