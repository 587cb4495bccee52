"""`--json` asks for one JSON document on stdout, and an error is an outcome too.

`show`, `export`, `keys`, `redact`, `repair`, the `sessions` commands and the rest printed nothing on
stdout when they failed (the error on stderr only), while `verify`, `capture journal` and `capture
policy check` printed a document with an `error` member: a script had to know which command did what.
Now every command that takes `--json` prints a document whatever ends it (README, "For scripts").
"""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest

from bitexact.cli import cli
from cli.real_command import run_bitexact

OWN_DOCUMENT = {("verify",), ("capture", "journal"), ("capture", "policy", "check"), ("health",)}
"""Commands whose error outcome is their own documented document (a verdict, a report), not the generic one."""

SUCCEEDS_HERE = {("sessions", "conformance")}
"""Reads only the package's own tests: no input of the user's that could be wrong (its failure is a report)."""

FAILING: dict[tuple[str, ...], tuple[str, ...]] = {
    ("capture", "backfill"): ("capture", "backfill", "--run", "nosuch"),
    ("capture", "journal"): ("capture", "journal", "{missing}"),
    ("capture", "keygen"): ("capture", "keygen", "--output", "{home_file}"),
    ("capture", "policy", "check"): ("capture", "policy", "check", "{missing}"),
    ("capture", "policy", "digest"): ("capture", "policy", "digest", "{missing}"),
    ("capture", "policy", "show"): ("--home", "{home_file}", "capture", "policy", "show"),
    ("capture", "test"): ("capture", "test", "--file", "{missing}"),
    ("demo",): ("--home", "{home_file}", "demo"),
    ("export",): ("export", "nosuch", "-o", "{out}"),
    ("health",): ("--home", "{home_file}", "health"),
    ("import", "session"): ("import", "session", "{missing}"),
    ("keys", "init"): ("--home", "{home_file}", "keys", "init"),
    ("keys", "mark-compromised"): ("keys", "mark-compromised", "abc"),
    ("keys", "rotate"): ("keys", "rotate"),
    ("keys", "show"): ("keys", "show"),
    ("keys", "trust-file"): ("keys", "trust-file", "-o", "{out}"),
    ("redact",): ("redact", "nosuch", "--field", "1:a", "--by", "ops:a", "--reason", "r"),
    ("redaction", "approve"): ("redaction", "approve", "nosuch", "--by", "ops:a"),
    ("redaction", "reject"): ("redaction", "reject", "nosuch", "--by", "ops:a", "--reason", "r"),
    ("redaction", "status"): ("redaction", "status", "nosuch"),
    ("repair",): ("repair", "nosuch", "--by", "ops:a", "--note", "n"),
    ("runs",): ("--home", "{home_file}", "runs"),
    ("sessions", "compact"): ("sessions", "compact", "{missing}"),
    ("sessions", "parse"): ("sessions", "parse", "{missing}"),
    ("sessions", "sanitize"): ("sessions", "sanitize", "{missing}"),
    ("sessions", "unify"): ("sessions", "unify", "{missing}", "-o", "{out}"),
    ("sessions", "validate"): ("sessions", "validate", "agent", "{missing}"),
    ("show",): ("show", "nosuch"),
    ("verify",): ("verify", "{missing}"),
}


def _json_commands() -> list[tuple[str, ...]]:
    """Every command that takes --json, found by walking the command line (a new one is not forgotten)."""
    ctx = click.Context(cli)
    found: list[tuple[str, ...]] = []

    def walk(command: click.Command, path: tuple[str, ...]) -> None:
        if isinstance(command, click.Group):
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None
                walk(sub, (*path, name))
        elif any("--json" in param.opts for param in command.params):
            found.append(path)

    walk(cli, ())
    return found


def test_every_json_command_has_a_failing_case() -> None:
    assert set(_json_commands()) == set(FAILING) | SUCCEEDS_HERE


def _run(tmp_path: Path, command: tuple[str, ...], *, json_first: bool) -> tuple[int, object, str]:
    home_file = tmp_path / "a-file"
    home_file.write_text("not a directory")
    filled = [arg.format(missing=tmp_path / "missing", home_file=home_file, out=tmp_path / "out" / "x.json")
              for arg in FAILING[command]]
    # --json right after the command's name, before its other arguments, or last: either way a document
    where = filled.index(command[-1]) + 1
    line = [*filled[:where], "--json", *filled[where:]] if json_first else [*filled, "--json"]
    result = run_bitexact(tmp_path / "home", *line)
    assert "Traceback" not in result.stderr, result.stderr
    return result.returncode, json.loads(result.stdout), result.stderr


@pytest.mark.parametrize("command", sorted(FAILING), ids=" ".join)
@pytest.mark.parametrize("json_first", [False, True], ids=["json-last", "json-first"])
def test_a_failing_json_command_prints_one_document(tmp_path: Path, command: tuple[str, ...],
                                                    json_first: bool) -> None:
    code, document, stderr = _run(tmp_path, command, json_first=json_first)
    assert code in (1, 2), (code, stderr)
    assert isinstance(document, dict)
    if command in OWN_DOCUMENT:
        assert document.get("ok") is False or document.get("opened") is False or \
            document.get("status") == "critical", document
        return
    first = stderr.splitlines()[0]
    if first.startswith("Usage:"):  # click's usage error: its `Error:` line is the last
        assert document == {"error": stderr.splitlines()[-1].removeprefix("Error: "), "exit": 2}
        return
    assert document["error"] == first.removeprefix("error: ") and document["exit"] == code, (document, stderr)
    assert set(document) <= {"error", "exit", "hint"}
    if "hint" in document:
        assert stderr.splitlines()[1] == document["hint"]


def test_without_json_stdout_stays_empty(tmp_path: Path) -> None:
    result = run_bitexact(tmp_path / "home", "show", "nosuch")
    assert result.returncode == 2 and result.stdout == "" and result.stderr.startswith("error: no run 'nosuch'")


def test_json_after_a_double_dash_is_an_argument(tmp_path: Path) -> None:
    """`--` ends the options: a run id spelt `--json` does not turn the flag on."""
    result = run_bitexact(tmp_path / "home", "show", "--", "--json")
    assert result.returncode == 2 and result.stdout == "" and "no run '--json'" in result.stderr


def test_a_document_already_printed_is_not_followed_by_another(tmp_path: Path) -> None:
    """`verify --json` prints its verdict (which names the error) and nothing more."""
    result = run_bitexact(tmp_path / "home", "verify", str(tmp_path / "missing.json"), "--json")
    document = json.loads(result.stdout)  # one document: json.loads refuses trailing data
    assert result.returncode == 2 and document["ok"] is False and "no such file" in document["message"]
