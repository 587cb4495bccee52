"""§12.1 step 3: the checks of each entry, in order, each failure naming step and path."""

from __future__ import annotations

from typing import Any

import pytest

from bitexact.evidence.verify import Pins, verify_bundle

from .conftest import sample_run
from .producer import Run, make_entry, relink, strip_paths


def line(doc: object, pins: Pins = Pins()) -> str:
    return verify_bundle(doc, pins).line


def plain() -> dict[str, Any]:
    """The sample run, unsigned and without checkpoints, so single edits reach entry checks."""
    return sample_run(None).bundle()


def edited(step: int, change: Any, *, relinked: bool = True) -> dict[str, Any]:
    bundle = plain()
    change(bundle["entries"][step])
    return relink(bundle) if relinked else bundle


# --- form and chain ----------------------------------------------------------------


def test_entry_must_be_an_object() -> None:
    bundle = plain()
    bundle["entries"][2] = [1]
    assert line(bundle) == "FAIL: step 2: entry is not a JSON object"


@pytest.mark.parametrize("version", [3, None, "2", 2.0, True])
def test_entry_version_must_be_the_integer_2(version: object) -> None:
    bundle = edited(1, lambda e: e.update(v=version), relinked=False)
    assert line(bundle) == f"FAIL: step 1: unsupported entry version {version!r}"


def test_missing_version_reads_none() -> None:
    bundle = edited(0, lambda e: e.pop("v"), relinked=False)
    assert line(bundle) == "FAIL: step 0: unsupported entry version None"


def test_chain_body_that_cannot_be_canonicalized_is_a_malformed_bundle() -> None:
    bundle = edited(3, lambda e: e.update(extra=2**53 + 1), relinked=False)
    assert line(bundle) == (
        "FAIL: malformed bundle: CanonicalizationError('integer 9007199254740993 is outside the safe "
        "integer range: JSON numbers are doubles, and a parser elsewhere reads these digits back as a "
        "different value. Record it as a string instead (RFC 8785 Appendix D).')"
    )


def test_unsupported_hash_algorithm() -> None:
    bundle = edited(2, lambda e: e.update(alg="md5"), relinked=False)
    assert line(bundle) == "FAIL: step 2: unsupported hash algorithm 'md5'"


def test_entry_run_id_must_match_the_bundle() -> None:
    bundle = edited(4, lambda e: e.update(run_id="other"))
    assert line(bundle) == "FAIL: step 4: entry run_id 'other' does not match bundle run_id"


@pytest.mark.parametrize("step", [5, "1", True, 1.0])
def test_step_must_be_the_integer_index(step: object) -> None:
    bundle = edited(1, lambda e: e.update(step=step))
    assert line(bundle) == "FAIL: step 1: step index mismatch"


def test_prev_must_be_the_previous_hash() -> None:
    bundle = edited(3, lambda e: e.update(prev="0" * 64), relinked=False)
    assert line(bundle) == "FAIL: step 3: chain broken"


def test_first_prev_is_genesis() -> None:
    bundle = edited(0, lambda e: e.update(prev="1" * 64), relinked=False)
    assert line(bundle) == "FAIL: step 0: chain broken"


@pytest.mark.parametrize("key", ["ts", "kind", "commitments", "ctx", "unknown_key"])
def test_every_body_key_is_hashed(key: str) -> None:
    values = {"ts": "2031-01-01T00:00:00+00:00", "kind": "marker", "commitments": {}, "ctx": "tool", "unknown_key": 1}
    bundle = edited(2, lambda e: e.update({key: values[key]}), relinked=False)
    assert line(bundle) == "FAIL: step 2: hash mismatch - entry tampered or corrupted"


def test_data_salts_and_redacted_are_not_hashed() -> None:
    bundle = plain()
    bundle["entries"][4]["data"]["value"] = 1.5  # caught by the commitment, not by the hash
    assert line(bundle) == "FAIL: step 4: data hash mismatch at path value - value tampered or corrupted"


