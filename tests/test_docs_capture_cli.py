"""What the capture and CLI documents (and README.md) claim, checked against the code.

Each test quotes a claim a review found false (the document or the code was then corrected) and
asserts it, so the two cannot drift apart again unseen. Nothing here measures speed.
"""

from __future__ import annotations

import inspect
import json
import logging
import re
import sqlite3
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from bitexact.cli import cli

REPO = Path(__file__).resolve().parent.parent
VISA = "4111111111111111"
ENV_NAMES = ("BITEXACT_CAPTURE_POLICY", "BITEXACT_CAPTURE_KEY", "BITEXACT_REQUIRE_DUAL_CONTROL", "BITEXACT_ENV",
             "BITEXACT_HOST_KEY")


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)


def invoke(home: Path, *args: str, env: dict[str, str] | None = None) -> Any:
    environment = {"BITEXACT_HOME": str(home), "COLUMNS": "250"}
    environment.update(env or {})
    return CliRunner().invoke(cli, list(args), env=environment, catch_exceptions=False)


def record_run(home: Path, entries: list[tuple[str, dict[str, Any]]], policy: str = "off") -> str:
    """A sealed run recorded through the one write path, with the policy named."""
    from bitexact.capture import load_policy
    from bitexact.crypto.keystore import KeyStore
    from bitexact.recording import CheckpointPolicy, Recorder
    from bitexact.store import open_store

    store = open_store(home)
    try:
        key = KeyStore(home).current_or_init()
        recorder = Recorder(store, key, checkpoints=CheckpointPolicy(every=4, seconds=3600),
                            policy=load_policy(policy, env={}))
        writer = recorder.start(name="docs-review")
        for kind, data in entries:
            writer.append(kind, data)
        writer.seal()
        return writer.run_id
    finally:
        store.close()


# -- docs/capture-verify.md, "Not done / limits" -------------------------------------------------


def test_redact_refuses_under_dual_control(home: Path) -> None:
    """docs/capture-verify.md: "`bitexact redact` (the single-principal command) refuses (exit 1) under
    `BITEXACT_REQUIRE_DUAL_CONTROL`". (It said redact did not yet refuse.)"""
    run_id = record_run(home, [("tool_call", {"tool": "pay", "args": ["x"], "result": {"account": "acct-1"}})])
    result = invoke(home, "redact", run_id, "--field", "1:result.account", "--by", "alice",
                    "--reason", "GDPR erasure request", env={"BITEXACT_REQUIRE_DUAL_CONTROL": "1"})
    assert result.exit_code == 1, result.output


def test_an_invalid_custody_hint_is_named_by_its_length_never_quoted() -> None:
    """docs/capture-verify.md: "An invalid hint is named by its path and length (`custody.args: not a
    custody hint (16 characters)`), never quoted". (It said the hint was quoted whole.)"""
    from bitexact.capture import HintError, parse_custody

    with pytest.raises(HintError) as raised:
        parse_custody({"args": VISA})
    assert VISA not in str(raised.value) and "16 characters" in str(raised.value), str(raised.value)


def test_verify_bag_takes_clauses() -> None:
    """docs/capture-verify.md: "`verify_bag` ... takes `clauses`". (It said it took none.)"""
    from bitexact.evidence.verify.bag import verify_bag

    assert "clauses" in inspect.signature(verify_bag).parameters


def test_a_run_installs_the_capture_log_filter_on_the_sdk_logger(home: Path) -> None:
    """docs/capture-verify.md: "The SDK installs a `CaptureLogFilter` on the `bitexact.sdk` logger when a
    run opens". (It said nothing installed one.)"""
    import bitexact
    from bitexact.capture import CaptureLogFilter
    from bitexact.sdk.stores import close_stores

    with bitexact.run(name="docs-review-logs", home=home) as run:
        run.marker("hello")
    close_stores()
    logger = logging.getLogger("bitexact.sdk")
    installed = [f for f in logger.filters if isinstance(f, CaptureLogFilter)]
    installed += [f for handler in logger.handlers for f in handler.filters if isinstance(f, CaptureLogFilter)]
    assert installed


