"""allauth adapter for OpenID Connect single sign-on (only loaded when it is on)."""

from allauth.socialaccount.adapter import DefaultSocialAccountAdapter
from django.http import HttpRequest


class SocialAccountAdapter(DefaultSocialAccountAdapter):  # type: ignore[misc]  # allauth is untyped
    def is_open_for_signup(self, request: HttpRequest, sociallogin: object) -> bool:
        """The identity provider decides who may log in, so its users get accounts.

        Password sign-up stays closed (ACCOUNT_ALLOW_SIGNUPS); this only lets
        people the provider vouches for in on their first visit.
        """
        return True
