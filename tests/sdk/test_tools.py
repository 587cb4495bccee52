"""Tool calls: @record_tool (observed) on sync and async functions, record_tool_call (asserted), custody."""

from __future__ import annotations

import asyncio
import dataclasses
from typing import Any

import pytest

import bitexact
from bitexact.sdk import CustodyHintError, SdkArgumentError
from sdk.conftest import entries


def test_a_wrapped_tool_is_an_observed_tool_call_with_its_arguments_and_result() -> None:
    @bitexact.record_tool
    def lookup_policy(policy: str, *, region: str = "eu") -> dict[str, Any]:
        return {"policy": policy, "excess_eur": 350}

    with bitexact.run() as r:
        assert lookup_policy("HX-20931", region="uk") == {"policy": "HX-20931", "excess_eur": 350}
    entry = entries(r.run_id)[1]
    assert entry["kind"] == "tool_call" and entry["prov"] == "observed"
    assert entry["data"] == {"tool": "lookup_policy", "args": ["HX-20931"], "kwargs": {"region": "uk"},
                             "result": {"policy": "HX-20931", "excess_eur": 350}, "status": "ok"}
    assert "ctx" not in entry


def test_an_exception_is_recorded_with_its_error_and_re_raised_unchanged() -> None:
    class QuotaExceeded(Exception):
        pass

    @bitexact.record_tool(name="kyc")
    def kyc_lookup(name: str) -> str:
        raise QuotaExceeded("daily quota reached")

    with bitexact.run() as r:
        with pytest.raises(QuotaExceeded, match="daily quota reached") as caught:
            kyc_lookup("ann")
    assert type(caught.value) is QuotaExceeded
    data = entries(r.run_id)[1]["data"]
    assert data["status"] == "error" and data["result"] is None
    assert data["error"]["message"] == "daily quota reached"
    assert data["error"]["type"].endswith("QuotaExceeded")


def test_async_tools_are_recorded_and_entries_inside_a_tool_carry_its_ctx() -> None:
    @bitexact.record_tool
    async def fetch(n: int) -> int:
        run = bitexact.current_run()
        assert run is not None
        run.marker(f"fetching {n}")
        await asyncio.sleep(0)
        return n + 1

    @bitexact.record_tool
    async def plan() -> int:
        return await fetch(1)

    async def agent() -> str | None:
        async with bitexact.run() as r:
            assert await plan() == 2
        return r.run_id

    written = entries(asyncio.run(agent()))[1:-1]
    assert [(e["kind"], e.get("ctx")) for e in written] == [
        ("marker", "fetch"), ("tool_call", "plan"), ("tool_call", None)]
    assert written[1]["data"]["tool"] == "fetch" and written[2]["data"]["tool"] == "plan"


def test_outside_a_run_a_wrapped_tool_only_calls() -> None:
    @bitexact.record_tool
    def double(x: int) -> int:
        return 2 * x

    assert double(21) == 42


def test_record_tool_call_is_asserted_and_converts_what_json_cannot_hold() -> None:
    @dataclasses.dataclass
    class Quote:
        amount: int
        raw: bytes

    with bitexact.run() as r:
        r.record_tool_call("pricing", args=[2**60], kwargs={"at": 1.5}, result=Quote(3, b"\x00\xff"))
        r.record_tool_call("pricing", error=TimeoutError("upstream"))
    first, second = (e["data"] for e in entries(r.run_id)[1:3])
    assert entries(r.run_id)[1]["prov"] == "asserted"
    assert first == {"tool": "pricing", "args": [str(2**60)], "kwargs": {"at": 1.5},
                     "result": {"amount": 3, "raw": {"b64": "AP8="}}, "status": "ok"}
    assert second["status"] == "error" and second["error"]["message"] == "upstream"


def test_record_tool_call_names_a_bad_argument() -> None:
    with bitexact.run() as r:
        for kwargs, field in (({"tool": ""}, "tool"), ({"tool": "t", "args": "abc"}, "args"),
                              ({"tool": "t", "kwargs": [1]}, "kwargs")):
            with pytest.raises(SdkArgumentError) as caught:
                r.record_tool_call(**kwargs)
            assert caught.value.field == field


def test_a_custody_that_is_not_one_is_refused_where_the_tool_is_wrapped() -> None:
    with pytest.raises(CustodyHintError) as caught:
        bitexact.record_tool(custody={"result": "keep"})
    assert caught.value.field == "custody.result"
    with pytest.raises(CustodyHintError):
        bitexact.record_tool(custody=["result"])  # type: ignore[arg-type]


def test_a_second_wrapping_with_another_custody_is_refused_at_wrap_time() -> None:
    def kyc_lookup(name: str) -> str:
        return "match"

    first = bitexact.record_tool(custody={"result": "hash-only"})(kyc_lookup)
    with pytest.raises(CustodyHintError, match="already wrapped"):
        bitexact.record_tool(custody={"result": "scrub"})(kyc_lookup)
    with pytest.raises(CustodyHintError, match="already wrapped"):
        bitexact.record_tool(custody={"args": "scrub"})(first)
    assert bitexact.record_tool(custody={"result": "hash-only"})(first) is first  # the same custody: no double


def test_record_with_a_custody_that_is_not_one_withholds_the_entry_and_declares_a_gap() -> None:
    with bitexact.run() as r:
        handle = r.record("tool_call", {"tool": "kyc", "result": "secret-value"}, custody={"result": "encrypt"})
        r.record_tool_call("kyc", result="secret-value", custody={"result": "Hash-only"})
    assert dict(handle) == {} and handle.gap is not None and handle.gap.cause == "invalid_argument"
    written = entries(r.run_id)
    assert [e["kind"] for e in written] == ["run_meta", "marker", "marker", "run_end"]
    assert all(e["data"]["gap"]["cause"] == "invalid_argument" for e in written[1:3])
    assert "secret-value" not in str([e["data"] for e in written])
    with bitexact.run(strict=True) as strict:
        with pytest.raises(CustodyHintError):
            strict.record("tool_call", {"tool": "kyc"}, custody={"result": "encrypt"})
