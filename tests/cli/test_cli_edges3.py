"""The `bitexact` command line as a user meets it (the third review): each test is a bug it found, fixed.

Subprocess tests run the real console script with BITEXACT_HOME under the test's tmp_path and a clean
BITEXACT_* environment; in-process tests use click's CliRunner where a fault (a full disk) must be
simulated with monkeypatch.
"""

from __future__ import annotations

import errno
import json
import os
import traceback
from pathlib import Path

import pytest
from cli.real_command import clear_bitexact_env, demo_run, run_bitexact
from click.testing import CliRunner, Result

from bitexact.cli import cli
from bitexact.crypto.keystore import KeyStore
from bitexact.recording import Recorder
from bitexact.store import open_store

bx = run_bitexact


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_bitexact_env(monkeypatch)


def _invoke(home: Path, *args: str) -> Result:
    """In-process, exceptions caught: a traceback shows up as ``result.exception`` (not SystemExit)."""
    return CliRunner().invoke(cli, list(args), env={"BITEXACT_HOME": str(home), "COLUMNS": "200"})


def _no_traceback(result: Result) -> None:
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError("the command died with a Python traceback:\n"
                             + "".join(traceback.format_exception(*result.exc_info)))  # type: ignore[misc]


# -- README: "Every command has `--help` with examples." -------------------------------------------------


@pytest.mark.parametrize("command", [
    ("runs",), ("show",), ("demo",), ("health",), ("redact",), ("repair",),
    ("keys",), ("keys", "init"), ("keys", "show"), ("keys", "trust-file"), ("keys", "rotate"),
])
def test_every_documented_command_has_help_with_examples(tmp_path: Path, command: tuple[str, ...]) -> None:
    """README "Using it": "Every command has `--help` with examples." `export` and `verify` have an
    "Examples:" block; runs, show, demo, health, redact, repair and every `keys` command do not (their
    help is one or two sentences and the options)."""
    shown = bx(tmp_path / "home", *command, "--help")
    assert shown.returncode == 0, shown.stderr
    assert "example" in shown.stdout.lower(), shown.stdout


# -- README Settings: "A value BitExact cannot use is refused with a message naming the variable." -------


def test_a_bad_bitexact_context_is_refused_naming_the_variable(tmp_path: Path) -> None:
    """`BITEXACT_CONTEXT=garbage bitexact demo` is refused (exit 1) with
    "error: a context starts with bxc., not 'garbage'": the message never says which setting holds
    that value, although BITEXACT_CONTEXT is a documented setting (README table) and the README
    promises a message naming the variable. (The demo records with strict=True, so Run._causal_parent
    re-raises parse_context's ContextFormatError as it is.)"""
    demo = bx(tmp_path / "home", "demo", "--json", BITEXACT_CONTEXT="garbage")
    assert "Traceback" not in demo.stderr, demo.stderr
    assert "BITEXACT_CONTEXT" in demo.stdout + demo.stderr, demo.stderr


def test_a_bitexact_home_too_long_for_the_file_system_is_one_error_naming_it(tmp_path: Path) -> None:
    """BITEXACT_HOME whose last component is longer than the file system allows (300 characters):
    every command dies with a traceback ending in `OSError: [Errno 36] File name too long`, raised by
    `home.exists()` in the `cli` group callback (pathlib's exists() does not swallow ENAMETOOLONG)."""
    home = tmp_path / ("h" * 300)
    listed = bx(home, "runs")
    assert "Traceback" not in listed.stderr, listed.stderr[-800:]
    assert listed.returncode != 0
    assert listed.stderr.startswith("error: "), listed.stderr[-800:]
    assert "BITEXACT_HOME" in listed.stderr


