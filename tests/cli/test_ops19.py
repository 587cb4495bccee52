"""Operator commands, session 19: writes onto a damaged store, `redact --resume` with nothing pending under a
reader, `keys rotate --compromised` pinned to a key, and `verify FILE`'s one stat of its target."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from bitexact.cli import cli
from bitexact.crypto.keystore import KeyStore
from bitexact.errors import StoreDamagedError
from bitexact.recording import Recorder
from bitexact.recording.requests import file_request
from bitexact.store import open_store
from cli.real_command import clear_bitexact_env, command_env, killed_run, run_bitexact
from store.pages import overwrite_page, page_size_and, root_page

# -- 1. a write onto a store whose pages do not all read back is refused ---------------------------------------


def _unsealed_run(home: Path, markers: int = 40) -> str:
    """An unsealed run of ``markers`` markers (its entries span several pages), its store checkpointed and closed."""
    store = open_store(home)
    try:
        writer = Recorder(store, KeyStore(home).current_or_init()).start(name="crashed")
        for i in range(markers):
            writer.append("marker", {"label": f"working {i}", "pad": "x" * 200})
        run_id = writer.run_id
    finally:
        store.close()
    return run_id


def _wreck_first_leaf(home: Path) -> None:
    """Overwrite the first leaf page of the entries table: SQLite reads it as "database disk image is
    malformed", while an append (which goes to the last leaf) never reads it."""
    database = home / "bitexact.db"
    page_size, rows = page_size_and(
        database, "SELECT pageno, pagetype FROM dbstat WHERE name = 'entries' ORDER BY path")
    leaves = [page for page, kind in rows if kind == "leaf"]
    assert len(leaves) > 2  # the append's leaf is another one
    overwrite_page(database, page_size, leaves[0])


def _steps(home: Path, run_id: str) -> int:
    connection = sqlite3.connect(home / "bitexact.db")
    try:
        return int(connection.execute("SELECT steps FROM runs WHERE run_id = ?", (run_id,)).fetchone()[0])
    finally:
        connection.close()


def _run_count(home: Path) -> int:
    connection = sqlite3.connect(home / "bitexact.db")
    try:
        return int(connection.execute("SELECT count(*) FROM runs").fetchone()[0])
    finally:
        connection.close()


def _damaged_message(home: Path, stderr: str) -> None:
    first, hint = stderr.strip().splitlines()
    assert first.startswith(f"error: the store at {home / 'bitexact.db'} is damaged (")
    assert first.endswith("), so nothing was written; the file was changed outside BitExact, or its disk failed;"
                          " restore bitexact.db from a backup")
    assert hint == "`bitexact health` lists what else in the data directory is damaged."


def test_repair_and_redact_on_a_damaged_store_are_refused_and_write_nothing(tmp_path: Path) -> None:
    """`repair` appended "repair recorded at step 40" onto a store whose other entries page SQLite calls
    malformed (exit 0), while `show` and `health` called the store damaged."""
    home = tmp_path / "home"
    run_id = _unsealed_run(home)
    _wreck_first_leaf(home)
    steps = _steps(home, run_id)
    repaired = run_bitexact(home, "repair", run_id, "--by", "ops:alice", "--note", "host lost power")
    assert repaired.returncode == 1, repaired.stdout
    _damaged_message(home, repaired.stderr)
    for args in (("redact", "--resume", run_id), ("redact", run_id, "--field", "0:name", "--by", "a", "--reason", "r")):
        redacted = run_bitexact(home, *args)
        assert redacted.returncode == 1, (args, redacted.stdout)
        _damaged_message(home, redacted.stderr)
    assert _steps(home, run_id) == steps


def test_keys_rotate_on_a_damaged_store_rotates_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _unsealed_run(home)
    _wreck_first_leaf(home)
    before = (home / "keys" / "recorder.key").read_bytes()
    rotated = run_bitexact(home, "keys", "rotate")
    assert rotated.returncode == 1
    _damaged_message(home, rotated.stderr)
    assert (home / "keys" / "recorder.key").read_bytes() == before
    assert not (home / "keys" / "retired").exists() or not any((home / "keys" / "retired").iterdir())


