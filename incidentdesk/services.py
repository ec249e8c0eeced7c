"""Project-wide writes that belong to no app: API tokens for service accounts."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db import transaction
from rest_framework.authtoken.models import Token

from incidentdesk.errors import ValidationError


@transaction.atomic
def service_token_create(
    *, username: str, staff: bool = False, rotate: bool = False
) -> tuple[Token, bool]:
    """The API token of `username`, creating the account as a service account if missing.

    A new service account cannot log in with a password (only the token
    works). `rotate` replaces an existing token, so a leaked one stops
    working at once. Returns the token and whether the account is new.
    """
    username = username.strip()
    if not username:
        raise ValidationError("A username is required.", {"username": "required"})
    user, created = User.objects.get_or_create(username=username)
    if created:
        user.set_unusable_password()
        user.is_staff = staff
        user.full_clean()
        user.save()
    if rotate:
        Token.objects.filter(user=user).delete()
    token, _ = Token.objects.get_or_create(user=user)
    return token, created
