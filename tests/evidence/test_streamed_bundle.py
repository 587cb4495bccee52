"""A JSON-form bundle verified with its entries streamed (``verify RUN``) gets the whole document's verdict.

``streamed_bundle`` is what ``bundle_document`` builds, never holding the entries; ``verify_entries``
is the streaming verifier a JSONL file gets, here over a JSON-form header. Every bundle tamper of
test_tamper gets the same verdict either way.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from bitexact.crypto import SigningKey
from bitexact.demo.scenario import record_demo_run
from bitexact.errors import StoreError
from bitexact.evidence.export import EntriesUnreadError, RunSource, bundle_document, streamed_bundle
from bitexact.evidence.verify import Pins, verify_bundle
from bitexact.evidence.verify.jsonl import verify_entries
from bitexact.recording import Recorder
from bitexact.store import Store

from evidence.test_tamper import TAMPERS

Bundle = dict[str, Any]


@pytest.fixture
def source(store: Store, recorder_key: SigningKey) -> RunSource:
    return RunSource.from_store(store, record_demo_run(Recorder(store, recorder_key)))


def _pins(key: SigningKey) -> Pins:
    return Pins(bundle_keys=frozenset({key.public_hex}), recorder_keys=frozenset({key.public_hex}))


def _without_entries(doc: Bundle) -> Bundle:
    return {k: v for k, v in doc.items() if k != "entries"}


def test_the_streamed_header_is_the_document_s_once_its_entries_are_read(source: RunSource) -> None:
    whole = bundle_document(source, None)
    streamed = streamed_bundle(source, None)
    assert streamed.header["chain"]["head_hash"] == ""  # not known before the last entry
    assert list(streamed.entries) == whole["entries"]
    assert streamed.header == _without_entries(whole)


def test_a_signed_streamed_bundle_verifies_pinned(source: RunSource, recorder_key: SigningKey) -> None:
    streamed = streamed_bundle(source, recorder_key)
    verdict = verify_entries(streamed.header, streamed.entries, _pins(recorder_key), form="json")
    whole = verify_bundle(bundle_document(source, recorder_key), _pins(recorder_key))
    assert verdict == whole and verdict.ok and verdict.form == "json"
    assert "(jsonl, streamed)" not in verdict.line


@pytest.mark.parametrize("tamper", TAMPERS, ids=lambda f: f.__name__)
def test_every_tamper_gets_the_whole_document_s_verdict(source: RunSource, recorder_key: SigningKey,
                                                        tamper: Callable[[Bundle], str]) -> None:
    doc = bundle_document(source, recorder_key)
    message = tamper(doc)
    whole = verify_bundle(copy.deepcopy(doc), _pins(recorder_key))
    streamed = verify_entries(_without_entries(doc), iter(doc["entries"]), _pins(recorder_key), form="json")
    assert streamed == whole
    assert streamed.line == "FAIL: " + message


def test_a_read_error_of_the_source_passes_through_the_verifier(source: RunSource) -> None:
    """The store's error is the caller's to say (``FAIL: run RUN: step N is missing ...``), never
    ``malformed bundle: StoreError(...)``; what the verifier itself raises is still a verdict."""
    def damaged() -> Any:
        yield from list(source.entries())[:3]
        raise StoreError("run r: step 3 is missing from the store; it is damaged")

    broken = RunSource(source.run_id, damaged, source.checkpoints)
    streamed = streamed_bundle(broken, None)
    with pytest.raises(EntriesUnreadError) as raised:
        verify_entries(streamed.header, streamed.entries, Pins(), form="json", passthrough=(EntriesUnreadError,))
    assert isinstance(raised.value.error, StoreError)
    unread = streamed_bundle(broken, None)
    verdict = verify_entries(unread.header, unread.entries, Pins(), form="json")
    assert verdict.line.startswith("FAIL: malformed bundle: EntriesUnreadError(")  # without passthrough
