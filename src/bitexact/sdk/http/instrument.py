"""``bitexact.instrument()``: record every httpx and requests exchange made inside a run, process-wide.

Where a client cannot be handed to :func:`bitexact.wrap` (a library makes
its own), instrumenting patches the transports every client ends in:
``httpx.HTTPTransport.handle_request``, ``httpx.AsyncHTTPTransport
.handle_async_request`` and ``requests.adapters.HTTPAdapter.send``. Outside a
run they only forward; inside one, each exchange is recorded exactly once,
even through a client that is also wrapped. :meth:`Instrumentation.undo`
restores the originals.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from collections.abc import Callable

_lock = threading.Lock()
_active: Instrumentation | None = None


@dataclass
class Instrumentation:
    """The patches in place; ``undo()`` takes them out."""

    patched: list[tuple[Any, str, Any]] = field(default_factory=list)

    @property
    def active(self) -> bool:
        return bool(self.patched)

    def undo(self) -> None:
        global _active
        with _lock:
            for owner, name, original in reversed(self.patched):
                setattr(owner, name, original)
            self.patched.clear()
            if _active is self:
                _active = None


def _patch_httpx(into: Instrumentation) -> None:
    try:
        import httpx
    except ImportError:
        return
    from bitexact.sdk.http.httpx_transport import record_async, record_sync

    sync_original = httpx.HTTPTransport.handle_request
    async_original = httpx.AsyncHTTPTransport.handle_async_request

    def handle_request(self: httpx.HTTPTransport, request: httpx.Request) -> httpx.Response:
        return record_sync(None, request, lambda r: sync_original(self, r))

    async def handle_async_request(self: httpx.AsyncHTTPTransport, request: httpx.Request) -> httpx.Response:
        return await record_async(None, request, lambda r: async_original(self, r))

    httpx.HTTPTransport.handle_request = handle_request  # type: ignore[method-assign]
    httpx.AsyncHTTPTransport.handle_async_request = handle_async_request  # type: ignore[method-assign]
    into.patched += [(httpx.HTTPTransport, "handle_request", sync_original),
                     (httpx.AsyncHTTPTransport, "handle_async_request", async_original)]


def _patch_requests(into: Instrumentation) -> None:
    try:
        import requests.adapters
    except ImportError:
        return
    from bitexact.sdk.http.requests_adapter import record_requests

    original = requests.adapters.HTTPAdapter.send

    def send(self: requests.adapters.HTTPAdapter, request: requests.PreparedRequest,
             *args: Any, **kwargs: Any) -> requests.Response:
        return record_requests(None, request, lambda r: original(self, r, *args, **kwargs))

    # send forwards every option, positional (a direct adapter.send(req, True, 5)) or keyword (as
    # Session.send passes them); the stub's fixed signature cannot be matched by a forwarding function.
    requests.adapters.HTTPAdapter.send = cast("Callable[..., requests.Response]", send)  # type: ignore[method-assign]
    into.patched.append((requests.adapters.HTTPAdapter, "send", original))


def instrument() -> Instrumentation:
    """Patch httpx and requests (those installed) process-wide; idempotent. Returns the handle to undo it."""
    global _active
    with _lock:
        if _active is not None and _active.active:
            return _active
        instrumentation = Instrumentation()
        _patch_httpx(instrumentation)
        _patch_requests(instrumentation)
        _active = instrumentation
        return instrumentation
