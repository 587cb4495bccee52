"""The command line as an operator meets it for the first time (the eighteenth session): typos, options in the
wrong place, narrow and non-UTF-8 terminals, progress with --json."""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import time
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bitexact.cli import cli
from cli.real_command import BITEXACT, command_env, demo_run, run_bitexact, run_on_terminal


def _invoke(home: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env={"BITEXACT_HOME": str(home), "COLUMNS": "200"}, prog_name="bitexact")


@pytest.mark.parametrize(("typed", "meant"), [("rnus", "runs"), ("run", "runs"), ("exprot", "export"),
                                              ("verfy", "verify")])
def test_a_mistyped_command_is_answered_with_the_one_meant(tmp_path: Path, typed: str, meant: str) -> None:
    """The commands load when they run, so click had none to compare with: `bitexact rnus` said only
    "No such command", where `bitexact keys rotat` says "Did you mean 'rotate'?"."""
    result = _invoke(tmp_path / "home", typed)
    assert result.exit_code == 2
    assert f"Error: No such command '{typed}'. Did you mean '{meant}'?" in result.stderr, result.stderr


@pytest.mark.parametrize(("typed", "meant"), [("help", "bitexact --help"), ("version", "bitexact --version"),
                                              ("ls", "bitexact runs"), ("init", "bitexact keys init")])
def test_a_word_other_tools_take_is_answered_with_what_it_is_here(tmp_path: Path, typed: str, meant: str) -> None:
    """Suggested by spelling alone, `bitexact help` was answered "Did you mean 'health'?"."""
    result = _invoke(tmp_path / "home", typed)
    assert result.exit_code == 2
    assert f"Error: No such command '{typed}'. Did you mean `{meant}`?" in result.stderr, result.stderr
    assert "'health'" not in result.stderr


@pytest.mark.parametrize("command", [["runs"], ["keys", "show"], ["show", "RUN", "--json"]])
@pytest.mark.parametrize("form", ["--home", "--home="])
def test_home_after_the_command_says_where_it_goes(tmp_path: Path, command: list[str], form: str) -> None:
    """`bitexact runs --home DIR` answered "No such option '--home'. Did you mean '--help'?": the option is
    the group's, and the message now says so, with the command as it would run."""
    home_args = [form + str(tmp_path)] if form.endswith("=") else [form, str(tmp_path)]
    result = _invoke(tmp_path / "home", *command, *home_args)
    assert result.exit_code == 2
    path = " ".join(part for part in command if part.islower() and not part.startswith("-"))
    assert (f"Error: No such option '--home' for `bitexact {path}`: --home goes before the command"
            f" (bitexact --home DIR {path} ...), or set BITEXACT_HOME=DIR.") in result.stderr, result.stderr
    assert "--help'?" not in result.stderr


