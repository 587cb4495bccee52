"""``bitexact.instrument()``: record every httpx and requests exchange made inside a run, process-wide.

Where a client cannot be handed to :func:`bitexact.wrap` (a library makes
its own), instrumenting patches the transports every client ends in:
``httpx.HTTPTransport.handle_request``, ``httpx.AsyncHTTPTransport
.handle_async_request`` and ``requests.adapters.HTTPAdapter.send``. Outside a
run they only forward; inside one, each exchange is recorded exactly once,
even through a client that is also wrapped. :meth:`Instrumentation.undo`
restores the originals where its patches are still in place; a patch it
cannot take out (another patcher's is over it) forwards unrecorded from then on.
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
class _Patching:
    """One round of patches; once ``undone`` they forward to their originals, recording nothing."""

    undone: bool = False


@dataclass
class Instrumentation:
    """The patches in place (owner, attribute, the original, the patch); ``undo()`` takes them out."""

    patched: list[tuple[Any, str, Any, Any]] = field(default_factory=list)
    patching: _Patching = field(default_factory=_Patching)

    @property
    def active(self) -> bool:
        return bool(self.patched)

    def undo(self) -> None:
        """Put the originals back where this instrumentation's patches are still in place."""
        global _active
        with _lock:
            self._take_out()
            if _active is self:
                _active = None

    def _take_out(self) -> None:
        """Put each original back where its patch is still in place. Where another patcher's is over it (a
        test's ``mock.patch``, the ``responses`` library), that one is left: putting the original back would
        take the agent's patch away, its mocked requests reaching the network. That patcher puts this patch
        back when it stops, and from now on it only forwards. Called under ``_lock``."""
        self.patching.undone = True
        for owner, name, original, patch in reversed(self.patched):
            if vars(owner).get(name) is patch:
                setattr(owner, name, original)
        self.patched.clear()

    def _in_place(self) -> bool:
        return all(vars(owner).get(name) is patch for owner, name, _original, patch in self.patched)

    def _patch(self) -> None:
        """Patch what is installed, in a new round (a round taken out stays inert)."""
        self.patching = _Patching()
        _patch_httpx(self)
        _patch_requests(self)


def _patch_httpx(into: Instrumentation) -> None:
    try:
        import httpx
    except ImportError:
        return
    from bitexact.sdk.http.httpx_transport import record_async, record_sync

    sync_original = httpx.HTTPTransport.handle_request
    async_original = httpx.AsyncHTTPTransport.handle_async_request
    patching = into.patching

    def handle_request(self: httpx.HTTPTransport, request: httpx.Request) -> httpx.Response:
        if patching.undone:  # put back by another patcher after undo(): as unpatched
            return sync_original(self, request)
        return record_sync(None, request, lambda r: sync_original(self, r))

    async def handle_async_request(self: httpx.AsyncHTTPTransport, request: httpx.Request) -> httpx.Response:
        if patching.undone:
            return await async_original(self, request)
        return await record_async(None, request, lambda r: async_original(self, r))

    httpx.HTTPTransport.handle_request = handle_request  # type: ignore[method-assign]
    httpx.AsyncHTTPTransport.handle_async_request = handle_async_request  # type: ignore[method-assign]
    into.patched += [(httpx.HTTPTransport, "handle_request", sync_original, handle_request),
                     (httpx.AsyncHTTPTransport, "handle_async_request", async_original, handle_async_request)]


def _patch_requests(into: Instrumentation) -> None:
    try:
        import requests.adapters
    except ImportError:
        return
    from bitexact.sdk.http.requests_adapter import record_requests

    original = requests.adapters.HTTPAdapter.send
    patching = into.patching

    def send(self: requests.adapters.HTTPAdapter, request: requests.PreparedRequest,
             *args: Any, **kwargs: Any) -> requests.Response:
        if patching.undone:  # put back by another patcher after undo(): as unpatched
            return original(self, request, *args, **kwargs)
        return record_requests(None, request, lambda r: original(self, r, *args, **kwargs))

    # send forwards every option, positional (a direct adapter.send(req, True, 5)) or keyword (as
    # Session.send passes them); the stub's fixed signature cannot be matched by a forwarding function.
    requests.adapters.HTTPAdapter.send = cast("Callable[..., requests.Response]", send)  # type: ignore[method-assign]
    into.patched.append((requests.adapters.HTTPAdapter, "send", original, send))


def instrument() -> Instrumentation:
    """Patch httpx and requests (those installed) process-wide; idempotent. Returns the handle to undo it.

    Called again while instrumented, it returns the same handle; where another patcher took a patch away
    since (a ``mock.patch`` started before and stopped after, putting back what it found), it patches
    again over what is there now, so that what it says is recorded is.
    """
    global _active
    with _lock:
        if _active is not None and _active.active:
            if not _active._in_place():
                _active._take_out()
                _active._patch()
            return _active
        instrumentation = Instrumentation()
        instrumentation._patch()
        _active = instrumentation
        return instrumentation
