"""ASGI entry point: HTTP through Django, websockets through Channels.

Wired as Channels' sample project does: Django's ASGI app is built first so
the app registry is ready before consumers import models. Django's handler
is ours (`asgi_http`: it closes a response whose client left while the view
ran), and under daphne the RFC 6455 close codes are sent as asked
(`websocket_close`), request bodies are left to Django (`asgi_http`) and
autobahn's per-frame debug fields are built only when written (`websocket_logging`).
"""

import os

from incidentdesk import embedded

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "incidentdesk.settings")
embedded.ensure_services()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from incidentdesk.asgi_http import (  # noqa: E402
    get_asgi_application,
    leave_request_bodies_to_django,
)
from incidentdesk.websocket_close import send_protocol_close_codes  # noqa: E402
from incidentdesk.websocket_logging import format_debug_fields_lazily  # noqa: E402

django_asgi_app = get_asgi_application()
send_protocol_close_codes()
format_debug_fields_lazily()
leave_request_bodies_to_django()

from copilot.routing import websocket_urlpatterns  # noqa: E402
from incidentdesk.unavailable import UnavailableWebsocket  # noqa: E402
from incidentdesk.websocket_origin import SameOriginValidator  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        # Origin compared by scheme, host and port (not only the host); a lost
        # database or Redis is an `error` event and a clean close, not a 1011.
        "websocket": UnavailableWebsocket(
            SameOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns)))
        ),
    }
)