@pytest.fixture(scope="module")
def demo_home(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A data directory holding the demo run (the real command), and its id."""
    home = tmp_path_factory.mktemp("demo") / "home"
    return home, demo_run(home)


def test_show_on_a_terminal_narrower_than_its_table_cuts_no_column(demo_home: tuple[Path, str]) -> None:
    """On a 40-column terminal rich cut every line of `show` at the edge: the ts and summary columns (what a
    step did) were not shown at all. The lines are written whole, and the terminal wraps them."""
    home, run_id = demo_home
    code, shown, _ = run_on_terminal(home, "show", run_id, COLUMNS="40", NO_COLOR="1")
    assert code == 0, shown
    rows = [line for line in shown.splitlines() if line.startswith("│    3 │")]
    assert len(rows) == 1, shown
    assert re.fullmatch(r"│    3 │ tool_call      │ observed  │ \d\d:\d\d:\d\d\.\d{3} │ lookup… │", rows[0]), rows


def test_show_on_a_stream_that_is_not_utf8_draws_its_rows_as_its_head(demo_home: tuple[Path, str]) -> None:
    """Off UTF-8 (LANG=en_US.ISO-8859-1, PYTHONIOENCODING=ascii) rich draws the head in ASCII; the rows kept
    "│", written "\\u2502": every row read "\\u2502    0 \\u2502 run_meta ..." under a "| step | kind" head."""
    home, run_id = demo_home
    result = run_bitexact(home, "show", run_id, PYTHONIOENCODING="ascii")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[2].startswith("| step | kind "), lines[:4]
    rows = [line for line in lines if line.startswith("|    ")]
    assert len(rows) == 8 and all(row.endswith("|") for row in rows), lines
    assert "\\u2502" not in result.stdout


def _claude_log(path: Path, events: int) -> Path:
    """A Claude Code log of ``events`` assistant messages (and its init record): long enough for a bar."""
    lines = [{"type": "system", "subtype": "init", "session_id": "s18", "model": "claude-example"}]
    lines += [{"type": "assistant", "session_id": "s18",
               "message": {"role": "assistant", "content": [{"type": "text", "text": f"m{i}"}]}}
              for i in range(events)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def test_no_progress_bar_with_json_on_a_terminal(tmp_path: Path) -> None:
    """`import session --json` and `export --json` drew their bar on a terminal's stderr, redrawn lines a
    script started from that terminal had not asked for; without --json the bar is drawn."""
    home = tmp_path / "home"
    log = _claude_log(tmp_path / "log.jsonl", 2500)
    code, seen, _ = run_on_terminal(home, "import", "session", str(log), "--json", COLUMNS="100")
    assert code == 0, seen
    assert "importing" not in seen and "━" not in seen and "reading" not in seen, seen[:500]
    run_id = json.loads(seen)["run_id"]
    code, seen, _ = run_on_terminal(home, "export", run_id, "-o", str(tmp_path / "b.jsonl"), "--format", "jsonl",
                                    "--json", COLUMNS="100")
    assert code == 0, seen
    assert "exporting" not in seen and "━" not in seen, seen[:500]
    assert json.loads(seen)["run_id"] == run_id
    # The same export without --json: the bar is drawn (the terminal is one rich draws it on).
    code, seen, _ = run_on_terminal(home, "export", run_id, "-o", str(tmp_path / "c.jsonl"), "--format", "jsonl",
                                    COLUMNS="100")
    assert code == 0 and f"exporting {run_id}" in seen, seen[:500]


def test_keys_mark_compromised_and_trust_file_say_what_they_did_as_json(tmp_path: Path) -> None:
    """The other `keys` commands that change something had --json; these two answered `--json` with "No such
    option", so a script rotating away from a leaked key had to parse their sentences."""
    home = tmp_path / "home"
    assert run_bitexact(home, "keys", "init").returncode == 0
    assert run_bitexact(home, "keys", "rotate").returncode == 0
    [old] = [key for key in json.loads(run_bitexact(home, "keys", "show", "--json").stdout)
             if key["status"] == "retired"]
    marked = run_bitexact(home, "keys", "mark-compromised", old["key_id"], "--json")
    assert marked.returncode == 0, marked.stderr
    shown = {key["key_id"]: key for key in json.loads(run_bitexact(home, "keys", "show", "--json").stdout)}
    assert json.loads(marked.stdout) == shown[old["key_id"]]  # the entry `keys show --json` lists
    assert shown[old["key_id"]]["status"] == "compromised"
    trust = tmp_path / "trust.json"
    written = run_bitexact(home, "keys", "trust-file", "-o", str(trust), "--json")
    assert written.returncode == 0, written.stderr
    current = [{"key_id": k["key_id"], "public_key": k["public_key"]} for k in shown.values()
               if k["status"] == "current"]
    left_out = {"key_id": old["key_id"], "public_key": old["public_key"],
                "compromised_at": shown[old["key_id"]]["compromised_at"]}
    assert json.loads(written.stdout) == {"path": str(trust), "keys": current, "left_out": [left_out]}
    assert json.loads(trust.read_text())["recorder_keys"] == current
    assert written.stderr.startswith(f"note: recorder key {old['key_id']} was retired as compromised")


def _help_examples(home: Path, *command: str) -> list[str]:
    """The example lines of ``bitexact COMMAND --help``."""
    shown = run_bitexact(home, *command, "--help").stdout
    examples = shown.split("Examples:")[1].split("Exit codes:")[0]
    return [line.strip() for line in examples.splitlines() if line.strip().startswith("bitexact ")]


@pytest.mark.parametrize("command", [("export",), ("redact",)])
def test_the_redacting_examples_of_export_and_redact_run_on_the_demo_run(tmp_path: Path, command: tuple[str]) -> None:
    """`bitexact demo` says "start here"; the next example a newcomer copies, `export RUN --redact
    3:result.account` (and `redact RUN --field 3:result.account`), exited 2 on its run: its step 3 commits
    no such path. The examples name a field the demo's step 3 holds."""
    home = tmp_path / "home"
    run_id = demo_run(home)
    redacting = [line for line in _help_examples(home, *command) if "3:result." in line]
    assert redacting, _help_examples(home, *command)
    for line in redacting:
        args = shlex.split(line.replace("RUN", run_id))[1:]
        result = run_bitexact(home, *args, cwd=tmp_path)
        assert result.returncode == 0, (line, result.stderr)
        if "--json" in args:
            assert json.loads(result.stdout)["run_id"] == run_id


def test_verify_of_a_long_stored_run_draws_a_bar_on_a_terminal_and_none_with_json(tmp_path: Path) -> None:
    """`export` of a long run drew a bar; `verify RUN` of the same run (some 20 s at 1,000,000 steps) drew
    nothing until its verdict. It draws one on a terminal, transient, then the verdict; none with --json."""
    home = tmp_path / "home"
    log = _claude_log(tmp_path / "log.jsonl", 2500)
    imported = run_bitexact(home, "import", "session", str(log), "--json")
    assert imported.returncode == 0, imported.stderr
    run_id = json.loads(imported.stdout)["run_id"]
    code, seen, _ = run_on_terminal(home, "verify", run_id, COLUMNS="100")
    assert code == 0, seen
    assert f"verifying {run_id}" in seen, seen[:500]
    assert seen.rstrip().splitlines()[-1].endswith(f"OK: {run_id} - 2503 steps (observed 2 / asserted 2501 /"
                                                   " synthetic 0), chain verified, sealed, signed (signing key not"
                                                   " pinned - pass --expect-key to know whose signature it is)")
    code, seen, _ = run_on_terminal(home, "verify", run_id, "--json", COLUMNS="100")
    assert code == 0 and "verifying" not in seen and json.loads(seen)["ok"] is True, seen[:500]


def test_sessions_parse_and_render_help_read_as_the_others(tmp_path: Path) -> None:
    """`sessions parse --help` printed "Skipped records are listed on stderr" as a line of its examples, and
    `sessions render --help` said nothing of what --format chooses between."""
    parse_help = run_bitexact(tmp_path / "home", "sessions", "parse", "--help").stdout
    assert parse_help.index("Skipped records are listed on stderr") < parse_help.index("Examples:")
    render_help = run_bitexact(tmp_path / "home", "sessions", "render", "--help").stdout
    option = render_help.split("--format [markdown|text]")[1].split("--engine")[0]
    assert "markdown (headings, fenced blocks) or plain" in " ".join(option.split()), option


@pytest.mark.parametrize("decision", [["approve", "--by", "dpo:bob"],
                                      ["reject", "--by", "dpo:bob", "--reason", "keep it"]])
def test_deciding_with_no_pending_request_says_how_one_comes_to_be(demo_home: tuple[Path, str],
                                                                    decision: list[str]) -> None:
    """`redaction approve RUN` on a run with no request said only "has no pending redaction request", not
    where requests are listed nor how one is filed."""
    home, run_id = demo_home
    result = run_bitexact(home, "redaction", decision[0], run_id, *decision[1:])
    assert result.returncode == 1
    assert result.stderr == (f"error: run {run_id} has no pending redaction request\n"
                             f"`bitexact redaction status {run_id}` lists its requests; `bitexact capture backfill"
                             f" --run {run_id} --by NAME` files one for what the capture policy removes.\n")


FIXTURES = Path(__file__).resolve().parents[1] / "sessions" / "fixtures" / "unify" / "interleaved_all_components"


def test_sessions_unify_shows_it_is_working_on_a_terminal_only(tmp_path: Path) -> None:
    """`sessions unify` of a large directory (50 MB: 5 to 20 s) printed nothing until it was done; on a
    terminal a spinner says what it is doing, and a pipe gets none."""
    home = tmp_path / "home"
    code, seen, _ = run_on_terminal(home, "sessions", "unify", str(FIXTURES), "-o", str(tmp_path / "a.jsonl"),
                                    COLUMNS="100")
    assert code == 0, seen
    assert f"unifying {FIXTURES}" in seen and "wrote " in seen, seen[:500]
    piped = run_bitexact(home, "sessions", "unify", str(FIXTURES), "-o", str(tmp_path / "b.jsonl"))
    assert piped.returncode == 0 and "unifying" not in piped.stderr + piped.stdout, piped.stderr


def test_sessions_conformance_shows_it_is_working_on_a_terminal_but_not_with_json(tmp_path: Path) -> None:
    """`sessions conformance` runs the suite in a pytest process for a minute or more and printed nothing
    until its report: a newcomer saw a terminal that did nothing. A spinner says the suite runs (not with
    --json, whose reader is a script)."""
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "test_one.py").write_text("def test_one():\n    pass\n", encoding="utf-8")
    home = tmp_path / "home"
    code, seen, _ = run_on_terminal(home, "sessions", "conformance", "--tests", str(suite), COLUMNS="100")
    assert code == 1, seen  # a suite that tests no requirement: coverage is unavailable
    assert "running the session test suite (a minute or more)" in seen and "UAS conformance report" in seen
    code, seen, _ = run_on_terminal(home, "sessions", "conformance", "--tests", str(suite), "--json",
                                    COLUMNS="100")
    assert code == 1 and "running the session" not in seen, seen[:500]
    assert json.loads(seen)["complete"] is False


