"""Building entries: salted per-path commitments and the chain hash (bundle spec §4)."""

from __future__ import annotations

from hashlib import blake2b
from typing import Any, Final

from bitexact.canon import canonical_text, canonicalize
from bitexact.crypto import chain_hash
from bitexact.crypto.hashes import SALT_BYTES, committer, new_salt_pool
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
    pool = new_salt_pool(len(paths))
    hexed = pool.hex()  # one hex conversion for all the salts, sliced below as the bytes are
    # blake2b-256 (the default) called here rather than through committer's function: one Python call less
    # per path, and a plain string (most values) canonicalized without canonicalize's own call.
    commit = None if alg == "blake2b-256" else committer(alg)
    at = 0
    for path, value in paths:
        salt = pool[at : at + SALT_BYTES]
        salts[path] = hexed[2 * at : 2 * at + 2 * SALT_BYTES]
        at += SALT_BYTES
        canonical = canonical_text(value) if type(value) is str else canonicalize(value)
        commitments[path] = (blake2b(canonical, digest_size=32, key=salt).hexdigest() if commit is None
                             else commit(salt, canonical))
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
    # The entry holds its chain body alone until here (no hash, data, salts or redacted yet): hashed as it is,
    # without chain_body's copy.
    entry["hash"] = chain_hash(alg, canonicalize(entry))
    entry["data"] = data
    if salts:
        entry["salts"] = salts
    return entry
