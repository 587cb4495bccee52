"""The checks of one entry, in the order of bundle spec §12.1 step 3 (rules of §4-§6).

:func:`check_entry` raises :class:`CheckFailed` with the ``step {i}: ``
prefix, or lets a :class:`CanonicalizationError` of the chain body escape,
which the caller reports as ``malformed bundle: {exc!r}`` (§12.1).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bitexact.canon import canonicalize
from bitexact.crypto import chain_hash
from bitexact.crypto.hashes import commitment_of_bytes
from bitexact.errors import CanonicalizationError
from bitexact.evidence.verify.failure import CheckFailed
from bitexact.evidence.verify.paths import ABSENT, resolve, uncommitted
from bitexact.evidence.vocabulary import (
    ALGORITHMS,
    ALLOWED_PROV,
    AUDIT_KINDS,
    ENTRY_VERSION,
    PROVENANCES,
    UNHASHED_ENTRY_KEYS,
)

_EMPTY: dict[str, Any] = {}


@dataclass(frozen=True, slots=True)
class EntryFacts:
    """What the rest of verification needs from an entry that passed its checks."""

    hash: str
    kind: str
    prov: str
    redacted: list[str]
    claims: list[str]


def check_entry(index: int, entry: object, run_id: str, prev: str) -> EntryFacts:
    """Check entry ``index`` against the bundle ``run_id`` and the previous hash ``prev``."""
    try:
        return _check(index, entry, run_id, prev)
    except CheckFailed as failure:
        raise failure.prefixed(f"step {index}: ") from None


def _check(index: int, entry: object, run_id: str, prev: str) -> EntryFacts:
    if type(entry) is not dict:
        raise CheckFailed("entry is not a JSON object")
    entry_hash = _check_form_and_chain(index, entry, run_id, prev)
    kind, prov = _check_vocabulary(entry)
    data, salts, commitments, redacted = _check_data_shape(entry)
    _check_paths(entry["alg"], data, salts, commitments, redacted)
    for path in uncommitted(data, commitments):
        raise CheckFailed(f"uncommitted data at path {path}")
    claims = _claim_tokens(data) if kind == "redaction" else []
    return EntryFacts(entry_hash, kind, prov, redacted, claims)


def _check_form_and_chain(index: int, entry: dict[str, Any], run_id: str, prev: str) -> str:
    version = entry.get("v")
    if type(version) is not int or version != ENTRY_VERSION:
        raise CheckFailed(f"unsupported entry version {version!r}")
    body = {k: v for k, v in entry.items() if k not in UNHASHED_ENTRY_KEYS}
    canonical = canonicalize(body)  # a failure here is "malformed bundle" (§12.1)
    alg = entry.get("alg")
    if type(alg) is not str or alg not in ALGORITHMS:
        raise CheckFailed(f"unsupported hash algorithm {alg!r}")
    entry_run_id = entry.get("run_id")
    if entry_run_id != run_id:
        raise CheckFailed(f"entry run_id {entry_run_id!r} does not match bundle run_id")
    step = entry.get("step")
    if type(step) is not int or step != index:
        raise CheckFailed("step index mismatch")
    if entry.get("prev") != prev:
        raise CheckFailed("chain broken")
    computed = chain_hash(alg, canonical)
    if entry.get("hash") != computed:
        raise CheckFailed("hash mismatch - entry tampered or corrupted")
    return computed


def _check_vocabulary(entry: dict[str, Any]) -> tuple[str, str]:
    prov = entry.get("prov")
    if type(prov) is not str or prov not in PROVENANCES:
        raise CheckFailed(f"unknown or missing provenance {prov!r}")
    kind = entry.get("kind")
    allowed = ALLOWED_PROV.get(kind) if type(kind) is str else None
    if allowed is None or type(kind) is not str:
        raise CheckFailed(f"unknown entry kind {kind!r}")
    if prov not in allowed:
        raise CheckFailed(f"a {kind} entry cannot be {prov} - it is {' or '.join(allowed)}")
    ts = entry.get("ts")
    if not _is_instant(ts):
        raise CheckFailed(f"ts is not an ISO 8601 instant with an offset ({ts!r})")
    # "non-empty redacted" is read as JSON truthiness; an empty list is allowed.
    if kind in AUDIT_KINDS and entry.get("redacted"):
        raise CheckFailed(
            f"a {kind} audit entry cannot be redacted - the audit trail is what a redaction is accountable to"
        )
    return kind, prov


def _is_instant(ts: object) -> bool:
    if type(ts) is not str or "T" not in ts:
        return False
    try:
        parsed = datetime.fromisoformat(ts)
    except ValueError:
        return False
    return parsed.utcoffset() is not None


def _check_data_shape(
    entry: dict[str, Any],
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], list[str]]:
    # Absent keys take their defaults (§4.2); a present null is not a default.
    data = entry.get("data", _EMPTY)
    if type(data) is not dict:
        raise CheckFailed("entry data is not a JSON object")
    salts = entry.get("salts", _EMPTY)
    if type(salts) is not dict:
        raise CheckFailed("entry salts is not a JSON object")
    commitments = entry.get("commitments", _EMPTY)
    if type(commitments) is not dict:
        raise CheckFailed("entry commitments is not a JSON object")
    redacted = entry.get("redacted", [])
    if type(redacted) is not list or any(type(p) is not str for p in redacted):
        raise CheckFailed("entry redacted is not a JSON array of strings")
    for path in sorted(redacted):
        if path not in commitments:
            raise CheckFailed(f"path {path} is marked redacted but was never committed by this entry")
    return data, salts, commitments, redacted


def _check_paths(
    alg: str,
    data: dict[str, Any],
    salts: dict[str, Any],
    commitments: dict[str, Any],
    redacted: list[str],
) -> None:
    marked = set(redacted) if redacted else ()
    for path, committed in commitments.items():
        # The hot loop of verification: plain top-level paths skip the resolver call.
        if "." in path or "~" in path:
            value = resolve(data, path)
        else:
            value = data.get(path, ABSENT)
        if path in marked:
            if value is not ABSENT:
                raise CheckFailed(f"path {path} is marked redacted but its value is still present")
            if path in salts:
                raise CheckFailed(
                    f"path {path} is marked redacted but its salt is still present"
                    " - the value is recoverable by anyone who can guess it"
                )
            continue
        if value is ABSENT:
            raise CheckFailed(f"path {path} missing without a redaction marker")
        salt = salts.get(path)
        raw = b""  # a missing or non-string salt counts as 0 bytes (§4.2)
        if type(salt) is str:
            try:
                raw = bytes.fromhex(salt)
            except ValueError:
                raise CheckFailed(f"malformed salt for path {path}") from None
        if len(raw) != 16:
            raise CheckFailed(f"salt for path {path} is {len(raw)} bytes - a salt is 16 bytes")
        try:
            canonical = canonicalize(value)
        except CanonicalizationError as exc:
            raise CheckFailed(f"path {path} cannot be canonicalized: {exc}") from None
        if commitment_of_bytes(alg, raw, canonical) != committed:
            raise CheckFailed(f"data hash mismatch at path {path} - value tampered or corrupted")


def _claim_tokens(data: dict[str, Any]) -> list[str]:
    fields = data.get("fields")
    if type(fields) is not list:
        return []
    return [token for token in fields if type(token) is str]
