"""allauth adapter: sign-up is a deployment choice, off by default; failed logins are
counted per account and client IP."""

from typing import Any

from allauth.account.adapter import DefaultAccountAdapter
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.http import HttpRequest


class AccountAdapter(DefaultAccountAdapter):  # type: ignore[misc]  # allauth is untyped
    def is_open_for_signup(self, request: HttpRequest) -> bool:
        return bool(settings.ACCOUNT_ALLOW_SIGNUPS)

    def _get_login_attempts_cache_key(self, request: HttpRequest, **credentials: Any) -> str:
        """The `key` of ACCOUNT_RATE_LIMITS["login_failed"]: the account *and* the client IP.

        allauth keys it by account alone, so anyone anywhere who typed
        alice's name 15 times with wrong passwords locked alice out too. Per
        account and IP, an attacker is slowed (and by the per-IP limit across
        accounts) while alice, from her own address, still signs in. A
        successful password reset clears the bucket of the IP it came from.
        """
        account_key = super()._get_login_attempts_cache_key(request, **credentials)
        return f"{account_key}:{self.get_client_ip(request)}"

    def set_password(self, user: AbstractBaseUser, password: str) -> None:
        """Also lift the failed-login limit from this request's address, for every name
        the user signs in with: allauth clears it only for EmailAddress rows, which
        accounts created by staff do not have, and never for the username."""
        super().set_password(user, password)
        if self.request is None:
            return
        for login in {user.get_username(), getattr(user, "email", "")} - {""}:
            self._delete_login_attempts_cached_email(self.request, email=login)
