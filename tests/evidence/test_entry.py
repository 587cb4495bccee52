"""Entries as the bundle spec §4 builds them: paths, salts, commitments, the chain body."""

from __future__ import annotations

import pytest

from bitexact.canon import canonicalize
from bitexact.crypto import GENESIS, chain_hash, commitment, new_salts
from bitexact.errors import EvidenceError
from bitexact.evidence.entry import build_entry, chain_body
from bitexact.evidence.paths import committed_paths, escape, parse_field, resolve, unescape
from bitexact.evidence.redaction import redact_entry


def _entry(data: dict, alg: str = "blake2b-256", **kw: object) -> dict:
    return build_entry(run_id="r1", step=0, kind="tool_call", prov="observed", data=data, prev=GENESIS, alg=alg, **kw)


@pytest.mark.parametrize(("key", "escaped"), [("a.b", "a~1b"), ("x~y", "x~0y"), ("~.", "~0~1"), ("plain", "plain")])
def test_path_escaping_round_trips(key: str, escaped: str) -> None:
    assert escape(key) == escaped
    assert unescape(escaped) == key


def test_committed_paths_are_exactly_two_levels() -> None:
    data = {"tool": "t", "kwargs": {}, "args": [1], "result": {"x~y": {"deep": [1]}, "a.b": 2}}
    assert list(committed_paths(data)) == [
        ("tool", "t"), ("kwargs", {}), ("args", [1]), ("result.x~0y", {"deep": [1]}), ("result.a~1b", 2),
    ]
    assert resolve(data, "result.a~1b") == (True, 2)
    assert resolve(data, "result.missing") == (False, None)


@pytest.mark.parametrize("alg", ["blake2b-256", "sha256"])
def test_every_path_gets_a_fresh_salt_and_a_matching_commitment(alg: str) -> None:
    entry = _entry({"tool": "t", "result": {"a": 1, "b": 1}}, alg=alg)
    assert set(entry["commitments"]) == {"tool", "result.a", "result.b"}
    assert entry["salts"]["result.a"] != entry["salts"]["result.b"]
    for path, (_, value) in ((p, resolve(entry["data"], p)) for p in entry["commitments"]):
        salt = bytes.fromhex(entry["salts"][path])
        assert len(salt) == 16
        assert commitment(alg, salt, value) == entry["commitments"][path]


def test_salts_drawn_at_once_are_sixteen_bytes_each_and_all_different() -> None:
    salts = new_salts(64)
    assert len(salts) == 64 and {len(s) for s in salts} == {16}
    assert len(set(salts)) == 64
    assert new_salts(0) == []
    entry = _entry({f"k{i}": i for i in range(40)})
    assert len(set(entry["salts"].values())) == 40


def test_hash_covers_the_chain_body_and_not_data_or_salts() -> None:
    entry = _entry({"tool": "t"}, ctx="outer_tool", capture={"policy": "off"})
    body = chain_body(entry)
    assert set(body) == {"v", "alg", "run_id", "step", "kind", "prov", "ts", "prev", "ctx", "capture", "commitments"}
    assert entry["hash"] == chain_hash("blake2b-256", canonicalize(body))
    assert entry["ts"].endswith("+00:00")


def test_kind_and_prov_are_checked_when_building() -> None:
    with pytest.raises(EvidenceError, match="a identity entry cannot be observed - it is asserted"):
        build_entry(run_id="r", step=0, kind="identity", prov="observed", data={}, prev=GENESIS, alg="sha256")
    with pytest.raises(EvidenceError, match="unknown entry kind 'chat'"):
        build_entry(run_id="r", step=0, kind="chat", prov="observed", data={}, prev=GENESIS, alg="sha256")


def test_data_deeper_than_125_levels_is_refused_at_build_time() -> None:
    deep: object = 1
    for _ in range(125):
        deep = [deep]
    _entry({"x": deep[0]})  # type: ignore[index]  # 125 levels counting data itself
    with pytest.raises(EvidenceError, match="deeper than 125 levels"):
        _entry({"x": deep})


def test_redaction_keeps_commitments_and_hash_and_leaves_a_husk() -> None:
    entry = _entry({"tool": "t", "result": {"account": "DE89", "other": 1}})
    once = redact_entry(entry, ["result.account"])
    twice = redact_entry(once, ["result.other"])
    assert twice["commitments"] == entry["commitments"]
    assert twice["hash"] == entry["hash"]
    assert twice["data"]["result"] == {}  # the husk
    assert twice["redacted"] == ["result.account", "result.other"]
    assert set(twice["salts"]) == {"tool"}
    assert entry["data"]["result"]["account"] == "DE89"  # the original is untouched


def test_audit_entries_cannot_be_redacted() -> None:
    entry = build_entry(run_id="r", step=3, kind="repair", prov="asserted", data={"by": "x", "note": "n"},
                        prev="a" * 64, alg="sha256")
    with pytest.raises(EvidenceError, match="a repair audit entry cannot be redacted"):
        redact_entry(entry, ["by"])


def test_a_field_reference_may_name_the_empty_key() -> None:
    # Bundle spec §4.1: a top-level key k is the path esc(k), so "" is a committed path and "3:" names it.
    assert parse_field("3:") == (3, "")


@pytest.mark.parametrize("token", ["3", "x:path", "03:path", ":path", "-1:path"])
def test_field_references_are_parsed_strictly(token: str) -> None:
    with pytest.raises(ValueError):
        parse_field(token)
