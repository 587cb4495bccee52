"""Shape checks on the records handed to the store, each failure naming its field.

The store checks only what it indexes, chains on or keeps immutable. What an
entry means (kinds, provenance, commitments, the hash over its body) is the
evidence layer's to build and the verifier's to judge.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from bitexact.canon import canonicalize
from bitexact.canon.decode import DEFAULT_MAX_BYTES
from bitexact.crypto import ALGORITHMS, key_id as derive_key_id
from bitexact.errors import CanonicalizationError
from bitexact.store.base import RecordError

UNHASHED: Final[frozenset[str]] = frozenset({"hash", "data", "salts", "redacted"})
"""Entry keys outside the chain body (bundle spec §4); the only ones a rewrite may change."""

MAX_RUN_ID: Final[int] = 256
MAX_ROW_BYTES: Final[int] = DEFAULT_MAX_BYTES
"""The largest entry the store takes: what its own reads take back (the strict loader's limit)."""
_HEX64 = re.compile(r"[0-9a-f]{64}")
_HEX16 = re.compile(r"[0-9a-f]{16}")
_HEX64_MATCH: Final = _HEX64.fullmatch


@dataclass(frozen=True, init=False)
class EntryFields:
    """The indexed columns of an entry, and its canonical bytes."""

    step: int
    kind: str
    prov: str
    ts: str
    prev: str
    hash: str
    blob: bytes

    def __init__(self, step: int, kind: str, prov: str, ts: str, prev: str, hash: str,  # noqa: A002 - the field
                 blob: bytes) -> None:
        # The fields written into the instance's dict, not through the frozen dataclass's object.__setattr__ per
        # field (about 1,200 instructions each, 7 here, on every append); frozen as ever once made.
        fields = self.__dict__
        fields["step"], fields["kind"], fields["prov"], fields["ts"] = step, kind, prov, ts
        fields["prev"], fields["hash"], fields["blob"] = prev, hash, blob


@dataclass(frozen=True)
class CheckpointFields:
    """The indexed columns of a checkpoint, and its canonical bytes."""

    seq: int
    steps: int
    head_hash: str
    blob: bytes


def run_id(value: object) -> str:
    """A run id: a printable, non-empty string of at most 256 characters."""
    if not isinstance(value, str) or not value or len(value) > MAX_RUN_ID or not value.isprintable():
        raise RecordError(
            f"run_id must be a printable string of 1 to {MAX_RUN_ID} characters; got {value!r:.80}",
            field="run_id",
        )
    return value


def canonical(value: Any, what: str) -> bytes:
    """``canonicalize(value)``, with a refusal that names ``what``."""
    try:
        return canonicalize(value)
    except CanonicalizationError as exc:
        raise RecordError(f"{what} cannot be stored: {exc}", field=what) from exc


def _object(value: object, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise RecordError(f"{what} must be a JSON object; got {type(value).__name__}", field=what)
    return value


def _text(record: dict[str, Any], key: str, what: str) -> str:
    value = record.get(key)
    if type(value) is str and value.isascii() and value and "\x00" not in value:
        return value  # what column_text keeps, without formatting its field's name (this runs 3 times an entry)
    if not isinstance(value, str) or not value:
        raise RecordError(f"{what}.{key} must be a non-empty string; got {value!r:.80}", field=key)
    return column_text(value, f"{what}.{key}", key)


def column_text(value: str, what: str, field: str) -> str:
    """``value`` as the store can keep it in a TEXT column, or :class:`RecordError` naming ``field``.

    Canonical JSON writes a lone surrogate as an escape, but SQLite's TEXT is
    UTF-8, which cannot hold one (binding it raises, failing a whole batch);
    and SQLite's JSON functions cut a key at U+0000, which would miscount a
    run's kinds.
    """
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise RecordError(f"{what} holds a lone surrogate, which the store cannot keep; got {value!r:.80}",
                          field=field) from None
    if "\x00" in value:
        raise RecordError(f"{what} holds U+0000, which the store cannot keep; got {value!r:.80}", field=field)
    return value


def _hex64(record: dict[str, Any], key: str, what: str) -> str:
    value = record.get(key)
    if not isinstance(value, str) or not _HEX64.fullmatch(value):
        raise RecordError(
            f"{what}.{key} must be 64 lowercase hex characters; got {value!r:.80}", field=key
        )
    return value


def _count(record: dict[str, Any], key: str, what: str) -> int:
    value = record.get(key)
    if type(value) is not int or value < 0:
        raise RecordError(f"{what}.{key} must be a non-negative integer; got {value!r:.80}", field=key)
    return value


def _same_run(record: dict[str, Any], expected: str, what: str) -> None:
    if record.get("run_id") != expected:
        raise RecordError(
            f"{what}.run_id is {record.get('run_id')!r:.80} but it is being stored in run {expected!r}",
            field="run_id",
        )


def entry(run: str, value: object, encoded: bytes | None = None) -> EntryFields:
    """Check an entry's shape for run ``run`` and return its columns.

    ``encoded`` is the entry's canonical bytes when the write path made them already
    (:func:`~bitexact.evidence.entry.encode_entry`): kept as they are, not made again.
    """
    # A plain dict is asked for by its type first (the checks below, without a call each on every entry).
    record = value if type(value) is dict else _object(value, "entry")
    if record.get("run_id") != run:
        _same_run(record, run, "entry")
    alg = record.get("alg")
    if alg not in ALGORITHMS:
        raise RecordError(f"entry.alg must be one of {', '.join(ALGORITHMS)}; got {alg!r:.80}", field="alg")
    if type(record.get("commitments")) is not dict:
        _object(record.get("commitments"), "commitments")
    if "data" in record and type(record["data"]) is not dict:
        _object(record["data"], "data")
    if "salts" in record and type(record["salts"]) is not dict:
        _object(record["salts"], "salts")
    if "redacted" in record:  # absent on every entry until a redaction rewrites it: no generator to make
        redacted = record["redacted"]
        if not isinstance(redacted, list) or not all(isinstance(p, str) for p in redacted):
            raise RecordError("entry.redacted must be a list of path strings", field="redacted")
    step = record.get("step")
    if type(step) is not int or step < 0:
        step = _count(record, "step", "entry")
    blob = canonical(record, "entry") if encoded is None else encoded
    if len(blob) > MAX_ROW_BYTES:
        # Stored, it would be a row no reader takes back (show, verify and export all stop at it, and call the
        # store damaged): refused here, the write path declares it instead.
        raise RecordError(
            f"entry {step} of run {run} is {len(blob):,} bytes as stored, over the {MAX_ROW_BYTES:,} a reader of "
            "the store takes back: record less in one entry (a capture policy withholds a field past "
            "BITEXACT_MAX_BODY_BYTES; a control character in text is stored as six bytes)", field="entry")
    # _text's and _hex64's tests inline for the values nearly every entry holds (five calls less an entry);
    # anything else goes to them, which accept it or refuse it naming its field, in the same order as before.
    kind, prov, ts = record.get("kind"), record.get("prov"), record.get("ts")
    if not (type(kind) is str and kind.isascii() and kind and "\x00" not in kind):
        kind = _text(record, "kind", "entry")
    if not (type(prov) is str and prov.isascii() and prov and "\x00" not in prov):
        prov = _text(record, "prov", "entry")
    if not (type(ts) is str and ts.isascii() and ts and "\x00" not in ts):
        ts = _text(record, "ts", "entry")
    prev, hashed = record.get("prev"), record.get("hash")
    if type(prev) is not str or _HEX64_MATCH(prev) is None:
        prev = _hex64(record, "prev", "entry")
    if type(hashed) is not str or _HEX64_MATCH(hashed) is None:
        hashed = _hex64(record, "hash", "entry")
    return EntryFields(step=step, kind=kind, prov=prov, ts=ts, prev=prev, hash=hashed, blob=blob)


def checkpoint(run: str, value: object) -> CheckpointFields:
    """Check a checkpoint's shape for run ``run`` and return its columns."""
    record = _object(value, "checkpoint")
    _same_run(record, run, "checkpoint")
    return CheckpointFields(
        seq=_count(record, "seq", "checkpoint"),
        steps=_count(record, "steps", "checkpoint"),
        head_hash=_hex64(record, "head_hash", "checkpoint"),
        blob=canonical(record, "checkpoint"),
    )


def chain_body(record: dict[str, Any]) -> dict[str, Any]:
    """The entry minus the keys a rewrite may replace."""
    return {k: v for k, v in record.items() if k not in UNHASHED}


def key_record(key_id: object, public_key: object, role: object, created_at: object, retired_at: object,
               compromised_at: object = None) -> None:
    """Check key metadata; the key id must be the one derived from the public key (§2.2)."""
    if not isinstance(public_key, str) or not _HEX64.fullmatch(public_key):
        raise RecordError(
            f"public_key must be 64 lowercase hex characters; got {public_key!r:.80}", field="public_key"
        )
    if not isinstance(key_id, str) or not _HEX16.fullmatch(key_id):
        raise RecordError(f"key_id must be 16 lowercase hex characters; got {key_id!r:.80}", field="key_id")
    derived = derive_key_id(public_key)
    if key_id != derived:
        raise RecordError(
            f"key_id {key_id} does not derive from public_key (its key id is {derived})", field="key_id"
        )
    for name, value in (("role", role), ("created_at", created_at)):
        if not isinstance(value, str) or not value:
            raise RecordError(f"{name} must be a non-empty string; got {value!r:.80}", field=name)
        column_text(value, name, name)
    for name, value in (("retired_at", retired_at), ("compromised_at", compromised_at)):
        if value is not None and (not isinstance(value, str) or not value):
            raise RecordError(f"{name} must be a non-empty string or None; got {value!r:.80}", field=name)
        if value is not None:
            column_text(value, name, name)


def meta(value: object) -> bytes:
    """Run metadata: a JSON object, stored canonically."""
    if value is None:
        value = {}
    return canonical(_object(value, "meta"), "meta")


def custody_record(value: object) -> bytes:
    """A custody record: any JSON object, stored canonically."""
    return canonical(_object(value, "custody"), "custody")
