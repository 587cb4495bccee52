"""sdk26: an entry's chain body is written by orjson in one call, without canonicalize's walk, when its members
are what that walk would hand orjson unchanged (``evidence.entry._body_bytes``).

The bytes hashed must stay ``canonicalize(chain body)`` byte for byte: over bodies with every member of an
unusual type or value (a ``str`` subclass, a float, a bool or an unsafe integer as step, a lone surrogate, keys
ordered otherwise by UTF-16 than by code point, a capture block) ``_body_bytes`` is canonicalize's bytes or its
refusal; and every entry ``encode_entry`` and ``build_entry`` make over the entry25 corpus hashes as the spec
says, ``H(canonicalize(chain body))``, with the same entry from the same generator.
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from bitexact.canon import canonicalize
from bitexact.crypto import chain_hash
from bitexact.errors import CanonicalizationError
from bitexact.evidence.entry import _body_bytes, build_entry, chain_body, encode_entry
from evidence.test_entry_bytes25 import SPLICED, STORED
from evidence.test_entry_cost22 import Tag, fixed_stream

HEX = "ab" * 32


def _body(**changes: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"v": 2, "alg": "blake2b-256", "run_id": "run-1", "step": 7, "kind": "tool_call",
                            "prov": "observed", "ts": "2026-12-01T20:00:00.000001+00:00", "prev": HEX}
    body.update(changes)
    body.setdefault("commitments", {"args": HEX, "result.echo": HEX})
    return body


BODIES: dict[str, dict[str, Any]] = {
    "plain": _body(),
    "ctx": _body(ctx="outer"),
    "no commitments": _body(commitments={}),
    "capture": _body(capture={"v": 1, "fields": {"args": {"mode": "scrub", "n": 1.0}}}),
    "capture keys": _body(capture={"\U0001F600": 1, "\uff01": 2}),
    "float step": _body(step=7.0),
    "bool step": _body(step=True),
    "negative step": _body(step=-3),
    "safe limit": _body(step=2**53 - 1),
    "unsafe step": _body(step=2**53 + 1),
    "huge step": _body(step=2**70),
    "str subclass run": _body(run_id=Tag("run-1")),
    "str subclass kind": _body(kind=Tag("tool_call")),
    "str subclass ctx": _body(ctx=Tag("outer")),
    "lone surrogate run": _body(run_id="run-\ud800"),
    "lone surrogate ts": _body(ts="\udfff"),
    "lone surrogate ctx": _body(ctx="a\ud83d"),
    "astral run": _body(run_id="run-\U0001F600\uff01"),
    "control chars": _body(prev="\x00\x1f\u2028\"\\"),
    "paths out of UTF-16 order": _body(commitments={"\U0001F600": HEX, "\uff01": HEX, "a": HEX}),
    "paths in order": _body(commitments={"\u00e9": HEX, "\u4e00.x": HEX}),
    "lone surrogate path": _body(commitments={"\udc00": HEX}),
    "non-text prev": _body(prev=None),
    "integer ts": _body(ts=5),
    "float prev": _body(prev=1e-7),
}


def _canonical_or_refusal(make: Any) -> tuple[str, Any]:
    try:
        return "bytes", make()
    except CanonicalizationError as exc:
        return "refused", str(exc)


@pytest.mark.parametrize("name", sorted(BODIES))
def test_the_body_bytes_are_canonicalize_of_the_body(name: str) -> None:
    body = BODIES[name]
    expected = _canonical_or_refusal(lambda: canonicalize(body))
    assert _canonical_or_refusal(lambda: _body_bytes(body, body.get("capture"))) == expected


@pytest.mark.parametrize("alg", ["blake2b-256", "sha256"])
@pytest.mark.parametrize("name", sorted(SPLICED) + sorted(STORED))
@pytest.mark.parametrize(("run_id", "ctx"), [("run-bytes", None), ("run-\u00e9\U0001F600-\uff01", "outer"),
                                             (Tag("run-tag"), Tag("ctx"))])
def test_every_entry_hashes_its_canonical_chain_body(
    name: str, alg: str, run_id: str, ctx: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = {**SPLICED, **STORED}[name]
    for capture in (None, {"v": 1, "fields": {"args": {"mode": "scrub"}}}):
        made = []
        for make in (encode_entry, build_entry):
            monkeypatch.setattr(os, "urandom", fixed_stream())
            built = make(run_id=run_id, step=7, kind="tool_call", prov="observed", data=data, prev="0" * 64,
                         alg=alg, ts="2026-12-01T20:00:00.000001+00:00", ctx=ctx, capture=capture)
            made.append(built if make is build_entry else built.entry)
        assert made[0] == made[1]
        assert made[0]["hash"] == chain_hash(alg, canonicalize(chain_body(made[0])))