def test_an_empty_home_option_does_not_turn_the_working_directory_into_the_data_directory(tmp_path: Path) -> None:
    """`bitexact --home "" demo` records into the current working directory: Path("") is ".", so the
    store, the recorder's private key (keys/recorder.key) and exports/ are created wherever the user
    happens to be. An empty value is refused for `verify ""` ("TARGET is empty") for exactly this
    reason (Path("") is the working directory); --home "" must be refused too, naming --home."""
    cwd = tmp_path / "somewhere"
    cwd.mkdir()
    # HOME too, so that nothing lands in the real ~/.bitexact whatever a fix does with the empty value.
    demo = bx(tmp_path / "home", "--home", "", "demo", "--json", cwd=cwd, HOME=str(tmp_path / "user"))
    assert not (cwd / "bitexact.db").exists(), "a store was made in the working directory"
    assert not (cwd / "keys").exists(), "a private key was made in the working directory"
    assert demo.returncode == 2, demo.stdout + demo.stderr
    assert "--home" in demo.stderr


# -- errors are one clear line, never a traceback --------------------------------------------------------


def test_verify_of_a_target_name_too_long_for_the_file_system_cannot_read_its_input(tmp_path: Path) -> None:
    """`bitexact verify <a 300-character name>` dies with a traceback (OSError: [Errno 36] File name too
    long) from `Path(target).exists()` in verify_command. README: verify "exits 0 (verifies), 1 (does not)
    or 2 (cannot read the input)"; `--trust-file` with the same name already gives
    `FAIL: no such file: ... (File name too long)`, exit 2."""
    home = tmp_path / "home"
    demo_run(home)  # a store exists, as for any user who has recorded something
    verified = bx(home, "verify", "b" * 300)
    assert "Traceback" not in verified.stderr, verified.stderr[-800:]
    assert verified.returncode == 2, verified.stdout + verified.stderr[-800:]
    assert verified.stdout.startswith("FAIL: ")


def _disk_full(*_args: object) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize("command", [("keys", "init"), ("demo",), ("demo", "--json")])
def test_a_full_disk_while_making_the_recorder_key_is_one_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: tuple[str, ...]
) -> None:
    """The disk fills up as the recorder key is written (simulated: os.fsync raises ENOSPC).
    `bitexact keys init` (and `bitexact demo` on a fresh data directory, which creates the key first)
    die with a traceback: SigningKey.save turns only FileExistsError into KeyMaterialError, so the
    OSError from write_private_file escapes keys_init (which catches KeyMaterialError) and the group
    (which catches BitExactError/SettingError)."""
    monkeypatch.setattr(os, "fsync", _disk_full)
    result = _invoke(tmp_path / "home", *command)
    _no_traceback(result)
    assert result.exit_code != 0
    assert "No space left on device" in result.stderr, result.output


def test_a_full_disk_while_rotating_the_recorder_key_is_one_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`bitexact keys rotate` when the disk is full as the new key is written: a traceback
    (KeyStore.rotate's write_private_file raises OSError; keys_rotate catches KeyMaterialError only)."""
    home = tmp_path / "home"
    assert _invoke(home, "keys", "init").exit_code == 0
    monkeypatch.setattr(os, "fsync", _disk_full)
    result = _invoke(home, "keys", "rotate")
    _no_traceback(result)
    assert result.exit_code != 0
    assert "No space left on device" in result.stderr, result.output


@pytest.mark.parametrize("as_json", [False, True])
def test_a_full_disk_while_writing_the_demo_bundle_is_one_error_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, as_json: bool
) -> None:
    """`bitexact demo` with the recorder key already made, the disk filling up as the bundle is written
    (os.fsync raises ENOSPC; the SQLite store does not use os.fsync, so the run itself is recorded):
    export_run raises `OSError("cannot write <bundle>: No space left on device")`, which run_demo and
    demo_command do not catch (`bitexact export` catches OSError and prints it), so the demo ends in a
    traceback."""
    home = tmp_path / "home"
    assert _invoke(home, "keys", "init").exit_code == 0
    monkeypatch.setattr(os, "fsync", _disk_full)
    result = _invoke(home, "demo", *(["--json"] if as_json else []))
    _no_traceback(result)
    assert result.exit_code != 0
    assert "cannot write" in result.stderr, result.output


