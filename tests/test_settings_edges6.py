"""Environment settings (BITEXACT_*), read by every command and the SDK: regression tests, each for a bug a
review found.

Contract: README.md "Settings" ("A value BitExact cannot use is refused with a message naming the variable"),
docs/sdk.md (a run that cannot start: a declared gap, or RecordingError in strict mode), docs/capture-verify.md
(exit codes), and the product rule that a bad setting gets the same clear error, naming the variable, in every
command and in the SDK.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import bitexact
from bitexact.sdk import RecordingError
from bitexact.sdk.stores import close_stores, recorder_for

BITEXACT = str(Path(sys.executable).parent / "bitexact")


def _bx(home: Path, *args: str, **settings: str) -> subprocess.CompletedProcess[str]:
    """The real ``bitexact ARGS`` against ``home``, with no BITEXACT_* setting but ``settings``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BITEXACT_")}
    env.update({"BITEXACT_HOME": str(home), "COLUMNS": "200", "PYTHONIOENCODING": "utf-8", **settings})
    return subprocess.run([BITEXACT, *args], check=False, env=env, capture_output=True, text=True,
                          encoding="utf-8", errors="replace", timeout=120)


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("BITEXACT_"):
            monkeypatch.delenv(name, raising=False)


@pytest.fixture
def recorded(tmp_path: Path, clean_env: None, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """A data directory holding one sealed run (recorded under the default settings)."""
    home = tmp_path / "home"
    monkeypatch.setenv("BITEXACT_HOME", str(home))
    recorder, _ = recorder_for(home)
    writer = recorder.start(name="settings")
    writer.append("tool_call", {"tool": "lookup", "args": {"x": "1"}})
    writer.seal()
    close_stores()
    monkeypatch.delenv("BITEXACT_HOME")
    return home, writer.run_id


# -- BITEXACT_CAPTURE_POLICY / BITEXACT_CAPTURE_KEY in the SDK ----------------------------------------


@pytest.mark.parametrize("variable", ["BITEXACT_CAPTURE_POLICY", "BITEXACT_CAPTURE_KEY"])
def test_sdk_start_gap_for_an_unusable_policy_setting_names_the_variable(
    tmp_path: Path, clean_env: None, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    """A missing policy or capture key file was declared as just "...: PolicyError" (the SDK dropped the
    message that names the variable and the file), where `bitexact demo` names both."""
    monkeypatch.setenv(variable, str(tmp_path / "missing-file"))
    with bitexact.run(name="policy-setting", home=tmp_path / "home") as r:
        pass
    details = [gap.detail for gap in r.failures.gaps]
    assert len(details) == 1, details
    assert variable in details[0] and "missing-file" in details[0], details

    with pytest.raises(RecordingError) as raised, bitexact.run(name="policy-setting", home=tmp_path / "home",
                                                                 strict=True):
        pass
    assert variable in str(raised.value), str(raised.value)


# -- BITEXACT_LOCK_TIMEOUT and `bitexact verify RUN` --------------------------------------------------


def test_verify_stored_run_under_an_unusable_lock_timeout_names_the_setting(recorded: tuple[Path, str]) -> None:
    """`bitexact verify RUN` under BITEXACT_LOCK_TIMEOUT=abc said "FAIL: no such file: RUN" (exit 2): the
    store's refusal of the setting was taken for "no such run", so the setting was silently ignored."""
    home, run_id = recorded
    done = _bx(home, "verify", run_id, BITEXACT_LOCK_TIMEOUT="abc")
    assert "BITEXACT_LOCK_TIMEOUT" in done.stderr + done.stdout, (done.stdout, done.stderr)
    assert "no such file" not in done.stdout + done.stderr
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr


# -- the same bad setting, the same exit code in every command ---------------------------------------


@pytest.mark.parametrize(("command", "variable", "value"), [
    *((command, "BITEXACT_LOCK_TIMEOUT", "abc") for command in ("redact", "repair", "export")),
    *((command, variable, value) for command in ("redact", "repair")
      for variable, value in (("BITEXACT_CHECKPOINT_EVERY", "0"), ("BITEXACT_HASH_ALG", "md5"))),
    ("redact", "BITEXACT_REQUIRE_DUAL_CONTROL", "maybe"),
])
def test_a_bad_setting_exits_1_in_redact_repair_and_export_as_in_every_other_command(
    recorded: tuple[Path, str], tmp_path: Path, variable: str, value: str, command: str
) -> None:
    """redact, repair and export exited 2 (a usage or input error) for a setting they could not use, where
    runs, demo, capture backfill and redaction approve exit 1 for the same value (a setting is no argument)."""
    home, run_id = recorded
    args = {"redact": ["redact", run_id, "--field", "1:args.x", "--by", "alice", "--reason", "erasure"],
            "repair": ["repair", run_id, "--by", "alice", "--note", "accepted"],
            "export": ["export", run_id, "-o", str(tmp_path / "out.json")]}[command]
    done = _bx(home, *args, **{variable: value})
    assert variable in done.stderr, done.stderr
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr


# -- the same bad setting, the same gap cause in the SDK ---------------------------------------------


@pytest.mark.parametrize("variable", ["BITEXACT_LOCK_TIMEOUT", "BITEXACT_DRAIN_TIMEOUT", "BITEXACT_CHECKPOINT_SECONDS"])
def test_sdk_start_gap_for_an_unusable_number_setting_has_one_cause(
    tmp_path: Path, clean_env: None, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    """BITEXACT_LOCK_TIMEOUT=abc was declared (and raised in strict mode) as storage_unavailable, as if the
    store were down, where the same value in any other setting is invalid_argument."""
    monkeypatch.setenv(variable, "abc")
    with bitexact.run(name="number-setting", home=tmp_path / "home") as r:
        pass
    assert [(gap.cause, variable in gap.detail) for gap in r.failures.gaps] == [("invalid_argument", True)]

    with pytest.raises(RecordingError) as raised, bitexact.run(name="number-setting", home=tmp_path / "home",
                                                                 strict=True):
        pass
    assert raised.value.cause == "invalid_argument"


# -- BITEXACT_HOME -----------------------------------------------------------------------------------


def test_sdk_refuses_a_blank_bitexact_home_as_the_cli_does(
    tmp_path: Path, clean_env: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """BITEXACT_HOME="   " is refused by every command ("BITEXACT_HOME is empty"), but an SDK run took it as
    a directory named "   " in the working directory and put the store and keys there, saying nothing."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BITEXACT_HOME", "   ")
    with bitexact.run(name="blank-home") as r:
        r.record("tool_call", {"tool": "lookup"})
    assert r.run_id is None
    assert [(gap.cause, "BITEXACT_HOME is empty" in gap.detail) for gap in r.failures.gaps] == \
        [("invalid_argument", True)]
    with pytest.raises(RecordingError) as raised, bitexact.run(name="blank-home", strict=True):
        pass
    assert "BITEXACT_HOME is empty" in str(raised.value)
    assert sorted(path.name for path in tmp_path.iterdir()) == []

    done = _bx(tmp_path / "unused", "runs", BITEXACT_HOME="   ")
    assert (done.returncode, done.stderr.strip()) == \
        (2, "error: BITEXACT_HOME is empty: name the data directory (or leave it unset for ~/.bitexact)")


# -- BITEXACT_KMS_ENDPOINT ---------------------------------------------------------------------------


@pytest.mark.parametrize("endpoint", ["not a url", "ftp://127.0.0.1", "http://127.0.0.1:port"])
@pytest.mark.parametrize("variable", ["BITEXACT_KMS_ENDPOINT", "AWS_ENDPOINT_URL_KMS"])
def test_an_endpoint_that_is_no_url_is_refused_naming_its_variable(
    tmp_path: Path, variable: str, endpoint: str
) -> None:
    """A KMS endpoint that is no http(s) URL was refused as "cannot set up the AWS KMS client: ValueError:
    Invalid endpoint: ..." or "cannot reach AWS KMS at ftp://...", naming no setting to fix."""
    pytest.importorskip("boto3")
    policy = tmp_path / "policy.json"
    policy.write_text('{"fields": [{"kind": "tool_call", "path": "a", "mode": "hash-only"}],'
                      ' "hash_only_key": {"kms_hmac": "alias/capture"}}', encoding="utf-8")
    aws = {"AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "secret",
           "AWS_CONFIG_FILE": str(tmp_path / "none"), "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none")}
    done = _bx(tmp_path / "home", "capture", "policy", "check", str(policy), **aws, **{variable: endpoint})
    assert done.returncode == 1, (done.returncode, done.stderr)
    assert f"{variable}={endpoint!r} is not a KMS endpoint" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
