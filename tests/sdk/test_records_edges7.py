"""SDK records, tools, identity and handles: regressions found by the seventh review."""

from __future__ import annotations

import asyncio
import enum
import threading
from typing import Any

import pytest

import bitexact
from sdk.conftest import entries


def _tool_calls(run_id: str | None) -> list[dict[str, Any]]:
    return [e for e in entries(run_id) if e["kind"] == "tool_call"]


def test_a_generator_tool_that_raises_keeps_what_it_yielded_before_the_error() -> None:
    """A generator tool that raised after yielding was recorded with result null: the items the agent
    had already received (docs/sdk.md: result {"yielded": [...]}) were lost from the record."""
    @bitexact.record_tool
    def pages():  # type: ignore[no-untyped-def]
        yield {"page": 1}
        raise LookupError("page 2 missing")

    @bitexact.record_tool
    async def apages():  # type: ignore[no-untyped-def]
        yield {"page": 1}
        raise LookupError("page 2 missing")

    async def consume() -> list[Any]:
        return [item async for item in apages()]

    with bitexact.run() as r:
        with pytest.raises(LookupError):
            list(pages())
        with pytest.raises(LookupError):
            asyncio.run(consume())
    calls = _tool_calls(r.run_id)
    assert [c["data"]["status"] for c in calls] == ["error", "error"]
    assert [c["data"]["result"] for c in calls] == [{"yielded": [{"page": 1}]}] * 2
    assert [c["data"]["error"]["type"] for c in calls] == ["builtins.LookupError"] * 2


def test_an_identity_made_once_the_exit_has_begun_is_one_gap_naming_identity() -> None:
    """Once the run's exit had begun, an identity with a refused field declared two gaps (its entry, then
    its marker, the second naming `marker`), where one made after the end is one gap naming identity."""
    exiting, recorded = threading.Event(), threading.Event()

    class Stop(Exception):
        def __str__(self) -> str:  # read by the exit for its marker: the exit has begun
            exiting.set()
            recorded.wait(5)
            return "stop"

    late: list[Any] = []

    def other_thread(r: Any) -> None:
        exiting.wait(5)
        late.append(r.identity(principal="svc:a", on_behalf_of=7))
        late.append(r.identity())
        recorded.set()

    with pytest.raises(Stop):
        with bitexact.run() as r:
            thread = threading.Thread(target=other_thread, args=(r,))
            thread.start()
            raise Stop
    thread.join(5)
    assert [g.kind for g in r.failures.gaps] == ["identity", "identity"]
    assert [h.gap.kind for h in late] == ["identity", "identity"]


class Verdict(enum.Enum):
    PASS = "pass"
    HELD = "held"


def test_a_plain_enum_outcome_holding_a_vocabulary_word_is_that_word_not_unknown() -> None:
    """A check outcome given as a plain Enum member (`Verdict.PASS = "pass"`) was recorded as outcome
    `unknown` with `reported: "pass"`: the SDK records an Enum as its value, so the entry contradicted
    itself, where a `(str, Enum)` member of the same value is `pass`."""
    with bitexact.run() as r:
        assert r.check("kyc", lambda: Verdict.PASS) is Verdict.PASS
        r.policy_check("payout-limit", Verdict.HELD)
    checks = [e["data"] for e in entries(r.run_id) if e["kind"] == "marker"]
    assert [c["policy_check"] for c in checks] == [
        {"check": "kyc", "outcome": "pass", "decided": True},
        {"check": "payout-limit", "outcome": "held", "decided": True},
    ]
    assert [c["note"] for c in checks] == ["policy check kyc: pass", "policy check payout-limit: held"]


def test_a_check_that_returns_the_word_error_is_unknown_since_error_is_a_check_that_raised() -> None:
    """check_outcomes: "decided are the ones a check itself returns ... error is a check that raised;
    unknown is a result that said none of these". r.check recorded a check that *returned* "error" (it
    raised nothing) as outcome error, with no error block: a reader took it for a check that raised."""
    with bitexact.run() as r:
        assert r.check("kyc", lambda: "error") == "error"
        r.policy_check("payout-limit", "error")  # the agent reporting a check that errored: its word stands
    kyc, limit = (e["data"]["policy_check"] for e in entries(r.run_id) if e["kind"] == "marker")
    assert kyc == {"check": "kyc", "outcome": "unknown", "decided": False, "reported": "error"}
    assert limit == {"check": "payout-limit", "outcome": "error", "decided": False}
