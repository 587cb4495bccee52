"""Fixtures for the SDK: a data directory per test, its shared store, vectors, and loopback servers."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bitexact.sdk.stores import recorder_for
from sdk.servers import LoopbackServer, serve

DATA = Path(__file__).resolve().parent.parent / "data" / "sdk" / "protocol-vectors.json"


@pytest.fixture(autouse=True)
def _isolated(sdk_home: Path) -> None:
    """Every test gets its own BITEXACT_HOME and no inherited SDK settings (the root conftest's sdk_home).

    The capture policy is off unless a test says otherwise: these tests are of
    what the SDK hands the write path, and the policy (tests/capture) would
    rightly scrub test data that looks like a card number. The tests that
    record under the shipped policy set it themselves.
    """


@pytest.fixture(scope="session")
def vectors() -> dict[str, Any]:
    return json.loads(DATA.read_text(encoding="utf-8"))


def entries(run_id: str | None) -> list[dict[str, Any]]:
    """The run's entries as stored (through the shared store of BITEXACT_HOME)."""
    assert run_id is not None
    recorder, _ = recorder_for()
    return list(recorder.store.entries(run_id))


def http_calls(run_id: str | None) -> list[dict[str, Any]]:
    """The run's http_call entries as stored."""
    return [e for e in entries(run_id) if e["kind"] == "http_call"]


def journaled(home: Path, run_id: str | None) -> list[str]:
    """Every journal still holding an entry, in record order: files, and full slots as ``<file>#<index>``."""
    from bitexact.crypto.hostkey import load_host_key
    from bitexact.recording.journal import journal_dir, orphan_journals, read_journal
    from bitexact.recording.journal_slots import read_slots, slot_files

    assert run_id is not None
    host_key = load_host_key(home, create=False)
    named = [(read_journal(p, host_key).seq, p.name) for p in orphan_journals(home, run_id)]
    for path in slot_files(journal_dir(home, run_id)):
        named += [(slot.record.seq, slot.name) for slot in read_slots(path, host_key) if slot.record]
    return [name for _, name in sorted(named)]


def kinds(run_id: str | None) -> list[str]:
    return [e["kind"] for e in entries(run_id)]


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with serve() as running:
        yield running


@pytest.fixture
def sdk_warnings(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.set_level(logging.WARNING, logger="bitexact.sdk")
    return caplog
