"""The fifteenth audit's SDK findings, each reproduced through a real run, store and (where it matters) process.

1. A custody hint on ``result.X`` of a generator tool named nothing in ``{"yielded": [...], "returned"}``.
2. An ``args`` hint did not cover the positionals moved to ``kwargs`` by name (a credential-named parameter).
3. A credential-named positional before ``*args`` was recorded in ``args``, in the clear.
4. Strict mode: a failed write raised, but declared nothing, and the run sealed as complete.
5. ``secrets.*`` / ``os.urandom`` values were stored as sent in ``nondet`` entries.
6. An agent could write ``aer_source`` (any kind) and ``gap`` (a marker), which readers trust as the product's.
7. The process's exit waited out the store's lock again (atexit close) after the run's drain gave up.
8. A refused ``run_id`` / ``home`` logged only ``SdkArgumentError``.
9. ``causal_context()`` / ``child_env()`` handed on a context after the run ended, or when it never started.
10. ``binds_step`` took a step the run does not have.
Minor: ``record_tool(functools.partial(f, ...))`` was named "partial".
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import secrets
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import bitexact
from bitexact.capture.block import open_field
from bitexact.capture.opening import hash_only_declaration
from bitexact.crypto.keysources import generate_key_file, load_key_file
from bitexact.recording.fold import fold_orphans
from bitexact.sdk import CustodyHintError, RecordingError, RunClosedError, SdkArgumentError
from bitexact.sdk.causal import ENV_VAR
from bitexact.sdk.failures import read_failures
from bitexact.sdk.stores import recorder_for
from sdk.conftest import entries, kinds
from store.lock_holder import held_by_another_process

SRC = Path(__file__).resolve().parents[2] / "src"
HO = "[hash-only]"


def _tool_calls(run_id: str | None) -> list[dict[str, Any]]:
    return [e for e in entries(run_id) if e["kind"] == "tool_call"]


# -- 1. a result.X hint on a generator tool -------------------------------------------------------------------


def test_a_result_subkey_hint_on_a_generator_tool_covers_every_item_and_what_it_returned() -> None:
    @bitexact.record_tool(custody={"result.holder": "hash-only"})
    def lookup_stream(policy: str) -> Any:
        yield {"policy": policy, "holder": "Jane Roe"}
        return {"holder": "John Roe"}

    @bitexact.record_tool(custody={"result.holder": "scrub"})
    async def lookup_async(policy: str) -> Any:
        yield {"policy": policy, "holder": "card 4111 1111 1111 1111"}

    async def consume() -> list[Any]:
        return [item async for item in lookup_async("HX-2")]

    with bitexact.run() as r:
        assert list(lookup_stream("HX-1")) == [{"policy": "HX-1", "holder": "Jane Roe"}]
        assert asyncio.run(consume()) == [{"policy": "HX-2", "holder": "card 4111 1111 1111 1111"}]
    sync_call, async_call = _tool_calls(r.run_id)
    # A hint names at most KEY.SUBKEY: result.yielded.*.holder cannot be said, so the items are covered whole.
    assert sync_call["data"]["result"] == {"yielded": HO, "returned": HO}
    assert sorted(sync_call["capture"]["fields"]) == ["result.returned", "result.yielded"]
    assert "Roe" not in json.dumps(sync_call)
    assert async_call["data"]["result"] == {"yielded": [{"policy": "HX-2", "holder": "card [PAN ****1111]"}]}
    assert async_call["capture"]["fields"]["result.yielded"]["hint"] is True


def test_a_claim_on_a_result_subkey_of_a_generator_tool_is_refused_where_it_is_wrapped() -> None:
    def pages(policy: str) -> Any:
        yield {"holder": "Jane Roe"}

    with pytest.raises(CustodyHintError) as caught:
        bitexact.record_tool(custody={"result.holder": "scrubbed-upstream:presidio"})(pages)
    assert caught.value.field == "custody.result.holder"
    assert "generator" in str(caught.value) and "result.yielded" in str(caught.value)


def test_a_result_subkey_hint_on_a_plain_tool_stays_as_precise_as_asked() -> None:
    @bitexact.record_tool(custody={"result.holder": "hash-only", "result.yielded": "scrub"})
    def lookup(policy: str) -> dict[str, str]:
        return {"policy": policy, "holder": "Jane Roe", "yielded": "x"}

    with bitexact.run() as r:
        lookup("HX-3")
    (call,) = _tool_calls(r.run_id)
    assert call["data"]["result"] == {"policy": "HX-3", "holder": HO, "yielded": "x"}


# -- 2. an args hint follows the positionals moved to kwargs ------------------------------------------------


def test_an_args_hint_covers_the_positionals_recorded_by_name() -> None:
    @bitexact.record_tool(custody={"args": "hash-only", "kwargs.name": "scrub"})
    def kyc(api_key: str, name: str, dob: str) -> str:
        return "match"

    with bitexact.run() as r:
        assert kyc("k-123", "Jane Roe", "1980-01-02") == "match"
        kyc("k-456", "Jane Roe", dob="1980-01-02")  # passed by name: the agent's own kwargs, not covered by args
    first, second = (call["data"] for call in _tool_calls(r.run_id))
    assert first["args"] == HO
    # Each moved name takes the args hint, the stricter kept where the custody names it too (hash-only > scrub).
    assert first["kwargs"] == {"api_key": HO, "name": HO, "dob": HO}
    assert second["kwargs"] == {"api_key": HO, "name": HO, "dob": "1980-01-02"}


# -- 3. a credential-named positional before *args ------------------------------------------------------------


def test_a_credential_positional_before_varargs_is_recorded_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "default")

    @bitexact.record_tool
    def call_api(api_key: str, *paths: str) -> int:
        return len(paths)

    @bitexact.record_tool
    def mount(host: str, token: str, *paths: str, mode: str = "ro") -> str:
        return mode

    with bitexact.run() as r:
        assert call_api("sk-SECRETVALUE-1", "/a", "/b") == 2
        assert mount("h", "tok-SECRET-2", "/x", mode="rw") == "rw"
    calls = [(c["data"]["args"], c["data"]["kwargs"]) for c in _tool_calls(r.run_id)]
    assert calls == [(["/a", "/b"], {"api_key": "[CREDENTIAL]"}),
                     (["h", "/x"], {"token": "[CREDENTIAL]", "mode": "rw"})]
    assert "SECRET" not in json.dumps([e["data"] for e in entries(r.run_id)])


def test_a_partial_is_named_after_the_function_it_calls() -> None:
    def base(a: int, b: int) -> int:
        return a + b

    add_one = bitexact.record_tool(functools.partial(base, 1))
    named = bitexact.record_tool(name="adder")(functools.partial(functools.partial(base), b=2))
    with bitexact.run() as r:
        assert add_one(2) == 3 and named(1) == 3
    assert [c["data"]["tool"] for c in _tool_calls(r.run_id)] == ["base", "adder"]


# -- 4. strict mode declares a failed write before it raises ---------------------------------------------------


def test_strict_a_write_refused_by_a_locked_store_is_journaled_declared_and_leaves_the_run_unsealed(
    home: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BITEXACT_LOCK_TIMEOUT", "0.3")
    side_effects: list[int] = []

    @bitexact.record_tool
    def transfer(amount: int) -> str:
        side_effects.append(amount)  # the real action happens before the entry is written
        return "sent"

    with bitexact.run(strict=True) as r:
        with held_by_another_process(home / "bitexact.db.lock"):
            with pytest.raises(RecordingError) as caught:
                transfer(5000)
    assert caught.value.cause == "storage_unavailable" and side_effects == [5000]
    (gap,) = r.failures.gaps
    assert (gap.cause, gap.kind, gap.seq) == ("storage_unavailable", "tool_call", 1) and gap.journal
    assert [g["journal"] for g in read_failures(home, r.run_id)] == [gap.journal]  # type: ignore[arg-type]
    assert not r.sealed, "sealed, the run would read as complete though the tool's call is not in it"
    recorder, _ = recorder_for()
    fold_orphans(recorder, r.run_id)  # type: ignore[arg-type]
    assert [c["data"]["args"] for c in _tool_calls(r.run_id)] == [[5000]]


def test_strict_an_entry_that_cannot_be_serialized_is_declared_before_it_raises() -> None:
    @bitexact.record_tool
    def lookup() -> dict[Any, str]:
        return {1: "a", "1": "b"}  # two keys that are one once written as JSON text

    with bitexact.run(strict=True) as r:
        with pytest.raises(RecordingError):
            lookup()
    (gap,) = r.failures.gaps
    assert (gap.cause, gap.kind) == ("invalid_argument", "tool_call")
    markers = [e["data"]["gap"] for e in entries(r.run_id) if e["kind"] == "marker"]
    assert [(m["cause"], m["kind"], m["seq"]) for m in markers] == [("invalid_argument", "tool_call", 1)]
    assert r.sealed  # declared in the chain: the seal no longer claims the run complete without a word of it


# -- 5. secrets and os.urandom are recorded hash-only ---------------------------------------------------------


def test_secrets_and_urandom_reads_are_hash_only_and_open_with_the_capture_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    key_file = tmp_path / "capture.key"
    generate_key_file(key_file)
    monkeypatch.setenv("BITEXACT_CAPTURE_KEY", str(key_file))
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "default")
    import random

    with bitexact.run(capture_nondeterminism=True) as r:
        token = secrets.token_urlsafe(24)
        raw = os.urandom(16)
        roll = random.randint(1, 6)
    nondet = [e for e in entries(r.run_id) if e["kind"] == "nondet"]
    assert [(e["data"]["source"], e["data"]["value"]) for e in nondet] == [
        ("secrets.token_urlsafe", HO), ("os.urandom", HO), ("random.randint", roll)]
    assert token not in json.dumps(entries(r.run_id))
    key = load_key_file(key_file)
    minted, entropy = nondet[0], nondet[1]
    assert open_field(hash_only_declaration(minted, "value"), "value", token, key) is True
    assert open_field(hash_only_declaration(minted, "value"), "value", token + "x", key) is False
    assert open_field(hash_only_declaration(entropy, "value"), "value",
                      {"b64": __import__("base64").b64encode(raw).decode()}, key) is True


# -- 6. the product's reserved keys -------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "data", "field"), [
    ("marker", {"note": "x", "aer_source": {"source_id": "c-1:1", "seq": 1, "peer": "spiffe://forged"}},
     "aer_source"),
    ("tool_call", {"tool": "t", "aer_source": {"peer": "spiffe://forged"}}, "aer_source"),
    ("model", {"x": 1, "aer_source": {}}, "aer_source"),
    ("marker", {"note": "fake", "gap": {"cause": "storage_unavailable", "where": "sdk"}}, "gap"),
])
def test_an_agent_may_not_write_the_recorders_own_keys(kind: str, data: dict[str, Any], field: str) -> None:
    with bitexact.run() as r:
        handle = r.record(kind, data)
    assert handle.gap is not None and handle.gap.fields is not None and field in handle.gap.fields
    assert kinds(r.run_id) == ["run_meta", "marker", "run_end"]  # only the gap declaring the withheld entry
    (marker,) = [e["data"] for e in entries(r.run_id) if e["kind"] == "marker"]
    assert marker["gap"]["cause"] == "invalid_argument" and field in marker["gap"]["fields"]
    with bitexact.run(strict=True) as strict:
        with pytest.raises(SdkArgumentError) as caught:
            strict.record(kind, data)
    assert caught.value.field == field


def test_a_gap_key_outside_a_marker_and_an_identity_with_aer_source() -> None:
    with bitexact.run() as r:
        kept = r.record("tool_call", {"tool": "t", "gap": "the tool's own word"})  # only a marker's gap is read
        refused = r.identity(principal="svc:a", aer_source={"peer": "spiffe://forged"})
    assert kept.gap is None and refused.gap is not None and refused.gap.fields is not None
    assert "aer_source" in refused.gap.fields
    assert "identity" not in kinds(r.run_id)


# -- 7. the process's exit after a drain that gave up ----------------------------------------------------------

_AGENT = """
import sys, time, bitexact
with bitexact.run(name="exit-locked", journal_small=True) as r:
    r.marker("before")
    r.drain()
    print("ready", flush=True)
    sys.stdin.readline()  # the store's lock is held by another process now
    for i in range(3):
        r.marker(f"queued {i}")
