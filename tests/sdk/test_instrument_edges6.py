"""HTTP capture, instrument() and wrap() (the sixth review): regression tests, each for a bug its docstring
names (real loopback servers, no mocks of the SDK): which run an exchange lands in, and a wrapped or
instrumented client behaving otherwise than the same client unwrapped."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
import requests

import bitexact
from sdk.conftest import entries
from sdk.servers import LoopbackServer


def _queries(run_id: str | None) -> list[str]:
    return [e["data"]["request"]["query"] for e in entries(run_id) if e["kind"] == "http_call"]


@pytest.mark.parametrize("bad", ["run-1", 7, object()])
@pytest.mark.parametrize("client_kind", ["httpx", "requests"])
def test_wrap_refuses_a_run_that_is_not_one_where_the_client_is_wrapped(bad: Any, client_kind: str) -> None:
    """wrap(client, run=<not a Run>) was accepted, and every request then raised AttributeError into the agent."""
    client: Any = httpx.Client() if client_kind == "httpx" else requests.Session()
    with pytest.raises(bitexact.sdk.SdkArgumentError) as caught:
        bitexact.wrap(client, run=bad)
    assert caught.value.field == "run"
    client.close()


def test_wrap_refuses_the_run_scope_in_place_of_its_run(server: LoopbackServer) -> None:
    """wrap(client, run=bitexact.run()) (the scope, not the run it opens) broke every request of the client."""
    scope = bitexact.run()
    with pytest.raises(bitexact.sdk.SdkArgumentError) as caught:
        bitexact.wrap(requests.Session(), run=scope)
    assert caught.value.field == "run" and "RunScope" in str(caught.value)
