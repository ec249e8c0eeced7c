"""The chat websocket accepts only pages of this very site: same scheme, host and port.

Channels' AllowedHostsOriginValidator compares the Origin's host with
ALLOWED_HOSTS and ignores scheme and port, so a page served by anything else
on the same host (`http://127.0.0.1:9999`) could open a socket with the
user's cookies. Here the Origin must equal the origin the socket was opened
on (from its Host header), or be listed in CSRF_TRUSTED_ORIGINS, as Django's
CSRF check does for forms.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host

Origin = tuple[str, str, int]
_DEFAULT_PORTS = {"http": 80, "https": 443}


def parse_origin(value: str) -> Origin | None:
    """(scheme, host, port) with the default port filled in; None when malformed."""
    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:  # a bad port, an unclosed IPv6 bracket
        return None
    if parts.scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    if parts.path not in {"", "/"} or parts.query or parts.username:
        return None
    return parts.scheme, parts.hostname, port or _DEFAULT_PORTS[parts.scheme]


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    values = [value for key, value in scope.get("headers", []) if key == name]
    return values[0].decode("latin1") if len(values) == 1 else None  # two: ambiguous


def _scheme(scope: dict[str, Any]) -> str:
    """http or https, as the browser saw it (a TLS proxy says so per SECURE_PROXY_SSL_HEADER)."""
    proxy = settings.SECURE_PROXY_SSL_HEADER
    if proxy:
        name, secure_value = proxy
        header = name.removeprefix("HTTP_").lower().replace("_", "-").encode()
        if _header(scope, header) == secure_value:
            return "https"
    return "https" if scope.get("scheme") == "wss" else "http"


def websocket_origin_allowed(scope: dict[str, Any]) -> bool:
    """True when the handshake's Origin is this site's own origin, or a trusted one."""
    origin = parse_origin(_header(scope, b"origin") or "")
    if origin is None:
        return False
    trusted = {parse_origin(value) for value in settings.CSRF_TRUSTED_ORIGINS}
    if origin in trusted:
        return True
    host = _header(scope, b"host")
    if host is None:
        return False
    domain, _ = split_domain_port(host)
    if not domain or not validate_host(domain, settings.ALLOWED_HOSTS):
        return False
    return origin == parse_origin(f"{_scheme(scope)}://{host}")


class SameOriginValidator:
    """ASGI middleware: deny a websocket handshake whose Origin is not this site."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if websocket_origin_allowed(scope):
            return await self.application(scope, receive, send)
        return await WebsocketDenier()(scope, receive, send)
