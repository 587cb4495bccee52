"""Run lifecycle, causal context and failure modes of the Python SDK (the sixth review).

Every test here failed on the code as reviewed, and passes once the bug its docstring names is fixed.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import bitexact
from bitexact.sdk import RecordingError, SdkArgumentError
from sdk.conftest import entries

# -- 1. a run id given by the user names files under the data directory ----------------------------------


@pytest.mark.parametrize("run_id", ["../escaped", "../../escaped", "a/b", "a\\b", "..", "."])
def test_a_run_id_that_cannot_name_a_file_is_refused_and_writes_nothing_outside_the_data_directory(
    tmp_path: Path, run_id: str,
) -> None:
    """A run id holding a path separator or `..` started a run whose failures record
    (`failures/<run_id>.jsonl`) was written outside `failures/`, even outside the data directory."""
    home = tmp_path / "outer" / "data"
    with pytest.raises(SdkArgumentError) as refused:
        with bitexact.run(run_id=run_id, home=home, strict=True):
            pass
    assert refused.value.field == "run_id"
    with bitexact.run(run_id=run_id, home=home) as r:  # non-strict: declared, and the agent runs on
        r.record("tool_call", {"tool": "t"}, custody={"x": "not a hint"})
    assert r.run_id is None and [g.cause for g in r.failures.gaps] == ["invalid_argument"]
    assert list(r.failures.gaps[0].fields or {}) == ["run_id"]
    outside = [p for p in (tmp_path / "outer").rglob("*") if p != home and home not in p.parents]
    assert outside == []
    assert not (home / "failures").exists()


# -- 2. capture_nondeterminism in a child forked while the run was open -----------------------------------

_FORKED_NONDET_AGENT = textwrap.dedent("""
    import datetime, json, os, random, time
    import bitexact

    originals = (time.time, datetime.datetime, random.random)
    scope = bitexact.run(capture_nondeterminism=True)
    scope.__enter__()
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        scope.__exit__(None, None, None)  # the child leaves the block it was forked in
        restored = (time.time, datetime.datetime, random.random) == originals
        os.write(write, json.dumps({"restored": restored,
                                    "real_datetime": type(datetime.datetime.now()) is datetime.datetime}).encode())
        os._exit(0)
    os.close(write)
    child = json.loads(os.read(read, 4096))
    os.waitpid(pid, 0)
    scope.__exit__(None, None, None)
    child["parent_restored"] = (time.time, datetime.datetime, random.random) == originals
    print(json.dumps(child))
""")


def test_a_forked_child_leaving_a_capturing_run_gets_the_real_clock_and_datetime_back(home: Path) -> None:
    """A child forked while a run captured nondeterminism kept the patched time.time, random.* and the
    stand-in datetime class for good after leaving the `with` block: only the parent's exit restored them."""
    done = subprocess.run([sys.executable, "-c", _FORKED_NONDET_AGENT], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "BITEXACT_HOME": str(home)})
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"restored": True, "real_datetime": True, "parent_restored": True}


# -- 3. a malformed parent context is declared under the name it was given by --------------------------------


def test_a_malformed_parent_context_argument_is_declared_as_parent_context_not_as_the_environment() -> None:
    """A bad `parent_context=` argument was declared as "BITEXACT_CONTEXT is not a causal context"
    (fields naming BITEXACT_CONTEXT), though the environment held no context at all."""
    assert "BITEXACT_CONTEXT" not in os.environ
    with bitexact.run(parent_context="bxc.a b.1.0") as r:
        pass
    [gap] = r.failures.gaps
    assert gap.fields == {"parent_context": "id 'a b' must be 1 to 64 letters, digits, _ or -"}
    assert "BITEXACT_CONTEXT" not in gap.detail and "parent_context" in gap.detail
    marker = entries(r.run_id)[1]["data"]["gap"]
    assert marker["fields"] == gap.fields


# -- 4. the host fingerprint in run_meta ------------------------------------------------------------------

_HOST_OF_A_RUN = textwrap.dedent("""
    import bitexact
    from bitexact.sdk.stores import recorder_for

    with bitexact.run() as r:
        pass
    recorder, _ = recorder_for()
    print(next(iter(recorder.store.entries(r.run_id)))["data"]["host"])
""")