# -- tables on odd data; NO_COLOR ------------------------------------------------------------------------


def test_show_never_writes_escape_sequences_from_recorded_data(tmp_path: Path) -> None:
    """Recorded data is whatever an agent saw (a web page, a tool's output). `bitexact show RUN` puts a
    tool name holding ESC sequences into its summary column as raw bytes: with NO_COLOR=1 and stdout a
    pipe, the output still carries `\\x1b[2J` (clear screen) and `\\x1b[31m` (red), so on a terminal the
    evidence being reviewed can erase or recolour the table around it. summarize()/_clip() fold
    whitespace but leave other control characters, and rich strips only BEL/BS/VT/FF/CR."""
    home = tmp_path / "home"
    store = open_store(home)
    try:
        writer = Recorder(store, KeyStore(home).current_or_init()).start(name="odd")
        writer.append("tool_call", {"tool": "fetch\x1b[2J\x1b[31mpage", "status": "ok"})
        writer.seal()
        run_id = writer.run_id
    finally:
        store.close()
    shown = bx(home, "show", run_id, NO_COLOR="1")
    assert shown.returncode == 0, shown.stderr
    assert "fetch" in shown.stdout
    assert "\x1b" not in shown.stdout, repr(shown.stdout[-600:])


# -- --json has the same facts as the table --------------------------------------------------------------


def test_export_json_names_the_public_key_the_table_prints(tmp_path: Path) -> None:
    """`bitexact export RUN -o F` prints "signed by key <key_id> (<public key hex>)": the public key is
    what a relying party pins (`verify --expect-key HEX`). `--json` prints `key_id` only: the one fact a
    script needs to hand on is missing from the machine-readable output."""
    home = tmp_path / "home"
    run_id = demo_run(home)
    table = bx(home, "export", run_id, "-o", str(tmp_path / "a.json"))
    assert table.returncode == 0, table.stderr
    public = KeyStore(home).current().public_hex
    assert public in table.stdout  # the table prints it
    exported = bx(home, "export", run_id, "-o", str(tmp_path / "b.json"), "--json")
    assert exported.returncode == 0, exported.stderr
    document = json.loads(exported.stdout)
    assert public in document.values(), document


def test_a_full_disk_never_leaves_a_trust_file_cut_short(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The trust file was written in place: a full disk mid-write left relying parties a truncated file.
    home = tmp_path / "home"
    assert _invoke(home, "keys", "init").exit_code == 0
    trust = tmp_path / "trust.json"
    assert _invoke(home, "keys", "trust-file", "-o", str(trust)).exit_code == 0
    before = trust.read_bytes()
    assert _invoke(home, "keys", "rotate").exit_code == 0
    monkeypatch.setattr(os, "fsync", _disk_full)
    result = _invoke(home, "keys", "trust-file", "-o", str(trust))
    _no_traceback(result)
    # Exit 1 (audit30): the disk failed the write, the arguments were good (README's convention).
    assert result.exit_code == 1 and "No space left on device" in result.stderr
    assert trust.read_bytes() == before, "the earlier trust file is left whole"
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_a_key_both_retired_and_current_is_listed_once(tmp_path: Path) -> None:
    # A rotation cut short after its link leaves the current key in keys/retired too: listed twice.
    home = tmp_path / "home"
    assert _invoke(home, "keys", "init").exit_code == 0
    keys = KeyStore(home)
    current = keys.current()
    keys.retired_dir.mkdir(parents=True, exist_ok=True)
    os.link(keys.current_path, keys.retired_dir / f"{current.key_id}.key")
    listed = json.loads(_invoke(home, "keys", "show", "--json").stdout)
    assert [(k["key_id"], k["status"]) for k in listed] == [(current.key_id, "current")]
    trust = tmp_path / "trust.json"
    assert _invoke(home, "keys", "trust-file", "-o", str(trust)).exit_code == 0
    assert [k["key_id"] for k in json.loads(trust.read_text())["bundle_keys"]] == [current.key_id]
