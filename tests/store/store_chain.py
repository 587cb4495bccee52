"""Entries and checkpoints built the way the bundle spec builds them, for the store tests.

Real salts, real commitments, a real chain hash: a test can recompute an
entry's hash and commitments and so tell a torn or altered entry from a
whole one. Also used by the subprocess writers in ``store_writer_proc.py``.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timezone
from typing import Any

from bitexact.canon import canonicalize
from bitexact.crypto import GENESIS, SigningKey, chain_hash, commitment, new_salt

UNHASHED = frozenset({"hash", "data", "salts", "redacted"})


def _esc(key: str) -> str:
    return key.replace("~", "~0").replace(".", "~1")


def committed_paths(data: dict[str, Any]) -> list[tuple[str, Any]]:
    """The committed paths of ``data`` and their values: two levels (§4.1)."""
    out: list[tuple[str, Any]] = []
    for key, value in data.items():
        if isinstance(value, dict) and value:
            out.extend((f"{_esc(key)}.{_esc(sub)}", inner) for sub, inner in value.items())
        else:
            out.append((_esc(key), value))
    return out


def body_hash(entry: dict[str, Any]) -> str:
    """``H(alg, canonical(chain body))`` (§4)."""
    return chain_hash(entry["alg"], canonicalize({k: v for k, v in entry.items() if k not in UNHASHED}))


def make_entry(
    run_id: str,
    step: int,
    prev: str,
    data: dict[str, Any],
    *,
    kind: str = "tool_call",
    prov: str = "observed",
    alg: str = "blake2b-256",
) -> dict[str, Any]:
    """A complete v2 entry chained onto ``prev``."""
    salts: dict[str, str] = {}
    commitments: dict[str, str] = {}
    for path, value in committed_paths(data):
        salt = new_salt()
        salts[path] = salt.hex()
        commitments[path] = commitment(alg, salt, value)
    entry: dict[str, Any] = {
        "v": 2,
        "alg": alg,
        "run_id": run_id,
        "step": step,
        "kind": kind,
        "prov": prov,
        "ts": datetime.now(timezone.utc).isoformat(),
        "prev": prev,
        "commitments": commitments,
    }
    entry["hash"] = body_hash(entry)
    entry["data"] = data
    if salts:
        entry["salts"] = salts
    return entry


def make_chain(run_id: str, n: int, *, start: int = 0, prev: str = GENESIS) -> list[dict[str, Any]]:
    """``n`` linked tool_call entries from step ``start`` onto ``prev``."""
    chain = []
    for step in range(start, start + n):
        entry = make_entry(run_id, step, prev, tool_data(step))
        chain.append(entry)
        prev = entry["hash"]
    return chain


def tool_data(i: int, pad: int = 0) -> dict[str, Any]:
    """A plausible tool call's data; ``pad`` adds that many characters to the result."""
    return {
        "tool": "lookup_policy",
        "args": [f"HX-{20000 + i}"],
        "kwargs": {"include_endorsements": True},
        "result": {"policy": f"HX-{20000 + i}", "cover": ["fire", "water"], "notes": "x" * pad},
    }


def make_checkpoint(
    key: SigningKey, run_id: str, seq: int, steps: int, head_hash: str, prev_checkpoint: str = GENESIS
) -> dict[str, Any]:
    """A signed checkpoint over ``steps`` entries ending in ``head_hash`` (§7)."""
    body = {
        "run_id": run_id,
        "seq": seq,
        "steps": steps,
        "head_hash": head_hash,
        "prev_checkpoint": prev_checkpoint,
        "alg": "blake2b-256",
        "key_id": key.key_id,
    }
    signature = key.sign(canonicalize(body)).hex()
    return {
        **body,
        "ts": datetime.now(timezone.utc).isoformat(),
        "public_key": key.public_hex,
        "signature": signature,
    }


def digest(value: Any) -> str:
    """A short fingerprint of a record's canonical bytes, for acknowledgement logs."""
    return hashlib.blake2b(canonicalize(value), digest_size=16).hexdigest()


def check_chain(entries: list[dict[str, Any]]) -> None:
    """Assert that ``entries`` is a whole chain: contiguous steps, links, hashes, commitments."""
    prev = GENESIS
    for index, entry in enumerate(entries):
        assert entry["step"] == index, f"step {entry['step']} at index {index}"
        assert entry["prev"] == prev, f"step {index} does not link to step {index - 1}"
        assert body_hash(entry) == entry["hash"], f"step {index}: hash does not match its body (torn?)"
        redacted = set(entry.get("redacted", []))
        for path, value in committed_paths(entry.get("data", {})):
            if path in redacted:
                continue
            salt = bytes.fromhex(entry["salts"][path])
            assert commitment(entry["alg"], salt, value) == entry["commitments"][path], (
                f"step {index}: data at {path} does not match its commitment (torn?)"
            )
        prev = entry["hash"]
