"""What a user sees from every `bitexact` command (the seventh CLI review): each test is a bug it found.

Every test runs the real `bitexact` console script in its own process, with BITEXACT_HOME under the test's
tmp_path and no BITEXACT_* setting of the machine's.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli.real_command import clear_bitexact_env, demo_run, run_bitexact

import bitexact

bx = run_bitexact


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_bitexact_env(monkeypatch)


# -- runs: the table ------------------------------------------------------------------------------------


def test_runs_table_with_a_long_run_id_still_shows_every_column(tmp_path: Path) -> None:
    """The run column never wrapped: a 68-character run id (an imported session's, an SDK run_id) took
    the whole 80-column table, so steps, sealed, started and kinds printed as empty cells."""
    home = tmp_path / "home"
    run_id = "session-claude-code-2026-11-30-very-long-identifier-0123456789abcdef"
    with bitexact.run(name="long", run_id=run_id, home=home) as r:
        for actor in ("a", "b", "c"):
            r.human_decision(actor, "approve")
    shown = bx(home, "runs", COLUMNS="80")
    assert shown.returncode == 0, shown.stderr
    assert "human_decision×3" in shown.stdout, shown.stdout
    assert "│     5 │ yes" in shown.stdout, shown.stdout
    # Folded, never cut: every character of the id is on the screen.
    folded = "".join(line.split("│")[1].strip() for line in shown.stdout.splitlines() if line.startswith("│"))
    assert run_id in folded, shown.stdout


# -- verify RUN: a store that does not open -------------------------------------------------------------


@pytest.mark.parametrize("store", ["garbage", "dangling link"])
@pytest.mark.parametrize("as_json", [False, True])
def test_verify_of_a_run_in_a_store_that_does_not_open_names_the_store_not_a_missing_file(
        tmp_path: Path, as_json: bool, store: str) -> None:
    """`verify RUN` with a store that exists but does not open (not a database, a dangling link in its place;
    a full disk does the same) said "FAIL: no such file: RUN", hiding the store's error that every other
    command reports."""
    home = tmp_path / "home"
    home.mkdir()
    if store == "garbage":
        (home / "bitexact.db").write_bytes(b"not a database, not at all" * 10)
    else:
        (home / "bitexact.db").symlink_to(tmp_path / "gone.db")
    shown = bx(home, "verify", "run-x", *(["--json"] if as_json else []), cwd=tmp_path)
    assert shown.returncode == 1, shown  # a store that does not open: exit 1, as from every command
    line = json.loads(shown.stdout)["line"] if as_json else shown.stdout.strip()
    assert line.startswith("FAIL: no such file: run-x, nor a run that can be looked up: cannot open the store at "), line
    assert not (tmp_path / "gone.db").exists()  # looking the run up made no store through the link


@pytest.mark.parametrize("as_json", [False, True])
def test_verify_open_in_a_store_that_does_not_open_names_the_store_not_a_missing_run(
        tmp_path: Path, as_json: bool) -> None:
    """`verify RUN --open` with a store that does not open said "'RUN' is not a run in HOME": it may well be."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "bitexact.db").write_bytes(b"not a database, not at all" * 10)
    candidate = tmp_path / "candidate.json"
    candidate.write_text('"x"', encoding="utf-8")
    shown = bx(home, "verify", "run-x", "--open", "1:a", "--candidate-file", str(candidate), "--by", "alice",
               *(["--json"] if as_json else []), cwd=tmp_path)
    assert shown.returncode == 1, shown
    said = json.loads(shown.stdout)["error"] if as_json else shown.stderr
    assert "cannot open the store at " in said, said
    assert "is not a run in" not in said


# -- --home / BITEXACT_HOME -------------------------------------------------------------------------------


@pytest.mark.parametrize("given", ["env", "option"])
def test_a_home_under_a_tilde_that_is_a_file_is_refused(tmp_path: Path, given: str) -> None:
    """The "is a file, not a directory" check read `~/x` unexpanded (an env file or a quoted option is
    never expanded by a shell) while the data directory is the expanded one: `runs` said "No runs in
    ~/x yet" and exited 0 for a data directory that is a file."""
    (tmp_path / "afile").write_text("not a directory\n", encoding="utf-8")
    args = ["runs"] if given == "env" else ["--home", "~/afile", "runs"]
    shown = bx(tmp_path / "unused", *args, HOME=str(tmp_path), BITEXACT_HOME="~/afile")
    assert shown.returncode == 2, shown
    assert "is a file, not a directory" in shown.stderr, shown.stderr
    assert ("BITEXACT_HOME" if given == "env" else "--home") in shown.stderr, shown.stderr
    assert shown.stdout == ""


# -- verify RUN: a damaged stored run is a verdict ----------------------------------------------------------


@pytest.mark.parametrize("damage", ["deleted", "garbled"])
@pytest.mark.parametrize("as_json", [False, True])
def test_verify_of_a_damaged_stored_run_is_a_fail_verdict(tmp_path: Path, damage: str, as_json: bool) -> None:
    """`verify RUN` of a stored run with an entry deleted (or no longer JSON) printed a bare "error: ..." line:
    no FAIL: line, and with --json nothing at all on stdout."""
    import sqlite3

    home = tmp_path / "home"
    run_id = demo_run(home)
    with sqlite3.connect(home / "bitexact.db") as conn:
        if damage == "deleted":
            conn.execute("DELETE FROM entries WHERE run_id = ? AND step = 3", (run_id,))
        else:
            conn.execute("UPDATE entries SET body = ? WHERE run_id = ? AND step = 3", (b"{{{", run_id))
    shown = bx(home, "verify", run_id, *(["--json"] if as_json else []))
    assert shown.returncode == 1, shown
    line = json.loads(shown.stdout)["line"] if as_json else shown.stdout.strip()
    assert line.startswith(f"FAIL: run {run_id}: "), line
    assert ("step 3 is missing" if damage == "deleted" else "does not read back") in line, line


@pytest.mark.parametrize("as_json", [False, True])
def test_verify_of_a_stored_run_with_a_recorder_key_that_does_not_load_is_a_verdict(
        tmp_path: Path, as_json: bool) -> None:
    """`verify RUN` on a host whose recorder key file does not load printed a bare "error: ..." line: no
    FAIL: line, and with --json nothing at all on stdout."""
    home = tmp_path / "home"
    run_id = demo_run(home)
    (home / "keys" / "recorder.key").write_text("not a key\n", encoding="utf-8")
    shown = bx(home, "verify", run_id, *(["--json"] if as_json else []))
    assert shown.returncode == 2, shown
    line = json.loads(shown.stdout)["line"] if as_json else shown.stdout.strip()
    assert line.startswith("FAIL: ") and "recorder.key" in line, line


# -- Ctrl-C -----------------------------------------------------------------------------------------------

_CTRL_C_WHILE_LOADING = """
import sys

class CtrlC:
    '''Ctrl-C arriving while the command's modules load (about half a second on a busy machine).'''
    def find_spec(self, name, path=None, target=None):
        if name == "rich.table":
            raise KeyboardInterrupt
        return None

sys.meta_path.insert(0, CtrlC())
sys.argv = ["bitexact", "runs"]
from bitexact.cli import main
main()
"""


def test_ctrl_c_while_the_command_loads_exits_130_without_a_traceback(tmp_path: Path) -> None:
    """README: every command "exits 130 when Ctrl-C stops it". Ctrl-C in the first half second, while
    `bitexact.cli` imports its modules, printed a KeyboardInterrupt traceback and died of the signal."""
    import subprocess
    import sys

    from cli.real_command import command_env

    done = subprocess.run([sys.executable, "-c", _CTRL_C_WHILE_LOADING], env=command_env(tmp_path / "home"),
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 130, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    assert "interrupted" in done.stderr, done.stderr


# -- a lookup makes no store ---------------------------------------------------------------------------------


def test_capture_backfill_of_a_run_in_a_data_directory_with_no_store_makes_no_store(tmp_path: Path) -> None:
    """`capture backfill --run RUN` in a data directory holding no store left an empty `bitexact.db` (and its
    lock file) behind, as `show`, `redact` and `repair` did before they were fixed: a lookup makes no store."""
    home = tmp_path / "home"
    home.mkdir(mode=0o700)
    shown = bx(home, "capture", "backfill", "--run", "run-nope", "--by", "dpo:alice")
    assert shown.returncode == 1, shown  # an unknown run id: exit 1 for backfill, as the capture contract says
    assert "no run 'run-nope'" in shown.stderr, shown.stderr
    assert list(home.iterdir()) == []


# -- verify a bundle read from a pipe -------------------------------------------------------------------------


def test_verify_of_a_multi_line_bundle_from_a_pipe_verifies(tmp_path: Path) -> None:
    """`verify /dev/stdin` (or `verify <(curl ...)`) of a valid pretty-printed JSON bundle said "FAIL: bundle is
    not valid JSON: Extra data": the first line was read from the pipe, then the path opened again for the
    rest, which a pipe does not give twice."""
    import subprocess

    from cli.real_command import BITEXACT, command_env

    home = tmp_path / "home"
    run_id = demo_run(home)
    bundle = tmp_path / "run.bundle.json"
    assert bx(home, "export", run_id, "-o", str(bundle)).returncode == 0
    pretty = json.dumps(json.loads(bundle.read_bytes()), indent=2).encode("utf-8")
    (tmp_path / "pretty.json").write_bytes(pretty)
    assert bx(home, "verify", str(tmp_path / "pretty.json")).returncode == 0  # the same bytes as a file verify
    done = subprocess.run([BITEXACT, "verify", "/dev/stdin"], input=pretty, env=command_env(home),
                          capture_output=True, timeout=60, check=False)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert done.stdout.decode().startswith(f"OK: {run_id} - "), done.stdout


def test_verify_of_an_endless_input_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    """`verify /dev/zero` (an endless input with no line break, like a device or a stuck pipe) read its "first
    line" for ever, growing by about 1 GiB a second until the machine ran out of memory. It is refused once
    past the largest document the verifier reads (256 MiB)."""
    import resource
    import subprocess

    from cli.real_command import BITEXACT, command_env

    def limited() -> None:  # the address space a bounded read needs, with room; an unbounded one dies here
        resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))

    done = subprocess.run([BITEXACT, "verify", "/dev/zero"], env=command_env(tmp_path / "home"), capture_output=True,
                          text=True, timeout=120, check=False, preexec_fn=limited)
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr[-2000:])
    assert done.stdout.startswith("FAIL: bundle is not valid JSON: "), done.stdout
    assert "over the limit" in done.stdout, done.stdout


