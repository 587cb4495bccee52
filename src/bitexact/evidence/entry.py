"""Building entries: salted per-path commitments and the chain hash (bundle spec §4)."""

from __future__ import annotations

from dataclasses import dataclass
from hashlib import blake2b
from typing import Any, Final

import orjson

from bitexact.canon import canonical_plain, canonical_text, canonicalize, orjson_order_holds
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
_LEAVES: Final[frozenset[type]] = frozenset({str, int, float, bool, type(None)})
"""Exact types never a container (no subclass of dict, list or tuple, and their ``__class__`` cannot be changed):
a value of one is answered no without ``isinstance``, which for a string asks each of three types and its
``__class__`` (some 1,000 instructions, against some 150 for the set's test)."""


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
            for child in item.values() if type(item) is dict or isinstance(item, dict) else item:
                if type(child) not in _LEAVES and isinstance(child, _CONTAINERS):
                    below.append(child)
        level = below
    return bool(level)


@dataclass(frozen=True, init=False)
class EncodedEntry:
    """An entry :func:`encode_entry` built, and its canonical bytes when it could make them from its own."""

    entry: dict[str, Any]
    encoded: bytes | None
    """``canonicalize(entry)``, byte for byte; None where it is not made here (keys outside ASCII in ``data``,
    a member of an unusual type): the store then canonicalizes the entry itself, as for any caller."""

    def __init__(self, entry: dict[str, Any], encoded: bytes | None) -> None:
        # Into the instance's dict, not through the frozen dataclass's object.__setattr__ per field (about
        # 1,200 instructions each): one is made on every entry. Frozen as ever once made.
        fields = self.__dict__
        fields["entry"], fields["encoded"] = entry, encoded


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

    See :func:`encode_entry` for the entry with its canonical bytes.
    """
    return _build(run_id, step, kind, prov, data, prev, alg, ts, ctx, capture, None)[0]


def encode_entry(
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
) -> EncodedEntry:
    """:func:`build_entry`, with the entry's canonical bytes made from the ones building it made anyway.

    The chain body's bytes (the hash input) and each committed value's
    (the commitments' input) are spliced with the hash and the salts, so
    the store need not canonicalize the whole entry again for its row.
    """
    values: list[bytes] = []
    entry, body, plain = _build(run_id, step, kind, prov, data, prev, alg, ts, ctx, capture, values)
    return EncodedEntry(entry, _encoded(entry, body, values, plain))


def _build(
    run_id: str,
    step: int,
    kind: str,
    prov: str,
    data: dict[str, Any],
    prev: str,
    alg: str,
    ts: str | None,
    ctx: str | None,
    capture: dict[str, Any] | None,
    values: list[bytes] | None,
) -> tuple[dict[str, Any], bytes, bool]:
    """The entry, its chain body's canonical bytes, and whether orjson writes ``data`` canonically.

    With ``values``, each committed value's bytes are appended to it, and the flag says whether every one
    of them is orjson's own (:func:`~bitexact.canon.canonical_plain`) in a ``data`` and ``data`` members
    that are plain dicts; without, the flag is False.

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
    plain = values is not None and type(data) is dict
    at = 0
    for path, value in paths:
        salt = pool[at : at + SALT_BYTES]
        salts[path] = hexed[2 * at : 2 * at + 2 * SALT_BYTES]
        at += SALT_BYTES
        if type(value) is str:
            # orjson writes a string canonically or refuses it (a lone surrogate): nothing to note for plain.
            canonical = canonical_text(value)
        elif values is None:
            canonical = canonicalize(value)
        else:
            canonical, same = canonical_plain(value)
            plain = plain and same
        if values is not None:
            values.append(canonical)
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
    body = _body_bytes(entry, capture)
    entry["hash"] = chain_hash(alg, body)
    entry["data"] = data
    if salts:
        entry["salts"] = salts
    if plain:
        for value in data.values():  # a dict subclass's members are read by items(), orjson's from the dict
            if type(value) not in _LEAVES and type(value) is not dict and isinstance(value, dict):
                plain = False
                break
    return entry, body, plain


_SORT: Final = orjson.OPT_SORT_KEYS
_FRAGMENT: Final = orjson.Fragment
_MAX_SAFE: Final[int] = 2**53 - 1


def _body_bytes(body: dict[str, Any], capture: dict[str, Any] | None) -> bytes:
    """``canonicalize(body)`` for a chain body :func:`_build` made, without canonicalize's walk when its members
    are what canonicalize would hand orjson unchanged.

    The body's ``v`` and ``commitments`` are this module's own (an int; paths and hex digests, every one a
    ``str``); the rest are the caller's, so their types are tested here: each a ``str`` (not a subclass),
    ``step`` an ``int`` within the safe range, and no ``capture`` block (the policy's, walked by canonicalize
    like any value). Then canonicalize's walk would hand orjson the body itself, and its bytes are orjson's when
    orjson writes them (it refuses a lone surrogate) and their keys keep canonical order (checked as canonicalize
    checks them); anything else is canonicalize's.
    """
    step, ctx = body["step"], body.get("ctx")
    if (capture is None and type(step) is int and -_MAX_SAFE <= step <= _MAX_SAFE and type(body["alg"]) is str
            and type(body["run_id"]) is str and type(body["kind"]) is str and type(body["prov"]) is str
            and type(body["ts"]) is str and type(body["prev"]) is str and (ctx is None or type(ctx) is str)):
        try:
            data = orjson.dumps(body, option=_SORT)
        except orjson.JSONEncodeError:
            return canonicalize(body)
        if orjson_order_holds(data):
            return data
    return canonicalize(body)


def _encoded(entry: dict[str, Any], body: bytes, values: list[bytes], plain: bool) -> bytes | None:
    """``canonicalize(entry)`` from its chain body's bytes and its committed values' bytes, or None.

    The entry's keys sort as ``alg, capture, commitments, ctx, data, hash,
    kind, prev, prov, run_id, salts, step, ts, v``: ``data`` and ``hash`` go in
    before the body's ``kind`` member, ``salts`` before its ``step``. Every
    member from ``kind`` on is a string or an integer, and no canonical
    string holds ``,"kind":`` (its quotes are escaped), so the last one in the
    body is the member. ``data`` is written by orjson in one call: as it is
    when every committed value is orjson's own (``plain``), else with each
    committed value as its canonical bytes (a fragment). Left to the store
    (None): a key orjson refuses (a ``str`` subclass, a lone surrogate),
    and bytes holding characters both past U+FFFF and in U+E000..U+FFFF,
    whose keys orjson may order otherwise than UTF-16 does.
    """
    # One test per member rather than a generator over them: this runs on every entry.
    if (type(entry["step"]) is not int or type(entry["kind"]) is not str or type(entry["prov"]) is not str
            or type(entry["run_id"]) is not str or type(entry["ts"]) is not str or type(entry["prev"]) is not str):
        return None
    data: bytes | None = None
    if plain:
        try:
            data = orjson.dumps(entry["data"], option=_SORT)
        except orjson.JSONEncodeError:
            pass  # a lone surrogate: written below from its value's bytes, which escape it
    if data is None:
        # committed_paths' walk, as one comprehension: the values' bytes come in its order. Its members are read
        # by items(), as that walk and canonicalize read them (a dict subclass's iteration may say otherwise).
        at = iter(values)
        try:
            data = orjson.dumps({key: {sub: _FRAGMENT(next(at)) for sub, _ in value.items()}
                                 if isinstance(value, dict) and value else _FRAGMENT(next(at))
                                 for key, value in entry["data"].items()}, option=_SORT)
        except orjson.JSONEncodeError:
            return None
    # The salts' keys are the committed paths, made of data's keys: these bytes hold every character they do.
    if not orjson_order_holds(data):
        return None
    salts = entry.get("salts")
    kind_at = body.rindex(b',"kind":')
    step_at = body.rindex(b',"step":')
    return b"".join((
        body[:kind_at],
        b',"data":',
        data,
        b',"hash":"',
        entry["hash"].encode(),
        b'"',
        body[kind_at:step_at],
        # Paths and hex values (the paths' characters checked just above): orjson's bytes are the canonical ones.
        b',"salts":' + orjson.dumps(salts, option=_SORT) if salts else b"",
        body[step_at:],
    ))