def test_the_store_sets_secure_delete(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """docs/capture-verify.md: "the store sets `secure_delete = ON` itself". (It said it did not.)"""
    from bitexact.store import open_store, sqlite_schema

    statements: list[str] = []
    real_connect = sqlite3.connect

    def traced(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        conn = real_connect(*args, **kwargs)
        conn.set_trace_callback(statements.append)
        return conn

    monkeypatch.setattr(sqlite_schema.sqlite3, "connect", traced)
    store = open_store(home)
    store.close()
    assert [s for s in statements if "secure_delete = on" in s.lower()]


# -- docs/capture.md ---------------------------------------------------------------------------


def test_a_slots_file_is_listed_slot_by_slot(home: Path) -> None:
    """docs/capture.md: "`bitexact capture journal FILE.bxs` lists it slot by slot (`full_slots` with
    `--json`)". (It said a slots file was refused as not sealed.)"""
    from bitexact.crypto.hostkey import load_host_key
    from bitexact.recording.journal import JournalRecord
    from bitexact.recording.journal_slots import JournalSlots

    key = load_host_key(home)
    slots = JournalSlots(home, key, "run-slots", count=4)
    assert slots.write(JournalRecord("run-slots", 1, "marker", {}), b'{"note":"one"}') is not None
    slots.close(remove=False)
    result = invoke(home, "capture", "journal", str(slots.path), "--json")
    assert result.exit_code == 0, result.output
    assert "full_slots" in json.loads(result.stdout), result.stdout


def test_hyphenated_ssns_spaced_by_a_query_percent20_are_each_found(tmp_path: Path) -> None:
    """docs/capture.md, Detectors, `us_ssn` row:

    "A query's `+` spaces one as `%20` does; hyphenated ones one space apart
    in a list are each found."

    With `+` as the space both are found; with `%20` the second stays in clear.
    """
    from bitexact.capture import parse_policy, scrub_text

    policy = parse_policy({"detectors": {"us_ssn": {}}}, name="ssn", env={})
    plus, _ = scrub_text(policy, "ssn=078-05-1120+219-09-9999")
    assert plus == "ssn=[SSN]+[SSN]"  # the `+` form: each found
    text, found = scrub_text(policy, "ssn=078-05-1120%20219-09-9999")
    assert text == "ssn=[SSN]%20[SSN]" and found == {"us_ssn": 2}, (text, found)


# -- README.md ---------------------------------------------------------------------------------


@pytest.mark.parametrize("where", ["keys/extra.key", "bitexact.db"])
def test_keygen_output_naming_our_own_files_is_refused_with_exit_2(home: Path, where: str) -> None:
    """README.md, Using it:

    "An `-o` that names one of BitExact's own files (the store and its WAL, a
    key, a journal, the host key) or a capture key in force (...) is refused
    with exit 2, so a typo cannot overwrite the evidence or the keys it
    depends on."

    `bitexact capture keygen -o` writes a key inside `<home>/keys/` (exit 0),
    and on the store it exits 1 (its own "already exists"), never 2.
    """
    record_run(home, [("marker", {"note": "x"})])  # the store and keys/ exist
    target = home / where
    existed = target.exists()
    result = invoke(home, "capture", "keygen", "-o", str(target))
    assert result.exit_code == 2, (result.exit_code, result.output)
    assert target.exists() == existed


def _commands(command: click.Command, path: list[str]) -> list[list[str]]:
    found = [path]
    if isinstance(command, click.Group):
        for name, sub in sorted(command.commands.items()):
            found += _commands(sub, [*path, name])
    return found


@pytest.mark.parametrize("command", _commands(cli, []), ids=lambda path: " ".join(path) or "bitexact")
def test_every_command_has_help_with_examples(home: Path, command: list[str]) -> None:
    """README.md, Using it: "Every command has `--help` with examples." (Seventeen commands had none.)"""
    result = invoke(home, *command, "--help")
    assert result.exit_code == 0
    assert "example" in result.output.lower(), result.output


def test_show_writes_bidirectional_overrides_as_escapes(home: Path) -> None:
    """README.md, Using it:

    "`bitexact show` writes control characters and bidirectional overrides in
    recorded data as escapes (`\\x1b`), so evidence cannot restyle the
    terminal it is read on."

    The table does; `bitexact show RUN --json` (the README's own "--json for
    scripts") writes U+202E RIGHT-TO-LEFT OVERRIDE raw.
    """
    run_id = record_run(home, [("tool_call", {"tool": "pay", "args": ["\u202eevil"], "result": {"ok": True}})])
    table = invoke(home, "show", run_id)
    assert "\u202e" not in table.stdout  # the table escapes it
    as_json = invoke(home, "show", run_id, "--json")
    assert as_json.exit_code == 0
    assert "\u202e" not in as_json.stdout, "a raw U+202E reaches the terminal through show --json"


def test_an_unusable_bitexact_env_is_refused_naming_the_variable(home: Path) -> None:
    """README.md, Settings:

    "A value BitExact cannot use is refused with a message naming the
    variable." ... "`BITEXACT_ENV` | none | `prod` makes `bitexact health`
    treat a policy that is off as critical"

    `BITEXACT_ENV=production` is silently taken as "not prod": health reports
    the off policy as a warning (exit 1), naming nothing.
    """
    result = invoke(home, "health", env={"BITEXACT_ENV": "production", "BITEXACT_CAPTURE_POLICY": "off"})
    assert "BITEXACT_ENV" in result.output, result.output
    assert result.exit_code == 2, result.exit_code


# -- docs/benchmarks.md ------------------------------------------------------------------------


def test_make_bench_runs_every_benchmark_in_the_table() -> None:
    """docs/benchmarks.md: "Run them all with `make bench`, or one at a time:" followed by the table of
    scripts. (`make bench` ran three of them.)"""
    doc = (REPO / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    table = sorted(set(re.findall(r"^\| `([a-z_]+\.py)", doc, flags=re.MULTILINE)))
    assert "capture_scan.py" in table and "canon_bench.py" in table  # the table was read
    makefile = (REPO / "Makefile").read_text(encoding="utf-8").replace("\\\n", " ")
    listed = re.search(r"^BENCHMARKS = (.*)$", makefile, flags=re.MULTILINE)
    assert listed is not None and "$(BENCHMARKS)" in makefile
    run = {Path(name).name for name in listed.group(1).split()}
    assert [script for script in table if script not in run] == []
    assert all((REPO / "benchmarks" / script).is_file() for script in run)
