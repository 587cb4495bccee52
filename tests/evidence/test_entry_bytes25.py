"""entry25: the write path hands the store each entry's canonical bytes, made from the bytes building it made.

``encode_entry`` splices the chain body's bytes (the hash input) with the hash, ``data`` written from its
committed values' bytes, and the salts; the store keeps them instead of canonicalizing the entry again. What
the store keeps must stay ``canonicalize(entry)`` byte for byte:

* over a corpus of every shape the write path makes (each kind's data, b64 context, floats, tuples, str
  subclasses, keys outside ASCII and past U+FFFF where UTF-16 order differs from code-point order, lone
  surrogates, nesting at the limit, large strings, a ``ctx`` and a capture block), under both hash
  algorithms, ``encode_entry(...).encoded`` is ``canonicalize`` of its entry, and the entry is the one
  ``build_entry`` makes (same salts from the same generator);
* through the real write path (the demo's run and an SDK run with every kind an agent records, redacted
  after), every row the store holds is canonical and the runs verify.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from bitexact.canon import canonicalize, loads
from bitexact.cli import cli
from bitexact.evidence.entry import build_entry, encode_entry
from evidence.test_entry_cost22 import Colour, Tag, fixed_stream


def nested(levels: int) -> Any:
    value: Any = "leaf"
    for index in range(levels):
        value = {"n": value} if index % 2 else [value]
    return value


KIB = "k" * 1000
# Data encode_entry writes the bytes of itself.
SPLICED: dict[str, dict[str, Any]] = {
    "tool_call": {"tool": "tool", "args": [KIB], "kwargs": {}, "result": {"answer": KIB[:24], "echo": KIB},
                  "status": "ok"},
    "http_call": {"request": {"method": "POST", "url": "https://api.example/v1?q=1",
                              "headers": {"content-type": "application/json"}, "body": {"q": [1, 2.5]}},
                  "response": {"status": 200, "headers": {"x-\u00e9": "v"}, "body": "ok\n\u2028"},
                  "duration_ms": 12.0},
    "context": {"name": "rules", "content": {"b64": "AAEC/w=="}, "sha256": "ab" * 32, "source": "s3://x"},
    "identity": {"principal": "svc:claims", "on_behalf_of": "user:7f3a9c", "on_behalf_of_type": "human"},
    "nondet": {"source": "random.random", "value": 0.5488135039273248},
    "redaction": {"fields": ["3:result.policy"], "by": "dpo:alice", "reason": "erasure request 118"},
    "run_end": {"steps": 41},
    "marker": {"note": "gap: scan in step 2", "gap": {"step": 2, "field": "args", "reason": "budget"}},
    "empty": {},
    "numbers": {"n": 2**53 - 1, "one": 1.0, "tiny": 1e-7, "big": 1e21, "past": 2.0**60, "neg": -3,
                "pi": 3.141592653589793, "t": ("a", 1), "none": None, "yes": True},
    "subclasses": {"s": Tag("x"), "c": Colour.RED, "od": OrderedDict([("b", 1), ("a", 2)]), "sub": {"e": Colour.RED}},
    # Keys outside ASCII that UTF-16 and code points order alike (none past U+FFFF beside U+E000..U+FFFF).
    "deep keys": {"k": {"v": {"\U0001F600": 1, "\u00e9": 2, "a": "\ud800", "\u4e00": [{"\U00010000": 0}]}}},
    "top keys": {"\u00e9": 1, "e": {"\u4e00": 2, "\U0001F600": 3, "z": 4}, "\U00010000": [1.0]},
    "plain keys": {"\uff01": 1, "\uffff": {"\ue000": "\uff01"}, "a": 2},
    "strings": {"u": "\u2028\x00\x1f\"\\,\"kind\":", "astral": "\U0001F600", "lone": "\udc00",
                "big": "x" * (1 << 20)},
    "at the limit": {"deep": nested(124)},
    "escapes": {"a~b": {"c.d": 1, "~": 2}, "": "", "x.y": [], "z": {"": {}}},
}
# Data left to the store (encoded is None): characters past U+FFFF beside U+E000..U+FFFF (keys may sort
# otherwise by UTF-16 code unit), a key orjson refuses (a lone surrogate, a str subclass).
STORED: dict[str, dict[str, Any]] = {
    "top key": {"\U0001F600": 1, "\uff01": 2, "a": 3},
    "sub key": {"r": {"\U0001F600": 1, "\uff01": 2}},
    "deep key": {"k": {"v": {"\U0001F600": 1, "\uff01": 2}}},
    "a value": {"k": "\U0001F600", "l": ["\uff01"]},
    "folded pair": {"\ud83d\ude00": 1, "x": 2},
    "lone surrogate key": {"r": {"\udc00": 1}},
    "str subclass key": {Tag("k"): 1},
    "str subclass sub key": {"r": {Tag("k"): 1.0}},
}


def _build(fn: Callable[..., Any], data: dict[str, Any], alg: str, ctx: str | None,
           capture: dict[str, Any] | None, run_id: str) -> Any:
    return fn(run_id=run_id, step=7, kind="tool_call", prov="observed", data=data, prev="0" * 64, alg=alg,
              ts="2026-12-01T20:00:00.000001+00:00", ctx=ctx, capture=capture)


CAPTURES: list[tuple[str | None, dict[str, Any] | None]] = [
    (None, None),
    ("outer", {"v": 1, "fields": {"args": {"mode": "scrub"}}, "\U0001F600": {"\uff01": 1.0}}),
]


@pytest.mark.parametrize("alg", ["blake2b-256", "sha256"])
@pytest.mark.parametrize("name", sorted(SPLICED))
@pytest.mark.parametrize("run_id", ["run-bytes", "run-\u00e9\U0001F600-\uff01"])
def test_the_spliced_bytes_are_canonicalize_of_the_entry(
    name: str, alg: str, run_id: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for ctx, capture in CAPTURES:
        monkeypatch.setattr(os, "urandom", fixed_stream())
        built = _build(encode_entry, SPLICED[name], alg, ctx, capture, run_id)
        monkeypatch.setattr(os, "urandom", fixed_stream())
        assert built.entry == _build(build_entry, SPLICED[name], alg, ctx, capture, run_id)
        assert built.encoded is not None  # made here, not left to the store
        assert built.encoded == canonicalize(built.entry)


@pytest.mark.parametrize("name", sorted(STORED))
def test_keys_outside_ascii_in_data_are_left_to_the_store(name: str) -> None:
    built = _build(encode_entry, STORED[name], "blake2b-256", None, None, "run-bytes")
    assert built.encoded is None
    assert canonicalize(built.entry)  # the store can still make them
    assert set(built.entry) == {"v", "alg", "run_id", "step", "kind", "prov", "ts", "prev", "commitments", "hash",
                                "data", "salts"}


def test_a_step_of_another_type_is_left_to_the_store() -> None:
    built = encode_entry(run_id="r", step=True, kind="tool_call", prov="observed", data={"a": 1},  # type: ignore[arg-type]
                         prev="0" * 64, alg="blake2b-256")
    assert built.encoded is None


def _rows(home: Path) -> list[tuple[str, int, bytes]]:
    conn = sqlite3.connect(f"file:{home / 'bitexact.db'}?mode=ro", uri=True)
    try:
        return [(run, step, bytes(body)) for run, step, body in
                conn.execute("SELECT run_id, step, body FROM entries ORDER BY run_id, step")]
    finally:
        conn.close()


def test_every_row_the_write_path_stores_is_canonical_and_the_runs_verify(sdk_home: Path) -> None:
    import bitexact

    runner = CliRunner()
    env = {"BITEXACT_HOME": str(sdk_home), "COLUMNS": "200"}

    def bx(*args: str) -> Any:
        return runner.invoke(cli, list(args), env=env, catch_exceptions=False)

    demo = bx("demo", "--json")  # http_call, tool_call, context, identity, human_decision, marker, run_end
    assert demo.exit_code == 0, demo.output
    demo_run = json.loads(demo.output)["run_id"]

    def lookup(query: str) -> dict[str, Any]:
        return {"answer": query[:24], "echo": query, "\u00e9": {"\U0001F600": 1, "\uff01": [1.5, 2.0]}}

    tool = bitexact.record_tool(name="lookup")(lookup)
    with bitexact.run(name="bytes \U0001F600", capture_nondeterminism=True) as r:
        r.identity(principal="svc:claims", on_behalf_of="user:7f3a9c", on_behalf_of_type="human")
        r.context("rules", {"text": "cover \u00e9", "n": 1.0}, source="handbook/v12")
        r.context_from_bytes("blob", bytes(range(256)), source="s3://x")
        tool(KIB)
        r.record("tool_call", {"tool": "t", "args": [{"\U0001F600": 1, "\uff01": 2}], "result": 1e-7})
        r.record("decision_record", {"\u00e9l\u00e8ve": "x", "k": {"\U00010000": 2}})
        r.human_decision("adjuster:m.okafor", "approve", binds_step=1)
        r.marker("note \ud83d\ude00")
        os.urandom(4)  # a nondet entry
        sdk_run = r.run_id
    assert sdk_run is not None
    assert bx("redact", sdk_run, "--field", "4:result.echo", "--by", "dpo:alice", "--reason", "118").exit_code == 0

    rows = _rows(sdk_home)
    kinds = {loads(body)["kind"] for _, _, body in rows}
    assert {"http_call", "tool_call", "context", "identity", "nondet", "redaction", "run_end", "run_meta",
            "decision_record", "human_decision", "marker"} <= kinds
    for run, step, body in rows:
        assert canonicalize(loads(body)) == body, (run, step)
    for run in (demo_run, sdk_run):
        verified = bx("verify", run)
        assert verified.exit_code == 0, verified.output


def _plain(data: dict[str, Any]) -> bool:
    from bitexact.evidence.entry import _build as build

    return build("run-bytes", 0, "tool_call", "observed", data, "0" * 64, "blake2b-256", None, None, None, [])[2]


def test_data_is_written_in_one_call_only_when_every_committed_value_is_orjsons_own() -> None:
    # "strings" too: a string orjson refuses (a lone surrogate) makes its one call fail, and fragments are written.
    for name in ("tool_call", "context", "identity", "nondet", "run_end", "empty", "escapes", "strings"):
        assert _plain(SPLICED[name]), name
    for name in ("http_call", "numbers", "subclasses", "top keys"):  # 12.0, tuples, subclasses, [1.0]
        assert not _plain(SPLICED[name]), name
    assert not _plain(OrderedDict([("a", 1)]))  # type: ignore[arg-type]
    assert not _plain({"r": OrderedDict([("b", 1), ("a", 2)])})
