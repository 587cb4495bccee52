"""build_entry's faster walk records what the plain way records: the same paths, commitments and hash.

Each entry is checked against the plain way of the bundle spec (§4): its committed paths listed from
the data as the store tests list them (``store_chain.committed_paths``), each commitment recomputed with ``crypto.commitment`` over the salt the entry
names, the hash as ``H(alg, canonical(chain body))``; the depth bound against a recursive walk; a
string's canonical bytes against the reference encoder.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bitexact.canon import canonicalize
from bitexact.canon.encode import _write
from bitexact.crypto import chain_hash, commitment
from bitexact.errors import CanonicalizationError, EvidenceError
from bitexact.evidence.entry import MAX_DATA_DEPTH, build_entry, chain_body, deeper_than
from store.store_chain import committed_paths as plain_paths

KEYS = st.sampled_from(["tool", "args", "a.b", "x~y", "~.", "", "kwargs", "result", "é", "k" * 30])
SCALARS = st.none() | st.booleans() | st.integers(-(2**53) + 1, 2**53 - 1) | st.text(max_size=20)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
                      max_leaves=12)
DATA = st.dictionaries(KEYS, VALUES, max_size=6)


def plain_deeper_than(value: Any, limit: int) -> bool:
    """The recursive walk build_entry used before, kept here as the reference."""
    if limit <= 0:
        return isinstance(value, (dict, list, tuple))
    if isinstance(value, dict):
        return any(plain_deeper_than(v, limit - 1) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(plain_deeper_than(v, limit - 1) for v in value)
    return False


def assert_plain(entry: dict[str, Any], data: dict[str, Any], alg: str) -> None:
    paths = plain_paths(data)
    assert list(entry["commitments"]) == [path for path, _ in paths]
    assert list(entry.get("salts", {})) == [path for path, _ in paths]
    for path, value in paths:
        salt = bytes.fromhex(entry["salts"][path])
        assert entry["commitments"][path] == commitment(alg, salt, value)
    assert entry["hash"] == chain_hash(alg, canonicalize(chain_body(entry)))
    assert entry["data"] is data


@pytest.mark.parametrize("alg", ["blake2b-256", "sha256"])
def test_a_1kib_tool_calls_entry_is_the_plain_ways(alg: str) -> None:
    kib = "k" * 1000
    data = {"tool": "tool", "args": [kib], "kwargs": {}, "result": {"answer": kib[:24], "echo": kib},
            "status": "ok"}
    entry = build_entry(run_id="run-1", step=3, kind="tool_call", prov="observed", data=data,
                        prev="ab" * 32, alg=alg, ts="2026-12-01T16:00:00.000001+00:00", ctx="outer")
    assert list(entry["commitments"]) == ["tool", "args", "kwargs", "result.answer", "result.echo", "status"]
    assert_plain(entry, data, alg)


@settings(max_examples=300, deadline=None)
@given(DATA, st.sampled_from(["blake2b-256", "sha256"]))
def test_every_entry_is_the_plain_ways(data: dict[str, Any], alg: str) -> None:
    entry = build_entry(run_id="run-1", step=0, kind="tool_call", prov="observed", data=data,
                        prev="0" * 64, alg=alg)
    assert_plain(entry, data, alg)


@settings(max_examples=400, deadline=None)
@given(VALUES, st.integers(0, 6))
def test_the_depth_walk_answers_as_the_recursive_one(value: Any, limit: int) -> None:
    assert deeper_than(value, limit) == plain_deeper_than(value, limit)


def test_the_depth_bound_is_where_it_was() -> None:
    at_limit: Any = "x"
    for _ in range(MAX_DATA_DEPTH):
        at_limit = [at_limit]
    build_entry(run_id="r", step=0, kind="tool_call", prov="observed", data={"a": at_limit[0]},
                prev="0" * 64, alg="blake2b-256")  # MAX_DATA_DEPTH levels in all: taken
    with pytest.raises(EvidenceError, match="deeper than 125"):
        build_entry(run_id="r", step=0, kind="tool_call", prov="observed", data={"a": at_limit},
                    prev="0" * 64, alg="blake2b-256")
    assert deeper_than(({"a": [()]},), 3) and not deeper_than(({"a": [()]},), 4)  # tuples count, as before


def test_a_key_that_is_not_text_is_refused_at_either_level() -> None:
    for data in ({1: "x"}, {"a": {2: "x"}}):
        with pytest.raises(CanonicalizationError, match="object keys must be strings; got int"):
            build_entry(run_id="r", step=0, kind="tool_call", prov="observed", data=data,  # type: ignore[arg-type]
                        prev="0" * 64, alg="blake2b-256")


def test_a_key_of_a_str_subclass_is_escaped_as_its_text() -> None:
    class Name(str):
        pass

    data = {Name("a.b"): {Name("c~d"): 1}, Name("e"): 2}
    entry = build_entry(run_id="r", step=0, kind="tool_call", prov="observed", data=data,
                        prev="0" * 64, alg="blake2b-256")
    assert list(entry["commitments"]) == ["a~1b.c~0d", "e"]
    assert all(type(path) is str for path in entry["commitments"])


def reference(value: Any) -> bytes:
    parts: list[str] = []
    _write(value, 1, parts)
    return "".join(parts).encode("utf-8")


@settings(max_examples=500, deadline=None)
@given(st.text(st.characters(min_codepoint=0, max_codepoint=0x10FFFF, blacklist_categories=()), max_size=30))
def test_a_strings_canonical_bytes_are_the_reference_encoders(text: str) -> None:
    assert canonicalize(text) == reference(text)  # lone surrogates, controls, astral characters included