# --- vocabulary ----------------------------------------------------------------------


@pytest.mark.parametrize("prov", ["made_up", None, ["observed"]])
def test_unknown_or_missing_provenance(prov: object) -> None:
    bundle = edited(1, lambda e: e.update(prov=prov))
    assert line(bundle) == f"FAIL: step 1: unknown or missing provenance {prov!r}"


@pytest.mark.parametrize("kind", ["telepathy", None, 3])
def test_unknown_entry_kind(kind: object) -> None:
    bundle = edited(1, lambda e: e.update(kind=kind))
    assert line(bundle) == f"FAIL: step 1: unknown entry kind {kind!r}"


@pytest.mark.parametrize(
    ("kind", "prov", "allowed"),
    [
        ("http_call", "asserted", "observed"),
        ("tool_call", "synthetic", "observed or asserted"),
        ("injected", "observed", "synthetic"),
        ("hold", "observed", "asserted"),
    ],
)
def test_kind_allows_only_its_provenance(kind: str, prov: str, allowed: str) -> None:
    run = Run("r")
    run.append(kind, {"x": 1}, prov=prov)
    assert line(run.bundle()) == f"FAIL: step 0: a {kind} entry cannot be {prov} - it is {allowed}"


def test_tool_call_may_be_asserted() -> None:
    run = Run("r")
    run.append("tool_call", {"tool": "t"}, prov="asserted")
    assert line(run.bundle()).startswith("OK: r - 1 steps (observed 0 / asserted 1 / synthetic 0)")


@pytest.mark.parametrize(
    "ts",
    ["2031-04-02 10:15:30+00:00", "2031-04-02T10:15:30", "yesterday T", 1700000000, None, "2031-04-02"],
)
def test_ts_must_be_an_instant_with_an_offset(ts: object) -> None:
    bundle = edited(2, lambda e: e.update(ts=ts))
    assert line(bundle) == f"FAIL: step 2: ts is not an ISO 8601 instant with an offset ({ts!r})"


def test_ts_with_any_offset_is_accepted() -> None:
    bundle = edited(2, lambda e: e.update(ts="2031-04-02T12:15:30.5+02:00"))
    assert line(bundle).startswith("OK: ")


@pytest.mark.parametrize("kind", ["redaction", "repair", "hold", "hold_release"])
def test_audit_entry_cannot_be_redacted(kind: str) -> None:
    run = Run("r")
    run.append(kind, {"by": "ops", "reason": "x"})
    bundle = run.bundle()
    strip_paths(bundle["entries"][0], ["reason"])
    assert line(bundle) == (
        f"FAIL: step 0: a {kind} audit entry cannot be redacted"
        " - the audit trail is what a redaction is accountable to"
    )


# --- data shape ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("data", [], "entry data is not a JSON object"),
        ("data", None, "entry data is not a JSON object"),
        ("salts", "x", "entry salts is not a JSON object"),
        ("redacted", "tool", "entry redacted is not a JSON array of strings"),
        ("redacted", [1], "entry redacted is not a JSON array of strings"),
    ],
)
def test_unhashed_members_must_have_their_shape(key: str, value: object, message: str) -> None:
    bundle = edited(2, lambda e: e.update({key: value}), relinked=False)
    assert line(bundle) == f"FAIL: step 2: {message}"


def test_commitments_must_be_an_object() -> None:
    bundle = edited(2, lambda e: e.update(commitments=["tool"]))
    assert line(bundle) == "FAIL: step 2: entry commitments is not a JSON object"


def test_defaults_make_an_entry_without_data_valid() -> None:
    run = Run("r")
    run.append("marker")
    bundle = run.bundle()
    assert "data" in bundle["entries"][0] and "salts" not in bundle["entries"][0]
    del bundle["entries"][0]["data"]
    assert line(bundle).startswith("OK: r - 1 steps")


