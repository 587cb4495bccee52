"""§12.1 steps 1-2: the document and its shape, checked before any entry."""

from __future__ import annotations

import pytest

from bitexact.evidence.verify import Pins, verify_bundle

from .conftest import sample_run


def line(doc: object, pins: Pins = Pins()) -> str:
    return verify_bundle(doc, pins).line


@pytest.mark.parametrize(
    ("doc", "kind"),
    [(None, "null"), (True, "a boolean"), (3, "a number"), (2.5, "a number"), ("x", "a string"), ([], "an array")],
)
def test_document_that_is_not_an_object_is_not_a_bundle(doc: object, kind: str) -> None:
    assert line(doc) == f"FAIL: not a bundle: the document is {kind}, not an object"


@pytest.mark.parametrize("doc", [{}, {"format": None}])
def test_missing_or_null_format(doc: dict) -> None:
    assert line(doc) == "FAIL: the document carries no format field"


@pytest.mark.parametrize("fmt", ["bitexact-bundle/2", "bitexact-bundle-jsonl/1", 1])
def test_wrong_format(fmt: object) -> None:
    assert line({"format": fmt}) == f"FAIL: unsupported format {fmt!r}"


def _valid() -> dict:
    return sample_run(None).bundle()


def test_run_id_must_be_a_string_before_chain_is_checked() -> None:
    doc = _valid() | {"run_id": 7, "chain": []}
    assert line(doc) == "FAIL: bundle run_id is not a string"


def test_chain_must_be_an_object() -> None:
    assert line(_valid() | {"chain": "abc"}) == "FAIL: chain is not a JSON object"


@pytest.mark.parametrize(("key", "item"), [("checkpoints", "checkpoint"), ("anchors", "anchor")])
def test_checkpoints_and_anchors_must_be_arrays_of_objects(key: str, item: str) -> None:
    assert line(_valid() | {key: {}}) == f"FAIL: {key} is not a JSON array"
    assert line(_valid() | {key: None}) == f"FAIL: {key} is not a JSON array"
    assert line(_valid() | {key: [{}, 3]}) == f"FAIL: {item} 1 is not a JSON object"


def test_checkpoints_are_checked_before_anchors_and_signature() -> None:
    doc = _valid() | {"checkpoints": 1, "anchors": 1, "signature": 1}
    assert line(doc) == "FAIL: checkpoints is not a JSON array"
    doc = _valid() | {"anchors": 1, "signature": 1}
    assert line(doc) == "FAIL: anchors is not a JSON array"


def test_signature_must_be_an_object() -> None:
    assert line(_valid() | {"signature": "sig"}) == "FAIL: signature is not a JSON object"


def test_null_signature_counts_as_unsigned() -> None:
    assert line(_valid() | {"signature": None}).startswith("OK: run-1 - 6 steps")
    assert line(_valid() | {"signature": None}, Pins(bundle_keys=frozenset({"ab" * 32}))) == (
        "FAIL: bundle is unsigned but a trusted key was required - refusing to verify"
    )


def test_entries_must_be_an_array_after_the_signature_shape() -> None:
    doc = _valid() | {"entries": {}}
    assert line(doc) == "FAIL: entries is not a JSON array"
    assert line(doc | {"signature": 1}) == "FAIL: signature is not a JSON object"
    missing = _valid()
    del missing["entries"]
    assert line(missing) == "FAIL: entries is not a JSON array"


def test_empty_chain_is_not_evidence() -> None:
    assert line(_valid() | {"entries": []}) == (
        "FAIL: bundle carries no entries - an empty chain is not evidence of a run"
    )


def test_unknown_top_level_keys_are_ignored() -> None:
    assert line(_valid() | {"comment": {"anything": [1, 2]}}).startswith("OK: ")
