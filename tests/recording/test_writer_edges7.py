"""Write-path edges (the seventh review): each test is a bug found and fixed in recording/ or evidence/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from store.pausing import bx, stored

from bitexact.crypto import SigningKey
from bitexact.crypto.hostkey import load_host_key
from bitexact.errors import CanonicalizationError, EvidenceError
from bitexact.recording import Recorder
from bitexact.recording.journal import JournalRecord, journal_dir, write_journal
from bitexact.store import Store


@pytest.mark.parametrize("call", ["append", "append_own", "append_batch"])
def test_an_entry_of_an_unknown_kind_is_refused_by_name_not_with_a_key_error(
    recorder: Recorder, store: Store, call: str
) -> None:
    """With no prov given, an unknown kind raised a bare ``KeyError('bogus')`` (the default prov's lookup)
    instead of build_entry's "unknown entry kind 'bogus'", which a prov given gets."""
    writer = recorder.start()
    with pytest.raises(EvidenceError, match="unknown entry kind 'bogus'"):
        if call == "append_batch":
            writer.append_batch([("bogus", {"a": 1}, None)])
        else:
            getattr(writer, call)("bogus", {"a": 1})
    assert [e["kind"] for e in store.entries(writer.run_id)] == ["run_meta"]


def test_a_repair_folding_a_journal_of_an_unknown_kind_names_it_refused_not_a_traceback(
    home: Path, store: Store, recorder_key: SigningKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The fold catches the write path's refusals (EvidenceError...) and names the journal refused; the
    KeyError of an unknown kind with no prov escaped it, so every `bitexact repair` of the run crashed."""
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "off")  # as the CLI's environment (cli_env) has it
    writer = Recorder(store, recorder_key).start()
    run_id = writer.run_id
    record = JournalRecord(run_id=run_id, seq=1, kind="bogus", data={"a": 1}, steps_before=1, unwritten=True)
    write_journal(home, load_host_key(home), record)
    store.close()
    done = bx(home, "repair", run_id, "--by", "ops", "--note", "agent died")
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0, done.stdout + done.stderr
    repairs = [e["data"] for e in stored(home, run_id) if e["kind"] == "repair"]
    assert any("unknown entry kind 'bogus'" in str(r.get("refused")) for r in repairs), repairs
    assert not journal_dir(home, run_id).exists() or not any(journal_dir(home, run_id).glob("*.bxj"))


@pytest.mark.parametrize("data", [{1: "x"}, {"a": {2: "x"}}, {"a": {"b": {3: "x"}}}])
def test_a_data_key_that_is_not_text_is_refused_with_the_spec_message_at_every_level(
    recorder: Recorder, store: Store, data: dict[Any, Any]
) -> None:
    """Spec §1.2 refuses a non-string key with "object keys must be strings; got {type}": it was said so three
    levels down, but a key at the two committed levels raised a bare AttributeError (``1 .replace``)."""
    writer = recorder.start()
    with pytest.raises(CanonicalizationError, match="object keys must be strings; got int"):
        writer.append("tool_call", data)
    assert [e["kind"] for e in store.entries(writer.run_id)] == ["run_meta"]
