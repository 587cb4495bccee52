"""Full-session resolution of a compact stream: local parts (T-UAS-079)."""

from __future__ import annotations

import json
import os

import pytest

from bitexact.sessions.compact import (
    CompactTransportError,
    RunBinding,
    artifact_id,
    compact_events,
    resolve_full_session,
    transport_envelope,
)

pytestmark = pytest.mark.uas("T-UAS-079")

BINDING = RunBinding("octo/repo", "9001", "2", "octo/repo/.github/workflows/agent.lock.yml@refs/heads/main")
HEADER = {"type": "session.format", "data": {"version": 1},
          "provenance": {"component": "collector", "phase": "conclusion", "path": "usage/aw_session.jsonl", "index": 0}}


def _artifact(directory, ident, *, session=True, **meta):
    folder = directory / str(ident)
    folder.mkdir(parents=True)
    record = {"id": str(ident), "repository": BINDING.repository, "runId": BINDING.run_id,
              "runAttempt": BINDING.run_attempt, "workflow": BINDING.workflow, **meta}
    (folder / "artifact.json").write_text(json.dumps(record))
    if session:
        (folder / "aw_session.jsonl").write_text(json.dumps(HEADER) + "\n")
    return folder


@pytest.mark.parametrize("value, expected", [(1, "1"), ("42", "42"), (2**53 + 1, str(2**53 + 1)),
                                             ("18446744073709551616", "18446744073709551616")])
def test_artifact_ids_are_canonical_positive_decimal_strings(value, expected) -> None:
    assert artifact_id(value) == expected


@pytest.mark.parametrize("value", [0, -3, 1.0, 1e3, True, "0", "007", "+5", "1e3", "1.0", "", None])
def test_non_canonical_artifact_ids_are_refused_with_the_field(value) -> None:
    with pytest.raises(CompactTransportError, match="artifactId"):
        artifact_id(value)


def test_envelope_names_profile_loss_metadata_and_ids() -> None:
    result = compact_events([HEADER, {"type": "assistant.message", "data": {"content": "x"}}])
    envelope = transport_envelope(result, [123, "123", "456"])
    assert envelope["profile"] == "compact" and envelope["version"] == 1
    assert envelope["session"] == result["session"]
    for name in ("includedEvents", "omittedEvents", "oversizedLines", "scanTruncated", "truncated"):
        assert envelope[name] == result[name]
    assert envelope["fullSession"] == {"available": True, "artifactIds": ["123", "456"]}
    assert "complete" not in envelope and envelope.get("profile") != "full"
    assert transport_envelope(result)["fullSession"] == {"available": False, "artifactIds": []}


def test_envelope_refuses_results_without_loss_metadata_or_float_ids() -> None:
    result = compact_events([HEADER])
    with pytest.raises(CompactTransportError, match="truncated"):
        transport_envelope({k: v for k, v in result.items() if k != "truncated"})
    with pytest.raises(CompactTransportError, match=r"artifactIds\[0\]"):
        transport_envelope(result, [12.0])
    with pytest.raises(CompactTransportError, match="version"):
        transport_envelope({**result, "version": 2})


def test_retry_artifact_bound_to_current_attempt_is_selected(tmp_path) -> None:
    _artifact(tmp_path, 100, runAttempt="1")          # initial attempt: wrong attempt
    folder = _artifact(tmp_path, 101)
    found = resolve_full_session(tmp_path, ["100", 101], BINDING)
    assert found.available and found.artifact_id == "101"
    assert found.path == folder / "aw_session.jsonl"
    assert found.reasons == ("100: runAttempt does not match the current run",)


@pytest.mark.parametrize("meta, reason", [
    ({"repository": "evil/fork"}, "repository does not match"),
    ({"runId": "1"}, "runId does not match"),
    ({"workflow": "other.yml"}, "workflow does not match"),
    ({"id": "7"}, "id does not match"),
    ({"expired": True}, "expired"),
])
def test_unbound_or_expired_artifacts_stay_unavailable(tmp_path, meta, reason) -> None:
    _artifact(tmp_path, 300, **meta)
    found = resolve_full_session(tmp_path, ["300"], BINDING)
    assert not found.available and found.path is None
    assert reason in found.reasons[0]


def test_absent_artifact_missing_file_symlink_and_bad_header_are_unavailable(tmp_path) -> None:
    _artifact(tmp_path, 1, session=False)
    bad = _artifact(tmp_path, 2, session=False)
    (bad / "aw_session.jsonl").write_text('{"type":"assistant.message","data":{}}\n')
    linked = _artifact(tmp_path, 3, session=False)
    target = tmp_path / "elsewhere.jsonl"
    target.write_text(json.dumps(HEADER) + "\n")
    os.symlink(target, linked / "aw_session.jsonl")
    found = resolve_full_session(tmp_path, ["1", "2", "3", "4"], BINDING)
    assert not found.available
    assert [r.split(": ", 1)[1] for r in found.reasons] == [
        "aw_session.jsonl absent or empty", "aw_session.jsonl has no version-1 format header",
        "aw_session.jsonl is a symbolic link", "absent"]


def test_no_ids_means_explicitly_unavailable(tmp_path) -> None:
    found = resolve_full_session(tmp_path, [], BINDING)
    assert not found.available and found.reasons == ("no usage artifact ID was provided",)
