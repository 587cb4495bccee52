"""HTTP capture: wrap a client, or instrument httpx and requests process-wide.

``wrap(client)`` takes an ``httpx.Client``, ``httpx.AsyncClient`` or
``requests.Session`` and returns it recording; ``instrument()`` patches the
transports every client of those libraries ends in.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from bitexact.sdk.errors import SdkArgumentError
from bitexact.sdk.http.instrument import Instrumentation, instrument

if TYPE_CHECKING:
    from bitexact.sdk.run import Run

C = TypeVar("C")


def wrap(client: C, *, run: Run | None = None) -> C:
    """Make ``client`` record each exchange as an ``http_call``, into ``run`` or the run current at the call.

    Returns the same client. Outside a run it only forwards; once ``run`` has ended, too (never into
    another run, even under :func:`instrument`). A client wrapped already is bound to ``run`` instead.
    """
    from bitexact.sdk.run import Run

    if run is not None and not isinstance(run, Run):
        # Refused here: taken as given, every request of the client would fail on it, in the agent's call.
        raise SdkArgumentError(
            f"bitexact.wrap's run is the Run that `with bitexact.run() as r` gives, not {type(run).__name__}",
            field="run")
    try:
        import httpx
    except ImportError:  # pragma: no cover - httpx is a dependency
        httpx = None  # type: ignore[assignment]
    if httpx is not None and isinstance(client, (httpx.Client, httpx.AsyncClient)):
        from bitexact.sdk.http.httpx_transport import wrap_httpx

        wrap_httpx(client, run)
        return client
    try:
        import requests
    except ImportError:
        requests = None  # type: ignore[assignment]
    if requests is not None and isinstance(client, requests.Session):
        from bitexact.sdk.http.requests_adapter import wrap_session

        wrap_session(client, run)
        return client
    # Most often an API's own client (an OpenAI or Anthropic SDK object) is handed here: say what records it.
    raise SdkArgumentError(
        f"bitexact.wrap takes an httpx.Client, httpx.AsyncClient or requests.Session, not {type(client).__name__}:"
        " wrap the client it sends through instead (a client library built on httpx takes one, as"
        " http_client=bitexact.wrap(httpx.Client())), or call bitexact.instrument() to record every httpx and"
        " requests exchange made inside a run",
        field="client")


__all__ = ["Instrumentation", "instrument", "wrap"]
