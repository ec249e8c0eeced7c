"""kill -9 the embedded PostgreSQL, then Redis, under `manage.py serve`: pages answer 503
with Retry-After (never 500) until the supervisor has restarted the service, then 200
again. And an import job left `running` by a dead worker, or cut by a killed worker or
database, is run again and finishes."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request

import psutil

from tests.processes import WAIT_SECONDS, Stack, free_port, wait_for_http, wait_until


def fetch(url: str, headers: dict[str, str]) -> tuple[int, str, str]:
    """Status, Retry-After and body, without following redirects."""
    request = urllib.request.Request(url, headers=headers)  # noqa: S310 - localhost
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(request, timeout=60) as response:
            return (
                response.status,
                response.headers.get("Retry-After", ""),
                response.read().decode(),
            )
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Retry-After", ""), error.read().decode()


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


SUPERVISOR_MAX_RSS = 120 * 2**20  # issue 19: the supervisor does no Django work


def serve(stack: Stack) -> tuple[str, dict[str, str]]:
    """A running stack and an API token's headers."""
    port = free_port()
    stack.env |= {"WEB_WORKERS": "1", "SUPERVISOR_CHECK_SECONDS": "2"}
    process = stack.start("serve", "--no-demo", "--port", str(port))
    base = f"http://127.0.0.1:{port}"
    wait_for_http(f"{base}/healthz", process)
    token = stack.manage("create_service_token", "faults-bot").stdout.strip()
    return base, {"Authorization": f"Token {token}", "Accept": "application/json"}


# A well-formed session key: the page reads the session table before it redirects to the login.
SESSION = {"Cookie": "sessionid=" + "abcdefgh" * 4}


def answers_503_then_200(base: str, headers: dict[str, str]) -> None:
    """A page (HTML) and the API (JSON) answer 503 with Retry-After, then as usual again.

    Asked at once after the kill: the supervisor waits a second before restarting.
    """
    page, api = f"{base}/incidents/", f"{base}/api/incidents/"
    status, retry_after, body = fetch(page, SESSION)
    assert (status, retry_after) == (503, "5"), body
    assert "Temporarily unavailable" in body and "Traceback" not in body
    status, retry_after, body = fetch(api, headers)
    assert (status, retry_after) == (503, "5"), body
    assert json.loads(body)["error"]["code"] == "unavailable"
    wait_until(lambda: fetch(api, headers)[0] == 200, "the API answering 200 again")
    assert fetch(page, SESSION)[0] == 302  # to the login, as before the kill


def test_a_killed_postgresql_is_restarted_and_pages_answer_503_meanwhile(stack: Stack) -> None:
    base, headers = serve(stack)
    assert fetch(f"{base}/api/incidents/", headers)[0] == 200
    old = stack.postmaster_pid()

    stack.kill_postgres()
    answers_503_then_200(base, headers)
    assert stack.postmaster_pid() not in {None, old}
    assert "postgresql died; restarting it in 1s" in stack.output(stack.started[0])


def test_a_killed_redis_is_restarted_and_pages_answer_503_meanwhile(stack: Stack) -> None:
    base, headers = serve(stack)
    assert fetch(f"{base}/api/incidents/", headers)[0] == 200
    pid_file = stack.var_dir / "redis.pid"
    old = int(pid_file.read_text())

    os.kill(old, signal.SIGKILL)
    status, retry_after, body = fetch(f"{base}/api/incidents/", headers)  # throttling reads Redis
    assert (status, retry_after) == (503, "5"), body
    wait_until(lambda: fetch(f"{base}/api/incidents/", headers)[0] == 200, "a 200 again")
    assert int(pid_file.read_text()) != old
    assert "redis died; restarting it in 1s" in stack.output(stack.started[0])


ROW = {
    "incident_id": "INC-2025-01-02-001",
    "title": "Checkout latency after a cache flush",
    "impacted_application": "Checkout",
    "root_cause": "The cache was flushed during peak traffic.",
    "mitigation": "Warmed the cache and rate-limited the flush.",
}


