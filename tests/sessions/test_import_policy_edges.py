"""The capture policy's path rules and session events kept as JSON text, found in review: a value a
hash-only rule covers used to be stored in the clear once its event had to be kept as text."""

from __future__ import annotations

import base64
import json

from bitexact.canon import canonicalize
from bitexact.capture import load_policy
from bitexact.crypto import SigningKey
from bitexact.recording import CheckpointPolicy, Recorder
from bitexact.sessions.evidence import SessionSource, SourceEvent, import_session, load_session
from bitexact.store import Store

INIT = {"type": "session.init", "data": {"sourceEngine": "copilot"}}
# A card number, base64-encoded: no detector reads base64, which is why the
# shipped ``pci`` preset keeps every ``*.b64`` value hash-only.
B64_CARD = base64.b64encode(b"card 4111 1111 1111 1111 exp 12/29").decode()


def _nested(levels: int) -> object:
    value: object = 0
    for _ in range(levels):
        value = [value]
    return value


def _pci_recorder(store: Store, key: SigningKey) -> Recorder:
    return Recorder(store, key, checkpoints=CheckpointPolicy(every=4, seconds=3600), policy=load_policy("pci"))


def _stored_text(store: Store, run_id: str) -> str:
    return canonicalize(list(store.entries(run_id))).decode()


def test_pci_hash_only_field_of_a_too_deep_event_is_not_stored_in_the_clear(store: Store,
                                                                            recorder_key: SigningKey) -> None:
    # The same attachment is committed hash-only when the event is ordinary
    # (control), but an event whose data also nests past the entry depth
    # limit is passed to the write path as JSON text (data_json): the policy's
    # path rule (*.b64 hash-only) no longer sees a "b64" key and the raw value
    # is stored.
    plain = {"type": "user.message", "data": {"attachment": {"b64": B64_CARD}}}
    deep = {"type": "user.message", "data": {"attachment": {"b64": B64_CARD}, "tree": _nested(130)}}
    log = "".join(json.dumps(e) + "\n" for e in (INIT, plain)).encode()
    result = import_session(_pci_recorder(store, recorder_key), load_session(log, "plain.jsonl"))
    assert B64_CARD not in _stored_text(store, result.run_id)  # control: the policy applies

    log = "".join(json.dumps(e) + "\n" for e in (INIT, deep)).encode()
    result = import_session(_pci_recorder(store, recorder_key), load_session(log, "deep.jsonl"))
    assert B64_CARD not in _stored_text(store, result.run_id)


def test_pci_hash_only_field_of_an_event_kept_as_text_after_a_key_clash_is_not_stored_in_the_clear(
    store: Store, recorder_key: SigningKey
) -> None:
    # Keys that fold to one under canonical JSON send the event through the
    # as_text fallback (_append_one_by_one): the same bypass of path rules.
    clash = {"type": "user.message",
             "data": {"attachment": {"b64": B64_CARD}, "\ud83d\ude00": 1, "\U0001F600": 2}}
    source = SessionSource("clash.jsonl", "cd" * 32, 1, "custom", "log",
                           (SourceEvent(0, INIT), SourceEvent(1, clash)))
    result = import_session(_pci_recorder(store, recorder_key), source)
    assert B64_CARD not in _stored_text(store, result.run_id)
