"""Edges of tool wrappers, record handles, large entries and concurrency, found in the sixth review."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import bitexact
from bitexact.sdk.errors import SdkArgumentError
from sdk.conftest import entries


def _tool_calls(run_id: str | None) -> list[dict[str, Any]]:
    return [e for e in entries(run_id) if e["kind"] == "tool_call"]


def test_record_tool_wraps_static_and_class_methods_and_callables_that_take_no_weak_reference() -> None:
    """record_tool raised TypeError (no weak reference to a staticmethod, a classmethod or a __slots__
    callable) where the tool was wrapped; an async staticmethod would have been taken for a sync one."""

    class Tools:
        @bitexact.record_tool
        @staticmethod
        def double(x: int) -> int:
            return x * 2

        @bitexact.record_tool(name="triple")
        @classmethod
        def triple(cls, x: int) -> int:
            return x * 3

        @bitexact.record_tool
        @staticmethod
        async def negate(x: int) -> int:
            await asyncio.sleep(0)
            return -x

    class Slotted:
        __slots__ = ()

        def __call__(self, x: int) -> int:
            return x + 1

    slotted = bitexact.record_tool(Slotted())
    with bitexact.run() as r:
        assert Tools.double(2) == 4 and Tools().double(3) == 6
        assert Tools.triple(2) == 6 and Tools().triple(1) == 3
        assert asyncio.run(Tools().negate(5)) == -5
        assert slotted(1) == 2
    calls = [(c["data"]["tool"], c["data"]["result"]) for c in _tool_calls(r.run_id)]
    assert calls == [("double", 4), ("double", 6), ("triple", 6), ("triple", 3), ("negate", -5), ("Slotted", 2)]


def test_record_refuses_a_provenance_its_kind_cannot_carry_naming_prov() -> None:
    """A prov the kind cannot carry was a gap named only 'EvidenceError' (small entry), or a journal
    kept for a repair that could never fold it and a run left unsealed (large entry), not a refusal."""
    with bitexact.run() as r:
        for prov in ("observed", "bogus", "", 5):
            with pytest.raises(SdkArgumentError, match="prov") as raised:
                r.record("marker", {"note": "x" * ((1 << 20) + 1)}, prov=prov)  # type: ignore[arg-type]
            assert raised.value.field == "prov"
            with pytest.raises(SdkArgumentError, match="prov"):
                r.record("marker", {"note": "small"}, prov=prov)  # type: ignore[arg-type]
        assert r.record("tool_call", {"tool": "t"}, prov="observed").written
        assert r.record("marker", {"note": "n"}, prov="asserted").written
    assert r.sealed and r.failures.gaps == []
    assert [e["prov"] for e in entries(r.run_id)] == ["observed", "observed", "asserted", "observed"]