def test_redacted_path_must_have_been_committed_first_in_sorted_order() -> None:
    bundle = edited(2, lambda e: e.update(redacted=["zzz", "aaa", "tool"]), relinked=False)
    assert line(bundle) == "FAIL: step 2: path aaa is marked redacted but was never committed by this entry"


# --- per committed path, in document order ---------------------------------------------


def test_redacted_path_whose_value_is_still_present() -> None:
    bundle = edited(2, lambda e: e.update(redacted=["result.n"]), relinked=False)
    assert line(bundle) == "FAIL: step 2: path result.n is marked redacted but its value is still present"


def test_redacted_path_whose_salt_is_still_present() -> None:
    def change(entry: dict) -> None:
        salt = entry["salts"]["args"]
        strip_paths(entry, ["args"])
        entry["salts"]["args"] = salt

    bundle = edited(2, change, relinked=False)
    assert line(bundle) == (
        "FAIL: step 2: path args is marked redacted but its salt is still present"
        " - the value is recoverable by anyone who can guess it"
    )


def test_value_missing_without_a_marker() -> None:
    bundle = edited(2, lambda e: e["data"].pop("tool"), relinked=False)
    assert line(bundle) == "FAIL: step 2: path tool missing without a redaction marker"


def test_sub_path_missing_without_a_marker() -> None:
    bundle = edited(3, lambda e: e["data"]["request"].pop("path"), relinked=False)
    assert line(bundle) == "FAIL: step 3: path request.path missing without a redaction marker"


@pytest.mark.parametrize(
    ("salt", "message"),
    [
        ("zz" * 16, "malformed salt for path source"),
        ("abc", "malformed salt for path source"),
        ("00" * 8, "salt for path source is 8 bytes - a salt is 16 bytes"),
        ("00" * 17, "salt for path source is 17 bytes - a salt is 16 bytes"),
        (5, "salt for path source is 0 bytes - a salt is 16 bytes"),
        (None, "salt for path source is 0 bytes - a salt is 16 bytes"),
    ],
)
def test_salt_must_be_16_bytes_of_hex(salt: object, message: str) -> None:
    bundle = edited(4, lambda e: e["salts"].update(source=salt), relinked=False)
    assert line(bundle) == f"FAIL: step 4: {message}"


def test_missing_salt_counts_as_zero_bytes() -> None:
    bundle = edited(4, lambda e: e["salts"].pop("source"), relinked=False)
    assert line(bundle) == "FAIL: step 4: salt for path source is 0 bytes - a salt is 16 bytes"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (-0.0, "negative zero cannot be canonicalized: it would share a commitment with positive zero"
               " (RFC 8785 errata 7920)"),
        (2**60 + 1, "integer 1152921504606846977 is outside the safe integer range: JSON numbers are doubles,"
                    " and a parser elsewhere reads these digits back as a different value. Record it as a"
                    " string instead (RFC 8785 Appendix D)."),
    ],
)
def test_value_that_cannot_be_canonicalized(value: object, text: str) -> None:
    bundle = edited(4, lambda e: e["data"].update(value=value), relinked=False)
    assert line(bundle) == f"FAIL: step 4: path value cannot be canonicalized: {text}"


def test_changed_value_fails_its_commitment() -> None:
    bundle = edited(2, lambda e: e["data"]["result"].update({"a.b": 2}), relinked=False)
    assert line(bundle) == "FAIL: step 2: data hash mismatch at path result.a~1b - value tampered or corrupted"


def test_changed_salt_fails_its_commitment() -> None:
    bundle = edited(2, lambda e: e["salts"].update({"result.x~0y": "11" * 16}), relinked=False)
    assert line(bundle) == "FAIL: step 2: data hash mismatch at path result.x~0y - value tampered or corrupted"


def test_paths_are_checked_in_commitment_document_order() -> None:
    def change(entry: dict) -> None:
        entry["data"]["kwargs"] = {"late": 1}  # "kwargs" comes before "result" in commitments
        entry["data"]["tool"] = "other"
    bundle = edited(2, change, relinked=False)
    assert line(bundle) == "FAIL: step 2: data hash mismatch at path tool - value tampered or corrupted"


