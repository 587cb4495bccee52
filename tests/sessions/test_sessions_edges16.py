"""Session import and `bitexact sessions ...`: regression tests, each for a defect the sixteenth audit found.

Each test runs the real `bitexact` console script in its own process against a data directory of its own,
on real files (a FIFO, /dev/zero, a store and keys made by the command itself).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from cli.real_command import BITEXACT, command_env, run_bitexact

FIXTURES = Path(__file__).parent / "fixtures"
CLAUDE = FIXTURES / "claude" / "subagent_lifecycle_and_status.jsonl"


def _digests(directory: Path) -> dict[str, str]:
    """Every regular file below ``directory``, by relative path, with its SHA-256."""
    return {str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(directory.rglob("*")) if p.is_file() and not p.is_symlink()}


def _one_line(text: str) -> str:
    return " ".join(text.split())


# -- 1. sanitize never rewrites BitExact's own files ---------------------------------------------------------


def _workspace_with_home(tmp_path: Path) -> tuple[Path, Path]:
    """A workspace holding artifacts and, below it, a data directory with one imported run."""
    workspace = tmp_path / "ws"
    (workspace / "artifacts").mkdir(parents=True)
    log = workspace / "artifacts" / "session.jsonl"
    shutil.copy(CLAUDE, log)
    home = workspace / ".bitexact"
    imported = run_bitexact(home, "import", "session", str(log))
    assert imported.returncode == 0, imported.stderr
    return workspace, home


def test_sanitize_refuses_a_directory_that_holds_the_data_directory(tmp_path: Path) -> None:
    """The audit's DIR held the data directory: exit 0, the store rewritten as text and the recorder key
    (a PEM private key, a credential shape) replaced by ***."""
    workspace, home = _workspace_with_home(tmp_path)
    before = _digests(home)
    result = run_bitexact(home, "sessions", "sanitize", str(workspace), "--mask", "claude")
    assert result.returncode == 2
    said = _one_line(result.stderr)
    assert f"DIR: {workspace} holds BitExact's data directory {home}" in said
    assert "Nothing was changed" in said
    assert _digests(home) == before
    assert (workspace / "artifacts" / "session.jsonl").read_bytes() == CLAUDE.read_bytes()


@pytest.mark.parametrize("where", ["home", "inside"])
def test_sanitize_refuses_the_data_directory_and_a_directory_inside_it(tmp_path: Path, where: str) -> None:
    _workspace, home = _workspace_with_home(tmp_path)
    target = home if where == "home" else home / "keys"
    before = _digests(home)
    result = run_bitexact(home, "sessions", "sanitize", str(target), "--mask", "a")
    assert result.returncode == 2
    verb = "is" if where == "home" else "is inside"
    assert f"DIR: {target} {verb} BitExact's data directory {home}" in _one_line(result.stderr)
    assert _digests(home) == before


def test_sanitize_refuses_a_directory_holding_a_capture_key_in_force(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    key = tree / "capture.key"
    key.write_bytes(b"\x01" * 32)
    result = run_bitexact(tmp_path / "home", "sessions", "sanitize", str(tree), BITEXACT_CAPTURE_KEY=str(key))
    assert result.returncode == 2
    assert f"DIR: {tree} holds a capture key file in force, {key}" in _one_line(result.stderr)
    assert key.read_bytes() == b"\x01" * 32


def test_sanitize_refuses_a_directory_holding_the_host_key(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    host_key = tree / "host.key"
    host_key.write_text("-----BEGIN PRIVATE KEY-----\nabc\n-----END PRIVATE KEY-----\n")
    result = run_bitexact(tmp_path / "home", "sessions", "sanitize", str(tree), BITEXACT_HOST_KEY=str(host_key))
    assert result.returncode == 2
    assert f"DIR: {tree} holds the host key, {host_key}" in _one_line(result.stderr)
    assert "BEGIN PRIVATE KEY" in host_key.read_text()


# -- 2. session files are read bounded: a regular file, its size at open, at most 1 GiB ----------------------

_READERS = [("import", "session"), ("sessions", "parse"), ("sessions", "render"), ("sessions", "validate", "agent")]


@pytest.mark.parametrize("command", _READERS, ids=lambda c: " ".join(c))
def test_a_device_is_refused_before_it_is_read(tmp_path: Path, command: tuple[str, ...]) -> None:
    """/dev/zero was read to no end: 4-5 GB of memory in 5 s, Ctrl-C ignored."""
    started = time.monotonic()
    result = run_bitexact(tmp_path / "home", *command, "/dev/zero")
    assert result.returncode == 2
    assert "/dev/zero is a device, not a regular file" in _one_line(result.stderr)
    assert time.monotonic() - started < 60  # before the fix: never (the test's 120 s timeout)


@pytest.mark.parametrize("command", _READERS, ids=lambda c: " ".join(c))
def test_a_fifo_with_no_writer_is_refused_not_waited_on(tmp_path: Path, command: tuple[str, ...]) -> None:
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    result = run_bitexact(tmp_path / "home", *command, str(fifo))
    assert result.returncode == 2
    assert f"{fifo} is a named pipe (FIFO), not a regular file" in _one_line(result.stderr)


def test_a_file_over_the_limit_is_refused_naming_its_size(tmp_path: Path) -> None:
    from bitexact.sessions.readfile import SessionFileError, read_session_file

    log = tmp_path / "big.jsonl"
    log.write_bytes(b"x" * 2048)
    with pytest.raises(SessionFileError, match=r"big\.jsonl is 2,048 bytes, over the 1,024 bytes"):
        read_session_file(log, limit=1024)
    assert read_session_file(log, limit=2048) == b"x" * 2048


def test_import_of_a_sparse_file_over_1_gib_is_refused_without_reading_it(tmp_path: Path) -> None:
    log = tmp_path / "huge.jsonl"
    with log.open("wb") as handle:
        handle.truncate((1 << 30) + 1)  # sparse: no disk used
    started = time.monotonic()
    result = run_bitexact(tmp_path / "home", "import", "session", str(log))
    assert result.returncode == 2
    assert f"{log} is 1,073,741,825 bytes, over the 1,073,741,824 bytes (1 GiB)" in _one_line(result.stderr)
    assert time.monotonic() - started < 60


# -- 3. sessions conformance: the product's own suite, never the cwd's; unavailable coverage fails ----------


def _cwd_suite(tmp_path: Path) -> tuple[Path, Path]:
    """A directory with a tests/sessions whose conftest leaves a mark when it is executed."""
    cwd = tmp_path / "cwd"
    suite = cwd / "tests" / "sessions"
    suite.mkdir(parents=True)
    mark = tmp_path / "CONFTEST_RAN"
    (suite / "conftest.py").write_text(
        f"import pathlib\npathlib.Path({str(mark)!r}).write_text('ran')\n"
        "def pytest_configure(config):\n    config.addinivalue_line('markers', 'uas(*ids): ids')\n")
    (suite / "test_fake.py").write_text('import pytest\n@pytest.mark.uas("T-UAS-001")\ndef test_ok(): pass\n')
    return cwd, mark


def test_conformance_never_runs_the_current_directorys_tests(tmp_path: Path) -> None:
    """From a directory with its own tests/sessions, that suite's conftest.py was executed and its one test
    made the report (exit 0, 78 requirements 'no test'). The suite is the checkout's; here the checkout's is
    replaced by an installation without tests (a copy of the package outside any checkout)."""
    cwd, mark = _cwd_suite(tmp_path)
    installed = tmp_path / "site"
    shutil.copytree(Path(__file__).resolve().parents[2] / "src" / "bitexact", installed / "bitexact",
                    ignore=shutil.ignore_patterns("__pycache__"))
    result = run_bitexact(tmp_path / "home", "sessions", "conformance", cwd=cwd, PYTHONPATH=str(installed))
    assert result.returncode == 2
    said = _one_line(result.stderr)
    assert f"this installation ({installed / 'bitexact'}) has no session tests" in said
    assert "--tests DIR" in said
    assert not mark.exists()


def test_conformance_of_a_named_suite_with_untested_claims_exits_1_listing_them(tmp_path: Path) -> None:
    """T-UAS-051: a claimed requirement with no test is coverage the report cannot vouch for; the command
    exited 0 with 78 of them. Now it lists them and exits 1 (--tests runs the suite named, and only it)."""
    cwd, mark = _cwd_suite(tmp_path)
    result = run_bitexact(tmp_path / "home", "sessions", "conformance", "--tests", str(cwd / "tests" / "sessions"))
    assert result.returncode == 1, result.stderr
    assert mark.exists()  # the suite named was run: its conftest is its own
    [line] = [ln for ln in result.stdout.splitlines() if ln.startswith("Unavailable coverage:")]
    assert "T-UAS-002" in line and "T-UAS-001," not in line
    assert "T-UAS-001  " in result.stdout and " pass " in result.stdout


# -- 4. the Markdown views neutralize workflow commands as the text view does (8.5) ---------------------------

_PAYLOADS = ["a\r::error::CR", "a\n  ::add-mask::NL", "a\n\u00a0::warning::NBSP", "a\n##[error]HASH",
             "a\r\n::group::CRLF", "::stop-commands::tok"]


def _live_commands(output: str) -> list[str]:
    """Lines a runner reads as workflow commands: it splits at CR, LF and CRLF and trims leading whitespace."""
    lines = output.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return [line for line in lines if line.lstrip().startswith(("::", "##["))]


def _claude_log_with_commands(path: Path) -> Path:
    records = [
        {"type": "system", "subtype": "init", "session_id": "s1", "model": "m", "uuid": "u0"},
        {"type": "assistant", "session_id": "s1", "uuid": "u1",
         "message": {"id": "m1", "model": "m", "role": "assistant",
                     "content": [{"type": "text", "text": p} for p in _PAYLOADS]
                     + [{"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "x\n::error::ARG"}}]}},
        {"type": "user", "session_id": "s1", "uuid": "u2", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "\n::error::OUT\r::error::OUTCR"}]}},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _unified_with_commands(path: Path) -> Path:
    agent = {"component": "agent", "phase": "agent", "path": "agent-session.jsonl"}
    records = [
        {"type": "session.format", "data": {"version": 1},
         "provenance": {"component": "collector", "phase": "conclusion", "path": "usage/aw_session.jsonl", "index": 0}},
        {"type": "session.init", "data": {"sourceEngine": "claude", "sessionId": "s-1", "model": "m"}, "id": "a1",
         "provenance": {**agent, "index": 0}},
        {"type": "assistant.message", "data": {"content": "ok\n::error::UNIFIED\n  ::add-mask::x"}, "id": "a2",
         "provenance": {**agent, "index": 1}},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.mark.uas("T-UAS-049")
@pytest.mark.parametrize("kind", ["agent log", "unified"])
def test_render_markdown_prints_no_live_workflow_command(tmp_path: Path, kind: str) -> None:
    """`sessions render` (Markdown by default) printed ::add-mask::, ::stop-commands:: and ##[error] at line
    starts, live in a job log; the text view neutralized them."""
    log = (_claude_log_with_commands(tmp_path / "log.jsonl") if kind == "agent log"
           else _unified_with_commands(tmp_path / "aw_session.jsonl"))
    for fmt in ("markdown", "text"):
        result = run_bitexact(tmp_path / "home", "sessions", "render", str(log), "--format", fmt)
        assert result.returncode == 0, result.stderr
        assert _live_commands(result.stdout) == [], fmt
        # Still readable: a zero-width space between the two colons.
        assert (":\u200b:error::UNIFIED" if kind == "unified" else ":\u200b:error::OUT") in result.stdout, fmt


# -- 6. import --run-id applies the SDK's rule ---------------------------------------------------------------


@pytest.mark.parametrize("run_id", ["-rf", "../x y", "a..b", "x" * 201])
def test_import_refuses_a_run_id_the_sdk_refuses(tmp_path: Path, run_id: str) -> None:
    """'-rf' was recorded, and its `Next: bitexact show -rf` hint failed ("No such option")."""
    home = tmp_path / "home"
    result = run_bitexact(home, "import", "session", str(CLAUDE), "--run-id", run_id)
    assert result.returncode == 2
    said = _one_line(result.stderr)
    assert f"--run-id {run_id!r}: a run id starts with a letter, a digit or _" in said
    assert not (home / "bitexact.db").exists()  # refused before anything was read or recorded


def test_import_takes_a_run_id_the_sdk_takes(tmp_path: Path) -> None:
    result = run_bitexact(tmp_path / "home", "import", "session", str(CLAUDE), "--run-id", "ci_4711:a.b-c")
    assert result.returncode == 0, result.stderr
    assert "bitexact show ci_4711:a.b-c" in result.stdout


# -- 7. an import stopped mid-way: repair refused while it runs, accepted after; then the bytes import again ---

_IMPORTER = """
import os, sys
from pathlib import Path
from bitexact.crypto.keystore import KeyStore
from bitexact.recording import Recorder
from bitexact.sessions.evidence import import_session, read_session
from bitexact.store import open_store

