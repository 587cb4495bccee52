"""The operator's commands of issue 2 (keys, redact, repair, verify's flags, runs/show, demo), sixth review:
each test is a bug it found.

Every test runs the real `bitexact` console script in its own process, with BITEXACT_HOME (or HOME) under
the test's tmp_path and no BITEXACT_* setting of the machine's.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from cli.real_command import BITEXACT, clear_bitexact_env, command_env, run_bitexact

from bitexact.cli.summary import clock_of
from bitexact.crypto.keystore import KeyStore
from bitexact.recording import Recorder
from bitexact.store import DB_NAME, open_store

bx = run_bitexact


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_bitexact_env(monkeypatch)


def _demo(home: Path) -> tuple[str, str, Path]:
    """Record the demo run in ``home``: its run id, the recorder's public key and the bundle."""
    demo = bx(home, "demo", "--json")
    assert demo.returncode == 0, demo.stderr
    result = json.loads(demo.stdout)
    return str(result["run_id"]), str(result["public_key"]), Path(result["bundle"])


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# -- keys init: owner-only -------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["BITEXACT_HOME", "HOME"])
def test_keys_init_on_a_fresh_machine_makes_the_data_directory_owner_only(tmp_path: Path, where: str) -> None:
    """`bitexact keys init` on a fresh machine made the data directory with the umask's mode (0755, or
    0777 under umask 0) while the store makes the one it creates 0700 (docs/store.md): since the directory
    then exists, every later command kept that mode, and others could list it or, world-writable, swap
    its keys/ directory for their own recorder key."""
    if where == "HOME":
        home = tmp_path / "user" / ".bitexact"
        (tmp_path / "user").mkdir()
        env = command_env(home, HOME=str(tmp_path / "user"))
        del env["BITEXACT_HOME"]  # the default data directory, ~/.bitexact
        done = subprocess.run([BITEXACT, "keys", "init"], env=env, capture_output=True, text=True, timeout=120)
    else:
        home = tmp_path / "srv" / "bitexact"
        done = bx(home, "keys", "init")
    assert done.returncode == 0, done.stderr
    assert (home / "keys" / "recorder.key").is_file()
    for made in (home, home / "keys", home / "keys" / "recorder.key", home / "bitexact.db"):
        assert _mode(made) & 0o077 == 0, f"{made} is {oct(_mode(made))}, not owner-only"


# -- verify: malformed pins ------------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--expect-key", "--expect-recorder-key"])
def test_verify_refuses_a_malformed_pin_naming_its_flag(tmp_path: Path, flag: str) -> None:
    """`verify --expect-key abc` (a truncated paste, a typo) printed `FAIL: signature public_key is not
    the trusted key` with exit 1, as if the bundle were signed by someone else: a key that cannot be an
    ed25519 public key is a bad argument, refused with exit 2 naming the flag."""
    home = tmp_path / "home"
    run_id, _, bundle = _demo(home)
    for target, bad in ((str(bundle), "abc"), (run_id, "zz" * 32), (str(bundle), "ab" * 33), (run_id, "")):
        result = bx(home, "verify", target, flag, bad)
        assert result.returncode == 2, (target, bad, result.stdout, result.stderr)
        # The FAIL verdict on stdout, one line, as for any input verify cannot read (bundle spec §12.3).
        assert result.stdout.startswith("FAIL: ") and result.stdout.count("\n") == 1, result.stdout
        assert flag in result.stdout and "64 hex" in result.stdout, result.stdout
        assert "Traceback" not in result.stderr


def test_verify_still_takes_a_pin_in_upper_case(tmp_path: Path) -> None:
    """The pin check above keeps what docs/verifier.md allows: hex pins of either case."""
    home = tmp_path / "home"
    run_id, public_key, bundle = _demo(home)
    for target in (str(bundle), run_id):
        result = bx(home, "verify", target, "--expect-key", public_key.upper(), "--expect-recorder-key",
                    public_key.upper(), "--require-sealed")
        assert result.returncode == 0, result.stdout + result.stderr