# --- uncommitted data and husks ----------------------------------------------------------


@pytest.mark.parametrize(
    ("change", "path"),
    [
        (lambda d: d.update(extra=1), "extra"),
        (lambda d: d["result"].update(new=1), "result.new"),
        (lambda d: d.update({"a.b~c": {"k.": 1}}), "a~1b~0c.k~1"),
        (lambda d: d.update(empty={}), "empty"),
    ],
)
def test_uncommitted_data_is_refused(change: Any, path: str) -> None:
    bundle = edited(2, lambda e: change(e["data"]), relinked=False)
    assert line(bundle) == f"FAIL: step 2: uncommitted data at path {path}"


def test_uncommitted_paths_are_reported_in_data_document_order() -> None:
    bundle = edited(2, lambda e: e["data"].update(zeta=1, alpha=2), relinked=False)
    assert line(bundle) == "FAIL: step 2: uncommitted data at path zeta"


def test_husk_kept_or_dropped_both_verify() -> None:
    run = sample_run(None)
    run.redact((3, "request.method"), (3, "request.path"))
    bundle = run.bundle()
    assert bundle["entries"][3]["data"]["request"] == {}
    assert line(bundle).startswith("OK: run-1 - 7 steps")
    del bundle["entries"][3]["data"]["request"]
    assert line(bundle).startswith("OK: run-1 - 7 steps")


def test_emptied_object_without_markers_is_not_a_husk() -> None:
    run = Run("r")
    run.append("context", {"content": {"k": 1}})
    bundle = run.bundle()
    entry = bundle["entries"][0]
    entry["data"]["content"] = {}
    assert line(bundle) == "FAIL: step 0: path content.k missing without a redaction marker"


# --- seal ----------------------------------------------------------------------------


def test_only_audit_entries_may_follow_a_seal() -> None:
    run = sample_run(None)
    for kind in ("redaction", "repair", "hold", "hold_release"):
        run.append(kind, {"by": "ops"})
    assert line(run.bundle()).startswith("OK: run-1 - 10 steps")
    run.append("marker", {"note": "late"})
    assert line(run.bundle()) == (
        "FAIL: step 5: run_end seal is not final - only redaction, repair, hold and hold_release"
        " audit entries may follow a seal"
    )


def test_second_run_end_is_not_an_audit_entry() -> None:
    run = sample_run(None)
    run.seal()
    assert line(run.bundle()) == (
        "FAIL: step 5: run_end seal is not final - only redaction, repair, hold and hold_release"
        " audit entries may follow a seal"
    )


@pytest.mark.parametrize(("steps", "shown"), [(3, "3"), (None, "None"), ("6", "6"), (6.0, "6.0")])
def test_run_end_must_attest_its_own_index_plus_one(steps: object, shown: str) -> None:
    run = sample_run(None, seal=False)
    run.append("run_end", {"steps": steps})
    assert line(run.bundle()) == f"FAIL: step 5: run_end seal attests {shown} steps but was sealed at 6"


def test_entry_checks_come_before_the_seal_check() -> None:
    run = sample_run(None)
    run.append("marker", {"note": "late"}, prov="observed")
    assert line(run.bundle()) == "FAIL: step 6: a marker entry cannot be observed - it is asserted"


def test_ctx_and_mixed_algorithms_verify() -> None:
    run = Run("r")
    run.append("tool_call", {"tool": "t"}, ctx="outer")
    run.alg = "sha256"
    run.append("nondet", {"source": "random", "value": 4}, ctx="outer")
    assert line(run.bundle()).startswith("OK: r - 2 steps")


def test_make_entry_helper_matches_spec_body() -> None:
    entry = make_entry("r", 0, "0" * 64, "marker", {"note": "n"})
    assert set(entry) == {"v", "alg", "run_id", "step", "kind", "prov", "ts", "prev", "commitments",
                          "hash", "data", "salts"}