home, log, mode = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
keys = KeyStore(home)
recorder = Recorder(open_store(home), keys.current_or_init(), keys=keys)

def progress(done):
    if mode == "die":
        os._exit(9)  # killed after the first chunk was committed: no seal, no cleanup
    print(f"chunk {done}", flush=True)
    sys.stdin.readline()  # paused mid-import until the test lets it go on

result = import_session(recorder, read_session(log), progress=progress)
print("sealed", result.run_id, flush=True)
"""


def _long_log(path: Path) -> Path:
    """A Copilot-style log of 600 events: three chunks of the importer's 256."""
    lines = [json.dumps({"type": "user.message", "data": {"content": f"message {i}"}, "id": f"e{i}"})
             for i in range(600)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _importer(home: Path, log: Path, mode: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", _IMPORTER, str(home), str(log), mode], env=command_env(home),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _runs(home: Path) -> list[dict[str, object]]:
    listed = run_bitexact(home, "runs", "--json")
    assert listed.returncode == 0, listed.stderr
    return list(json.loads(listed.stdout))


def _import_block(home: Path, run_id: str) -> dict[str, object]:
    from bitexact.store import open_store

    store = open_store(home)
    try:
        return dict(store.entry(run_id, 0)["data"]["import"])
    finally:
        store.close()


def test_repair_is_refused_while_an_import_records_the_run(tmp_path: Path) -> None:
    """The import held no live lock: `bitexact repair` accepted the end of a run still being imported."""
    home, log = tmp_path / "home", _long_log(tmp_path / "log.jsonl")
    proc = _importer(home, log, "pause")
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "chunk 256"
        [run] = _runs(home)
        repair = run_bitexact(home, "repair", str(run["run_id"]), "--by", "ops:t", "--note", "mid-import")
        assert repair.returncode == 1
        assert f"run {run['run_id']} is still being recorded by a live process" in _one_line(repair.stderr)
        out, err = proc.communicate("\n\n\n", timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert f"sealed {run['run_id']}" in out
    assert not (home / "journals" / str(run["run_id"])).exists()  # the lock and its directory are gone


def test_an_import_killed_mid_way_blocks_until_repaired_then_is_superseded(tmp_path: Path) -> None:
    """After a kill -9 the re-import said "still running" even once `bitexact repair` had accepted the run's
    end, named no next step, and the bytes could never be imported again."""
    home, log = tmp_path / "home", _long_log(tmp_path / "log.jsonl")
    killed = _importer(home, log, "die")
    killed.communicate(timeout=120)
    assert killed.returncode == 9
    [partial] = _runs(home)
    partial_id = str(partial["run_id"])
    assert partial["sealed"] is False

    refused = run_bitexact(home, "import", "session", str(log))
    assert refused.returncode == 1
    said = _one_line(refused.stderr)
    assert f"was already imported as run {partial_id} (unsealed: that import is still running, or it was" \
           " interrupted)" in said
    assert f"`bitexact repair {partial_id} --by NAME --note \"import interrupted\"`" in said
    assert "then import again" in said

    repair = run_bitexact(home, "repair", partial_id, "--by", "ops:t", "--note", "import killed")
    assert repair.returncode == 0, repair.stderr

    again = run_bitexact(home, "import", "session", str(log), "--json")
    assert again.returncode == 0, again.stderr
    new_id = json.loads(again.stdout)["run_id"]
    assert _import_block(home, new_id)["supersedes"] == [partial_id]
    assert "supersedes" not in _import_block(home, partial_id)

    third = run_bitexact(home, "import", "session", str(log))
    assert third.returncode == 1
    assert f"was already imported as run {new_id}; inspect it with `bitexact show {new_id}`" in _one_line(third.stderr)


# -- 8. messages: --engine given, render's exit code, a file name's line break, bidi overrides in views ------


def test_no_events_with_engine_given_says_to_check_it_not_to_name_it(tmp_path: Path) -> None:
    """"name the engine with --engine" was said to a caller who had given --engine codex."""
    home = tmp_path / "home"
    for command in (("import", "session"), ("sessions", "parse"), ("sessions", "render")):
        result = run_bitexact(home, *command, str(CLAUDE), "--engine", "codex")
        assert result.returncode == 2, command
        said = _one_line(result.stderr)
        assert "no recognizable codex events" in said and "--engine codex was given: check that it is the engine" \
               " that wrote the log, or omit --engine to detect it" in said, command
        assert "name the one that wrote the log with --engine" not in said


def test_no_events_without_engine_still_says_to_name_it(tmp_path: Path) -> None:
    log = tmp_path / "notes.jsonl"
    log.write_text('{"hello": "world"}\n')
    for command in (("import", "session"), ("sessions", "parse"), ("sessions", "render")):
        result = run_bitexact(tmp_path / "home", *command, str(log))
        assert result.returncode == 2, command
        assert "if detection picked the wrong engine, name the one that wrote the log with --engine" \
               in _one_line(result.stderr), command


def test_render_with_an_unknown_engine_is_a_usage_error(tmp_path: Path) -> None:
    result = run_bitexact(tmp_path / "home", "sessions", "render", str(CLAUDE), "--engine", "nosuch")
    assert result.returncode == 2
    assert "Invalid value for '--engine'" in result.stderr


def test_the_import_success_line_shows_a_line_break_in_the_file_name_as_an_escape(tmp_path: Path) -> None:
    """The name was printed raw: a name holding a line break split the success line and could fake one."""
    log = tmp_path / "a\nFAKE: imported evil.jsonl"
    shutil.copy(CLAUDE, log)
    result = run_bitexact(tmp_path / "home", "import", "session", str(log))
    assert result.returncode == 0, result.stderr
    first = result.stdout.splitlines()[0]
    assert first.startswith("✓ imported a\\nFAKE: imported evil.jsonl (claude,")
    assert not any(line.startswith("FAKE") for line in result.stdout.splitlines())


@pytest.mark.uas("T-UAS-049")
@pytest.mark.parametrize("fmt", ["markdown", "text"])
def test_render_views_do_not_pass_bidi_overrides_through(tmp_path: Path, fmt: str) -> None:
    """printable/single_line replaced control characters but kept U+202E and the isolates, which reorder the
    rest of a line where the view is read."""
    records = [{"type": "system", "subtype": "init", "session_id": "s1", "model": "m\u2066x", "uuid": "u0"},
               {"type": "assistant", "session_id": "s1", "uuid": "u1",
                "message": {"id": "m1", "model": "m", "role": "assistant",
                            "content": [{"type": "text", "text": "pay \u202e0001$ to\u200f me"}]}}]
    log = tmp_path / "bidi.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    result = run_bitexact(tmp_path / "home", "sessions", "render", str(log), "--format", fmt)
    assert result.returncode == 0, result.stderr
    assert not set("\u202e\u200f\u2066") & set(result.stdout)
    assert "pay \ufffd0001$ to\ufffd me" in result.stdout


# -- 9. a stdout closed after the import sealed its run --------------------------------------------------------


@pytest.mark.parametrize("as_json", [False, True])
def test_import_with_stdout_closed_exits_0_saying_the_run_was_sealed(tmp_path: Path, as_json: bool) -> None:
    """`import session LOG | head -1`: the run was sealed, then the closed pipe made the command exit 1 with
    no word. Here stdout is a pipe whose reader is gone before the command starts (every write fails)."""
    home = tmp_path / "home"
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([BITEXACT, "import", "session", str(CLAUDE), *(["--json"] if as_json else [])],
                              env=command_env(home), stdout=write_end, stderr=subprocess.PIPE, text=True,
                              timeout=120, check=False)
    finally:
        os.close(write_end)
    [run] = _runs(home)
    assert run["sealed"] is True
    assert proc.returncode == 0, proc.stderr
    assert (f"note: standard output was closed before all was printed; run {run['run_id']} was imported and"
            " sealed") in _one_line(proc.stderr)
    assert "Traceback" not in proc.stderr
