"""autobahn's debug lines under daphne, formatted only when one is written.

autobahn (daphne's websocket protocol) logs every frame it sends and every
chunk it reads at debug level, and builds the line's coloured fields first:
`hltype(self.sendData)`, `hlval(self.peer)`, `hlval(len(data))` run
`inspect` and `click.style` whether or not debug is on. Under ws_bench that
was about 6% of daphne's GIL-holding samples (py-spy), for lines nobody
reads. `format_debug_fields_lazily` swaps those two helpers, in the modules
that call them per frame, for ones that keep their arguments and format them
when the logger writes the line: the same text when debug is on.

`asgi.py` calls it; daphne imports these modules before the application.
Under another server it changes nothing.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pprint import pformat
from typing import Any

# The modules whose per-frame and per-connection debug lines use the helpers.
# `pformat`: each connection's debug lines pretty-print its ~30 settings and its
# transport (~1.7% of the event loop's samples under ws_bench, py-spy).
MODULES = ("autobahn.websocket.protocol", "autobahn.twisted.websocket")
HELPERS = ("hltype", "hlval", "pformat")


class _Formatted:
    """`helper(*args)`, run when the log line is formatted."""

    __slots__ = ("_args", "_helper")

    def __init__(self, helper: Callable[..., str], args: tuple[Any, ...]) -> None:
        self._helper, self._args = helper, args

    def __str__(self) -> str:
        return self._helper(*self._args)

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)


def _lazy(helper: Callable[..., str]) -> Callable[..., _Formatted]:
    def deferred(*args: Any) -> _Formatted:
        return _Formatted(helper, args)

    deferred.formats_lazily = True  # type: ignore[attr-defined]
    return deferred


def format_debug_fields_lazily() -> bool:
    """True when daphne's autobahn is loaded in this process and now defers them."""
    loaded = [sys.modules[name] for name in MODULES if name in sys.modules]
    for module in loaded:
        for name in HELPERS:
            helper = getattr(module, name, None)
            if helper is not None and not getattr(helper, "formats_lazily", False):
                setattr(module, name, _lazy(helper))
        timings = getattr(module, "Timings", None)
        if timings is not None:  # its __str__ returns pformat's text, which must be a str
            timings.__str__ = _timings_text
    return bool(loaded)


def _timings_text(timings: Any) -> str:
    return pformat(timings._timings)