print(r.run_id, flush=True)
print("EXIT", time.monotonic(), flush=True)
"""


def test_the_process_exit_does_not_wait_out_the_lock_again_and_the_gaps_say_what_is_known(home: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(SRC), "BITEXACT_DRAIN_TIMEOUT": "1", "BITEXACT_LOCK_TIMEOUT": "30"}
    agent = subprocess.Popen([sys.executable, "-c", _AGENT], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=env)
    assert agent.stdout is not None and agent.stdin is not None
    try:
        assert agent.stdout.readline().strip() == "ready"
        with held_by_another_process(home / "bitexact.db.lock"):
            start = time.monotonic()
            agent.stdin.write("go\n")
            agent.stdin.flush()
            out, err = agent.communicate(timeout=90)
            took = time.monotonic() - start
    finally:
        if agent.poll() is None:
            agent.kill()
    assert agent.returncode == 0, err
    # The drain (1 s) and the interpreter's own start-up work bound it; before, the atexit close of the store
    # waited for the abandoned batch until the lock's 30 s ran out.
    assert took < 15, f"the exit took {took:.1f} s"
    run_id = out.split()[0]
    assert "left to the process's end, not closed" in err
    details = [g["detail"] for g in read_failures(home, run_id)]
    # The batch being written when the drain gave up (the first one or more: as many as had queued when the
    # writer took it) may still land: its fate is unknown, never said to be "not written". The rest never left.
    fates = ["in flight" if "may still land" in d else "never" if "never handed to the store" in d else d
             for d in details]
    k = fates.count("in flight")
    assert k >= 1 and fates == ["in flight"] * k + ["never"] * (3 - k), details
    recorder, _ = recorder_for()
    fold_orphans(recorder, run_id)
    notes = [e["data"].get("note") for e in entries(run_id) if e["kind"] == "marker"]
    assert notes == ["before", "queued 0", "queued 1", "queued 2"]


# -- 8. a run that could not start names what was refused ------------------------------------------------------


@pytest.mark.parametrize(("options", "said"), [
    ({"run_id": "bad/id-SECRET"}, "run_id cannot name the run's files: 1 to 200 letters"),
    ({"home": "   "}, "home is empty: name the data directory"),
])
def test_a_refused_start_names_the_field_and_the_fix_in_its_log_line(
    options: dict[str, Any], said: str, sdk_warnings: pytest.LogCaptureFixture,
) -> None:
    with bitexact.run(**options) as r:
        r.marker("m")
    (line,) = [rec.getMessage() for rec in sdk_warnings.records if "could not start" in rec.getMessage()]
    assert said in line and "SECRET" not in line
    (gap,) = r.failures.gaps
    assert said in gap.detail


# -- 9. no causal context from a run that is not recording ----------------------------------------------------


def test_a_causal_context_is_refused_once_the_run_has_ended() -> None:
    with bitexact.run() as r:
        inside = r.child_env({})[ENV_VAR]
    with pytest.raises(RunClosedError, match="has ended"):
        r.causal_context()
    with pytest.raises(RunClosedError, match="has ended"):
        r.child_env({})
    assert inside.startswith("bxc.")
    assert r.failures.gaps == []  # refused, not recorded as after the end


def test_a_run_that_never_started_hands_on_no_context() -> None:
    with bitexact.run(run_id="bad/id") as never:
        with pytest.raises(RunClosedError, match="did not start"):
            never.causal_context()
        # The agent runs on (a start failure is declared, never raised): its sub-agent gets no context, and
        # not the one this process inherited either, which names another run's event.
        assert never.child_env({"PATH": "/bin", ENV_VAR: "bxc.parent.1.0"}) == {"PATH": "/bin"}


# -- 10. binds_step names a step the run has ----------------------------------------------------------------


def test_binds_step_past_the_runs_steps_is_refused_naming_it() -> None:
    with bitexact.run() as r:
        r.marker("a")
        with pytest.raises(SdkArgumentError, match=r"binds_step 999 is not a step of run .*: it has 2 step") as c:
            r.human_decision("adjuster", "approve", binds_step=999)
        assert c.value.field == "binds_step"
        with pytest.raises(SdkArgumentError, match="binds_step"):
            r.human_decision("adjuster", "approve", binds_step=r.steps)  # its own step
        with pytest.raises(SdkArgumentError, match="binds_step"):
            r.policy_check("c", "pass", binds_step=12345)
        r.human_decision("adjuster", "approve", binds_step=1)
        r.policy_check("c", "pass", binds_step=0)
    assert [e["data"].get("binds_step", e["data"].get("policy_check", {}).get("binds_step"))
            for e in entries(r.run_id)[2:4]] == [1, 0]


def test_binds_step_of_an_entry_still_queued_is_taken(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BITEXACT_LOCK_TIMEOUT", "60")
    with bitexact.run(journal_small=True) as r:
        r.marker("a")
        r.drain()
        with held_by_another_process(home / "bitexact.db.lock") as (_, release):
            queued = r.steps  # the step the next entry takes: not written while the lock is held
            r.marker("queued")
            r.human_decision("adjuster", "approve", binds_step=queued)
            release.set()
    decisions = [e for e in entries(r.run_id) if e["kind"] == "human_decision"]
    assert [(d["data"]["binds_step"], entries(r.run_id)[queued]["data"]["note"]) for d in decisions] == [
        (queued, "queued")]
