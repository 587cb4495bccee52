"""Runs: run_meta and run_end, exceptions, with / async with / decorators, strict and non-strict failures."""

from __future__ import annotations

import asyncio
import platform
from pathlib import Path

import pytest

import bitexact
from bitexact.context import ContextFormatError
from bitexact.crypto.keystore import KeyStore
from bitexact.recording import Recorder
from bitexact.sdk import RecordingError, RunClosedError, SdkArgumentError, current_run
from bitexact.sdk.failures import read_failures
from bitexact.store import open_store
from sdk.conftest import entries, kinds


def test_a_run_opens_with_run_meta_and_seals_with_run_end() -> None:
    with bitexact.run(name="triage") as r:
        r.marker("hello")
    written = entries(r.run_id)
    assert [e["kind"] for e in written] == ["run_meta", "marker", "run_end"]
    meta = written[0]["data"]
    assert meta["name"] == "triage"
    assert meta["python"] == platform.python_version()
    assert meta["bitexact"] == bitexact.__version__
    assert meta["capture_policy"] == "off"
    assert len(meta["host"]) == 16 and meta["platform"]
    assert meta["sdk"] == "sdk-python"
    assert written[-1]["data"] == {"steps": 3}
    assert r.sealed and not r.open


def test_a_fixed_run_id_is_used() -> None:
    with bitexact.run(run_id="run-fixed-1") as r:
        pass
    assert r.run_id == "run-fixed-1"
    assert kinds("run-fixed-1") == ["run_meta", "run_end"]


def test_an_exception_is_recorded_and_re_raised_and_the_run_still_seals() -> None:
    with pytest.raises(KeyError, match="missing-claim"):
        with bitexact.run() as r:
            r.marker("before")
            raise KeyError("missing-claim")
    written = entries(r.run_id)
    assert [e["kind"] for e in written] == ["run_meta", "marker", "marker", "run_end"]
    assert written[2]["data"]["exception"] == {"type": "builtins.KeyError", "message": "'missing-claim'"}


def test_async_with_records_and_seals() -> None:
    async def agent() -> str | None:
        async with bitexact.run(name="async") as r:
            r.marker("inside")
            await asyncio.sleep(0)
            assert current_run() is r
        return r.run_id

    run_id = asyncio.run(agent())
    assert kinds(run_id) == ["run_meta", "marker", "run_end"]


def test_the_decorator_makes_one_run_per_call_sync_and_async() -> None:
    seen: list[str | None] = []

    @bitexact.run(name="decorated")
    def agent(x: int) -> int:
        run = current_run()
        assert run is not None
        run.marker(f"x={x}")
        seen.append(run.run_id)
        return x * 2

    @bitexact.run
    async def async_agent() -> str:
        run = current_run()
        assert run is not None
        seen.append(run.run_id)
        raise ValueError("declined")

    assert agent(2) == 4 and agent(3) == 6
    with pytest.raises(ValueError, match="declined"):
        asyncio.run(async_agent())
    assert len(set(seen)) == 3
    assert kinds(seen[0]) == ["run_meta", "marker", "run_end"]
    assert kinds(seen[2]) == ["run_meta", "marker", "run_end"]  # the exception's marker
    assert entries(seen[1])[1]["data"]["note"] == "x=3"


def test_recording_outside_the_run_is_refused_in_strict_mode_and_declared_otherwise() -> None:
    with bitexact.run(strict=True) as strict:
        pass
    with pytest.raises(RunClosedError):
        strict.marker("late")
    with bitexact.run() as lax:
        pass
    handle = lax.marker("late")
    assert dict(handle) == {} and handle.gap is not None
    assert kinds(lax.run_id) == ["run_meta", "run_end"]


def test_a_kind_the_agent_may_not_write_is_refused_naming_the_field() -> None:
    with bitexact.run() as r:
        for kind in ("run_end", "run_meta", "redaction", "repair", "fork", "nonsense"):
            with pytest.raises(SdkArgumentError) as caught:
                r.record(kind, {})
            assert caught.value.field == "kind"
        with pytest.raises(SdkArgumentError) as caught:
            r.record("marker", ["not", "a", "mapping"])  # type: ignore[arg-type]
        assert caught.value.field == "data"


