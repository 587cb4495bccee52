"""SDK capture paths: regression tests, each for a bug the third review found (its docstring says which)."""

from __future__ import annotations

import asyncio
import copy
import datetime
import gzip
import pickle
import socket
from typing import Any

import httpx
import orjson
import pytest
import requests

import bitexact
from bitexact.context import ContextFormatError, format_context, parse_context
from bitexact.sdk.errors import SdkArgumentError
from sdk.conftest import entries


def _of_kind(run_id: str | None, kind: str) -> list[dict[str, Any]]:
    return [e for e in entries(run_id) if e["kind"] == kind]


# -- 1. requests: a client error's message quotes the URL by the URL rule, fragment or not ----------


def test_a_requests_error_message_never_keeps_a_credential_of_a_url_with_a_fragment() -> None:
    """urllib3's message quotes the path and query it sent ("Max retries exceeded with url: /v1/chat?
    token=s3cr3t"); the URL sent has no fragment, so neither the whole URL nor url[slash:] (which keeps
    "#top") is in the message, and the credential is recorded as sent."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))  # bound, never listening: every connection is refused
    try:
        port = listener.getsockname()[1]
        with bitexact.run() as r:
            with pytest.raises(requests.ConnectionError) as caught:
                bitexact.wrap(requests.Session()).get(f"http://127.0.0.1:{port}/v1/chat?token=s3cr3t#top")
    finally:
        listener.close()
    assert "s3cr3t" in str(caught.value)  # the agent's own exception is untouched
    (call,) = _of_kind(r.run_id, "http_call")
    assert "s3cr3t" not in call["data"]["request"]["url"]
    assert "s3cr3t" not in call["data"]["error"]["message"], call["data"]["error"]["message"]


# -- 2. httpx: a response its transport returned already read, with a content-encoding ---------------


def test_an_already_read_httpx_response_with_a_content_encoding_is_recorded_as_received() -> None:
    """httpx decodes the body when the transport builds Response(content=...): response.content is the
    JSON, but _already_read records it with decoded=False, so the decoded bytes are recorded as
    base64 claiming to be gzip, and the model the reply names is lost."""
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=gzip.compress(b'{"model": "m-1"}'),
                              headers={"content-encoding": "gzip", "content-type": "application/json"})

    with bitexact.run() as r, bitexact.wrap(httpx.Client(transport=httpx.MockTransport(handler))) as client:
        assert client.get("http://api.example.test/v1/chat").text == '{"model": "m-1"}'
    (call,) = _of_kind(r.run_id, "http_call")
    response = call["data"]["response"]
    assert response.get("text") == '{"model": "m-1"}', response
    assert call["data"]["model"] == "m-1"


# -- 3. record_tool_call: a Fragment is taken as arguments, unchecked -----------------------------------


@pytest.mark.parametrize(("kwargs", "field"), [
    ({"args": orjson.Fragment(b'{"x": 1}')}, "args"),
    ({"kwargs": orjson.Fragment(b"[3]")}, "kwargs"),
])
def test_record_tool_call_refuses_a_fragment_that_is_not_the_arguments_shape(kwargs: dict[str, Any],
                                                                            field: str) -> None:
    """tool_call_data skips the args/kwargs checks for any orjson.Fragment (meant for _as_called's), so
    an agent's Fragment is recorded as args {"x": 1} (an object) or kwargs [3] (a list)."""
    with bitexact.run() as r:
        try:
            r.record_tool_call("t", **kwargs)
        except SdkArgumentError as exc:
            assert exc.field == field
            return
    (call,) = _of_kind(r.run_id, "tool_call")
    assert isinstance(call["data"]["args"], list) and isinstance(call["data"]["kwargs"], dict), call["data"]


# -- 4. a generator tool whose cleanup raises when it is closed --------------------------------------


def test_a_generator_tool_whose_cleanup_raises_on_close_is_recorded() -> None:
    """The wrapper closes the tool, and inner.close() raises before _record_tool is reached: the agent
    gets the ValueError (as unwrapped), but no tool_call and no gap is recorded."""
    @bitexact.record_tool
    def pages():
        try:
            yield 1
            yield 2
        finally:
            raise ValueError("cleanup failed")

    with bitexact.run() as r:
        pager = pages()
        assert next(pager) == 1
        with pytest.raises(ValueError, match="cleanup failed"):
            pager.close()
    calls = _of_kind(r.run_id, "tool_call")
    assert len(calls) == 1, f"the call is lost: {calls}, gaps {r.failures.gaps}"
    assert "cleanup failed" in str(calls[0]["data"])


def test_an_async_generator_tool_whose_cleanup_raises_on_aclose_is_recorded() -> None:
    @bitexact.record_tool
    async def pages():
        try:
            yield 1
            yield 2
        finally:
            raise ValueError("cleanup failed")

    async def agent() -> str | None:
        async with bitexact.run() as r:
            pager = pages()
            assert await pager.__anext__() == 1
            with pytest.raises(ValueError, match="cleanup failed"):
                await pager.aclose()
        return r.run_id

    run_id = asyncio.run(agent())
    calls = _of_kind(run_id, "tool_call")
    assert len(calls) == 1, f"the call is lost: {calls}"
    assert "cleanup failed" in str(calls[0]["data"])


# -- 5. a tool's arguments that cannot be written when it is called ----------------------------------


def test_arguments_that_could_not_be_written_as_called_are_not_recorded_as_the_tool_left_them() -> None:
    """_as_called falls back to the live objects when the call's arguments cannot be written (two keys
    that are one key as text); the tool then changes them and the entry records the changed dict as
    what it was called with, with no gap ("the record declares that", tools._as_called)."""
    @bitexact.record_tool
    def dedupe(table: dict[Any, str]) -> int:
        table.pop(1)
        return len(table)

    with bitexact.run() as r:
        assert dedupe({1: "a", "1": "b"}) == 1
    calls = _of_kind(r.run_id, "tool_call")
    recorded = calls[0]["data"]["args"] if calls else None
    assert recorded != [{"1": "b"}], "recorded as called with {'1': 'b'}: it was called with {1: 'a', '1': 'b'}"


# -- 6. a parent context at the clock's limit ---------------------------------------------------------


def test_a_run_under_the_largest_valid_parent_context_still_records() -> None:
    """contexts vector row "the largest clock every language holds exactly": the context is valid, but
    HybridClock.observe raises (no reading after it) inside Run.start, so the run does not start and
    nothing at all is recorded; an invalid context only costs a declared gap."""
    parent = "bxc.abc.9007199254740991.9007199254740991"
    assert parse_context(parent).hlc == (9007199254740991, 9007199254740991)
    with bitexact.run(parent_context=parent) as r:
        r.marker("inside")
    assert r.run_id is not None, f"nothing recorded: {r.failures.gaps}"
    markers = _of_kind(r.run_id, "marker")
    assert [e["data"]["note"] for e in markers if "gap" not in e["data"]] == ["inside"]
    # No reading can follow the parent's clock: that is declared, beside a run that records.
    assert [g.fields for g in r.failures.gaps] == [{"hlc": r.failures.gaps[0].fields["hlc"]}]
    meta = _of_kind(r.run_id, "run_meta")[0]["data"]
    assert meta["causal"]["caused_by"] == ["abc"] and meta["causal"]["parent"] == parent


# -- 7. format_context: a clock that is not a pair ---------------------------------------------------


@pytest.mark.parametrize("hlc", [5, None, {0: 2**60, 1: -1}], ids=["int", "none", "dict"])
def test_format_context_refuses_a_clock_that_is_not_a_pair_naming_hlc(hlc: Any) -> None:
    """len(hlc) raises TypeError for 5 or None; for a dict the keys are checked but its values are
    formatted, giving a context parse_context refuses ("refuses an id or clock no reader would parse
    back")."""
    try:
        text = format_context("abc", hlc)
    except ContextFormatError as exc:
        assert exc.field is not None and exc.field.startswith("hlc")
        return
    parse_context(text)


# -- 8. nondeterminism: a datetime copied or pickled while the stand-in is in place -------------------


def test_a_datetime_copied_or_pickled_during_a_capturing_run_keeps_its_fold() -> None:
    """_reduce_datetime uses value.__reduce__() (protocol 2 state), which has no fold bit: during a
    capturing run copy.copy, copy.deepcopy and pickle of a datetime with fold=1 give fold=0 (for an
    aware datetime in a repeated hour, another instant)."""
    ambiguous = datetime.datetime(2021, 11, 7, 1, 30, fold=1)
    with bitexact.run(capture_nondeterminism=True):
        copied = copy.copy(ambiguous)
        deep = copy.deepcopy(ambiguous)
        unpickled = pickle.loads(pickle.dumps(ambiguous))
    assert (copied.fold, deep.fold, unpickled.fold) == (1, 1, 1)
