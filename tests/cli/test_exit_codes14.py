"""Exit codes, messages and output width of the command line, held to one convention (README, verifier.md).

0 ok; 1 the operation is refused or fails (a locked or damaged store, a run that does not verify); 2 the
input cannot be read or is not valid (a missing file, a bad argument, an unknown run id); 130 Ctrl-C.
"""

from __future__ import annotations

import fcntl
import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from bitexact.cli import COMMANDS, cli
from bitexact.errors import StoreError
from bitexact.health import WARN, Finding, HealthReport

RUN_LOOKUPS = [
    ["show", "{run}"],
    ["export", "{run}", "-o", "{tmp}/out.json"],
    ["repair", "{run}", "--by", "ops:a", "--note", "n"],
    ["redact", "{run}", "--field", "2:content.text", "--by", "dpo:a", "--reason", "r"],
    ["redaction", "status", "{run}"],
    ["redaction", "approve", "{run}", "--by", "dpo:b"],
    ["redaction", "reject", "{run}", "--by", "dpo:b", "--reason", "r"],
    ["capture", "backfill", "--run", "{run}", "--by", "dpo:a"],
]
"""Every command that takes the id of a stored run."""


def _invoke(home: Path, *args: str, columns: str | None = "200") -> Result:
    # COLUMNS None: unset, as in a CI log or a pipe with no terminal behind it.
    return CliRunner().invoke(cli, list(args), env={"BITEXACT_HOME": str(home), "COLUMNS": columns},
                              catch_exceptions=False)


def _args(template: list[str], run: str, tmp: Path) -> list[str]:
    return [part.format(run=run, tmp=tmp) for part in template]


@pytest.fixture
def recorded(tmp_path: Path) -> tuple[Path, str]:
    """A data directory holding the demo run, and its id."""
    home = tmp_path / "home"
    result = _invoke(home, "demo", "--json")
    assert result.exit_code == 0, result.output
    return home, json.loads(result.stdout)["run_id"]


# -- 1. a store kept locked or full fails the operation (exit 1), never "bad input" (2) ---------------------


@pytest.fixture
def locked(recorded: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Path, str]]:
    """The recorded store, its write lock held by someone else for as long as the test runs."""
    home, run_id = recorded
    monkeypatch.setenv("BITEXACT_LOCK_TIMEOUT", "0.2")
    with open(home / "bitexact.db.lock", "a", encoding="utf-8") as holder:
        fcntl.flock(holder, fcntl.LOCK_EX)  # another open file: it conflicts with the store's own flock
        yield home, run_id


@pytest.mark.parametrize("command", [RUN_LOOKUPS[2], RUN_LOOKUPS[3]], ids=["repair", "redact"])
def test_a_store_kept_locked_stops_repair_and_redact_with_exit_1(
        locked: tuple[Path, str], tmp_path: Path, command: list[str]) -> None:
    home, run_id = locked
    result = _invoke(home, *_args(command, run_id, tmp_path))
    assert result.exit_code == 1, result.output
    assert "stayed locked by process" in result.stderr, result.stderr


