"""Opening: testing a candidate against a hash-only field or a gap's withheld digest.

Testing a candidate is the same act as guessing it, so every test is
recorded on the run's custody chain *before* it is made
(capture-controls.md, "Opening a hash-only field"): an ``open-hash-only`` or
``open-withheld`` custody record naming the principal, the step, the path,
the capture key's id, the role and the time - never the candidate. A test
whose record cannot be written is not made.

The test itself is the capture layer's (:func:`~bitexact.capture.block.open_field`,
:func:`~bitexact.capture.block.open_withheld`); this module finds what to
test, the key to test it under (active or retired, from the policy in
force), and keeps the order: resolve, record, then test.

Nothing is appended to the evidence chain for an opening: a test changes
no evidence, the format has no audit kind for it (audit kinds are
``redaction``, ``repair``, ``hold``, ``hold_release``), and a chain entry
per guess would let a caller who may only test also grow the record. The
custody chain is where the store keeps who opened or tested what.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from bitexact.canon import DEFAULT_MAX_BYTES, loads, read_limited
from bitexact.capture.block import open_field, open_withheld
from bitexact.capture.errors import CaptureKeyMismatchError, FieldNotOpenableError
from bitexact.capture.policy import CapturePolicy
from bitexact.errors import BitExactError, StrictJSONError
from bitexact.evidence.timefmt import now_iso
from bitexact.store import Store
from bitexact.store.base import EntryNotFoundError

OPEN_HASH_ONLY: Final[str] = "open-hash-only"
OPEN_WITHHELD: Final[str] = "open-withheld"
ROLES: Final[frozenset[str]] = frozenset({"verify", "replay", "regress"})


class OpeningRefusedError(BitExactError, ValueError):
    """A test cannot be made (no such field, no key for it, a bad candidate); nothing was recorded."""


class CustodyUnrecordedError(OpeningRefusedError):
    """The custody record could not be written, so the candidate was not tested."""


@dataclass(frozen=True)
class OpeningResult:
    """One recorded test: what was tested, under which key, and whether it matched."""

    run_id: str
    step: int
    path: str | None
    key_id: str
    matched: bool
    custody_seq: int
    event: str

    def to_json(self) -> dict[str, Any]:
        """For ``--json`` output (never the candidate)."""
        return {
            "run_id": self.run_id,
            "step": self.step,
            "path": self.path,
            "key_id": self.key_id,
            "matched": self.matched,
            "custody_seq": self.custody_seq,
            "event": self.event,
        }


def read_candidate(path: Path | str) -> Any:
    """The candidate value held in a file as JSON, read with the strict reader."""
    return parse_candidate(read_candidate_bytes(path), str(path))


def read_candidate_bytes(path: Path | str) -> bytes:
    """A candidate file's exact bytes (``--open-withheld`` tests them as they are)."""
    try:
        raw = read_limited(path)
    except OSError as exc:
        raise OpeningRefusedError(f"--candidate-file {path}: cannot read: {exc.strerror}") from None
    if len(raw) > DEFAULT_MAX_BYTES:  # a device or a stuck pipe is never read without bound, nor tested cut
        raise OpeningRefusedError(f"--candidate-file {path}: over {DEFAULT_MAX_BYTES} bytes, larger than any"
                                  " recorded value")
    if not raw and _is_pipe(path):
        # read_limited does not wait for a writer: a FIFO nobody writes into reads as empty at once, and testing
        # those no bytes would record a test on the custody chain and answer "no match" for a candidate never read.
        raise OpeningRefusedError(f"--candidate-file {path} is a named pipe (FIFO) and nothing was read from it (no"
                                  " writer had it open, or it wrote nothing): start the writer first, or give a"
                                  " regular file; nothing was tested or recorded")
    return raw


def _is_pipe(path: Path | str) -> bool:
    try:
        return stat.S_ISFIFO(os.stat(path).st_mode)
    except OSError:
        return False


def parse_candidate(raw: bytes, where: str) -> Any:
    """A candidate file's value; a file that is not strict JSON is refused, naming it."""
    try:
        return loads(raw)
    except StrictJSONError as exc:
        raise OpeningRefusedError(
            f"--candidate-file {where}: not a JSON value ({exc}); the file holds the value as JSON,"
            ' for example "user:7f3a9c" with its quotes'
        ) from None


def _entry(store: Store, run_id: str, step: int) -> dict[str, Any]:
    try:
        return store.entry(run_id, step)
    except EntryNotFoundError:
        steps, _ = store.head(run_id)
        raise OpeningRefusedError(f"run {run_id} has no step {step} (it has {steps} steps)") from None


def _check_principal(by: str, role: str) -> None:
    if not isinstance(by, str) or not by.strip():
        raise OpeningRefusedError("--by must name who is testing the candidate (recorded on the custody chain)")
    if role not in ROLES:
        raise OpeningRefusedError(f"role {role!r} is not one of {', '.join(sorted(ROLES))}")


def _key(policy: CapturePolicy, key_id: str, what: str) -> Any:
    key = policy.key_for(key_id)
    if key is None:
        raise OpeningRefusedError(
            f"{what} was committed under capture key {key_id}, which the policy in force does not hold"
            " (name it in hash_only_key or retired_keys to open what it committed)"
        )
    return key


def _record(store: Store, run_id: str, record: dict[str, Any]) -> int:
    try:
        return store.add_custody(run_id, record)
    except Exception as exc:  # noqa: BLE001 - whatever stopped the record stops the test
        raise CustodyUnrecordedError(
            f"the test could not be recorded on the custody chain of {run_id} ({type(exc).__name__}: {exc});"
            " nothing was tested"
        ) from None


