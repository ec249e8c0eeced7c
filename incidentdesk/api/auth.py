"""Who is calling, typed for the services."""

from __future__ import annotations

from typing import cast

from django.contrib.auth.models import User
from rest_framework.request import Request


def current_user(request: Request) -> User:
    """The signed-in user; every view that asks is behind IsAuthenticated (the default)."""
    return cast(User, request.user)