# -- keys show / export: a key is printed whole, on its line -------------------------------------------


def test_keys_show_and_export_never_split_a_public_key_across_lines(tmp_path: Path) -> None:
    """On an 80-column terminal (and any pipe: rich then assumes 80), `keys show` printed each key's
    status and id on one line and its public key on the next (a narrower terminal broke the hex itself),
    and `export` did the same to "signed by key ID (PUBLIC KEY)": a key copied or cut from the output
    was not the key."""
    home = tmp_path / "home"
    run_id, public_key, _ = _demo(home)
    assert bx(home, "keys", "rotate").returncode == 0
    shown = bx(home, "keys", "show", COLUMNS="60")
    assert shown.returncode == 0, shown.stderr
    listed = json.loads(bx(home, "keys", "show", "--json").stdout)
    lines = shown.stdout.splitlines()
    assert len(lines) == len(listed) == 2, shown.stdout
    for line, key in zip(lines, listed, strict=True):
        assert line.split() == [key["status"], key["key_id"], key["public_key"]], shown.stdout
    exported = bx(home, "export", run_id, "-o", str(tmp_path / "run.json"), COLUMNS="60")
    assert exported.returncode == 0, exported.stderr
    current = listed[0]
    assert f"signed by key {current['key_id']} ({current['public_key']})" in exported.stdout.splitlines()[-1], \
        exported.stdout
    assert public_key == listed[1]["public_key"]


# -- redact / export --redact: recorded data in an error ---------------------------------------------------


def test_a_refused_field_never_writes_escape_sequences_from_recorded_keys(tmp_path: Path) -> None:
    """`redact RUN --field 1:nope` (and `export --redact 1:nope`) list the step's committed paths, which are
    the recorded data's own keys (what an agent saw), and wrote them raw to stderr: a key holding
    `\\x1b[2J` cleared the operator's terminal, one holding U+202E reversed the line."""
    home = tmp_path / "home"
    store = open_store(home)
    try:
        writer = Recorder(store, KeyStore(home).current_or_init()).start(name="odd")
        writer.append("tool_call", {"tool": "t", "\x1b[2J\x1b[31mred": 1, "r": {"\u202eevil": 2}})
        writer.seal()
        run_id = writer.run_id
    finally:
        store.close()
    for args in (("redact", run_id, "--field", "1:nope", "--by", "dpo", "--reason", "erasure"),
                 ("export", run_id, "-o", str(tmp_path / "run.json"), "--redact", "1:nope")):
        refused = bx(home, *args, NO_COLOR="1")
        assert refused.returncode == 2, refused.stderr
        assert "no committed path 'nope'" in refused.stderr
        assert "\x1b" not in refused.stderr and "\u202e" not in refused.stderr, repr(refused.stderr)
        assert "\\x1b[2J" in refused.stderr and "\\u202e" in refused.stderr, refused.stderr


# -- -o: a device or a pipe ----------------------------------------------------------------------------------


def test_o_never_replaces_a_device_or_a_pipe_with_a_file(tmp_path: Path) -> None:
    """`export -o` and `keys trust-file -o` write under a temporary name and rename it over the target,
    so `-o /dev/null` (as root, in a container or CI) replaced the machine's /dev/null with a regular file
    holding the bundle, and a named pipe another process was to read was replaced the same way: a target
    that exists and is not a regular file is refused (exit 2), and left as it is."""
    home = tmp_path / "home"
    run_id, _, _ = _demo(home)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    targets = [fifo]
    if os.geteuid() == 0:  # a device node of our own, the same kind as /dev/null (mknod needs root)
        device = tmp_path / "null"
        os.mknod(device, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        targets.append(device)
    for target in targets:
        kind = stat.S_IFMT(target.lstat().st_mode)
        for args in (("export", run_id, "-o", str(target)), ("keys", "trust-file", "-o", str(target))):
            result = bx(home, *args)
            assert result.returncode == 2, (args, result.stdout, result.stderr)
            assert str(target) in result.stderr and "not a regular file" in result.stderr, result.stderr
            assert stat.S_IFMT(target.lstat().st_mode) == kind, f"{args}: {target} was replaced"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["home", *(t.name for t in targets)])


