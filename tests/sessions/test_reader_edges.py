"""The session readers beyond parsing (compact projection, validation, conformance report): regression
tests, each for a bug a review found; the docstring of each test names the contract line it checks.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from cli.real_command import run_bitexact
from sessions.probe_suite import probe_suite

from bitexact.sessions.compact import CompactSourceError, compact
from bitexact.sessions.conformance import conformance_report
from bitexact.sessions.schema import UNIFIED_SCHEMA_FILE, load_schema
from bitexact.sessions.validate import validate

HEADER = {"type": "session.format", "data": {"version": 1},
          "provenance": {"component": "collector", "phase": "conclusion", "path": "usage/aw_session.jsonl",
                         "index": 0}}
HEADER_LINE = json.dumps(HEADER, separators=(",", ":"))


def _usage_line(i: int = 0) -> str:
    return json.dumps({"type": "usage.report", "data": {"model": "m", "stepIndex": i},
                       "provenance": {"component": "usage", "phase": "agent", "path": "usage/x.jsonl", "index": i}},
                      separators=(",", ":"))


# ----------------------------------------------------------------- compact (3.8)


@pytest.mark.uas("T-UAS-078")
def test_compact_final_oversized_line_ending_at_snapshot_end_is_reported_as_loss(tmp_path: Path) -> None:
    """T-UAS-078: a final unterminated line that reaches the snapshotted end is a complete record
    (it is decoded when it fits).  When it is oversized it is discarded, so it must be counted like
    any other completed oversized line: ``oversizedLines``/``omittedEvents`` and ``truncated``.
    Today it vanishes silently: 0 oversized, 0 omitted, truncated false."""
    path = tmp_path / "aw_session.jsonl"
    giant = '{"type":"usage.report","data":{"model":"' + "x" * 20_000 + '"}}'
    path.write_text(HEADER_LINE + "\n" + _usage_line(0) + "\n" + giant, encoding="utf-8")  # no final LF
    result = compact(path)
    assert result["includedEvents"] == 2
    # Same file with a final LF reports the loss; without it the same discarded record must not disappear.
    assert result["oversizedLines"] == 1
    assert result["omittedEvents"] == 1
    assert result["truncated"] is True


@pytest.mark.uas("T-UAS-076", "T-UAS-078")
def test_compact_overflowing_number_is_omitted_not_a_failed_file(tmp_path: Path) -> None:
    """T-UAS-076: "nonfinite numbers ... MUST be omitted, not coerced".  In a JSONL file a nonfinite
    number can only appear as an overflowing literal such as 1e400 (valid JSON syntax; JSON.parse gives
    Infinity).  Today the strict reader refuses the record and the whole compaction fails with
    CompactSourceError ("non-finite number is not allowed"); the field must just be dropped."""
    path = tmp_path / "aw_session.jsonl"
    path.write_text(HEADER_LINE + '\n{"type":"usage.report","data":{"model":"m","aic":1e400}}\n'
                    '{"type":"workflow.job_result","data":{"jobId":"j"}}\n', encoding="utf-8")
    result = compact(path)
    lines = [json.loads(x) for x in result["session"].splitlines()]
    assert lines == [HEADER, {"type": "usage.report", "data": {"model": "m"}},
                     {"type": "workflow.job_result", "data": {"jobId": "j"}}]


_EXPECTED = ("missing file-format header: the first record of a unified session must be the collector's"
             ' session.format header, e.g. {"type":"session.format","data":{"version":1},"provenance":'
             '{"component":"collector","phase":"conclusion","path":"usage/aw_session.jsonl","index":0}}; found ')


@pytest.mark.uas("T-UAS-064", "T-UAS-078")
@pytest.mark.parametrize(("first", "where", "found"), [
    ('{"type":"workflow.job_result","data":{"jobId":"j","result":"success"}}', "line 1",
     "a 'workflow.job_result' record"),
    ('{"type":"session.format","data":{"version":1}}', "line 1",  # a source's own: no collector provenance
     "a session.format record without the collector's provenance (a source's own, not the header)"),
    ("[1, 2]", "line 1", "a JSON list"),
    ("\n\n", "line 1", "no record, only blank lines"),
    ('{"type":"session.format","pad":"' + "p" * 17_000 + '"}', "line 1", "a line over 16384 bytes"),
], ids=["another-kind", "source-native-format", "not-an-object", "blank-lines", "oversized-first-line"])
def test_compact_refuses_a_file_without_the_format_header_naming_line_1_and_the_header_expected(
        tmp_path: Path, first: str, where: str, found: str) -> None:
    """T-UAS-064: "Readers claiming support for this file format MUST inspect the first record before consuming
    the remaining stream and MUST report a missing, invalid, or unsupported version instead of silently
    assuming compatibility"; 3.8 compacts "an already redacted unified session". `sessions compact` projected
    a file with no header as if it were one (exit 0), while `sessions validate unified` refused it."""
    path = tmp_path / "aw_session.jsonl"
    path.write_text(first + "\n" + (_usage_line(0) + "\n" if first.strip() else ""), encoding="utf-8")
    result = run_bitexact(tmp_path / "home", "sessions", "compact", str(path))
    assert result.returncode == 2, result.stdout + result.stderr  # what compact gives every input it cannot read
    assert result.stdout == ""
    assert result.stderr.strip() == f"error: {path}: {where}: {_EXPECTED}{found}", result.stderr


@pytest.mark.uas("T-UAS-064")
def test_compact_still_reads_a_header_after_leading_blank_lines_and_names_their_line(tmp_path: Path) -> None:
    """Blank lines are skipped before the first record as between records; the message counts them."""
    path = tmp_path / "aw_session.jsonl"
    path.write_text("\n" + HEADER_LINE + "\n" + _usage_line(0) + "\n", encoding="utf-8")
    assert compact(path)["includedEvents"] == 2
    path.write_text("\n" + _usage_line(0) + "\n", encoding="utf-8")
    with pytest.raises(CompactSourceError, match=r"^line 2: missing file-format header: .*; found a 'usage.report' record$"):
        compact(path)


# ----------------------------------------------------------------- validate (3.6)


@pytest.mark.uas("T-UAS-051")
def test_validate_pattern_is_anchored_at_the_real_end_of_the_string(tmp_path: Path) -> None:
    """Draft-07 `pattern` uses ECMA-262 regular expressions, where `$` (no multiline flag) matches only
    at the end of the input.  The canonical schema's type pattern ``^[^.\\s]+(\\.[^.\\s]+)+$`` therefore
    rejects "vendor.progress\\n" (a standard Draft-07 validator such as ajv does).  draft7.py uses
    Python `re.search`, whose `$` also matches before a trailing newline, so the record is accepted
    (exit 0, "valid") and the count line printed on stdout is split by the newline."""
    path = tmp_path / "agent-session.jsonl"
    path.write_text(json.dumps({"type": "vendor.progress\n", "data": {}}) + "\n", encoding="utf-8")
    report = validate("agent", path)
    assert report.exit_code == 1
    assert "/type" in report.stderr()


@pytest.mark.uas("T-UAS-031", "T-UAS-051")
def test_validate_agent_rejects_negative_and_unsafe_token_counts(tmp_path: Path) -> None:
    """T-UAS-031: "Mapped token counts MUST be finite nonnegative integers"; 3.2: "SessionCount and
    SessionMetric annotate numeric ranges for schema generation ... Range enforcement belongs to
    validators"; 3.6 lists "unsafe/fractional token counts" as negative cases.  The canonical
    schema's Usage (its own description: "Counts are finite nonnegative integers") has only
    ``type: integer``: -5 and 2**60 both validate."""
    for usage in ({"input_tokens": -5}, {"output_tokens": 2**60}):
        path = tmp_path / "agent-session.jsonl"
        path.write_text(json.dumps({"type": "session.result", "data": {"usage": usage}}) + "\n", encoding="utf-8")
        report = validate("agent", path)
        assert report.exit_code == 1, usage
        assert "/data/usage/" in report.stderr(), usage


def _unified(tmp_path: Path, *lines: str) -> Path:
    path = tmp_path / "aw_session.jsonl"
    path.write_text("".join(line + "\n" for line in (HEADER_LINE, *lines)), encoding="utf-8")
    return path


@pytest.mark.uas("T-UAS-055", "T-UAS-051")
def test_validate_unified_integral_float_index_is_still_checked_for_source_order(tmp_path: Path) -> None:
    """The unified schema types provenance.index as a Draft-07 integer, which includes 1.0 (the
    schema check accepts it, as jsonschema does).  The source-local order rule only looks at
    Python ``int``, so index 1.0 followed by index 0 of the same source passes (exit 0) although
    the order regresses - the same file with 1 instead of 1.0 is rejected."""
    p = '"component":"agent","phase":"agent","path":"agent-session.jsonl"'
    path = _unified(tmp_path,
                    '{"type":"vendor.a","data":{},"provenance":{' + p + ',"index":1.0}}',
                    '{"type":"vendor.a","data":{},"provenance":{' + p + ',"index":0}}')
    records = [json.loads(x) for x in path.read_text().splitlines()]
    assert list(jsonschema.Draft7Validator(load_schema(UNIFIED_SCHEMA_FILE)).iter_errors(records)) == []
    report = validate("unified", path)
    assert report.exit_code == 1
    assert "source-local order" in report.stderr()


@pytest.mark.uas("T-UAS-056", "T-UAS-051")
def test_validate_unified_integral_float_timestamp_is_a_timestamp(tmp_path: Path) -> None:
    """provenance.timestampMs is a Draft-07 integer (5.0 included).  The interleaving rule treats a
    timestampMs of 5.0 as *untimed*, so a correctly ordered file (5 then 10) is refused with
    "timed record after the untimed tail" - a valid document rejected."""
    path = _unified(
        tmp_path,
        '{"type":"vendor.a","data":{},"provenance":{"component":"agent","phase":"agent",'
        '"path":"agent-session.jsonl","index":0,"timestampMs":5.0}}',
        '{"type":"vendor.m","data":{},"provenance":{"component":"mcp","phase":"agent",'
        '"path":"mcp-logs/rpc.jsonl","index":0,"timestampMs":10}}')
    records = [json.loads(x) for x in path.read_text().splitlines()]
    assert list(jsonschema.Draft7Validator(load_schema(UNIFIED_SCHEMA_FILE)).iter_errors(records)) == []
    report = validate("unified", path)
    assert report.stderr() == ""
    assert report.exit_code == 0


# ----------------------------------------------------------------- conformance report (T-UAS-051)


@pytest.mark.uas("T-UAS-051")
def test_conformance_report_counts_a_collection_error_as_a_failure(tmp_path: Path) -> None:
    """T-UAS-051: "A report MUST identify failures and unavailable coverage".  When one test module
    cannot be imported, pytest aborts the run ("Interrupted: 1 error during collection"): no test
    runs.  The report ignores pytest's collection reports and exit status, so it says ok (the CLI
    exits 0), lists no failure, and the passing test elsewhere shows as merely "not run"."""
    suite = probe_suite(tmp_path, {
        "test_ok.py": '''
        import pytest

        @pytest.mark.uas("T-UAS-076")
        def test_pass():
            assert True
    ''',
        "test_broken.py": '''
        import pytest
        import a_module_that_does_not_exist_for_this_review

        @pytest.mark.uas("T-UAS-077")
        def test_never_collected():
            assert True
    ''',
    })
    report = conformance_report(suite)
    assert not report.ok
    assert any("test_broken" in failure for failure in report.failures)


@pytest.mark.uas("T-UAS-051")
def test_conformance_cli_reports_an_unusable_test_run_without_a_traceback(tmp_path: Path, monkeypatch) -> None:
    """Project rule: no tracebacks for user errors in the CLI.  `bitexact sessions conformance --tests DIR`
    runs that suite; when that suite cannot even start (here its
    conftest raises), run_suite raises RuntimeError("... produced no UAS results") and the command
    dies with a Python traceback instead of a one-line error and a documented exit code."""
    from click.testing import CliRunner

    from bitexact.cli import cli

    suite = tmp_path / "tests" / "sessions"
    suite.mkdir(parents=True)
    (suite / "conftest.py").write_text('raise RuntimeError("this suite cannot start")\n')
    result = CliRunner().invoke(cli, ["sessions", "conformance", "--tests", str(suite)],
                                env={"BITEXACT_HOME": str(tmp_path / "home")})
    assert result.exit_code != 0
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
