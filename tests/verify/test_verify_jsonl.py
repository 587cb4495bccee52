"""Streaming JSONL (§10.1, §12.2): header checks, line numbering, streaming, the JSONL signature."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bitexact.crypto import SigningKey
from bitexact.evidence.verify import Pins, verify_lines, verify_path

from .conftest import sample_run
from .producer import dumps, to_jsonl


def line(lines: object, pins: Pins = Pins()) -> str:
    return verify_lines(lines, pins).line  # type: ignore[arg-type]


@pytest.fixture
def jsonl(bundle_key: SigningKey, recorder_key: SigningKey) -> list[bytes]:
    return to_jsonl(sample_run(recorder_key).bundle(), bundle_key).splitlines(keepends=True)


def test_jsonl_round_trip(jsonl: list[bytes], bundle_key: SigningKey, recorder_key: SigningKey) -> None:
    pins = Pins.from_options(expect_key=bundle_key.public_hex, expect_recorder_key=recorder_key.public_hex)
    assert line(jsonl, pins) == (
        "OK: run-1 - 6 steps (observed 5 / asserted 1 / synthetic 0), chain verified, sealed, signed,"
        " recorder-attested (jsonl, streamed)"
    )


def test_text_lines_work_too(jsonl: list[bytes]) -> None:
    assert line([x.decode() for x in jsonl]).startswith("OK: run-1 - 6 steps")


@pytest.mark.parametrize("lines", [[], [b"\n", b"  \r\n", b"\t\n"]])
def test_no_non_blank_line_is_an_empty_bundle(lines: list[bytes]) -> None:
    assert line(lines) == "FAIL: empty bundle"


def test_blank_lines_and_crlf_are_accepted(jsonl: list[bytes]) -> None:
    crlf = [b"\r\n", b"\n"] + [x.rstrip(b"\n") + b"\r\n" for x in jsonl]
    crlf.insert(4, b"   \n")
    assert line(crlf).startswith("OK: run-1 - 6 steps")


def test_first_line_that_is_not_json(jsonl: list[bytes]) -> None:
    assert line([b"\n", b"{not json\n"] + jsonl[1:]).startswith("FAIL: line 1 is not JSON: Expecting")


def test_lines_are_numbered_from_the_header_skipping_blank_lines(jsonl: list[bytes]) -> None:
    broken = [b"\n"] + jsonl[:3] + [b"\n", b'{"a":1,"a":2}\n'] + jsonl[4:]
    assert line(broken) == "FAIL: line 4 is not JSON: duplicate key 'a'"


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (b'{"x": NaN}', "non-finite JSON constant 'NaN' is not allowed"),
        (b"[1e999]", "non-finite number is not allowed"),
        (b"[" * 129 + b"]" * 129, "nesting deeper than 128 levels is refused"),
        (b'{"x": "\xff"}', "invalid UTF-8 at byte 7: invalid start byte"),
    ],
)
def test_strict_parse_of_every_line(jsonl: list[bytes], bad: bytes, message: str) -> None:
    assert line(jsonl[:2] + [bad + b"\n"] + jsonl[3:]) == f"FAIL: line 3 is not JSON: {message}"


def test_header_must_be_an_object() -> None:
    assert line([b"[1,2]\n"]) == "FAIL: line 1 is not a JSON object"


def test_header_without_format(jsonl: list[bytes]) -> None:
    assert line([b'{"run_id":"r"}\n'] + jsonl[1:]) == "FAIL: the first line carries no format field"


def test_header_with_the_json_format(jsonl: list[bytes]) -> None:
    assert line([b'{"format":"bitexact-bundle/1"}\n'] + jsonl[1:]) == (
        "FAIL: unsupported format 'bitexact-bundle/1'"
    )


def test_header_shape_checks_apply(jsonl: list[bytes]) -> None:
    header = b'{"format":"bitexact-bundle-jsonl/1","run_id":"r","chain":{},"checkpoints":{}}\n'
    assert line([header]) == "FAIL: checkpoints is not a JSON array"


def test_header_alone_is_an_empty_chain() -> None:
    header = b'{"format":"bitexact-bundle-jsonl/1","run_id":"r","chain":{}}\n'
    assert line([header]) == "FAIL: bundle carries no entries - an empty chain is not evidence of a run"


def test_entry_line_that_is_not_an_object(jsonl: list[bytes]) -> None:
    assert line(jsonl[:3] + [b'"entry"\n'] + jsonl[4:]) == "FAIL: step 2: entry is not a JSON object"


def test_an_earlier_failing_entry_decides_before_a_later_parse_error(jsonl: list[bytes]) -> None:
    lines = list(jsonl)
    lines[2] = lines[2].replace(b'"step":1', b'"step":7')
    lines[5] = b"garbage\n"
    assert line(lines) == "FAIL: step 1: step index mismatch"


def test_verifier_reads_lines_once_as_a_stream(bundle_key: SigningKey) -> None:
    consumed: list[int] = []
    run = sample_run(None)
    data = to_jsonl(run.bundle(), bundle_key).splitlines()

    def generator() -> Iterator[bytes]:
        for number, raw in enumerate(data):
            consumed.append(number)
            yield raw

    assert line(generator()).startswith("OK: run-1 - 6 steps")
    assert consumed == list(range(len(data)))


def test_jsonl_signature_binds_the_jsonl_format(bundle_key: SigningKey) -> None:
    bundle = sample_run(None).bundle(bundle_key)  # signed as bitexact-bundle/1
    header = {k: v for k, v in bundle.items() if k != "entries"} | {"format": "bitexact-bundle-jsonl/1"}
    lines = [dumps(header)] + [dumps(e) for e in bundle["entries"]]
    assert line(lines) == "FAIL: signature check failed - bundle altered after signing"


def test_jsonl_export_redaction_signs_markers(bundle_key: SigningKey, recorder_key: SigningKey) -> None:
    bundle = sample_run(recorder_key).bundle(export_redact=[(3, "response.text")])
    lines = to_jsonl(bundle, bundle_key).splitlines()
    assert line(lines) == (
        "OK: run-1 - 6 steps (observed 5 / asserted 1 / synthetic 0), chain verified, sealed,"
        " signed (signing key not pinned - pass --expect-key to know whose signature it is),"
        " 1 field(s) redacted (jsonl, streamed)"
    )
    assert line(lines, Pins(recorder_keys=frozenset({recorder_key.public_hex}))).startswith(
        "FAIL: step 3: path response.text is marked redacted but no on-chain redaction claim records it"
    )


def test_jsonl_file_is_dispatched_by_its_first_line(tmp_path: Path, jsonl: list[bytes]) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"\n\n" + b"".join(jsonl))
    verdict = verify_path(path, Pins())
    assert verdict.form == "jsonl" and verdict.line.endswith("(jsonl, streamed)")
    assert verdict.steps == 6 and verdict.sealed and verdict.signed


def test_jsonl_file_with_a_bad_later_line(tmp_path: Path, jsonl: list[bytes]) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(b"".join(jsonl[:3]) + b"{oops\n" + b"".join(jsonl[4:]))
    assert verify_path(path, Pins()).line.startswith("FAIL: line 4 is not JSON: Expecting property name")


def test_checkpoint_head_mismatch_found_while_streaming(recorder_key: SigningKey) -> None:
    run = sample_run(recorder_key)
    bundle = run.bundle()
    lines = to_jsonl(bundle).splitlines()
    # Drop the last 2 entries and point the head at the new last entry: a checkpoint still attests 6.
    truncated = lines[:-2]
    header = lines[0].replace(bundle["chain"]["head_hash"].encode(), bundle["entries"][3]["hash"].encode())
    assert line([header] + truncated[1:]) == (
        "FAIL: checkpoint 4: attests 5 steps but the bundle has 4 - history removed below a signed checkpoint"
    )
