"""Building entries: salted per-path commitments and the chain hash (bundle spec §4)."""

from __future__ import annotations

from typing import Any, Final

from bitexact.canon import canonicalize
from bitexact.crypto import chain_hash, new_salts
from bitexact.crypto.hashes import committer
from bitexact.errors import EvidenceError, stated
from bitexact.evidence.kinds import allowed_provs
from bitexact.evidence.paths import committed_paths
from bitexact.evidence.timefmt import now_iso
from bitexact.evidence.vocabulary import ENTRY_VERSION, UNHASHED_ENTRY_KEYS

MAX_DATA_DEPTH: Final[int] = 125
"""``data`` nests at most 125 levels so the whole bundle stays within 128 (§1.1)."""

def chain_body(entry: dict[str, Any]) -> dict[str, Any]:
    """The entry minus ``hash``, ``data``, ``salts`` and ``redacted``: what the chain hashes."""
    return {k: v for k, v in entry.items() if k not in UNHASHED_ENTRY_KEYS}


def entry_hash(entry: dict[str, Any]) -> str:
    """``H(alg, canonical(chain body))``."""
    return chain_hash(entry["alg"], canonicalize(chain_body(entry)))


_CONTAINERS: Final = (dict, list, tuple)


def deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` holds a container (dict, list or tuple) ``limit`` levels below itself.

    Level by level, containers only: a 1 KiB tool call's data is four
    containers, not a Python call per value (this runs on every entry).
    """
    level = [value] if isinstance(value, _CONTAINERS) else []
    while level and limit > 0:
        limit -= 1
        below = []
        for item in level:
            for child in item.values() if isinstance(item, dict) else item:
                if isinstance(child, _CONTAINERS):
                    below.append(child)
        level = below
    return bool(level)


def build_entry(
    *,
    run_id: str,
    step: int,
    kind: str,
    prov: str,
    data: dict[str, Any],
    prev: str,
    alg: str,
    ts: str | None = None,
    ctx: str | None = None,
    capture: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Build a complete v2 entry chained onto ``prev``.

    Every committed path gets a fresh 16-byte salt. ``capture`` (the capture
    policy's declarations) is a top-level key, so it is inside the hash and
    every signature over it, and any conforming verifier hashes it as it is.
    """
    allowed = allowed_provs(kind)
    if prov not in allowed:
        raise stated(EvidenceError(f"a {kind} entry cannot be {prov} - it is {' or '.join(allowed)}"))
    if not isinstance(data, dict):
        raise stated(EvidenceError(f"entry data must be a JSON object, not {type(data).__name__}"))
    if deeper_than(data, MAX_DATA_DEPTH):
        raise stated(EvidenceError(
            f"entry data nests deeper than {MAX_DATA_DEPTH} levels: flatten it or record it as text"
        ))
    salts: dict[str, str] = {}
    commitments: dict[str, str] = {}
    paths = committed_paths(data)
    commit = committer(alg)
    for (path, value), salt in zip(paths, new_salts(len(paths))):
        salts[path] = salt.hex()
        commitments[path] = commit(salt, canonicalize(value))
    entry: dict[str, Any] = {
        "v": ENTRY_VERSION,
        "alg": alg,
        "run_id": run_id,
        "step": step,
        "kind": kind,
        "prov": prov,
        "ts": ts or now_iso(),
        "prev": prev,
    }
    if ctx is not None:
        entry["ctx"] = ctx
    if capture is not None:
        entry["capture"] = capture
    entry["commitments"] = commitments
    entry["hash"] = entry_hash(entry)
    entry["data"] = data
    if salts:
        entry["salts"] = salts
    return entry
