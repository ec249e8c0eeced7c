"""Login is required everywhere; the login page, incident search and admin work."""

from pathlib import Path

import pytest
from django.test import Client

from tests.factories import incident_row, incidents_import

pytestmark = pytest.mark.django_db


def test_the_home_page_redirects_anonymous_users_to_login(client: Client) -> None:
    response = client.get("/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_the_login_page_renders_for_anonymous_users(client: Client) -> None:
    response = client.get("/accounts/login/")
    assert response.status_code == 200
    assert b'name="password"' in response.content


def test_alice_logs_in_with_her_password_and_searches(
    client: Client, alice, tmp_path: Path
) -> None:
    row = incident_row("INC-2025-08-24-001", title="HTTP 403 after key rotation")
    incidents_import(tmp_path / "a.jsonl", [row], activate=True)
    response = client.post(
        "/accounts/login/", {"login": "alice", "password": "correct horse battery"}
    )
    assert response.status_code == 302
    page = client.get("/incidents/", {"q": "forbidden responses after rotating credentials"})
    assert b"INC-2025-08-24-001" in page.content
    assert b"1 incident, best match first" in page.content


def test_a_wrong_password_is_refused(client: Client, alice) -> None:
    response = client.post("/accounts/login/", {"login": "alice", "password": "nope"})
    assert response.status_code == 200
    assert client.get("/").status_code == 302


def test_sign_up_is_closed_by_default(client: Client) -> None:
    response = client.get("/accounts/signup/")
    assert b"Sign Up Closed" in response.content or response.status_code == 403


def test_the_admin_needs_staff(client: Client, alice, bob) -> None:
    client.force_login(alice)
    assert client.get("/admin/").status_code == 302
    client.force_login(bob)
    assert client.get("/admin/").status_code == 200
    for page in [
        "incidents/incident/",
        "incidents/datasetversion/",
        "incidents/importjob/add/",
        "knowledge/knowledgedocument/",
        "copilot/goldenexample/",
    ]:
        assert client.get(f"/admin/{page}").status_code == 200, page