def test_a_redaction_whose_claim_cannot_land_exits_1_with_the_store_s_message(
        recorded: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full disk before the claim lands is a store failure: exit 1, as `keys rotate` or `demo` exit."""
    import bitexact.cli.audit as audit

    def full(*_: object, **__: object) -> list[str]:
        raise StoreError("database or disk is full")

    home, run_id = recorded
    monkeypatch.setattr(audit, "record_claim", full)
    result = _invoke(home, *_args(RUN_LOOKUPS[3], run_id, tmp_path))
    assert result.exit_code == 1 and "error: database or disk is full" in result.stderr, result.output


# -- 2. verify RUN on a damaged entries page names the run ----------------------------------------------------


def _damage_entries_root(database: Path) -> None:
    """Overwrite the header of the entries table's root page, as a torn write or a bad sector would."""
    with sqlite3.connect(database) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        (root,) = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = 'entries'").fetchone()
        (size,) = conn.execute("PRAGMA page_size").fetchone()
    conn.close()
    with open(database, "r+b") as file:
        file.seek((root - 1) * size)
        file.write(b"\x0d\xff\xff\xff\xff\xff\xff\xff")


@pytest.mark.parametrize("as_json", [False, True])
def test_verify_of_a_run_whose_entries_page_is_damaged_names_the_run(
        recorded: tuple[Path, str], as_json: bool) -> None:
    home, run_id = recorded
    _damage_entries_root(home / "bitexact.db")
    result = _invoke(home, "verify", run_id, *(["--json"] if as_json else []))
    assert result.exit_code == 1, result.output
    line = json.loads(result.stdout)["line"] if as_json else result.stdout.strip()
    assert line.startswith(f"FAIL: run {run_id}: "), line
    assert "malformed" in line, line


# -- 3. one condition, one exit code, whichever command meets it ---------------------------------------------


@pytest.mark.parametrize("command", RUN_LOOKUPS, ids=lambda c: " ".join(c[:2]))
def test_an_unknown_run_id_exits_2_from_every_command(
        recorded: tuple[Path, str], tmp_path: Path, command: list[str]) -> None:
    """But `capture backfill`: capture-controls.md says "Backfill exits 1 when ... the run does not exist"."""
    home, _ = recorded
    result = _invoke(home, *_args(command, "run-nope", tmp_path))
    assert result.exit_code == (1 if command[:2] == ["capture", "backfill"] else 2), result.output
    assert f"no run 'run-nope' in {home}" in result.stderr, result.stderr


@pytest.mark.parametrize("command", [["runs"], ["verify", "{run}"], *RUN_LOOKUPS], ids=lambda c: " ".join(c[:2]))
def test_a_store_that_does_not_open_exits_1_from_every_command(tmp_path: Path, command: list[str]) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "bitexact.db").write_bytes(b"not a database, not at all" * 10)
    result = _invoke(home, *_args(command, "run-x", tmp_path))
    assert result.exit_code == 1, result.output
    assert "cannot open the store at" in result.output, result.output


def test_a_run_that_does_not_read_back_exits_1_from_show_and_export(
        recorded: tuple[Path, str], tmp_path: Path) -> None:
    home, run_id = recorded
    _damage_entries_root(home / "bitexact.db")
    for command in (RUN_LOOKUPS[0], RUN_LOOKUPS[1]):
        result = _invoke(home, *_args(command, run_id, tmp_path))
        assert result.exit_code == 1 and "malformed" in result.stderr, result.output


# -- 4. off a terminal nothing is wrapped; on one, tables fit ------------------------------------------------


_RUN = "run-20261201T061823-e5071230"
_HINT = f"`bitexact repair {_RUN} --by NAME --note TEXT`"


@pytest.fixture
def unsealed_finding(monkeypatch: pytest.MonkeyPatch) -> None:
    """Health reports one unsealed run, its message ending in the command that repairs it."""
    import bitexact.cli.health as health

    finding = Finding(WARN, "run-unsealed", "no process records the run, yet it has no seal: its recording"
                      f" stopped before run_end, killed, cut off or failing to seal. {_HINT} records that its"
                      " history ends where it does", run_id=_RUN)
    monkeypatch.setattr(health, "run_health", lambda context: HealthReport.of([finding]))


def test_health_off_a_terminal_breaks_no_run_id_and_no_command(tmp_path: Path, unsealed_finding: None) -> None:
    result = _invoke(tmp_path / "home", "health", columns=None)
    assert result.exit_code == 1, result.output
    assert any(line.count(_RUN) == 2 and _HINT in line for line in result.stdout.splitlines()), result.stdout


@pytest.mark.parametrize("columns", [80, 60])
def test_health_on_a_terminal_s_width_fits_it(tmp_path: Path, unsealed_finding: None, columns: int) -> None:
    result = _invoke(tmp_path / "home", "health", columns=str(columns))
    lines = result.stdout.splitlines()
    assert max(map(len, lines)) <= columns, result.stdout
    # The run id stays whole in its column while the message column keeps room (at 80); narrower, it folds.
    assert any(f"│ {_RUN} │" in line for line in lines) == (columns == 80), result.stdout


