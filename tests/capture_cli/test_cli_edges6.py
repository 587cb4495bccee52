"""`bitexact capture`, `bitexact import session` and `bitexact sessions` driven as a user would, from the shell.

Every test runs the real console script (tests/cli/real_command.py) against a data directory of its own.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli.real_command import run_bitexact

from bitexact.capture import load_policy
from bitexact.crypto.hostkey import load_host_key
from bitexact.crypto.keystore import KeyStore
from bitexact.recording import Recorder
from bitexact.store import open_store

CLAUDE_LOG = Path(__file__).parent.parent / "sessions" / "fixtures" / "claude" / \
    "jsonl_full_session_with_debug_and_trailing_extension.jsonl"
VISA = "4111 1111 1111 1111"


def _no_traceback(stderr: str) -> None:
    assert "Traceback" not in stderr, stderr


def _record(home: Path, data: dict[str, object]) -> str:
    """A sealed run holding one tool_call ``data``, recorded in-process with the policy off."""
    store = open_store(home)
    try:
        recorder = Recorder(store, KeyStore(home).current_or_init(), policy=load_policy("off"))
        writer = recorder.start(name="odd")
        writer.append("tool_call", data)
        writer.seal()
        return writer.run_id
    finally:
        store.close()


# -- capture keygen ---------------------------------------------------------------------------------------


def test_keygen_with_an_empty_output_path_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    """`capture keygen -o ''` died with a ValueError traceback (`PosixPath('.') has an empty name`):
    the empty path reached write_private_file, which cannot name a temporary beside '.'."""
    result = run_bitexact(tmp_path / "home", "capture", "keygen", "-o", "", cwd=tmp_path)
    _no_traceback(result.stderr)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: -o"), result.stderr
    assert result.stdout == ""


# -- sessions parse: a table of what a log holds ------------------------------------------------------------


def test_sessions_parse_table_never_writes_escape_sequences_from_the_log(tmp_path: Path) -> None:
    """The log is what an agent saw. `sessions parse LOG` put an event's content into its summary
    column raw: with NO_COLOR and stdout a pipe, `\\x1b[2J` (clear screen) and U+202E (right-to-left
    override) reached the terminal, so the log under review could erase or reorder the table."""
    lines = CLAUDE_LOG.read_text(encoding="utf-8").splitlines()
    odd = {"type": "user", "message": {"role": "user", "content": [
        {"type": "text", "text": "hi \x1b[2J\x1b[31mred \u202eevil"}]}, "session_id": "claude-sess-1", "uuid": "u-x"}
    log = tmp_path / "session.jsonl"
    log.write_text("\n".join([lines[0], json.dumps(odd), *lines[1:]]) + "\n", encoding="utf-8")
    result = run_bitexact(tmp_path / "home", "sessions", "parse", str(log), NO_COLOR="1")
    assert result.returncode == 0, result.stderr
    assert "red" in result.stdout
    assert "\x1b" not in result.stdout and "\u202e" not in result.stdout, repr(result.stdout)
    assert "\\x1b[2J" in result.stdout and "\\u202e" in result.stdout, result.stdout


def test_sessions_parse_table_title_names_the_log_as_it_is_called(tmp_path: Path) -> None:
    """The table's title is rich markup: a log called `[bold]session.jsonl` was titled `session.jsonl`,
    the `[bold]` read as a style, so the table named a file that is not there."""
    log = tmp_path / "[bold]session.jsonl"
    log.write_bytes(CLAUDE_LOG.read_bytes())
    result = run_bitexact(tmp_path / "home", "sessions", "parse", str(log))
    assert result.returncode == 0, result.stderr
    assert "[bold]session.jsonl · claude" in result.stdout, result.stdout


def test_import_session_never_writes_escape_sequences_from_the_files_name(tmp_path: Path) -> None:
    """The log's file name is stored in the run (run_meta, every entry's source) and may come from a
    downloaded artifact; `import session` printed it raw in its warning and its success line, so a name
    holding `\x1b[2J` cleared the terminal (`bitexact show` and `runs` print the same run safely)."""
    log = tmp_path / "evil\x1b[2J\u202e.jsonl"
    log.write_bytes(CLAUDE_LOG.read_bytes())  # its two debug lines are skipped: a warning names the file
    result = run_bitexact(tmp_path / "home", "import", "session", str(log), NO_COLOR="1")
    assert result.returncode == 0, result.stderr
    assert "skipped" in result.stderr and "imported" in result.stdout
    for stream in (result.stdout, result.stderr):
        assert "\x1b" not in stream and "\u202e" not in stream, repr(stream)
        assert "evil\\x1b[2J\\u202e.jsonl" in stream, stream


def test_render_and_compact_name_the_file_of_a_malformed_line(tmp_path: Path) -> None:
    """A unified file with a malformed line in the middle is refused by `sessions render` and `sessions
    compact` (exit 2) with `error: line 3: invalid JSON (...)`: the line, but not the file it is in, where
    `import session`, `parse` and compact's own other errors name the file."""
    unified = Path(__file__).parent.parent / "sessions" / "evidence" / "data" / "aw_session.jsonl"
    lines = unified.read_text(encoding="utf-8").splitlines()
    log = tmp_path / "aw_session.jsonl"
    log.write_text("\n".join([*lines[:2], '{"type": "user.message", "data": {', *lines[2:]]) + "\n", encoding="utf-8")
    for command in ("render", "compact"):
        result = run_bitexact(tmp_path / "home", "sessions", command, str(log))
        assert result.returncode == 2, (command, result.stderr)
        assert result.stderr.startswith(f"error: {log}: line 3:"), (command, result.stderr)