def test_verify_of_a_large_bundle_file_shows_it_is_working_on_a_terminal(tmp_path: Path) -> None:
    """`verify FILE` of a large bundle (2 s per 46 MiB of JSONL, 24 s for a run of 1,000,000 steps) printed
    nothing until its verdict. A file of 16 MiB or more shows a spinner on a terminal, then the one verdict
    line; a small one, --json, or a pipe get none."""
    home = tmp_path / "home"
    large = tmp_path / "large.json"
    large.write_text(json.dumps({"padding": "x" * (16 * 1024 * 1024)}), encoding="utf-8")
    code, seen, _ = run_on_terminal(home, "verify", str(large), COLUMNS="100")
    assert code in (1, 2), seen[-500:]
    assert f"verifying {large}" in seen and seen.rstrip().splitlines()[-1].split("FAIL: ")[1], seen[-500:]
    code, seen, _ = run_on_terminal(home, "verify", str(large), "--json", COLUMNS="100")
    assert "verifying" not in seen and json.loads(seen)["ok"] is False, seen[:500]
    small = tmp_path / "small.json"
    small.write_text(json.dumps({"padding": "x"}), encoding="utf-8")
    code, seen, _ = run_on_terminal(home, "verify", str(small), COLUMNS="100")
    assert "verifying" not in seen and seen.startswith("FAIL: "), seen[:500]
    piped = run_bitexact(home, "verify", str(large))
    assert "verifying" not in piped.stderr and piped.stdout.startswith("FAIL: ")


