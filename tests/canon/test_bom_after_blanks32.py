"""A byte order mark after blank lines is named as one, not as "Expecting value" (session 32's audit).

``loads`` named a BOM only at character 0. A file saved with blank lines before it (or a verifier's parse placed
after the blank lines it skipped, as `bitexact verify` places a JSON bundle's error) said only "Expecting value":
the document visibly starts with ``{``, and the message must say what is wrong there.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bitexact.canon import StrictJSONError, loads
from bitexact.evidence.verify import Pins, verify_path


@pytest.mark.parametrize(("document", "at"), [
    (b'\n\n\xef\xbb\xbf{"version": 1}', 2),
    (b' \r\n\t\xef\xbb\xbf{"version": 1}', 4),
    ('\n\ufeff{"version": 1}', 1),
])
def test_a_bom_after_blank_lines_is_named(document: str | bytes, at: int) -> None:
    with pytest.raises(StrictJSONError) as info:
        loads(document)
    assert "byte order mark" in info.value.message, info.value.message
    assert info.value.position == at


def test_a_bom_inside_a_document_is_no_start(tmp_path: Path) -> None:
    """Past the first value a U+FEFF is the scanner's to name: the BOM message is only for a document's start."""
    with pytest.raises(StrictJSONError) as info:
        loads('{"a": \ufeff1}')
    assert "byte order mark" not in info.value.message


def test_verify_names_the_bom_of_a_bundle_saved_below_blank_lines(tmp_path: Path) -> None:
    bundle = tmp_path / "run.bundle.json"
    bundle.write_bytes(b'\n\xef\xbb\xbf{"version": 1}\n')
    verdict = verify_path(bundle, Pins())
    assert not verdict.ok
    assert "byte order mark" in verdict.message, verdict.message
