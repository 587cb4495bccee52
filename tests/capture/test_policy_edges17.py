"""The capture policy as an operator configures it: defects the seventeenth session's policy audit found."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path

import pytest
from cli.real_command import BITEXACT, command_env, run_bitexact

from bitexact.canon import read_limited
from bitexact.capture import apply_policy
from bitexact.capture.policy import load_policy

SECRET = "Jane Roe SECRETHINT"


# -- a custody hint naming a flat dotted key ----------------------------------------------------------------


def test_a_hint_on_a_flat_dotted_key_withholds_the_entry_instead_of_storing_it_as_sent() -> None:
    """custody={"customer.name": "hash-only"} with the data's key "customer.name" (OpenTelemetry-style): the
    hint matched nothing, and the value was stored as sent with no capture block and no gap."""
    data = {"tool": "crm", "customer.name": SECRET, "customer.id": 7}
    captured = apply_policy(load_policy("default"), "tool_call", data, hints={"customer.name": "hash-only"})
    assert captured.withheld
    assert SECRET not in json.dumps(captured.data) + json.dumps(captured.block)
    [gap] = captured.gaps
    assert gap["cause"] == "invalid_argument"
    assert "a dot in a key is written ~1 in a hint (KEY~1SUBKEY)" in json.dumps(gap)


def test_the_escaped_hint_names_the_flat_dotted_key() -> None:
    data = {"tool": "crm", "customer.name": SECRET}
    captured = apply_policy(load_policy("default"), "tool_call", data, hints={"customer~1name": "hash-only"})
    assert not captured.withheld and SECRET not in json.dumps(captured.data)
    assert captured.block["fields"]["customer~1name"]["mode"] == "hash-only"


def test_a_dotted_hint_whose_key_is_absent_with_no_dotted_key_beside_it_changes_nothing() -> None:
    data = {"tool": "crm", "result": "ok"}
    captured = apply_policy(load_policy("default"), "tool_call", data, hints={"customer.name": "hash-only"})
    assert not captured.withheld and captured.gaps == () and captured.data == data


# -- a named pipe as the policy, or as a file a command reads ------------------------------------------------


def test_a_named_pipe_as_the_policy_is_refused_without_waiting(tmp_path: Path) -> None:
    """A FIFO with no writer as BITEXACT_CAPTURE_POLICY hung `policy check`, `health`, `verify` and every SDK
    recording in open() for good."""
    fifo = tmp_path / "policy.json"
    os.mkfifo(fifo)
    checked = subprocess.run([BITEXACT, "capture", "policy", "check", str(fifo)], env=command_env(tmp_path / "h"),
                             capture_output=True, text=True, timeout=60, check=False)
    assert checked.returncode == 1
    assert f"capture policy: {fifo}: a named pipe, not a file (expected a JSON file, pci or off)" in checked.stderr
    health = run_bitexact(tmp_path / "h", "health", "--json", BITEXACT_CAPTURE_POLICY=str(fifo))
    assert health.returncode == 2
    assert "a named pipe, not a file" in health.stdout


def test_a_pipe_with_a_writer_is_still_read_whole() -> None:
    """`--candidate-file /dev/stdin` fed by a pipe: the read waits for what the writer sends, to its end."""
    read_end, write_end = os.pipe()
    sent = b'"the candidate"' * 10_000  # more than a pipe's buffer: the read must wait for the rest

    def write() -> None:
        with open(write_end, "wb") as out:
            out.write(sent)

    writer = threading.Thread(target=write)
    writer.start()
    try:
        assert read_limited(f"/proc/self/fd/{read_end}") == sent
    finally:
        writer.join(timeout=60)
        os.close(read_end)


def test_a_pipe_with_no_writer_reads_as_empty_not_forever(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert read_limited(fifo) == b""


# -- a relative key path in a policy file -------------------------------------------------------------------


def test_a_relative_key_path_is_read_from_the_policy_files_directory(tmp_path: Path) -> None:
    """Read against the working directory, the policy worked in etc/ and elsewhere failed with advice to
    `keygen` a second key."""
    etc, app = tmp_path / "etc", tmp_path / "app"
    etc.mkdir()
    app.mkdir()
    home = tmp_path / "home"
    assert run_bitexact(home, "capture", "keygen", "-o", str(etc / "capture.key")).returncode == 0
    (etc / "policy.json").write_text(json.dumps({"hash_only_key": {"file": "capture.key"}}))
    in_etc = run_bitexact(home, "capture", "policy", "check", "policy.json", cwd=etc)
    in_app = run_bitexact(home, "capture", "policy", "check", "../etc/policy.json", cwd=app)
    assert in_etc.returncode == 0 and in_app.returncode == 0, in_app.stderr
    key_id = in_etc.stdout.split("key ")[-1].strip()
    assert in_app.stdout.split("key ")[-1].strip() == key_id


def test_the_o_refusal_finds_a_relative_key_where_the_policy_reads_it(tmp_path: Path) -> None:
    etc = tmp_path / "etc"
    etc.mkdir()
    home = tmp_path / "home"
    assert run_bitexact(home, "capture", "keygen", "-o", str(etc / "capture.key")).returncode == 0
    (etc / "policy.json").write_text(json.dumps({"hash_only_key": {"file": "capture.key"}}))
    before = (etc / "capture.key").read_bytes()
    assert run_bitexact(home, "keys", "init").returncode == 0
    written = run_bitexact(home, "keys", "trust-file", "-o", str(etc / "capture.key"), cwd=tmp_path,
                           BITEXACT_CAPTURE_POLICY=str(etc / "policy.json"))
    assert written.returncode == 2, written.stdout
    assert (etc / "capture.key").read_bytes() == before


# -- a policy file's read error names its path once ----------------------------------------------------------


@pytest.mark.parametrize("kind", ["directory", "dangling"])
def test_a_policy_read_error_names_the_path_once(tmp_path: Path, kind: str) -> None:
    path = tmp_path / ("adir" if kind == "directory" else "dangling.json")
    if kind == "directory":
        path.mkdir()
    else:
        path.symlink_to(tmp_path / "nowhere.json")
    checked = run_bitexact(tmp_path / "home", "capture", "policy", "check", str(path))
    assert checked.returncode == 1
    assert checked.stderr.count(str(path)) == 1, checked.stderr
