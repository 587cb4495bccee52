"""Malformed input through the real CLI, found in review: each test pins one behaviour that used to break.

Each test runs `bitexact` in-process against a fresh data directory. What
used to happen: a traceback where a one-line message with a sensible exit
code is due, a message that names the wrong thing, or an exit code that
contradicts the command's documentation.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bitexact.cli import cli
from cli.imported_runs import import_as

FIXTURES = Path(__file__).resolve().parents[1] / "sessions" / "fixtures"
CLAUDE = FIXTURES / "claude" / "jsonl_full_session_with_debug_and_trailing_extension.jsonl"


def run(home: Path, *args: str, env: dict[str, str] | None = None) -> Result:
    """The CLI with exceptions caught, so a traceback shows up as ``result.exception``."""
    return CliRunner().invoke(cli, list(args), env={"BITEXACT_HOME": str(home), "COLUMNS": "200", **(env or {})})


def no_traceback(result: Result) -> None:
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise AssertionError(f"traceback instead of a message: {result.exception!r}\n{result.output}")


# -- 1. User text is printed as Rich markup ------------------------------------------------------


def test_runs_lists_a_run_whose_id_holds_brackets(home: Path) -> None:
    import_as(home, CLAUDE, "ci[/]1")  # a store's run id may be any printable text; `[/]` is printable
    listed = run(home, "runs")
    no_traceback(listed)  # before: rich.errors.MarkupError for the whole store's listing
    assert listed.exit_code == 0
    assert "ci[/]1" in listed.output


def test_import_refuses_a_bracketed_run_id_in_a_message_not_a_crash(home: Path) -> None:
    # Once the run was recorded and sealed, then the summary line raised MarkupError; --run-id now takes only
    # the SDK's ids, and the refusal quotes the id verbatim (not read as markup).
    imported = run(home, "import", "session", str(CLAUDE), "--run-id", "ci[/]2")
    no_traceback(imported)
    assert imported.exit_code == 2
    assert "--run-id 'ci[/]2'" in imported.output


def test_error_message_names_a_bracketed_path_verbatim(home: Path, tmp_path: Path) -> None:
    missing = tmp_path / "session[final].jsonl"
    result = run(home, "sessions", "parse", str(missing))
    assert result.exit_code == 2
    # before: "cannot read .../session.jsonl" - rich ate "[final]" as a style tag
    assert "session[final].jsonl" in result.output


def test_error_message_with_a_closing_tag_in_a_run_id_is_not_a_traceback(home: Path) -> None:
    result = run(home, "show", "nope[/]")
    no_traceback(result)  # before: MarkupError raised from output.fail()
    assert result.exit_code == 2
    assert "nope[/]" in result.output


# -- 2. Session parsers: a valid-JSON line of the wrong shape -----------------------------------


WRONG_SHAPES = [
    # (engine or None for detection, the one bad line)
    pytest.param(None, '{"type": []}', id="detect-type-list"),
    pytest.param(None, '{"type": {}}', id="detect-type-object"),
    pytest.param("claude", '{"type": "system", "subtype": "task_started", "task_type": "local_agent", '
                           '"task_id": []}', id="claude-task-id-list"),
    pytest.param(None, '{"type": "assistant", "message": {"id": [], "role": "assistant", "stop_reason": '
                       '"refusal", "content": [{"type": "text", "text": "no"}]}}', id="claude-message-id-list"),
    pytest.param(None, '{"type": "message", "role": [], "content": "x"}', id="gemini-role-list"),
    pytest.param(None, '{"type": "message_update", "message": {"role": "assistant", "content": []}, '
                       '"assistantMessageEvent": {"type": "text_delta", "contentIndex": -1, "delta": "x"}}',
                 id="pi-negative-content-index"),
    pytest.param("goose", '{"type": "error", "error": "boom", "code": []}', id="goose-code-list"),
    pytest.param(None, '{"type": "step_finish", "sessionID": "s", "part": {"id": [], "type": "step-finish"}}',
                 id="opencode-part-id-list"),
    pytest.param(None, '2026-10-02T00:00:01.000Z [DEBUG] data: {"id": "r", "choices": [{"index": 0, "message": '
                       '{"role": "assistant", "content": "hi", "tool_calls": 5}}]}', id="copilot-tool-calls-int"),
]


@pytest.mark.parametrize(("engine", "line"), WRONG_SHAPES)
def test_sessions_parse_reports_a_wrong_shaped_record(home: Path, tmp_path: Path, engine: str | None,
                                                      line: str) -> None:
    log = tmp_path / "session.log"
    log.write_text(line + "\n")
    args = ["sessions", "parse", str(log), *(("--engine", engine) if engine else ())]
    result = run(home, *args)
    no_traceback(result)  # before: TypeError / IndexError
    assert result.exit_code in (0, 2)


def test_import_of_a_good_log_with_one_wrong_shaped_line_keeps_the_good_events(home: Path, tmp_path: Path) -> None:
    log = tmp_path / "session.jsonl"
    log.write_text(CLAUDE.read_text() + '{"type": []}\n')
    result = run(home, "import", "session", str(log), "--json")
    no_traceback(result)  # before: TypeError in engine detection, nothing recorded
    assert result.exit_code == 0
    assert json.loads(result.stdout)["events"] > 0


# -- 3. Unified files: a non-string provenance field ---------------------------------------------

HEADER = ('{"type":"session.format","data":{"version":1},"provenance":{"component":"collector",'
          '"phase":"conclusion","path":"usage/aw_session.jsonl","index":0}}')


@pytest.mark.parametrize("provenance", [
    '{"component":["agent"],"phase":"agent","path":"agent-session.jsonl","index":0}',
    '{"component":"agent","phase":["agent"],"path":"agent-session.jsonl","index":0}',
], ids=["component-list", "phase-list"])
def test_validate_unified_reports_a_non_string_provenance_field(home: Path, tmp_path: Path,
                                                                provenance: str) -> None:
    path = tmp_path / "aw_session.jsonl"
    path.write_text(HEADER + "\n" + '{"type":"user.message","data":{"content":"hi"},"provenance":'
                    + provenance + "}\n")
    result = run(home, "sessions", "validate", "unified", str(path))
    no_traceback(result)  # before: TypeError: unhashable type: 'list'
    assert result.exit_code == 1
    assert "line 2" in result.output


def test_render_unified_refuses_a_non_string_provenance_phase(home: Path, tmp_path: Path) -> None:
    path = tmp_path / "aw_session.jsonl"
    path.write_text(HEADER + "\n" + '{"type":"user.message","data":{"content":"hi"},"provenance":'
                    '{"component":"agent","phase":["agent"],"path":"a.jsonl","index":0}}\n')
    result = run(home, "sessions", "render", str(path))
    no_traceback(result)  # before: TypeError from render/unified.py
    assert result.exit_code in (0, 2)


# -- 4. Capture policy: a key path holding a NUL ---------------------------------------------------


def test_policy_check_names_a_key_path_with_a_nul(home: Path, tmp_path: Path) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text('{"hash_only_key": {"file": "key\\u0000file"}}')
    result = run(home, "capture", "policy", "check", str(policy), "--json")
    no_traceback(result)  # before: ValueError: embedded null byte
    assert result.exit_code == 1
    assert json.loads(result.stdout)["field"].startswith("hash_only_key")


def test_health_reports_a_key_path_with_a_nul_as_an_invalid_policy(home: Path, tmp_path: Path) -> None:
    policy = tmp_path / "policy.json"
    policy.write_text('{"hash_only_key": {"file": "key\\u0000file"}}')
    result = run(home, "health", "--json", env={"BITEXACT_CAPTURE_POLICY": str(policy)})
    assert result.exit_code == 2
    names = {finding["name"] for finding in json.loads(result.stdout)["findings"]}
    # before: only "health-check-failed ... ValueError: embedded null byte", once per check
    assert "capture-policy-invalid" in names


# -- 5. keys trust-file into a directory that does not exist --------------------------------------


def test_trust_file_into_a_missing_directory_is_a_message(home: Path, tmp_path: Path) -> None:
    assert run(home, "keys", "init").exit_code == 0
    target = tmp_path / "missing" / "trust.json"
    result = run(home, "keys", "trust-file", "-o", str(target))
    no_traceback(result)  # before: FileNotFoundError traceback
    assert result.exit_code != 0
    assert str(target) in result.output


# -- 6. health --json when the store cannot be opened ---------------------------------------------


def test_health_json_is_json_and_critical_when_the_store_cannot_be_opened(home: Path) -> None:
    home.mkdir(parents=True)
    (home / "bitexact.db").write_bytes(b"this is not a sqlite database, it is garbage" * 4)
    result = run(home, "health", "--json")
    # before: no JSON at all and exit 1, which health documents as "warnings only"
    assert result.exit_code == 2
    assert json.loads(result.stdout)["status"] == "critical"


# -- 7. import session --run-id "" -----------------------------------------------------------------


def test_import_refuses_an_empty_run_id(home: Path) -> None:
    # docs/sessions-evidence.md: exit 2 for "a malformed --run-id"; today "" silently becomes a new random id.
    result = run(home, "import", "session", str(CLAUDE), "--run-id", "", "--json")
    assert result.exit_code == 2, result.output
    assert run(home, "runs", "--json").stdout.strip() == "[]"


# -- 8. sessions render --budget: the documented minimum ------------------------------------------


def test_render_accepts_the_budget_its_help_documents(home: Path) -> None:
    help_text = run(home, "sessions", "render", "--help").output
    minimum = re.search(r"x>=(\d+)", help_text)
    assert minimum is not None, help_text
    result = run(home, "sessions", "render", str(CLAUDE), "--budget", minimum.group(1))
    # before: help says x>=256, the command refuses anything below 512 ("budget_bytes must be at least 512")
    assert result.exit_code == 0, result.output
