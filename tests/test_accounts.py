"""Signing in with a username or an email, signing out, and resetting a password."""

from __future__ import annotations

import re

import pytest
from django.core import mail
from django.test import Client

pytestmark = pytest.mark.django_db


def test_alice_signs_in_with_her_email_too(client: Client, alice) -> None:
    response = client.post(
        "/accounts/login/", {"login": "alice@example.com", "password": "correct horse battery"}
    )
    assert response.status_code == 302
    assert client.get("/").status_code == 200


def test_the_sign_in_page_has_labelled_fields_and_no_sign_up_link(client: Client) -> None:
    page = client.get("/accounts/login/").content.decode()
    assert '<label for="id_login">Username or email</label>' in page
    assert '<label for="id_password">Password</label>' in page
    assert "/accounts/signup/" not in page


def test_signing_out_is_a_post_and_ends_the_session(client: Client, alice) -> None:
    client.force_login(alice)
    assert client.get("/accounts/logout/").status_code == 200  # a confirmation page
    assert client.get("/").status_code == 200
    client.post("/accounts/logout/")
    assert client.get("/").status_code == 302


def test_a_forgotten_password_is_reset_through_the_mailed_link(client: Client, alice) -> None:
    client.post("/accounts/password/reset/", {"email": "alice@example.com"})
    assert len(mail.outbox) == 1
    link = re.search(r"http://testserver(/accounts/password/reset/key/\S+/)", mail.outbox[0].body)
    assert link, mail.outbox[0].body
    form = client.get(link.group(1), follow=True)
    new = "a brand new passphrase"
    client.post(form.redirect_chain[-1][0], {"password1": new, "password2": new})
    assert client.login(username="alice", password=new)
