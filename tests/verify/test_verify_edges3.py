"""Offline verifier edges (the third review): each test is a disagreement with the bundle format spec
it found (quoted in its docstring), fixed."""

from __future__ import annotations

from pathlib import Path

from bitexact.crypto import SigningKey
from bitexact.evidence.verify import Pins, verify_bundle, verify_path

from .conftest import sample_run
from .producer import sign_bundle, strip_paths, to_jsonl


def _unsorted_markers_bundle(key: SigningKey) -> dict:
    """A bundle whose entry 2 carries two markers, listed out of sorted order, signed by the spec's body."""
    bundle = sample_run(None).bundle()
    entry = bundle["entries"][2]
    strip_paths(entry, ["result.n", "result.a~1b"])
    entry["redacted"] = ["result.n", "result.a~1b"]  # valid, but not in sorted order
    assert sorted(entry["redacted"]) != entry["redacted"]
    # The test producer builds the §9 body as the spec says: "that entry's sorted `redacted`".
    sign_bundle(bundle, key)
    return bundle


def test_signed_redactions_map_uses_each_entrys_sorted_markers(bundle_key: SigningKey) -> None:
    """§9: "`redactions`, whenever some entry has a non-empty `redacted`. It maps the decimal step index
    (a string) to that entry's sorted `redacted`, for the entries that have markers."

    No verifier rule refuses a `redacted` list that is out of order (§4.2/§12.1 step 3 list none), so a
    bundle whose markers are unsorted, signed over the body the spec defines, must verify. The verifier
    copies the list as it stands (ChainState.redactions_body) and so checks the signature over a body
    no conforming signer produced: "signature check failed - bundle altered after signing".
    """
    bundle = _unsorted_markers_bundle(bundle_key)
    verdict = verify_bundle(bundle, Pins(bundle_keys=frozenset([bundle_key.public_hex])))
    assert verdict.line == (
        "OK: run-1 - 6 steps (observed 5 / asserted 1 / synthetic 0), chain verified, sealed, signed,"
        " 2 field(s) redacted"
    ), verdict.line


def test_jsonl_signed_redactions_map_uses_each_entrys_sorted_markers(
    bundle_key: SigningKey, tmp_path: Path
) -> None:
    """§9 (as above) applies to the JSONL form too (§10.1: "Every JSON-form rule applies"); the header's
    signature binds `redactions` built from each entry's *sorted* `redacted`."""
    bundle = _unsorted_markers_bundle(bundle_key)
    del bundle["signature"]
    path = tmp_path / "run.jsonl"
    path.write_bytes(to_jsonl(bundle, bundle_key))
    verdict = verify_path(path, Pins(bundle_keys=frozenset([bundle_key.public_hex])))
    assert verdict.line == (
        "OK: run-1 - 6 steps (observed 5 / asserted 1 / synthetic 0), chain verified, sealed, signed,"
        " 2 field(s) redacted (jsonl, streamed)"
    ), verdict.line
