"""A JSON bundle that does not parse: the parser's message places the error from the file's top, blank lines
before its first line included, as a verifier parsing the whole file places it (bundle spec §12.3's `{diag}`).
The whole-file parse starts at the first non-blank line, and counted from there: `line 1` for an error on the
file's third line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bitexact.evidence.verify import Pins, verify_path


@pytest.mark.parametrize("text", [
    '\n\n  {"a": [1,]}\n',
    '\r\n\t\r\n{"a": 1,\n "b": }\n',
    '\n \n',
    '\n\n{"a": 1} x\n',
    '{"a": [1,]}\n',  # no blank line first: as before
])
def test_the_message_places_the_error_from_the_files_top(tmp_path: Path, text: str) -> None:
    bundle = tmp_path / "bundle.json"
    bundle.write_bytes(text.encode("utf-8"))
    with pytest.raises(json.JSONDecodeError) as parsed_whole:
        json.loads(text)
    verdict = verify_path(bundle, Pins())
    assert verdict.line == f"FAIL: bundle is not valid JSON: {parsed_whole.value}"