def hash_only_declaration(entry: Mapping[str, Any], path: str) -> dict[str, Any]:
    """The capture-block declaration of ``path`` in ``entry``; refused when it is not a hash-only field."""
    step = entry.get("step")
    block = entry.get("capture")
    fields = block.get("fields") if isinstance(block, Mapping) else None
    declaration = fields.get(path) if isinstance(fields, Mapping) else None
    if not isinstance(declaration, dict):
        declared = sorted(
            p for p, d in (fields or {}).items() if isinstance(d, Mapping) and d.get("mode") == "hash-only"
        )
        raise OpeningRefusedError(
            f"step {step}: no field {path!r} is declared in its capture block"
            f" (hash-only fields: {', '.join(declared) or 'none'})"
        )
    if declaration.get("mode") != "hash-only":
        raise FieldNotOpenableError(
            f"step {step}: {path} is {declaration.get('mode')}, not hash-only; only a hash-only field can be opened"
        )
    if not declaration.get("key_id") or declaration.get("unopenable"):
        raise FieldNotOpenableError(
            f"step {step}: {path} was committed with no capture key (a declared capture_key_unavailable gap);"
            " it can never be opened"
        )
    return declaration


def open_hash_only(
    store: Store,
    run_id: str,
    step: int,
    path: str,
    candidate: Any,
    *,
    by: str,
    policy: CapturePolicy,
    role: str = "verify",
) -> OpeningResult:
    """Record the test on the custody chain, then test ``candidate`` against the hash-only field.

    Raises :class:`OpeningRefusedError` (nothing recorded) when the field is
    not there or its key is not held, :class:`FieldNotOpenableError` for a
    field that is not hash-only or was committed with no key, and
    :class:`CustodyUnrecordedError` when the record cannot be written.
    """
    _check_principal(by, role)
    entry = _entry(store, run_id, step)
    declaration = hash_only_declaration(entry, path)
    key_id = str(declaration["key_id"])
    if path in entry.get("redacted", []):
        # A store redaction is the operator's decision that the field is not to be read: honoured here. The
        # keyed commitment cannot go with it (the entry's hash covers the capture block).
        raise FieldNotOpenableError(
            f"step {step}: {path} was redacted from the store (`bitexact redaction status {run_id}` says who and"
            " why), so it is not opened. Its keyed commitment stays in the chain, which the entry's hash covers:"
            f" whoever holds capture key {key_id} can still test guesses with other tools, until that key is"
            " revoked and its file destroyed (`revoked_keys`, docs/capture.md, The policy file)"
        )
    key = _key(policy, key_id, f"step {step}: {path}")
    seq = _record(
        store,
        run_id,
        {"event": OPEN_HASH_ONLY, "role": role, "principal": by, "step": step, "path": path,
         "key_id": key_id, "at": now_iso()},
    )
    try:
        matched = open_field(declaration, path, candidate, key)
    except (FieldNotOpenableError, CaptureKeyMismatchError):
        raise
    except (ValueError, TypeError) as exc:  # a malformed nonce, or a candidate that is not canonical JSON
        raise OpeningRefusedError(f"step {step}: {path}: the test could not be made ({exc})") from None
    return OpeningResult(run_id, step, path, key_id, matched, seq, OPEN_HASH_ONLY)


def withheld_declaration(entry: Mapping[str, Any]) -> dict[str, Any]:
    """The keyed digest a gap at this step declared of the content it withheld."""
    step = entry.get("step")
    data = entry.get("data")
    gap = data.get("gap") if isinstance(data, Mapping) else None
    declared = gap.get("withheld") if isinstance(gap, Mapping) else None
    if entry.get("kind") != "marker" or not isinstance(declared, dict):
        raise OpeningRefusedError(f"step {step} is not a gap that withheld content (a marker whose gap has withheld)")
    if "keyed" not in declared or not isinstance(declared.get("key_id"), str):
        reason = declared.get("digest", "no keyed digest")
        raise FieldNotOpenableError(f"step {step}: the gap's digest was not keyed ({reason}); it can never be opened")
    return declared


def open_withheld_gap(
    store: Store,
    run_id: str,
    step: int,
    content: bytes,
    *,
    by: str,
    policy: CapturePolicy,
    role: str = "verify",
) -> OpeningResult:
    """Record the test, then test ``content`` (exact bytes) against what the gap at ``step`` withheld."""
    _check_principal(by, role)
    entry = _entry(store, run_id, step)
    declaration = withheld_declaration(entry)
    key_id = declaration["key_id"]
    key = _key(policy, key_id, f"the gap at step {step}")
    seq = _record(
        store,
        run_id,
        {"event": OPEN_WITHHELD, "role": role, "principal": by, "step": step, "path": None,
         "key_id": key_id, "at": now_iso()},
    )
    try:
        matched = open_withheld(declaration, content, key)
    except (ValueError, TypeError) as exc:  # a malformed nonce in the declaration
        raise OpeningRefusedError(f"step {step}: the gap's digest is malformed ({exc})") from None
    return OpeningResult(run_id, step, None, key_id, matched, seq, OPEN_WITHHELD)


__all__ = [
    "OPEN_HASH_ONLY",
    "OPEN_WITHHELD",
    "CustodyUnrecordedError",
    "OpeningRefusedError",
    "OpeningResult",
    "hash_only_declaration",
    "open_hash_only",
    "open_withheld_gap",
    "parse_candidate",
    "read_candidate",
    "read_candidate_bytes",
    "withheld_declaration",
]