@pytest.mark.parametrize(("ts", "shown"), [
    ("2026-11-30T10:15:30.123456+00:00", "10:15:30.123"),
    ("2026-11-30T10:15:30+00:00", "10:15:30"),  # microseconds 0: isoformat() writes no fraction
    ("2026-11-30T10:15:30.5Z", "10:15:30.5"),
    ("yesterday\x1b[2J", "yesterday\\x1b[2J"),  # not ISO: shown as it is, never as an escape sequence
])
def test_show_ts_column_reads_the_time_instead_of_slicing_it(ts: str, shown: str) -> None:
    """`show` sliced `ts[11:23]`: an entry whose microseconds were 0 (no fraction in ISO form) showed
    `10:15:30+00:`, and a ts of another shape was cut at random or wrote its control characters raw."""
    assert clock_of(ts) == shown


@pytest.mark.parametrize(("args", "code"), [
    (["runs"], 0),
    (["runs", "--json"], 0),
    (["show", "run-nope"], 2),
    (["redact", "run-nope", "--field", "1:x", "--by", "dpo:a", "--reason", "r"], None),
    (["repair", "run-nope", "--by", "ops:a", "--note", "n"], None),
    (["redaction", "status", "run-nope"], None),
])
def test_looking_up_runs_in_a_data_directory_with_no_store_makes_no_store(
    tmp_path: Path, args: list[str], code: int | None,
) -> None:
    """`show`, `redact`, `repair`, `redaction status` and `runs` in a data directory holding no store left
    an empty `bitexact.db` behind (as `export` did before it was fixed): a lookup must not make a store."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    result = run_bitexact(home, *args)
    assert "Traceback" not in result.stderr, result.stderr
    if code is not None:
        assert result.returncode == code, (result.stdout, result.stderr)
    else:
        assert result.returncode in (1, 2) and "no run 'run-nope'" in result.stderr, result.stderr
    assert not (home / DB_NAME).exists()
    if args[0] == "runs":
        assert result.stdout.strip() == "[]" if "--json" in args else "No runs" in result.stdout


def test_keys_init_and_rotate_change_no_key_when_the_store_does_not_open(tmp_path: Path) -> None:
    """With a store that does not open (another application's SQLite file in its place), `keys init`
    made the key and then failed: its retry said the key already existed. `keys rotate` rotated and failed,
    so a retry rotated a second time."""
    import sqlite3

    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    foreign = sqlite3.connect(home / DB_NAME)
    foreign.execute("CREATE TABLE notes (body TEXT)")
    foreign.commit()
    foreign.close()
    refused = run_bitexact(home, "keys", "init")
    assert refused.returncode != 0 and "Traceback" not in refused.stderr, refused.stderr
    assert not (home / "keys").exists() or not any((home / "keys").iterdir())

    other = tmp_path / "other"
    assert run_bitexact(other, "keys", "init").returncode == 0
    before = KeyStore(other).current().key_id
    (other / DB_NAME).unlink()
    for suffix in ("-wal", "-shm"):
        Path(f"{other / DB_NAME}{suffix}").unlink(missing_ok=True)
    (other / DB_NAME).mkdir()  # a directory in the store's place: it does not open
    rotated = run_bitexact(other, "keys", "rotate")
    assert rotated.returncode != 0 and "Traceback" not in rotated.stderr, rotated.stderr
    assert KeyStore(other).current().key_id == before
    assert [k.status for k in KeyStore(other).public_keys()] == ["current"]