def test_verify_of_a_jsonl_stream_with_an_endless_line_is_refused_in_bounded_memory(tmp_path: Path) -> None:
    """A JSONL bundle whose header is followed by an endless line (a stuck producer behind a pipe) was read
    into memory without bound, as `verify /dev/zero` was."""
    import resource
    import shlex
    import subprocess

    from cli.real_command import BITEXACT, command_env

    home = tmp_path / "home"
    run_id = demo_run(home)
    bundle = tmp_path / "run.jsonl"
    assert bx(home, "export", run_id, "-o", str(bundle), "--format", "jsonl").returncode == 0
    header = bundle.read_bytes().splitlines(keepends=True)[0]

    def limited() -> None:  # the address space a bounded read needs, with room; an unbounded one dies here
        resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))

    (tmp_path / "header.jsonl").write_bytes(header)
    script = f"cat {shlex.quote(str(tmp_path / 'header.jsonl'))} /dev/zero | {shlex.quote(BITEXACT)} verify /dev/stdin"
    done = subprocess.run(["sh", "-c", script], env=command_env(home), capture_output=True, text=True,
                          timeout=120, check=False, preexec_fn=limited)
    assert done.returncode == 1, (done.returncode, done.stdout, done.stderr[-2000:])
    assert done.stdout.startswith("FAIL: "), done.stdout
    assert "over the limit" in done.stdout, done.stdout


@pytest.mark.parametrize(("flag", "said"), [
    ("--trust-file", "FAIL: trust file is not valid JSON: document is over the limit of "),
    ("--expect-tsa", "FAIL: no such file: /dev/zero (File too large)"),
])
def test_verify_with_an_endless_pin_file_is_refused_in_bounded_memory(tmp_path: Path, flag: str, said: str) -> None:
    """`verify --trust-file /dev/zero` (or `--expect-tsa`: a device, a stuck pipe) read the file whole, without
    bound, until the machine ran out of memory (under a memory limit: "FAIL: MemoryError")."""
    import resource
    import subprocess

    from cli.real_command import BITEXACT, command_env

    home = tmp_path / "home"
    run_id = demo_run(home)
    bundle = tmp_path / "run.bundle.json"
    assert bx(home, "export", run_id, "-o", str(bundle)).returncode == 0

    def limited() -> None:  # the address space a bounded read needs, with room; an unbounded one dies here
        resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))

    done = subprocess.run([BITEXACT, "verify", str(bundle), flag, "/dev/zero"], env=command_env(home),
                          capture_output=True, text=True, timeout=120, check=False, preexec_fn=limited)
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr[-2000:])
    assert done.stdout.startswith(said), done.stdout
