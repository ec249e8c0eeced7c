"""JIRA_URL switches Jira on and then requires the rest of its settings."""

from __future__ import annotations

import subprocess
import sys

import pytest
from django.conf import settings

JIRA = {"JIRA_USER": "bot@example.com", "JIRA_TOKEN": "t0ken", "JIRA_PROJECT": "OPS"}


def start_django(**variables: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "incidentdesk.settings", **variables}
    return subprocess.run(
        [sys.executable, "-c", "import django; django.setup()"],
        env=env,
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
    )


@pytest.mark.parametrize(
    ("variables", "message"),
    [
        (
            {"JIRA_URL": "https://acme.atlassian.net"},
            "JIRA_URL needs JIRA_USER, JIRA_TOKEN, JIRA_PROJECT",
        ),
        (
            {"JIRA_URL": "https://acme.atlassian.net", **JIRA, "JIRA_PROJECT": ""},
            "JIRA_URL needs JIRA_PROJECT",
        ),
        ({"JIRA_URL": "acme.atlassian.net", **JIRA}, "JIRA_URL must be an http(s) URL"),
        ({"INTAKE_MAX_IMAGE_BYTES": "lots"}, "INTAKE_MAX_IMAGE_BYTES must be an integer"),
    ],
)
def test_bad_intake_settings_stop_start_up_naming_the_variable(
    variables: dict[str, str], message: str
) -> None:
    result = start_django(**variables)
    assert result.returncode != 0
    assert message in result.stderr


def test_jira_starts_with_all_four_variables() -> None:
    assert start_django(JIRA_URL="https://acme.atlassian.net/", **JIRA).returncode == 0
