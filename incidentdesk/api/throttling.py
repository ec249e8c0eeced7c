"""Throttles whose rates are read per request, not frozen at import.

DRF's own classes copy DEFAULT_THROTTLE_RATES into a class attribute when
they are imported, so a changed setting (tests, a reload) would be ignored.
"""

from __future__ import annotations

from typing import Any

from rest_framework.settings import api_settings
from rest_framework.throttling import AnonRateThrottle, ScopedRateThrottle, UserRateThrottle


def _rate(scope: str | None) -> str | None:
    rates: dict[str, Any] = api_settings.DEFAULT_THROTTLE_RATES
    return rates.get(scope) if scope else None


class AnonThrottle(AnonRateThrottle):
    """Anonymous callers, by IP address."""

    def get_rate(self) -> str | None:
        return _rate(self.scope)


class UserThrottle(UserRateThrottle):
    """Signed-in users and service tokens, per account."""

    def get_rate(self) -> str | None:
        return _rate(self.scope)


class ScopedThrottle(ScopedRateThrottle):
    """A view's own budget (`throttle_scope = "chat"`), on top of the user's."""

    def get_rate(self) -> str | None:
        return _rate(self.scope)
