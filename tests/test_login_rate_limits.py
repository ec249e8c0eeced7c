"""Wrong passwords slow the guesser down without locking the real user out.

The counters live in the shared Redis cache, so each test uses an account
name and addresses of its own.
"""

from __future__ import annotations

import re
import uuid

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.test import Client

from tests.factories import UserFactory

pytestmark = pytest.mark.django_db
TOO_MANY = b"Too many failed login attempts"


@pytest.fixture
def carol(db: None) -> User:
    """carol is on call; her name is new in every run, so are her counters."""
    return UserFactory(username=f"carol-{uuid.uuid4().hex[:8]}")


def _address() -> str:
    """A documentation address (TEST-NET-3) not used by any other test run."""
    return f"203.0.113.{uuid.uuid4().int % 250 + 1}"


def _login(client: Client, login: str, password: str, ip: str) -> bytes:
    response = client.post(
        "/accounts/login/", {"login": login, "password": password}, REMOTE_ADDR=ip
    )
    return b"" if response.status_code == 302 else response.content


def test_fifteen_wrong_passwords_elsewhere_do_not_lock_the_real_user_out(carol: User) -> None:
    attacker, carols_laptop = Client(), Client()
    attacker_ip = _address()
    pages = [_login(attacker, carol.username, f"guess {n}", attacker_ip) for n in range(15)]
    assert TOO_MANY not in pages[0]
    assert TOO_MANY in pages[-1]  # the guesser is slowed: 5 per 5 minutes from one address
    laptop_ip = f"198.51.100.{uuid.uuid4().int % 250 + 1}"
    assert _login(carols_laptop, carol.username, "correct horse battery", laptop_ip) == b""
    assert _login(attacker, carol.username, "correct horse battery", attacker_ip) != b""


def test_one_address_guessing_many_accounts_is_slowed_too(db: None) -> None:
    ip = _address()
    client = Client()
    names = [UserFactory(username=f"dave-{uuid.uuid4().hex[:8]}").username for _ in range(12)]
    pages = [_login(client, name, "wrong", ip) for name in names]
    assert TOO_MANY in pages[-1]  # 10 a minute per address, whatever the account


def test_a_password_reset_lifts_the_limit_from_the_users_address(carol: User) -> None:
    client, ip = Client(), _address()
    for n in range(6):
        _login(client, carol.username, f"guess {n}", ip)
    assert TOO_MANY in _login(client, carol.username, "correct horse battery", ip)
    client.post("/accounts/password/reset/", {"email": carol.email}, REMOTE_ADDR=ip)
    link = re.search(r"http://testserver(/accounts/password/reset/key/\S+/)", mail.outbox[-1].body)
    assert link
    form = client.get(link.group(1), follow=True, REMOTE_ADDR=ip)
    new = "a brand new passphrase"
    client.post(form.redirect_chain[-1][0], {"password1": new, "password2": new}, REMOTE_ADDR=ip)
    assert _login(Client(), carol.username, new, ip) == b""