def _unshare_works() -> bool:
    try:
        return subprocess.run(["unshare", "-n", "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@pytest.mark.skipif(not _unshare_works(), reason="needs `unshare -n` (root, Linux) for a host with no network card")
def test_the_host_fingerprint_is_the_same_in_every_process_of_a_host_with_no_network_card(home: Path) -> None:
    """On a host with no hardware address (a container with no network), uuid.getnode() is a random number
    made per process, and run_meta's "stable" host fingerprint differed from one run's process to the next."""
    env = {**os.environ, "BITEXACT_HOME": str(home)}
    hosts = set()
    for _ in range(3):
        done = subprocess.run(["unshare", "-n", sys.executable, "-c", _HOST_OF_A_RUN], capture_output=True,
                              text=True, timeout=60, env=env)
        assert done.returncode == 0, done.stderr
        hosts.add(done.stdout.strip())
    assert len(hosts) == 1


# -- 5. check_outcomes: error is a check that raised -----------------------------------------------------


def test_a_check_that_returns_an_exception_object_is_unknown_not_error() -> None:
    """`r.check` recorded a check that *returned* an exception object as `error` ("a check that raised",
    with an error block), though it raised nothing: a result outside the vocabulary is `unknown`."""
    refusal = PermissionError("over the limit")
    with bitexact.run() as r:
        assert r.check("limit", lambda: refusal) is refusal
        with pytest.raises(PermissionError):
            r.check("limit", _raise, refusal)
    returned, raised = (e["data"]["policy_check"] for e in entries(r.run_id)[1:3])
    assert returned["outcome"] == "unknown" and returned["decided"] is False
    assert "error" not in returned and "reported" in returned
    assert raised["outcome"] == "error" and raised["error"]["type"] == "builtins.PermissionError"


def _raise(exc: BaseException) -> None:
    raise exc


# -- 6. a run id already taken --------------------------------------------------------------------------


def test_a_run_id_already_taken_is_an_invalid_argument_not_storage_unavailable() -> None:
    """Starting a run with a run id another run has was declared (and raised in strict mode) with the cause
    `storage_unavailable`, though the store was fine: the argument was wrong, `invalid_argument`."""
    with bitexact.run(run_id="run-taken") as first:
        pass
    assert first.sealed
    with pytest.raises(RecordingError) as refused:
        with bitexact.run(run_id="run-taken", strict=True):
            pass
    assert refused.value.cause == "invalid_argument" and "already exists" in str(refused.value)
    with bitexact.run(run_id="run-taken") as second:
        pass
    assert second.run_id is None and [g.cause for g in second.failures.gaps] == ["invalid_argument"]


# -- 7. an explicit tool_call record is made out of band -----------------------------------------------


def test_a_tool_call_recorded_with_r_record_is_asserted_unless_prov_says_observed() -> None:
    """`r.record("tool_call", ...)` was stored `observed`, though the SDK never saw the call: the spec
    (§5) makes a tool call recorded out of band `asserted`, as `r.record_tool_call` records it."""
    with bitexact.run(strict=True) as r:
        r.record("tool_call", {"tool": "lookup", "result": 1})
        r.record("tool_call", {"tool": "lookup", "result": 2}, prov="observed")
        r.record_tool_call("lookup", result=3)
    calls = [e for e in entries(r.run_id) if e["kind"] == "tool_call"]
    assert [e["prov"] for e in calls] == ["asserted", "observed", "asserted"]


def test_a_huge_malformed_context_is_quoted_cut_short_in_the_gap(monkeypatch: pytest.MonkeyPatch) -> None:
    """A megabyte-long `hlc.ms` in BITEXACT_CONTEXT went whole into the gap, the failures record and the
    warning log line."""
    monkeypatch.setenv("BITEXACT_CONTEXT", "bxc.abc." + "9" * 1_000_000 + ".0")
    with bitexact.run() as r:
        r.marker("runs on")
    [gap] = r.failures.gaps
    assert gap.cause == "invalid_argument" and "hlc.ms" in gap.detail
    assert len(gap.detail) < 400, len(gap.detail)