# -- failures -------------------------------------------------------------------


@pytest.fixture
def breakable(tmp_path: Path) -> Recorder:
    """A write path on its own store, which a test may close under a running run."""
    other = tmp_path / "other"
    return Recorder(open_store(other), KeyStore(other).current_or_init())


def test_non_strict_a_failed_write_is_a_declared_gap_and_one_warning_and_the_agent_is_untouched(
    breakable: Recorder, sdk_warnings: pytest.LogCaptureFixture
) -> None:
    @bitexact.record_tool
    def lookup(claim: str) -> dict[str, int]:
        return {"estimate": 3840}

    @bitexact.record_tool
    def explode() -> None:
        raise ZeroDivisionError("agent's own error")

    with bitexact.run(recorder=breakable) as r:
        breakable.store.close()
        assert lookup("CLM-1") == {"estimate": 3840}
        with pytest.raises(ZeroDivisionError, match="agent's own error"):
            explode()
    gaps = r.failures.gaps
    assert [g.cause for g in gaps][:2] == ["storage_unavailable", "storage_unavailable"]
    assert [g.kind for g in gaps][:2] == ["tool_call", "tool_call"]
    home = Path(breakable.store.path).parent  # type: ignore[attr-defined]
    on_disk = read_failures(home, r.run_id)  # type: ignore[arg-type]
    assert [g["cause"] for g in on_disk] == [g.cause for g in gaps]
    lines = [rec for rec in sdk_warnings.records if "recording gap" in rec.getMessage()]
    assert len(lines) == len(gaps)
    # {"estimate": 3840} as a value, never the digits inside a run id's or a journal's hex token.
    assert "estimate" not in " ".join(rec.getMessage() for rec in sdk_warnings.records)
    assert not r.sealed


def test_strict_raises_on_a_recording_failure(breakable: Recorder) -> None:
    @bitexact.record_tool
    def lookup(claim: str) -> str:
        return "ok"

    with pytest.raises(RecordingError) as caught:
        with bitexact.run(recorder=breakable, strict=True):
            breakable.store.close()
            lookup("CLM-1")
    assert caught.value.cause == "storage_unavailable"


def test_a_run_that_cannot_start_records_nothing_and_the_agent_runs_on(
    tmp_path: Path, sdk_warnings: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "not-a-directory"
    blocked.write_text("a file where the data directory should be")
    ran = False
    with bitexact.run(home=blocked) as r:
        ran = True
        assert dict(r.marker("nothing is recorded")) == {}
    assert ran and r.run_id is None
    assert [g.cause for g in r.failures.gaps] == ["storage_unavailable"]
    assert any("could not start" in rec.getMessage() for rec in sdk_warnings.records)
    with pytest.raises(RecordingError):
        with bitexact.run(home=blocked, strict=True):
            pass


def test_a_malformed_parent_context_is_declared_not_trusted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BITEXACT_CONTEXT", "bxc.a b.1.0")
    with bitexact.run() as r:
        pass
    written = entries(r.run_id)
    assert "causal" not in written[0]["data"]
    assert written[1]["data"]["gap"]["fields"] == {"BITEXACT_CONTEXT": "id 'a b' must be 1 to 64 letters, digits, _ or -"}
    with pytest.raises(ContextFormatError):
        with bitexact.run(strict=True):
            pass


def test_a_policy_that_cannot_be_used_records_nothing_and_the_agent_runs_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", str(tmp_path / "missing-policy.json"))
    with bitexact.run() as r:
        assert dict(r.marker("not recorded")) == {}
    assert r.run_id is None and [g.cause for g in r.failures.gaps] == ["invalid_argument"]
    with pytest.raises(RecordingError):
        with bitexact.run(strict=True):
            pass
