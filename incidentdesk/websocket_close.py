"""The close codes RFC 6455 gives a server, sent by daphne as the application asks.

An application's `websocket.close` code goes from daphne to autobahn's
`sendClose`, which follows the browser's `WebSocket.close()` rule: 1000 or
3000-4999, any other code raises. A consumer closing a binary frame with
1003 therefore raised inside its own `close()`; daphne logged "Exception
inside application" with a traceback and closed with 1011 instead, and the
consumer's `disconnect()` never ran. RFC 6455 (7.4.1) lets an endpoint send
1003 (data it cannot accept), 1007 (inconsistent data), 1008 (policy),
1009 (too big) and 1011, and the IANA registry adds 1012-1014. autobahn's
`sendCloseFrame`, which daphne already calls for its own 1011, sends any of
them; `send_protocol_close_codes` routes those codes there.

`asgi.py` calls it; it changes daphne only in a process daphne runs (daphne
imports its protocol module before the application). Other ASGI servers send
these codes as they are. tests/faults/test_hostile_frames.py checks
the codes a client of a real daphne receives, so a daphne or autobahn
release that changes these methods fails there, not in production.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

logger = logging.getLogger(__name__)

# RFC 6455 7.4.1 and the IANA registry: the codes a server may put in a close frame.
# 1000 and 3000-4999 already pass; 1004-1006 and 1015 must never be sent.
SERVER_CLOSE_CODES = frozenset({1001, 1002, 1003, 1007, 1008, 1009, 1011, 1012, 1013, 1014})


def send_protocol_close_codes() -> bool:
    """Let daphne send SERVER_CLOSE_CODES; True when daphne runs this process and
    now sends them (False under another server, or a daphne without these methods)."""
    module = sys.modules.get("daphne.ws_protocol")
    if module is None:
        return False
    protocol: Any = module.WebSocketProtocol
    if getattr(protocol.serverClose, "sends_protocol_codes", False):
        return True
    if not hasattr(protocol, "sendCloseFrame"):
        logger.warning("daphne's protocol has no sendCloseFrame: 1003, 1007, 1009 become 1011")
        return False
    application_close = protocol.serverClose

    def serverClose(self: Any, code: int | None = None) -> None:
        if code in SERVER_CLOSE_CODES:
            self.sendCloseFrame(code=code)
        else:
            application_close(self, code)

    serverClose.sends_protocol_codes = True  # type: ignore[attr-defined]
    protocol.serverClose = serverClose
    return True
