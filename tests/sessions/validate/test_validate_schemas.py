"""Generated Draft-07 schemas and the validator (3.6; T-UAS-054, 055, 056, 064, 067)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal, NotRequired, Required, TypedDict

import jsonschema
import pytest

from bitexact.sessions import schema as schema_module
from bitexact.sessions.draft7 import compile_schema, errors_of
from bitexact.sessions.schema import (
    CANONICAL_SCHEMA_FILE,
    SCHEMA_DIR,
    UNIFIED_SCHEMA_FILE,
    check_schemas,
    load_schema,
    model_schema,
    render_schema,
)
from bitexact.sessions.unified_model import Range
from bitexact.sessions.unify import unify
from bitexact.sessions.validate import validate

ALL = Path(__file__).resolve().parent.parent / "fixtures" / "unify" / "interleaved_all_components"
APPENDIX_A = Path(__file__).resolve().parent.parent / "fixtures" / "readers" / "appendix_a_complete_trace.json"


@pytest.fixture(scope="module")
def unified_file(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("u") / "aw_session.jsonl"
    unify(ALL, out, env={})
    return out


def _records(path: Path) -> list:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.uas("T-UAS-051")
def test_shipped_schemas_regenerate_byte_identically() -> None:
    assert check_schemas() == []
    for name, build in schema_module.SCHEMAS.items():
        assert (SCHEMA_DIR / name).read_bytes() == render_schema(build()).encode("utf-8")


@pytest.mark.uas("T-UAS-051")
def test_check_reports_missing_and_stale_files_without_rewriting(tmp_path) -> None:
    (tmp_path / CANONICAL_SCHEMA_FILE).write_text("{}\n")
    problems = check_schemas(tmp_path)
    assert any("missing" in p for p in problems) and any("differs" in p for p in problems)
    assert (tmp_path / CANONICAL_SCHEMA_FILE).read_text() == "{}\n"


@pytest.mark.uas("T-UAS-051")
@pytest.mark.parametrize("name", [CANONICAL_SCHEMA_FILE, UNIFIED_SCHEMA_FILE])
def test_schemas_are_self_contained_draft_07(name: str) -> None:
    document = load_schema(name)
    assert document["$schema"] == "http://json-schema.org/draft-07/schema#"
    jsonschema.Draft7Validator.check_schema(document)
    assert "$ref" not in json.dumps(document).replace('"$ref": "#/definitions/', "")


class _Probe(TypedDict, total=False):
    """A probe model."""

    need: Required[Literal["a", "b"]]
    count: Annotated[int, Range(0, 10)]
    maybe: NotRequired[str | None]


@pytest.mark.uas("T-UAS-051")
def test_generator_reads_required_ranges_literals_and_unions_from_models() -> None:
    root = model_schema(_Probe)
    probe = root["definitions"]["_Probe"]
    assert probe["required"] == ["need"] and probe["additionalProperties"] is False
    assert probe["properties"]["need"] == {"enum": ["a", "b"]}
    assert probe["properties"]["count"] == {"type": "integer", "minimum": 0, "maximum": 10}
    assert probe["properties"]["maybe"] == {"type": ["string", "null"]}


@pytest.mark.uas("T-UAS-054", "T-UAS-055", "T-UAS-064")
def test_merger_output_valid_for_both_validators(unified_file: Path) -> None:
    records = _records(unified_file)
    document = load_schema(UNIFIED_SCHEMA_FILE)
    assert list(jsonschema.Draft7Validator(document).iter_errors(records)) == []
    assert errors_of(compile_schema(document), records) == []
    report = validate("unified", unified_file)
    assert report.ok and report.records == len(records)


def _header():
    return {"type": "session.format", "data": {"version": 1},
            "provenance": {"component": "collector", "phase": "conclusion", "path": "usage/aw_session.jsonl", "index": 0}}


def _prov(index=0, **extra):
    return {"component": "agent", "phase": "agent", "path": "agent-session.jsonl", "index": index, **extra}


NEGATIVE_UNIFIED = {
    "known payload with wrong type": [_header(), {"type": "tool.execution_complete", "data": {"success": "yes"}, "provenance": _prov()}],
    "fractional token count": [_header(), {"type": "session.result", "data": {"usage": {"inputTokens": 1.5}}, "provenance": _prov()}],
    "unsafe token count": [_header(), {"type": "session.result", "data": {"usage": {"inputTokens": 2**60}}, "provenance": _prov()}],
    "absent provenance": [_header(), {"type": "vendor.x", "data": {}}],
    "absolute path": [_header(), {"type": "vendor.x", "data": {}, "provenance": _prov(path="/etc/passwd")}],
    "parent path": [_header(), {"type": "vendor.x", "data": {}, "provenance": {**_prov(), "path": "a/../b"}}],
    "wrong header version": [{**_header(), "data": {"version": 2}}],
    "missing header": [{"type": "vendor.x", "data": {}, "provenance": _prov()}],
    "extra envelope key": [_header(), {"type": "vendor.x", "data": {}, "provenance": _prov(), "nativeSequence": 1}],
    "duplicate execution fields": [_header(), {"type": "agent.execution", "data": {"categories": ["a", "a"], "errorCodes": [],
                                                                                    "errorTypes": []}, "provenance": _prov()}],
}


@pytest.mark.uas("T-UAS-064", "T-UAS-055", "T-UAS-067")
@pytest.mark.parametrize("case", sorted(NEGATIVE_UNIFIED))
def test_negative_unified_cases_rejected_by_both_validators(case: str) -> None:
    records = NEGATIVE_UNIFIED[case]
    document = load_schema(UNIFIED_SCHEMA_FILE)
    assert list(jsonschema.Draft7Validator(document).iter_errors(records)), case
    assert errors_of(compile_schema(document), records), case


@pytest.mark.uas("T-UAS-003", "T-UAS-051")
def test_canonical_schema_accepts_appendix_a_and_rejects_legacy_or_bad_payloads() -> None:
    document = load_schema(CANONICAL_SCHEMA_FILE)
    good = json.loads(APPENDIX_A.read_text())
    for validator in (lambda v: list(jsonschema.Draft7Validator(document).iter_errors(v)),
                      lambda v: errors_of(compile_schema(document), v)):
        assert validator(good) == [] and validator([]) == []
        assert validator([{"type": "result", "num_turns": 1, "data": {}}])  # bare legacy result name
        assert validator([{"type": "tool.execution_complete", "data": {"success": "yes"}}])
        assert validator([{"type": "assistant.message"}])  # no data object
        assert validator([{"type": "vendor.progress", "data": {"anything": [1]}, "extra": True}]) == []


@pytest.mark.uas("T-UAS-054", "T-UAS-064")
def test_validator_framing_and_header_diagnostics(tmp_path, unified_file: Path) -> None:
    lines = unified_file.read_text(encoding="utf-8").splitlines()
    cases = {
        "no_newline.jsonl": ("\n".join(lines), "missing trailing newline"),
        "blank.jsonl": (lines[0] + "\n\n" + "\n".join(lines[1:]) + "\n", "blank line"),
        "pretty.jsonl": (json.dumps(json.loads(lines[0]), indent=1).replace("\n", " ") + "\n" + "\n".join(lines[1:]) + "\n",
                         "whitespace outside strings"),
        "malformed.jsonl": (lines[0] + "\n{oops SECRET-PAYLOAD\n" + "\n".join(lines[1:]) + "\n", "invalid JSON"),
        "no_header.jsonl": ("\n".join(lines[1:]) + "\n", "missing file-format header"),
        "v2.jsonl": (lines[0].replace('"version":1', '"version":2') + "\n" + "\n".join(lines[1:]) + "\n",
                     "unsupported file-format version 2"),
        "empty.jsonl": ("", "empty"),
    }
    for name, (content, expected) in cases.items():
        path = tmp_path / name
        path.write_text(content, encoding="utf-8")
        report = validate("unified", path)
        assert not report.ok and report.exit_code == 1, name
        assert expected in report.stderr(), (name, report.stderr())
        assert "SECRET-PAYLOAD" not in report.stderr() + report.stdout()


@pytest.mark.uas("T-UAS-056", "T-UAS-067", "T-UAS-055")
def test_validator_ordering_singleton_and_index_rules(tmp_path) -> None:
    def write(records):
        path = tmp_path / "x.jsonl"
        path.write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records))
        return validate("unified", path)

    a = lambda i, ts=None: {"type": "vendor.a", "data": {}, "provenance": _prov(i, **({"timestampMs": ts} if ts else {}))}
    m = lambda i, ts=None: {"type": "vendor.m", "data": {}, "provenance": {"component": "mcp", "phase": "agent",
                                                                            "path": "m.jsonl", "index": i, **({"timestampMs": ts} if ts else {})}}
    # The untimed prefix anchors to the first clock (10); a regression keeps the running maximum.
    assert write([_header(), m(0, 5), a(0), a(1, 10), a(2, 7), a(3), m(1, 11)]).ok
    assert "regresses" in write([_header(), m(0, 5), a(0), a(1, 10), a(2, 7), m(1, 11), a(3)]).stderr()
    assert "regresses" in write([_header(), a(0, 10), m(0, 5)]).stderr()
    assert "untimed tail" in write([_header(), m(0), a(0, 5)]).stderr()
    assert "source-local order" in write([_header(), a(1), a(0)]).stderr()
    execution = {"type": "agent.execution", "data": {"categories": [], "errorCodes": [], "errorTypes": []},
                 "provenance": {"component": "execution", "phase": "agent", "path": "x", "index": 0}}
    second = {**execution, "provenance": {**execution["provenance"], "path": "y"}}
    assert "more than one agent.execution" in write([_header(), execution, second]).stderr()
    assert write([_header(), execution]).ok


@pytest.mark.uas("T-UAS-003", "T-UAS-051")
def test_agent_validation_jsonl_and_json_array_with_counts(tmp_path) -> None:
    events = json.loads(APPENDIX_A.read_text())
    jsonl = tmp_path / "agent-session.jsonl"
    jsonl.write_text("".join(json.dumps(e) + "\n" for e in events))
    report = validate("agent", jsonl)
    assert report.ok and report.records == 12 and report.counts["tool.execution_start"] == 3
    assert "agent" in report.stdout() and "tool.execution_start: 3" in report.stdout() and report.stderr() == ""
    array = tmp_path / "trace.json"
    array.write_text(json.dumps(events))
    assert validate("agent", array).records == 12
    assert validate("agent", jsonl, fmt="json").exit_code == 1  # explicit format wins over the name
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    assert validate("agent", empty).ok  # an empty trace is valid; no header is required
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"type": "tool.execution_start", "data": {"toolCallId": "PAYLOAD-XYZ", "input": 1, "stepIndex": "s"}}) + "\n")
    report = validate("agent", bad)
    assert not report.ok and "/data/stepIndex" in report.stderr() and "PAYLOAD-XYZ" not in report.stderr()