# -- capture backfill ------------------------------------------------------------------------------------------


def test_backfill_never_writes_escape_sequences_from_a_recorded_key(tmp_path: Path) -> None:
    """`capture backfill` lists every field it requests by STEP:PATH, and a path is the recorded data's
    own keys (what an agent sent): it wrote them raw to stdout, so a key holding `\\x1b[2J` cleared the
    operator's terminal and one holding U+202E reversed the line."""
    home = tmp_path / "home"
    run_id = _record(home, {"tool": "pay", "\x1b[2J\x1b[31mcard\u202e": f"card {VISA}"})
    result = run_bitexact(home, "capture", "backfill", "--run", run_id, "--by", "alice", NO_COLOR="1")
    assert result.returncode == 0, result.stderr
    assert "1 field(s)" in result.stdout
    assert "\x1b" not in result.stdout and "\u202e" not in result.stdout, repr(result.stdout)
    assert "1:\\x1b[2J\\x1b[31mcard\\u202e" in result.stdout, result.stdout


def test_backfill_with_a_blank_by_is_a_usage_error(tmp_path: Path) -> None:
    """docs/capture-verify.md: backfill exits 1 for dual control, a policy off or unusable, no such run or
    a pending request, and 2 for usage. A blank `--by` (a bad argument value, as for `repair --by ''`)
    exited 1, so a script could not tell a typo from a refusal."""
    home = tmp_path / "home"
    run_id = _record(home, {"tool": "pay", "args": f"card {VISA}"})
    for blank in ("", "   "):
        result = run_bitexact(home, "capture", "backfill", "--run", run_id, "--by", blank)
        assert result.returncode == 2, (blank, result.stderr)
        assert "--by" in result.stderr
    status = run_bitexact(home, "redaction", "status", run_id, "--json")
    assert json.loads(status.stdout)["pending"] is None  # nothing was filed


# -- capture journal ---------------------------------------------------------------------------------------


def test_journal_json_on_a_directory_is_one_json_document(tmp_path: Path) -> None:
    """docs/capture.md: a FILE that cannot be opened exits 2 and "`--json` then prints {"opened": false,
    "error": ... unreadable ...}". A directory given as FILE was refused by click's own usage text
    (`Error: Invalid value for 'FILE': ... is a directory`), so a script reading --json got no JSON."""
    home = tmp_path / "home"
    load_host_key(home)  # this host's key exists: only the file is wrong
    folder = tmp_path / "journals"
    folder.mkdir()
    result = run_bitexact(home, "capture", "journal", str(folder), "--json")
    assert result.returncode == 2, result.stderr
    document = json.loads(result.stdout)
    assert (document["opened"], document["error"]) == (False, "unreadable"), document
    plain_text = run_bitexact(home, "capture", "journal", str(folder))
    assert plain_text.returncode == 2
    assert plain_text.stderr.startswith("error: ") and str(folder) in plain_text.stderr, plain_text.stderr


def test_redaction_status_never_writes_escape_sequences_from_a_recorded_key(tmp_path: Path) -> None:
    """`redaction status RUN` lists a pending request's fields by STEP:PATH, the recorded data's own keys:
    it wrote them (and the requester's name and reason) with markup escaping only, so a key holding
    `\\x1b[2J` cleared the operator's terminal."""
    home = tmp_path / "home"
    run_id = _record(home, {"tool": "pay", "\x1b[2J\x1b[31mcard\u202e": f"card {VISA}"})
    filed = run_bitexact(home, "capture", "backfill", "--run", run_id, "--by", "alice\x1b]0;t\x07")
    assert filed.returncode == 0, filed.stderr
    shown = run_bitexact(home, "redaction", "status", run_id, NO_COLOR="1")
    assert shown.returncode == 0, shown.stderr
    assert "\x1b" not in shown.stdout and "\u202e" not in shown.stdout, repr(shown.stdout)
    assert "1:\\x1b[2J\\x1b[31mcard\\u202e" in shown.stdout, shown.stdout


def test_sessions_parse_json_of_a_number_past_a_double_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    """A record holding `1e999` (read as infinity) made `sessions parse LOG --json` die with a ValueError
    traceback (exit 1) while the table worked: now a clear error naming the file (exit 2)."""
    log = tmp_path / "inf.jsonl"
    log.write_text('{"type":"session.start","data":{},"id":"0"}\n'
                   '{"type":"user.message","data":{"content":"x","n":1e999},"id":"1"}\n', encoding="utf-8")
    result = run_bitexact(tmp_path / "home", "sessions", "parse", str(log), "--json")
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    assert str(log) in result.stderr and "infinity" in result.stderr
    assert json.loads(result.stdout) == {"error": result.stderr.removeprefix("error: ").rstrip("\n"), "exit": 2}
