"""Re-importing the same bytes is refused naming the earlier run; --run-id is honoured, never reused."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bitexact.recording import Recorder
from bitexact.sessions.evidence import (
    AlreadyImportedError,
    RunIdTakenError,
    find_earlier_import,
    import_session,
    read_session,
    run_name,
)
from bitexact.store import Store
from tests.sessions.evidence.conftest import FIXTURES

LOG = FIXTURES / "claude/json_array_legacy_session.json"


def test_the_same_bytes_are_refused_naming_the_earlier_run(plain_recorder: Recorder, store: Store,
                                                            tmp_path: Path) -> None:
    first = import_session(plain_recorder, read_session(LOG))
    copy = tmp_path / "renamed.json"
    shutil.copyfile(LOG, copy)
    runs_before = len(store.runs())
    for again in (read_session(LOG), read_session(copy), read_session(LOG, engine="custom")):
        with pytest.raises(AlreadyImportedError) as refused:
            import_session(plain_recorder, again)
        assert refused.value.run_id == first.run_id
        assert first.run_id in str(refused.value)
    assert len(store.runs()) == runs_before


def test_different_bytes_are_a_different_import(plain_recorder: Recorder, store: Store, tmp_path: Path) -> None:
    first = import_session(plain_recorder, read_session(LOG))
    changed = tmp_path / "changed.json"
    changed.write_bytes(LOG.read_bytes() + b"\n")
    second = import_session(plain_recorder, read_session(changed))
    assert second.run_id != first.run_id
    assert find_earlier_import(store, read_session(changed).sha256).run_id == second.run_id


def test_a_run_merely_named_like_an_import_is_not_taken_for_one(plain_recorder: Recorder, store: Store) -> None:
    source = read_session(LOG)
    impostor = plain_recorder.start(name=run_name(source))  # same name, no import block in its run_meta
    impostor.seal()
    assert find_earlier_import(store, source.sha256) is None
    result = import_session(plain_recorder, source)
    assert find_earlier_import(store, source.sha256).run_id == result.run_id


def test_an_interrupted_import_is_named_as_such(plain_recorder: Recorder, store: Store) -> None:
    source = read_session(LOG)
    partial = plain_recorder.start(name=run_name(source), meta={"import": source.describe()})  # never sealed
    with pytest.raises(AlreadyImportedError, match="unsealed") as refused:
        import_session(plain_recorder, source)
    assert refused.value.run_id == partial.run_id and not refused.value.sealed


def test_run_id_is_honoured_and_an_existing_one_refused(plain_recorder: Recorder, store: Store) -> None:
    result = import_session(plain_recorder, read_session(LOG), run_id="claude-session-1")
    assert result.run_id == "claude-session-1"
    assert store.run("claude-session-1").sealed
    other = FIXTURES / "codex/legacy_text_layout.log"
    with pytest.raises(RunIdTakenError, match="already exists") as refused:
        import_session(plain_recorder, read_session(other), run_id="claude-session-1")
    assert refused.value.run_id == "claude-session-1"
    assert store.run("claude-session-1").steps == result.steps
    assert find_earlier_import(store, read_session(other).sha256) is None


def test_a_file_named_like_a_digest_is_still_found_by_its_own_digest(plain_recorder: Recorder, store: Store,
                                                                      tmp_path: Path) -> None:
    tricky = tmp_path / f"sha256:{'0' * 64}.json"
    shutil.copyfile(LOG, tricky)
    first = import_session(plain_recorder, read_session(tricky))
    with pytest.raises(AlreadyImportedError) as refused:
        import_session(plain_recorder, read_session(tricky))
    assert refused.value.run_id == first.run_id