def test_sanitize_stopped_by_ctrl_c_says_so_and_a_second_pass_still_has_the_masks(tmp_path: Path) -> None:
    """Ctrl-C during `sessions sanitize` said only "interrupted", and the stdio log, rewritten in name order,
    had lost its ::add-mask:: values to the first pass: the second pass found no mask and left the secret in
    every file the first had not reached. The stdio log is rewritten last, and the message says the tree
    may hold unsanitized files."""
    secret = "S3cr3t-value-18"
    tree = tmp_path / "artifacts"
    tree.mkdir()
    (tree / "agent-stdio.log").write_text(f"::add-mask::{secret}\nrunning\n", encoding="utf-8")
    line = f"token {secret} " + "x" * 200 + "\n"
    for index in range(12):  # each sorted after the stdio log; some seconds of work in all
        (tree / f"z{index:02d}.log").write_text(line * 25_000, encoding="utf-8")
    home = tmp_path / "home"
    proc = subprocess.Popen([BITEXACT, "sessions", "sanitize", str(tree)], env=command_env(home),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = tree / "z00.log"
    deadline = time.monotonic() + 60
    while secret in first.read_text(encoding="utf-8"):  # rewritten whole, by a rename
        assert proc.poll() is None and time.monotonic() < deadline, "the pass ended before it could be stopped"
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert stderr == (f"error: interrupted; {tree} may still hold unsanitized files - do not upload it; run the"
                      " same command again to finish\n")
    assert secret in (tree / "z11.log").read_text(encoding="utf-8")  # stopped part-way, as the message says
    again = run_bitexact(home, "sessions", "sanitize", str(tree))
    assert again.returncode == 0, again.stderr
    left = [path.name for path in sorted(tree.iterdir()) if secret in path.read_text(encoding="utf-8")]
    assert left == []


def test_capture_test_reads_standard_input_for_file_dash(tmp_path: Path) -> None:
    """`cmd | bitexact capture test --file -` said "--file -: cannot read: No such file or directory", where
    `sessions sanitize --mask-file -` reads standard input."""
    result = subprocess.run([BITEXACT, "capture", "test", "--file", "-"], input="card 4111 1111 1111 1111",
                            env=command_env(tmp_path / "home"), capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "card [PAN ****1111]\n"
    assert "scrubbed, 1 found (pan 1)" in result.stderr


def test_import_session_says_it_reads_the_log_before_its_bar(tmp_path: Path) -> None:
    """The log is read and parsed whole before the first entry is recorded (some 4 s for 50 MB): on a
    terminal nothing was shown until the bar. A spinner names the log while it is read."""
    home = tmp_path / "home"
    log = _claude_log(tmp_path / "session.jsonl", 3)
    code, seen, _ = run_on_terminal(home, "import", "session", str(log), COLUMNS="100")
    assert code == 0, seen
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", seen)  # the terminal's styles and cursor moves
    assert "reading session.jsonl" in text and "imported session.jsonl" in text, text[:500]


@pytest.mark.parametrize(("given", "missing"), [
    ([], "--field STEP:PATH, --by NAME and --reason TEXT"),
    (["--field", "3:result.policy"], "--by NAME and --reason TEXT"),
    (["--by", "dpo:alice"], "--field STEP:PATH and --reason TEXT"),
])
def test_redact_names_everything_it_still_needs_at_once(demo_home: tuple[Path, str], given: list[str],
                                                        missing: str) -> None:
    """`bitexact redact RUN` said "--reason is required"; given a reason, "name at least one field"; then
    "--by must name who is redacting": three tries to learn what a redaction needs."""
    home, run_id = demo_home
    result = run_bitexact(home, "redact", run_id, *given)
    assert result.returncode == 2
    assert result.stderr == (f"error: give {missing}: a redaction names the fields it destroys, who destroys"
                             " them and why (or give --resume alone, to finish claims already on the chain)\n")


def test_verify_s_key_pin_example_runs_as_printed(tmp_path: Path) -> None:
    """`verify run.jsonl --expect-key 3b6a27bc...` exited 2 as printed (a truncated key is no key); the
    example takes the key from `keys show --json`, and verifies the demo's run exported as run.jsonl."""
    home = tmp_path / "home"
    run_id = demo_run(home)
    assert run_bitexact(home, "export", run_id, "-o", str(tmp_path / "run.jsonl"), "--format", "jsonl").returncode == 0
    [line] = [line for line in _help_examples(home, "verify") if "--expect-key" in line]
    env = command_env(home, PATH=f"{Path(BITEXACT).parent}:{os.environ['PATH']}")
    result = subprocess.run(["sh", "-c", line], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, (line, result.stdout, result.stderr)
    assert result.stdout.startswith(f"OK: {run_id} - ") and ", signed (jsonl, streamed)" in result.stdout


def test_runs_on_a_narrow_terminal_cuts_no_start_time(demo_home: tuple[Path, str]) -> None:
    """At 40 columns the started column read "2026…" over "14:5…": the day and the time were cut off with
    an ellipsis, where the run id and the kinds fold. It folds too, every digit kept."""
    home, run_id = demo_home
    result = run_bitexact(home, "runs", COLUMNS="40")
    assert result.returncode == 0, result.stderr
    assert "…" not in result.stdout, result.stdout
    started = json.loads(run_bitexact(home, "runs", "--json").stdout)[0]["started_at"][:19].replace("T", " ")
    cells = [line.split("│")[4].strip() for line in result.stdout.splitlines() if line.count("│") == 6]
    assert "".join(cells).replace(" ", "") == started.replace(" ", ""), result.stdout
