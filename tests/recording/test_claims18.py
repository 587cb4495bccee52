"""Two redactions of one field at once (the eighteenth session's crash and contention audit)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bitexact.crypto.keystore import KeyStore
from bitexact.errors import EvidenceError
from bitexact.recording import Recorder
from bitexact.recording.audit import apply_pending, pending_claims, record_claim
from bitexact.store import open_store
from cli.real_command import demo_run


def test_a_field_claimed_by_another_redaction_after_the_checks_is_refused_where_the_claim_lands(
    tmp_path: Path,
) -> None:
    """Two `bitexact redact RUN --field 3:result.excess_eur` started together both passed the checks (not
    redacted, nothing pending), and both claims landed, the second rebuilt on the head the first moved: two
    claims of one value on the chain, both commands exiting 0. Here the second one's writer is attached
    before the first claim lands, as the second process's was."""
    home = tmp_path / "home"
    run_id = demo_run(home)
    store = open_store(home)
    try:
        keys = KeyStore(home)
        recorder = Recorder(store, keys.current(), keys=keys)
        late = recorder.attach(run_id)  # the second process: its head read before the first claim lands
        first = recorder.attach(run_id)
        assert record_claim(first, ["3:result.excess_eur"], by="alice", reason="erasure") == ["3:result.excess_eur"]
        steps = store.run(run_id).steps
        with pytest.raises(EvidenceError, match="3:result.excess_eur of run .* was claimed by another redaction"
                                                " meanwhile"):
            record_claim(late, ["3:result.excess_eur"], by="bob", reason="erasure")
        assert store.run(run_id).steps == steps  # no second claim
        assert [(c.step, c.path) for c in pending_claims(store, run_id)] == [(3, "result.excess_eur")]
        apply_pending(store, run_id)
        # Another field still goes through a writer whose head is behind: the check is per field.
        assert record_claim(late, ["4:response.text"], by="bob", reason="erasure") == ["4:response.text"]
    finally:
        store.close()
