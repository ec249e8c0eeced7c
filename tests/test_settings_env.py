"""Environment readers name the variable when a value is wrong."""

import subprocess
import sys
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from incidentdesk.env import env_bool, env_choice, env_float, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parents[1]


def test_booleans_accept_the_usual_spellings(monkeypatch) -> None:
    for raw, expected in [("1", True), ("yes", True), ("off", False), ("", False)]:
        monkeypatch.setenv("DEBUG", raw)
        assert env_bool("DEBUG", not expected) is expected


@pytest.mark.parametrize(
    ("reader", "raw", "message"),
    [
        (lambda: env_bool("DEBUG", False), "maybe", "DEBUG must be a boolean"),
        (lambda: env_int("DEBUG", 1, minimum=0), "ten", "DEBUG must be an integer"),
        (lambda: env_int("DEBUG", 1, minimum=0), "-1", "DEBUG must be at least 0"),
        (lambda: env_float("DEBUG", 1, minimum=0), "fast", "DEBUG must be a number"),
        (lambda: env_float("DEBUG", 1, minimum=0), "nan", "DEBUG must be a finite number"),
        (lambda: env_float("DEBUG", 1, minimum=0), "-0.5", "DEBUG must be at least 0"),
        (lambda: env_choice("DEBUG", "local", ("local", "openai")), "gpu", "DEBUG must be one of"),
    ],
)
def test_bad_values_name_the_variable(monkeypatch, reader, raw: str, message: str) -> None:
    monkeypatch.setenv("DEBUG", raw)
    with pytest.raises(ImproperlyConfigured, match=message):
        reader()


def test_secrets_can_come_from_a_file(monkeypatch, tmp_path: Path) -> None:
    secret = tmp_path / "key"
    secret.write_text("s3cret\n")
    monkeypatch.setenv("SECRET_KEY_FILE", str(secret))
    assert env_str("SECRET_KEY") == "s3cret"
    monkeypatch.setenv("SECRET_KEY_FILE", str(tmp_path / "missing"))
    with pytest.raises(ImproperlyConfigured, match="SECRET_KEY_FILE: cannot read"):
        env_str("SECRET_KEY")


def test_lists_are_comma_separated(monkeypatch) -> None:
    monkeypatch.setenv("ALLOWED_HOSTS", "a.example, b.example,,")
    assert env_list("ALLOWED_HOSTS", []) == ["a.example", "b.example"]


@pytest.mark.parametrize(
    ("variable", "value", "message"),
    [
        ("REDIS_URL", "http://redis", "REDIS_URL must start with"),
        ("EMBEDDINGS", "openai", "EMBEDDINGS=openai needs OPENAI_API_KEY"),
        ("LOG_LEVEL", "loud", "LOG_LEVEL must be one of"),
    ],
)
def test_the_settings_module_refuses_bad_configuration(variable, value, message) -> None:
    code = "import django; django.setup()"
    env = {
        "PATH": "/usr/bin:/bin",
        "DJANGO_SETTINGS_MODULE": "incidentdesk.settings",
        variable: value,
    }
    result = subprocess.run(  # noqa: S603
        [sys.executable, "-c", code], env=env, cwd=BASE_DIR, capture_output=True, text=True
    )
    assert result.returncode != 0
    assert message in result.stderr


@pytest.mark.parametrize(("value", "threshold"), [(None, "5"), ("false", "None")])
def test_prepared_statements_can_be_switched_off(value: str | None, threshold: str) -> None:
    """For a proxy that pools by transaction, which cannot keep them."""
    code = (
        "from django.conf import settings; options = settings.DATABASES['default']['OPTIONS'];"
        "print(options['server_side_binding'], options.get('prepare_threshold'))"
    )
    env = {"PATH": "/usr/bin:/bin", "DJANGO_SETTINGS_MODULE": "incidentdesk.settings"}
    if value is not None:
        env["DATABASE_PREPARED_STATEMENTS"] = value
    result = subprocess.run(  # noqa: S603
        [sys.executable, "-c", code], env=env, cwd=BASE_DIR, capture_output=True, text=True
    )
    assert result.stdout.split() == ["True", threshold], result.stderr
