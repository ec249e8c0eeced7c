"""OpenID Connect single sign-on is off by default and switched on by OIDC_* variables."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

BASE_DIR = Path(__file__).resolve().parents[1]
# Settings and URLs only: the provider's tables exist once `migrate` has run
# with OIDC on (make run does), and this test must not touch a real database.
SHOW_SSO = (
    "import django; django.setup(); from django.conf import settings; "
    "from django.urls import reverse; "
    "app = settings.SOCIALACCOUNT_PROVIDERS['openid_connect']['APPS'][0]; "
    "print(app['name'], app['settings']['server_url'], "
    "'allauth.socialaccount.providers.openid_connect' in settings.INSTALLED_APPS, "
    "reverse('openid_connect_login', kwargs={'provider_id': 'sso'}))"
)


def _run(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603
        [sys.executable, "-c", code],
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "incidentdesk.settings", **env},
        cwd=BASE_DIR,
        capture_output=True,
        text=True,
    )


@pytest.mark.django_db
def test_the_login_page_has_no_sso_button_by_default(client: Client) -> None:
    page = client.get("/accounts/login/").content.decode()
    assert "Username or email" in page and "openid_connect" not in page


def test_oidc_variables_switch_on_the_provider_and_its_login_url() -> None:
    result = _run(
        SHOW_SSO,
        OIDC_PROVIDER_URL="https://login.example.com/realms/ops",
        OIDC_CLIENT_ID="incidentdesk",
        OIDC_CLIENT_SECRET="s3cret",
        OIDC_NAME="Example SSO",
    )
    assert result.returncode == 0, result.stderr
    name, url = "Example SSO", "https://login.example.com/realms/ops"
    assert result.stdout.strip() == f"{name} {url} True /accounts/oidc/sso/login/"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"OIDC_PROVIDER_URL": "https://idp.example"}, "needs OIDC_CLIENT_ID and"),
        ({"OIDC_PROVIDER_URL": "idp.example", "OIDC_CLIENT_ID": "a",
          "OIDC_CLIENT_SECRET": "b"}, "must be an http(s) URL"),
    ],
)  # fmt: skip
def test_incomplete_oidc_settings_stop_start_up(env: dict[str, str], message: str) -> None:
    result = _run("import django; django.setup()", **env)
    assert result.returncode != 0
    assert message in result.stderr


def test_the_client_secret_can_come_from_a_file(tmp_path: Path) -> None:
    secret = tmp_path / "oidc_secret"
    secret.write_text("from-a-file\n")
    code = "import django; django.setup(); from django.conf import settings; " + (
        "print(settings.SOCIALACCOUNT_PROVIDERS['openid_connect']['APPS'][0]['secret'])"
    )
    result = _run(
        code,
        OIDC_PROVIDER_URL="https://idp.example",
        OIDC_CLIENT_ID="incidentdesk",
        OIDC_CLIENT_SECRET_FILE=str(secret),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "from-a-file"