def test_runs_off_a_terminal_keeps_a_long_run_id_on_one_line(tmp_path: Path) -> None:
    from bitexact.crypto.keystore import KeyStore
    from bitexact.recording import Recorder
    from bitexact.store import open_store

    home = tmp_path / "home"
    run_id = "run-" + "a-rather-long-run-id-from-a-ci-pipeline-" * 2 + "4711"
    store = open_store(home)
    try:
        Recorder(store, KeyStore(home).current_or_init()).start(name="ci", run_id=run_id)
    finally:
        store.close()
    piped = _invoke(home, "runs", columns=None)
    assert any(run_id in line for line in piped.stdout.splitlines()), piped.stdout
    narrow = _invoke(home, "runs", columns="80")
    assert max(map(len, narrow.stdout.splitlines())) <= 80, narrow.stdout


def test_capture_backfill_s_hint_off_a_terminal_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import bitexact
    from bitexact.sdk.stores import close_stores

    home = tmp_path / "home"
    run_id = "run-20261201T061823-e5071230-from-the-nightly-pipeline"
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "off")  # recorded whole: the backfill finds the card
    with bitexact.run(name="kept", run_id=run_id, home=home) as run:
        run.marker("paid with 4111 1111 1111 1111")
    close_stores()
    monkeypatch.delenv("BITEXACT_CAPTURE_POLICY")
    result = _invoke(home, "capture", "backfill", "--run", run_id, "--by", "dpo:alice", columns=None)
    assert result.exit_code == 0, result.output
    assert f"`bitexact redaction approve {run_id} --by NAME`" in result.stdout, result.stdout


# -- 5. every command's help states its exit codes -----------------------------------------------------------


def _every_command() -> Iterator[tuple[str, click.Command]]:
    context = click.Context(cli)

    def walk(command: click.Command, path: str) -> Iterator[tuple[str, click.Command]]:
        yield path, command
        if isinstance(command, click.Group):
            for name in command.list_commands(context):
                sub = command.get_command(context, name)
                assert sub is not None, name
                yield from walk(sub, f"{path} {name}")

    for name in COMMANDS:
        command = cli.get_command(context, name)
        assert command is not None, name
        yield from walk(command, name)


@pytest.mark.parametrize(("path", "command"), list(_every_command()), ids=lambda value: str(value))
def test_every_command_s_help_states_its_exit_codes(path: str, command: click.Command) -> None:
    shown = CliRunner().invoke(cli, [*path.split(), "--help"], catch_exceptions=False)
    assert shown.exit_code == 0, shown.output
    found = re.search(r"Exit\s+codes:(.*?)(?:\n\s*\n|$)", shown.output, re.S)
    stated = found.group(1) if found else ""
    assert stated, f"`bitexact {path} --help` states no exit codes:\n{shown.output}"
    # Success, and a usage error (click's 2), which every command can meet.
    assert {"0", "2"} <= set(re.findall(r"\b(0|1|2|130)\b", stated)), stated


# -- 6. a data directory that is a symlink to nowhere is said so ---------------------------------------------


@pytest.mark.parametrize("command", [["runs"], ["runs", "--json"], ["demo"], ["show", "run-x"]])
def test_a_data_directory_linked_to_nowhere_is_named_not_read_as_empty(tmp_path: Path, command: list[str]) -> None:
    from bitexact.cli.context import unusable_home

    home = tmp_path / "home"
    home.symlink_to(tmp_path / "unmounted" / "bitexact")
    result = _invoke(home, *command)
    assert result.exit_code == 1, result.output
    why = unusable_home(home)
    assert why is not None and f"error: {why}" in " ".join(result.stderr.split()), result.stderr
    assert "which does not exist" in why and "No runs" not in result.stdout and "Errno" not in result.stderr
    assert not (tmp_path / "unmounted").exists()  # nothing made through the link


def test_health_names_the_data_directory_linked_to_nowhere_in_the_same_words(tmp_path: Path) -> None:
    from bitexact.cli.context import unusable_home

    home = tmp_path / "home"
    home.symlink_to(tmp_path / "unmounted")
    report = json.loads(_invoke(home, "health", "--json").stdout)
    assert [f["message"] for f in report["findings"] if f["name"] == "store-unreadable"] == [unusable_home(home)]
