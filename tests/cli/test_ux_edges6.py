"""What a user sees from every `bitexact` command (the sixth UX review): each test is a bug it found.

Every test runs the real `bitexact` console script in its own process (on a pseudo-terminal where what a
person sees on one is the point), with BITEXACT_HOME under the test's tmp_path and no BITEXACT_* setting
of the machine's.
"""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import time
from pathlib import Path

import pytest
from cli.imported_runs import import_as
from cli.real_command import BITEXACT, clear_bitexact_env, command_env, demo_run, run_bitexact, run_on_terminal

bx = run_bitexact


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    clear_bitexact_env(monkeypatch)


def _claude_log(path: Path, events: int, session: str = "s-ux6") -> Path:
    """A Claude Code log of ``events`` assistant messages (and its init record)."""
    lines = [{"type": "system", "subtype": "init", "session_id": session, "model": "claude-example"}]
    lines += [{"type": "assistant", "session_id": session,
               "message": {"id": f"msg-{i}", "role": "assistant", "model": "claude-example",
                           "content": [{"type": "text", "text": f"answer {i}"}]}} for i in range(events)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _on_terminal(home: Path, *args: str, columns: int = 100) -> tuple[int, str]:
    """``bitexact ARGS`` with stdout and stderr on a pseudo-terminal: its exit code and what the terminal got."""
    code, shown, _ = run_on_terminal(home, *args, TERM="xterm-256color", COLUMNS=str(columns))
    return code, shown


# -- verify --open: "2" means only "tested, no match", and --json is always one document ------------------


@pytest.mark.parametrize("as_json", [False, True])
def test_verify_open_with_an_empty_target_is_a_refusal_not_no_match(tmp_path: Path, as_json: bool) -> None:
    """docs/capture-verify.md: under --open, "Option problems exit 1, not click's usage 2, so that 2 means
    only 'tested, no match'", and "With --json ... an option missing or wrong, included: the output is
    always one JSON document". An empty TARGET with --open exited 2 - a script read "the candidate is
    not the value" - and printed no JSON."""
    home = tmp_path / "home"
    demo_run(home)
    candidate = tmp_path / "candidate.json"
    candidate.write_text('"x"\n')
    args = ["verify", "", "--open", "1:agent_id", "--candidate-file", str(candidate), "--by", "alice"]
    done = bx(home, *args, *(["--json"] if as_json else []))
    assert done.returncode == 1, done.stdout + done.stderr
    if as_json:
        document = json.loads(done.stdout)
        assert document["opening"] is None and "TARGET is empty" in document["error"]
    else:
        assert done.stdout == "" and done.stderr.startswith("error: TARGET is empty")


def test_verify_open_json_with_a_malformed_pin_is_one_document(tmp_path: Path) -> None:
    """The same promise for a key pin that is not 64 hex characters: `verify RUN --open ... --expect-key
    abc --json` exited 1 with only a line on stderr - stdout empty, where every other option problem under
    --open --json prints the verdict with "opening": null and the "error"."""
    home = tmp_path / "home"
    run_id = demo_run(home)
    candidate = tmp_path / "candidate.json"
    candidate.write_text('"x"\n')
    done = bx(home, "verify", run_id, "--open", "1:agent_id", "--candidate-file", str(candidate), "--by", "alice",
              "--expect-key", "abc", "--json")
    assert done.returncode == 1, done.stdout + done.stderr
    document = json.loads(done.stdout)
    assert document["ok"] is False and document["opening"] is None
    assert "--expect-key" in document["error"]


# -- export's progress bar -------------------------------------------------------------------------------


def test_export_progress_bar_shows_a_bracketed_run_id_as_text(tmp_path: Path) -> None:
    """`bitexact export` on a terminal draws a progress bar for a long run, its description
    `exporting RUN` read as rich markup: a run id holding `[/]` (which run ids may) died in a
    MarkupError traceback on the first refresh, and no bundle was written."""
    home = tmp_path / "home"
    run_id = "ci[/]4711"
    # `import session --run-id` takes only the SDK's ids; a Recorder may record any printable id.
    import_as(home, _claude_log(tmp_path / "log.jsonl", 2000), run_id)
    bundle = tmp_path / "run.json"
    code, seen = _on_terminal(home, "export", run_id, "-o", str(bundle))
    assert "Traceback" not in seen, seen[-3000:]
    assert code == 0, seen[-3000:]
    assert f"exporting {run_id}" in seen
    assert bundle.is_file()


# -- a narrow terminal: what is copied from a line is never broken across lines ----------------------------


def _whole_on_a_line(text: str, value: str) -> bool:
    return any(value in line for line in text.splitlines())


def test_import_session_never_breaks_its_hashes_across_lines(tmp_path: Path) -> None:
    """`bitexact import session` printed `sha256 HEX` and `head HEX` wrapped to the terminal's width: at
    40 columns each 64-character hash came out on two lines, so the one a user copies to compare is cut in
    two (export and keys print theirs unwrapped: "the head and the key are copied from their lines whole")."""
    home = tmp_path / "home"
    log = _claude_log(tmp_path / "log.jsonl", 3)
    imported = bx(home, "import", "session", str(log), COLUMNS="40")
    assert imported.returncode == 0, imported.stderr
    run = json.loads(bx(home, "runs", "--json").stdout)[0]
    sha256 = json.loads(bx(home, "show", run["run_id"], "--json").stdout)["steps"][0]["data"]["import"]["source_sha256"]
    for value in (sha256, run["head_hash"], run["run_id"]):
        assert _whole_on_a_line(imported.stdout, value), imported.stdout


@pytest.mark.parametrize("command", [("capture", "policy", "show"), ("capture", "policy", "check", "pci")])
def test_capture_policy_never_breaks_its_digest_across_lines(tmp_path: Path, command: tuple[str, ...]) -> None:
    """`bitexact capture policy show` and `policy check` printed the policy's digest (what run_meta records,
    compared by hand against a run's) wrapped: at 40 columns the 64 hex characters came out on two lines."""
    home = tmp_path / "home"
    digest = json.loads(bx(home, *command, "--json", BITEXACT_CAPTURE_POLICY="pci").stdout)["digest"]
    shown = bx(home, *command, COLUMNS="40", BITEXACT_CAPTURE_POLICY="pci")
    assert shown.returncode == 0, shown.stderr
    assert _whole_on_a_line(shown.stdout, digest), shown.stdout


def test_capture_keygen_never_breaks_the_key_path_across_lines(tmp_path: Path) -> None:
    """`bitexact capture keygen -o PATH` printed `capture key written to PATH` wrapped: on a narrow terminal
    a long path (the one to paste into BITEXACT_CAPTURE_KEY or the policy's hash_only_key) was cut in two."""
    output = tmp_path / "secrets-kept-apart-from-the-evidence" / "bitexact-capture.key"
    output.parent.mkdir()
    made = bx(tmp_path / "home", "capture", "keygen", "-o", str(output), COLUMNS="40")
    assert made.returncode == 0, made.stderr
    assert _whole_on_a_line(made.stdout, str(output)), made.stdout


# -- Ctrl-C ----------------------------------------------------------------------------------------------


def test_ctrl_c_during_verify_exits_130_not_does_not_verify(tmp_path: Path) -> None:
    """Ctrl-C while `bitexact verify` reads its input ended in click's "Aborted!" and exit 1 - which
    verify documents as "does not verify" (health: "warnings only", capture journal: "cut short"), so a
    script told an interrupted check that the bundle failed. The shell's convention is 128 + SIGINT.
    The input is a named pipe, so the command is waiting for it, deterministically, when SIGINT comes."""
    fifo = tmp_path / "bundle.json"
    os.mkfifo(fifo)
    # As a shell starts it: SIGINT at its default disposition (an ignored SIGINT in this process, which a
    # background job inherits, would pass on across exec, and Python then never raises KeyboardInterrupt).
    proc = subprocess.Popen([BITEXACT, "verify", str(fifo)], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=command_env(tmp_path / "home"), text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    writer = -1
    deadline = time.monotonic() + 60
    while writer < 0 and proc.poll() is None and time.monotonic() < deadline:
        try:  # succeeds once verify has opened the pipe for reading: it is then waiting for the bundle
            writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            select.select([], [], [], 0.02)
    assert writer >= 0, "verify never opened its input"
    status = Path(f"/proc/{proc.pid}/status").read_text()
    caught = int(next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:")), 16)
    assert caught & (1 << (signal.SIGINT - 1)), "the command does not catch SIGINT: " + status
    try:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=60)
    finally:
        os.close(writer)
    assert "Traceback" not in err, err
    assert proc.returncode == 130, (proc.returncode, out, err)
    assert out == ""


# -- escape sequences from what a command reads ------------------------------------------------------------


def test_sessions_sanitize_never_writes_escape_sequences_from_file_names(tmp_path: Path) -> None:
    """`bitexact sessions sanitize DIR` lists the files it rewrote and removed by name, escaped as markup
    only: a file an agent left in its artifact tree named `a\\x1b[2Jb.txt` cleared the operator's screen
    (and a link named `\\x1b]0;...` retitled it) when the listing was read on a terminal."""
    tree = tmp_path / "artifacts"
    tree.mkdir()
    (tree / "a\x1b[2Jb.txt").write_text("token ghp_abcdefghijklmnopqrstuvwxyz0123456789\n")
    (tree / "l\x1b]0;pwned").symlink_to("/etc/passwd")
    done = bx(tmp_path / "home", "sessions", "sanitize", str(tree))
    assert done.returncode == 1, done.stderr  # the link was removed
    assert "\x1b" not in done.stdout + done.stderr, repr(done.stdout)
    assert "a\\x1b[2Jb.txt" in done.stdout, done.stdout


@pytest.mark.parametrize("decision", ["approve", "reject"])
def test_redaction_decision_never_writes_escape_sequences_from_the_requester(tmp_path: Path, decision: str) -> None:
    """`bitexact redaction approve|reject RUN --by bob` names the request's requester - recorded, typed by
    another principal - escaped as markup only, where `redaction status` shows it with escapes: a requester
    named `mallory\\x1b[2J` cleared the approver's screen as the decision was reported."""
    home = tmp_path / "home"
    log = tmp_path / "card.jsonl"
    log.write_text(json.dumps({"type": "system", "subtype": "init", "session_id": "s-card", "model": "m"}) + "\n"
                   + json.dumps({"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [
                       {"type": "text", "text": "card 4111 1111 1111 1111"}]}}) + "\n")
    imported = bx(home, "import", "session", str(log), "--run-id", "cardrun", BITEXACT_CAPTURE_POLICY="off")
    assert imported.returncode == 0, imported.stderr
    filed = bx(home, "capture", "backfill", "--run", "cardrun", "--by", "mallory\x1b[2J", "--json")
    assert filed.returncode == 0 and json.loads(filed.stdout)["request"], filed.stdout + filed.stderr
    extra = ["--reason", "keep it"] if decision == "reject" else []
    decided = bx(home, "redaction", decision, "cardrun", "--by", "bob", *extra)
    assert decided.returncode == 0, decided.stderr
    assert "\x1b" not in decided.stdout, repr(decided.stdout)
    assert "mallory\\x1b[2J" in decided.stdout, decided.stdout