def test_an_sdk_run_on_a_damaged_store_records_what_it_can_and_health_says_damaged(tmp_path: Path) -> None:
    """The operator's commands check the store before they write; the SDK does not (Store.trust_intact: a whole
    file read before every agent's first run would cost seconds on a large store). Its run lands on pages of its
    own and verifies, and health still calls the store damaged."""
    home = tmp_path / "home"
    _unsealed_run(home)
    _wreck_first_leaf(home)
    agent = "import bitexact\nwith bitexact.run(name='after') as r:\n    r.marker('m')\nprint(r.run_id, r.sealed)\n"
    done = subprocess.run([sys.executable, "-c", agent], env=command_env(home), capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    run_id, sealed = done.stdout.split()
    assert sealed == "True" and _run_count(home) == 2
    assert run_bitexact(home, "verify", run_id).returncode == 0
    health = run_bitexact(home, "health", "--json")
    assert health.returncode == 2 and "store-damaged" in health.stdout


def test_import_on_a_damaged_store_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _unsealed_run(home)
    _wreck_first_leaf(home)
    log = Path(__file__).parent.parent / "sessions" / "fixtures" / "codex" / "jsonl_lifecycle_two_turns_and_snapshot.jsonl"
    imported = run_bitexact(home, "import", "session", str(log), "--json")
    assert imported.returncode == 1
    assert "is damaged (" in imported.stderr and "so nothing was written" in imported.stderr
    assert _run_count(home) == 1


# -- 2. `redact --resume` of a run never redacted, while a reader keeps the WAL ----------------------------------

def test_resume_of_a_run_never_redacted_under_a_reader_says_nothing_pending(tmp_path: Path) -> None:
    """With a sqlite3 shell holding a read transaction, `redact --resume` of a run that holds no redaction said
    "the redacted value is gone from the database, but a reader kept the WAL…" and exited 1. A run that
    was redacted still gets that message: its value's copy may be in the WAL."""
    home = tmp_path / "home"
    redacted = json.loads(run_bitexact(home, "demo", "--json").stdout)["run_id"]
    assert run_bitexact(home, "redact", redacted, "--field", "1:principal", "--by", "a", "--reason", "r").returncode == 0
    never = killed_run(home)
    reader = sqlite3.connect(home / "bitexact.db", isolation_level=None)
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT count(*) FROM entries").fetchone()
        resumed = run_bitexact(home, "redact", "--resume", never)
        assert (resumed.returncode, resumed.stdout.strip(), resumed.stderr) == (0, f"nothing pending on {never}", "")
        real = run_bitexact(home, "redact", "--resume", redacted)
        assert real.returncode == 1
        assert "the redacted value is gone from the database, but a reader kept the WAL from being emptied" \
            in real.stderr
    finally:
        reader.execute("COMMIT")
        reader.close()


# -- 3. `keys rotate --compromised` pinned to the exposed key -----------------------------------------------


def _current_key(home: Path) -> str:
    shown = json.loads(run_bitexact(home, "keys", "show", "--json").stdout)
    [current] = [key["key_id"] for key in shown if key["status"] == "current"]
    return str(current)


def test_a_compromised_rotation_that_lost_the_race_is_refused_naming_both_keys(tmp_path: Path) -> None:
    """A plain rotation that took the lock first made a new key; `--compromised` then retired that new key as
    compromised and left the exposed one retired, in every trust file. Pinned, it refuses and changes nothing."""
    home = tmp_path / "home"
    assert run_bitexact(home, "keys", "init").returncode == 0
    exposed = _current_key(home)
    assert run_bitexact(home, "keys", "rotate").returncode == 0  # the other operator's rotation, first
    newer = _current_key(home)
    key_files = {path.name: path.read_bytes() for path in (home / "keys").rglob("*") if path.is_file()}
    pinned = run_bitexact(home, "keys", "rotate", "--compromised", "--expect-current", exposed)
    assert pinned.returncode == 1
    assert pinned.stderr.startswith(f"error: the current recorder key is {newer}, not {exposed} (--expect-current),"
                                    " so nothing was rotated")
    assert f"`bitexact keys mark-compromised {exposed}`" in pinned.stderr
    assert {path.name: path.read_bytes() for path in (home / "keys").rglob("*") if path.is_file()} == key_files
    assert _current_key(home) == newer
    again = run_bitexact(home, "keys", "rotate", "--compromised", "--expect-current", newer, "--json")
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["retired"]["key_id"] == newer


def test_expect_current_that_is_no_key_id_is_a_usage_error(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert run_bitexact(home, "keys", "init").returncode == 0
    typo = run_bitexact(home, "keys", "rotate", "--compromised", "--expect-current", "D85AAE05")
    assert typo.returncode == 2
    assert "'D85AAE05' is not a recorder key id" in typo.stderr
    assert "--expect-current KEY_ID" in run_bitexact(home, "keys", "rotate", "--help").stdout


# -- 4. `verify FILE` looks at its target once ------------------------------------------------------------------


def test_verify_file_stats_its_target_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`verify FILE` asked the file system twice about FILE: whether it exists (a file, or a run id), then its
    size (whether a spinner shows); and the verifier twice more (a directory? there at all?). One each now,
    where it was four. The real os.stat runs; only the calls naming the bundle are counted."""
    home = tmp_path / "home"
    run_id = json.loads(run_bitexact(home, "demo", "--json").stdout)["run_id"]
    bundle = tmp_path / "run.bundle.json"
    assert run_bitexact(home, "export", run_id, "-o", str(bundle)).returncode == 0
    clear_bitexact_env(monkeypatch)
    real_stat = os.stat
    looked: list[str] = []

    def counted(path: object, *args: object, **kwargs: object) -> os.stat_result:
        if os.fspath(path) == str(bundle):  # type: ignore[arg-type]
            looked.append(str(path))
        return real_stat(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "stat", counted)
    result = CliRunner().invoke(cli, ["--home", str(home), "verify", str(bundle)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert len(looked) == 2


def test_a_redaction_request_on_a_damaged_store_is_refused(tmp_path: Path) -> None:
    """Custody records (a dual-control request, a rejection, an opening) are written by the store directly,
    not through a recorder: they too landed on a damaged store."""
    home = tmp_path / "home"
    run_id = _unsealed_run(home)
    _wreck_first_leaf(home)
    connection = sqlite3.connect(home / "bitexact.db")
    try:
        before = connection.execute("SELECT count(*) FROM custody").fetchone()[0]
    finally:
        connection.close()
    last = _steps(home, run_id) - 1  # on the last leaf, which reads: the request's own checks pass
    store = open_store(home)
    try:
        with pytest.raises(StoreDamagedError, match="is damaged"):
            file_request(store, run_id, [f"{last}:label"], by="alice", reason="r")
    finally:
        store.close()
    connection = sqlite3.connect(home / "bitexact.db")
    try:
        assert connection.execute("SELECT count(*) FROM custody").fetchone()[0] == before
    finally:
        connection.close()


def test_an_append_that_meets_damage_is_said_to_be_damage(tmp_path: Path) -> None:
    """A store damaged after the recorder's check (its disk failing mid-run): the append failed with a plain
    StoreError, so the command gave no `bitexact health` hint and a caller could not tell damage by type."""
    home = tmp_path / "home"
    run_id = _unsealed_run(home, markers=1)
    store = open_store(home)
    try:
        writer = Recorder(store, KeyStore(home).current_or_init()).attach(run_id)  # the check passes here
        overwrite_page(home / "bitexact.db", *root_page(home / "bitexact.db", "entries"))
        with pytest.raises(StoreDamagedError) as raised:
            writer.append("marker", {"label": "after"})
        assert str(raised.value).count("restore bitexact.db from a backup") == 1
    finally:
        store.close()


def test_keys_init_on_a_damaged_store_makes_no_key(tmp_path: Path) -> None:
    """`keys init` made the key file, then the store refused its row: "do not run the command again", with a
    key the store never recorded. Refused first now, as `keys rotate` is."""
    home = tmp_path / "home"
    _unsealed_run(home)
    _wreck_first_leaf(home)
    for key in (home / "keys").rglob("*.key"):
        key.unlink()
    made = run_bitexact(home, "keys", "init")
    assert made.returncode == 1
    _damaged_message(home, made.stderr)
    assert not (home / "keys" / "recorder.key").exists()
