"""Defects an audit of the SDK found, each fixed:

* A run whose parent context is at the clock's limit: `r.causal_context()` / `r.child_env()` raised into the agent's
  code (parent `…9007199254740991.9007199254740990`), or handed on a context taken from the wall clock, earlier than
  its parent's (parent at both limits); a strict run under such a parent did not raise.
* Data nested past 128 levels gave a gap, a log line and a strict error that said only `CaptureInputError`.
* A record made after the run ended was logged as `(marker #None)`.
"""

from __future__ import annotations

import logging
import os
from typing import Any

import pytest

import bitexact
from bitexact.context import ContextFormatError, parse_context
from bitexact.sdk.errors import RecordingError
from sdk.conftest import entries

LIMIT = 2**53 - 1
BOTH_LIMITS = f"bxc.abc.{LIMIT}.{LIMIT}"
NEAR_LIMIT = f"bxc.abc.{LIMIT}.{LIMIT - 1}"


def _markers(run_id: str | None) -> list[dict[str, Any]]:
    return [e["data"] for e in entries(run_id) if e["kind"] == "marker"]


@pytest.mark.parametrize("parent", [NEAR_LIMIT, BOTH_LIMITS])
@pytest.mark.parametrize("hand_on", ["causal_context", "child_env"])
def test_a_context_handed_on_at_the_limit_is_the_limit_and_a_gap_not_a_raise(parent: str, hand_on: str) -> None:
    with bitexact.run(parent_context=parent) as r:
        handed = getattr(r, hand_on)()
        r.marker("after")
    text = handed if isinstance(handed, str) else handed["BITEXACT_CONTEXT"]
    assert parse_context(text).hlc == (LIMIT, LIMIT)  # never the wall clock, which comes before the parent
    gaps = [g for g in r.failures.gaps if "handed on is not later" in g.detail]
    assert len(gaps) == 1 and set(gaps[0].fields) == {"hlc"}
    notes = [m.get("note") for m in _markers(r.run_id) if "gap" not in m]
    assert notes == ["causal context handed on", "after"]  # the gap marker in record order, nothing lost
    assert r.sealed


def test_a_context_handed_on_below_the_limit_declares_nothing() -> None:
    with bitexact.run(parent_context=f"bxc.abc.{LIMIT - 5}.7") as r:
        first, second = parse_context(r.causal_context()).hlc, parse_context(r.causal_context()).hlc
    assert (LIMIT - 5, 7) < first < second and r.failures.gaps == []


@pytest.mark.parametrize("given", ["parent_context", "env"])
def test_a_strict_run_under_a_parent_at_both_limits_raises(given: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if given == "env":
        monkeypatch.setenv("BITEXACT_CONTEXT", BOTH_LIMITS)
        kwargs: dict[str, Any] = {}
    else:
        kwargs = {"parent_context": BOTH_LIMITS}
    with pytest.raises(ContextFormatError, match="cannot follow its parent context's") as raised:
        with bitexact.run(strict=True, **kwargs):
            pytest.fail("the run started")
    assert raised.value.field == "hlc"


def test_a_strict_run_at_the_limit_raises_where_it_would_hand_on_a_context() -> None:
    with bitexact.run(strict=True, parent_context=NEAR_LIMIT) as r:
        with pytest.raises(ContextFormatError, match="no later reading exists"):
            r.causal_context()
    assert r.sealed


def _deep(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels):
        value = {"x": value}
    return value


@pytest.fixture
def shipped_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shipped policy, which reads data before the write path does (these tests' default is off)."""
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "default")


@pytest.mark.usefixtures("shipped_policy")
def test_data_nested_past_what_the_policy_reads_is_a_gap_that_says_why(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING), bitexact.run() as r:
        r.record("marker", {"note": "deep", "v": _deep(130)})
    [gap] = r.failures.gaps
    assert gap.detail == "CaptureInputError: the step's data is nested deeper than 128 levels"
    assert any(gap.detail in record.getMessage() for record in caplog.records)


@pytest.mark.usefixtures("shipped_policy")
def test_a_strict_run_names_the_same_reason() -> None:
    with pytest.raises(RecordingError, match="nested deeper than 128 levels"):
        with bitexact.run(strict=True) as r:
            r.record("marker", {"note": "deep", "v": _deep(130)})


def test_a_record_after_the_run_ended_is_logged_by_its_kind(caplog: pytest.LogCaptureFixture) -> None:
    with bitexact.run() as r:
        pass
    with caplog.at_level(logging.WARNING):
        r.marker("late")
    [line] = [record.getMessage() for record in caplog.records if "recording gap" in record.getMessage()]
    assert "(marker): recorded after the run ended" in line and "None" not in line
    assert os.environ.get("BITEXACT_CONTEXT") is None