def dead_owner() -> str:
    """`host:pid` of a process that has exited, as a worker killed mid-job leaves it."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return f"{socket.gethostname()}:{process.pid}"


JOB_LEFT_RUNNING = """
from django.core.files.base import ContentFile
from incidents.models import ImportJob
from incidents.services import dataset_create, dataset_version_get_or_create
version = dataset_version_get_or_create(dataset=dataset_create(name="faults", kind="incidents"))
job = ImportJob(version=version, file_format="jsonl", status="running", owner={owner!r}, attempts=1)
job.file.save("left.jsonl", ContentFile({rows!r}))
print(job.pk)
"""


def test_an_import_job_left_running_by_a_dead_worker_is_queued_again_and_ends(
    stack: Stack,
) -> None:
    serve(stack)
    code = JOB_LEFT_RUNNING.format(owner=dead_owner(), rows=json.dumps(ROW) + "\n")
    job_id = int(stack.manage("shell", "-c", code).stdout.split()[-1])

    def status() -> str:
        with stack.connect() as conn:
            row = conn.execute("SELECT status FROM incidents_importjob WHERE id = %s", [job_id])
            return str(row.fetchone()[0])  # type: ignore[index]

    wait_until(lambda: status() not in {"queued", "running"}, "the job to end", WAIT_SECONDS)
    assert status() == "succeeded"
    with stack.connect() as conn:
        attempts = conn.execute("SELECT attempts FROM incidents_importjob WHERE id = %s", [job_id])
        assert attempts.fetchone() == (2,)
    # The check ran in a child: the supervisor stayed small.
    assert psutil.Process(stack.started[0].pid).memory_info().rss < SUPERVISOR_MAX_RSS


RUN_OF = """
from django.contrib.auth.models import User
from copilot.models import AgentRun, Conversation
conversation = Conversation.objects.create(owner=User.objects.create(username="alice"))
print(AgentRun.objects.create(conversation=conversation, model="offline", owner={owner!r}).pk)
"""


def _cmdline(process: psutil.Process) -> str:
    """A child that has just exited (a `recover` run not yet reaped) has no command line."""
    try:
        return " ".join(process.cmdline())
    except psutil.Error:
        return ""


def test_an_answer_whose_daphne_is_killed_is_marked_interrupted_at_once(stack: Stack) -> None:
    serve(stack)
    [daphne] = [
        p for p in psutil.Process(stack.started[0].pid).children() if "daphne" in _cmdline(p)
    ]
    code = RUN_OF.format(owner=f"{socket.gethostname()}:{daphne.pid}")  # as if it were answering
    run_id = int(stack.manage("shell", "-c", code).stdout.split()[-1])

    def state() -> tuple[str, str]:
        with stack.connect() as conn:
            row = conn.execute("SELECT status, error FROM copilot_agentrun WHERE id = %s", [run_id])
            return row.fetchone()  # type: ignore[return-value]

    assert state()[0] == "running"  # its process lives: the periodic check leaves it alone
    daphne.send_signal(signal.SIGKILL)
    wait_until(lambda: state()[0] != "running", "the answer to be closed", WAIT_SECONDS)
    status, error = state()
    assert status == "failed" and error.startswith("interrupted")


def rows(count: int) -> bytes:
    """`count` distinct incidents as JSON Lines: an import that takes a while."""
    lines = [
        json.dumps(ROW | {"incident_id": f"INC-2025-01-{1 + n // 999:02d}-{1 + n % 999:03d}",
                          "title": f"{ROW['title']} #{n}"})
        for n in range(count)
    ]  # fmt: skip
    return ("\n".join(lines) + "\n").encode()


def upload(base: str, headers: dict[str, str], body: bytes) -> int:
    """POST the file to the `faults` dataset's uploads; the new job's id."""
    boundary = "faultsboundary"
    form = (
        (
            f"--{boundary}\r\n"
            'Content-Disposition: form-data; name="file"; filename="rows.jsonl"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode()
        + body
        + f"\r\n--{boundary}--\r\n".encode()
    )
    request = urllib.request.Request(  # noqa: S310 - localhost
        f"{base}/api/datasets/faults/uploads/", data=form, method="POST",
        headers=headers | {"Content-Type": f"multipart/form-data; boundary={boundary}"},
    )  # fmt: skip
    with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310
        return int(json.loads(response.read())["id"])


def serve_an_upload(stack: Stack) -> tuple[str, dict[str, str], int]:
    """A running stack, a staff token's headers and the job importing 300 rows into a
    new `faults` dataset (uploads are staff-only)."""
    base, _ = serve(stack)
    token = stack.manage("create_service_token", "faults-admin", "--staff").stdout.strip()
    headers = {"Authorization": f"Token {token}", "Accept": "application/json"}
    stack.manage("shell", "-c", "from incidents.services import dataset_create; "
                 "dataset_create(name='faults', kind='incidents')")  # fmt: skip
    return base, headers, upload(base, headers, rows(300))


def test_an_import_cut_by_a_killed_postgresql_is_retried_and_ends(stack: Stack) -> None:
    base, headers, job_id = serve_an_upload(stack)

    def status() -> str:
        code, _, body = fetch(f"{base}/api/import-jobs/{job_id}/", headers)
        return str(json.loads(body)["status"]) if code == 200 else "unreachable"

    wait_until(lambda: status() != "queued", "the worker to start the job")
    assert status() == "running"  # 300 rows take seconds to embed
    stack.kill_postgres()
    wait_until(lambda: status() not in {"queued", "running", "unreachable"}, "the job to end")
    assert status() == "succeeded"
    assert "Retry in" in stack.output(stack.started[0])  # Celery's retry, not a lucky finish


def test_an_import_whose_celery_worker_is_killed_mid_job_is_run_again_and_ends(
    stack: Stack,
) -> None:
    """kill -9 the worker and its pool process (a crash, not Celery's WorkerLostError,
    which a pool process alone gives): serve restarts the worker and the periodic check
    queues the job again; its message waits unacknowledged for the visibility timeout."""
    base, headers, job_id = serve_an_upload(stack)

    def job() -> dict[str, object]:
        code, _, body = fetch(f"{base}/api/import-jobs/{job_id}/", headers)
        return dict(json.loads(body)) if code == 200 else {"status": "unreachable"}

    wait_until(lambda: job()["status"] == "running", "the worker to start the job")
    [worker] = [
        p for p in psutil.Process(stack.started[0].pid).children() if "celery" in _cmdline(p)
    ]
    processes = [worker, *worker.children(recursive=True)]
    for process in processes:
        process.send_signal(signal.SIGKILL)
    psutil.wait_procs(processes, timeout=WAIT_SECONDS)

    wait_until(lambda: job()["status"] not in {"queued", "running"}, "the job to end")
    ended = job()
    assert (ended["status"], ended["rows_done"], ended["rows_total"]) == ("succeeded", 300, 300)
    assert "celery exited with -9; restarting it" in stack.output(stack.started[0])
    with stack.connect() as conn:
        attempts = conn.execute("SELECT attempts FROM incidents_importjob WHERE id = %s", [job_id])
        assert attempts.fetchone() == (2,)  # run again, resuming: rows are upserted


def _cmdline(process: psutil.Process) -> list[str]:
    """A child's command line; none for one that has exited and is not yet reaped."""
    try:
        return process.cmdline()
    except (psutil.ZombieProcess, psutil.NoSuchProcess):
        return []
