"""instrument() beside another patcher of the same transports (session 32): a test double the agent installs
with ``unittest.mock.patch`` (as the ``responses`` library and ``respx`` do) over or under the patches.

Real loopback server, the SDK's own code unmocked: the double replaces requests' / httpx's transport, which is
the scenario itself.
"""

from __future__ import annotations

from typing import Any
from unittest import mock

import httpx
import requests
import requests.adapters

import bitexact
from sdk.conftest import kinds
from sdk.servers import LoopbackServer


def _fake_send(self: Any, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> requests.Response:
    """A requests test double's answer: 299, never reaching the network."""
    response = requests.Response()
    response.status_code, response._content, response.request, response.url = 299, b"mocked", request, request.url
    return response


def _fake_handle(self: Any, request: httpx.Request) -> httpx.Response:
    return httpx.Response(299, content=b"mocked", request=request)


def test_undo_leaves_a_test_double_patched_over_the_instrumentation_in_place(server: LoopbackServer) -> None:
    """undo() set the originals back unconditionally: a double the agent patched in after instrument() was
    taken away, and its mocked requests went to the real network (changed what the agent sends); once the
    double stopped, it put the instrumentation's patch back, which went on recording in every run."""
    instrumentation = bitexact.instrument()
    doubles = [mock.patch.object(requests.adapters.HTTPAdapter, "send", _fake_send),
               mock.patch.object(httpx.HTTPTransport, "handle_request", _fake_handle)]
    for double in doubles:
        double.start()
    try:
        instrumentation.undo()
        assert requests.get(server.base_url + "/json?via=requests").status_code == 299
        assert httpx.get(server.base_url + "/json?via=httpx").status_code == 299
        assert server.requests == [], "the agent's test double was taken away: its requests reached the network"
    finally:
        for double in reversed(doubles):
            double.stop()
    with bitexact.run() as r:  # the doubles put the patches back: they forward, recording nothing
        assert requests.get(server.base_url + "/json?after=undo").status_code == 200
        assert httpx.get(server.base_url + "/json?after=undo").status_code == 200
    assert kinds(r.run_id) == ["run_meta", "run_end"]
    assert len(server.requests) == 2


def test_instrument_again_records_after_a_double_under_it_put_the_original_back(server: LoopbackServer) -> None:
    """A double started before instrument() and stopped after it puts the real transport back over the patch:
    instrument() called again returned the same handle as in place, and nothing was recorded."""
    real = (vars(requests.adapters.HTTPAdapter)["send"], vars(httpx.HTTPTransport)["handle_request"])
    doubles = [mock.patch.object(requests.adapters.HTTPAdapter, "send", _fake_send),
               mock.patch.object(httpx.HTTPTransport, "handle_request", _fake_handle)]
    for double in doubles:
        double.start()
    instrumentation = bitexact.instrument()
    for double in reversed(doubles):
        double.stop()
    try:
        assert bitexact.instrument() is instrumentation
        with bitexact.run() as r:
            assert requests.get(server.base_url + "/json?via=requests").status_code == 200
            assert httpx.get(server.base_url + "/json?via=httpx").status_code == 200
    finally:
        instrumentation.undo()
    assert kinds(r.run_id) == ["run_meta", "http_call", "http_call", "run_end"]
    assert (vars(requests.adapters.HTTPAdapter)["send"], vars(httpx.HTTPTransport)["handle_request"]) == real
    with bitexact.run() as after:
        requests.get(server.base_url + "/json?after=undo")
        httpx.get(server.base_url + "/json?after=undo")
    assert kinds(after.run_id) == ["run_meta", "run_end"]
