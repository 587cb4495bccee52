"""The twenty-ninth session's unify speed work changes no output byte.

Every unified file below was written by the code as it was at bb92ba2 and its SHA-256 is pinned here:

1. the unify benchmark's generated runtime root (benchmarks/sessions_unify.py), without and with masks (a mask
   that matches sends every record through the redactor's walk);
2. every session fixture as an engine log (``agent-stdio.log`` read by its engine's parser) and as a persisted
   canonical stream (``agent-session.jsonl``: the JSONL reader, its malformed-line and not-an-event warnings);
3. the streaming-merge root of tests/data/sessions_unify (every component, interleaved);
4. a crafted root of the edges the changed code decides: refused field values (a type, a converter, a schema
   check), a refused timestamp, error records and a snapshot, lines that are not events, CRLF and malformed
   lines, a mask and a credential on lines the redactor walks, equal timestamps across sources, a deep value.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import sys
from pathlib import Path

import pytest

from bitexact.sessions.unify import unify

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
STREAMING_ROOT = Path(__file__).resolve().parents[1] / "data" / "sessions_unify" / "streaming_merge"


def _unified(root: Path, out: Path, masks: tuple[str, ...] = ()) -> bytes:
    """The bytes of the unified file of ``root`` and its report's warnings, as one text."""
    report = unify(root, out, masks=masks, env={})
    return out.read_bytes() + json.dumps(report.warnings).encode("utf-8")


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _generated_root(root: Path) -> Path:
    """The unify benchmark's generated root of about 300 KB."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import sessions_unify
    finally:
        sys.path.remove(str(BENCHMARKS))
    root.mkdir()
    size = sessions_unify.generate(root, 1)
    assert size > 300_000
    return root


GENERATED_DIGESTS = {
    (): "eb472a87887cc4254a1f4298baf1273993f55b28cf5d421decd764b48b4cafcf",
    ("read the file",): "4b8f42359ef0acb6ae5f52e024d82aa7cec298927a9c8497904b05599fac5a6a",
    ("hunter2", "12 passed", "module 1"): "28dff0e226ac60cb25acc108d9365f818b4abe463bfe083e2cbd02e14d36244d",
}
"""``_unified`` of the generated root per masks at bb92ba2."""


@pytest.mark.parametrize("masks", list(GENERATED_DIGESTS), ids=["no-masks", "matching-mask", "masks"])
def test_the_benchmark_root_unifies_to_the_bytes_it_did(tmp_path: Path, masks: tuple[str, ...]) -> None:
    root = _generated_root(tmp_path / "root")
    assert _digest(_unified(root, tmp_path / "aw_session.jsonl", masks)) == GENERATED_DIGESTS[masks]


def _fixture_digest(tmp_path: Path, name: str) -> str:
    """One digest over every fixture unified from ``name`` (an engine log or a canonical stream), sorted."""
    digest = hashlib.sha256()
    for path in sorted(p for p in FIXTURES.rglob("*") if p.is_file()):
        relative = path.relative_to(FIXTURES).as_posix()
        root = tmp_path / "root"
        shutil.rmtree(root, ignore_errors=True)
        (root / "agent").mkdir(parents=True)
        (root / "agent" / "aw_info.json").write_text(json.dumps({"engine_id": relative.split("/")[0]}))
        shutil.copyfile(path, root / name)
        digest.update(f"{relative} {_digest(_unified(root, tmp_path / 'aw_session.jsonl'))}\n".encode())
    return digest.hexdigest()


FIXTURE_DIGESTS = {
    "agent-stdio.log": "5493d20b7b5acfca8e4aaa17c99b2d8a423d57f73978aa6721a54cceda1a0b03",
    "agent-session.jsonl": "70d81ecec5b2d703c68ea1398548eaf735249ab540bf217e6737e127305f8074",
}
"""``_fixture_digest`` per source name at bb92ba2; ``agent-stdio.log`` taken again in session 32 (keys32): the
parser diagnostics it carries as collection warnings fold a line's non-object entries into one and count a JSON
string line as a non-object entry (5 fixtures' files differ from 26a320a's in those warnings only)."""


@pytest.mark.parametrize("name", list(FIXTURE_DIGESTS))
def test_every_fixture_unifies_to_the_bytes_it_did(tmp_path: Path, name: str) -> None:
    assert _fixture_digest(tmp_path, name) == FIXTURE_DIGESTS[name]


STREAMING_DIGEST = "fff79d9b0009ce5c28f9b6063b918c323e0e279f3e06f18ab3f89db076c31b03"
"""``_unified`` of tests/data/sessions_unify/streaming_merge at bb92ba2."""


def test_the_streaming_merge_root_unifies_to_the_bytes_it_did(tmp_path: Path) -> None:
    root = tmp_path / "root"
    shutil.copytree(STREAMING_ROOT, root)
    assert _digest(_unified(root, tmp_path / "aw_session.jsonl")) == STREAMING_DIGEST


def _crafted_root(root: Path) -> Path:
    """The edges of section 4, as JSONL sources of a runtime root."""
    ts = "2026-10-02T00:00:01.000Z"
    deep: object = "leaf"
    for _ in range(127):  # the source line within the strict limit, the record one level past it
        deep = [deep]
    agent = [
        {"type": "session.init", "timestamp": ts, "data": {"model": 7, "sessionId": "s1"}, "sessionId": "top"},
        {"type": "tool.execution_start", "timestamp": ts, "id": "a", "data": {"toolCallId": "c1", "toolName": 5}},
        {"type": "tool.execution_complete", "timestamp": [1], "parentId": "a",
         "data": {"toolCallId": "c1", "success": True, "exitCode": 2, "durationMs": -4}},
        {"type": "assistant.message_update", "timestamp": 1790899201000,
         "data": {"usage": "many", "content": "hunter2 and ghp_" + "A1b2C3d4E5" * 4}},
        {"type": "session.result", "timestamp": ts, "data": {"usage": {"input_tokens": -1, "output_tokens": 3}}},
        {"type": "session.error", "timestamp": "not a time", "data": {"message": "boom"}},
        {"type": "agent.execution", "data": {"status": "failed"}},
        {"type": "assistant.message", "timestamp": ts, "data": {"content": "hunter2 and ghp_" + "A1b2C3d4E5" * 4}},
        {"type": "subagent.started", "timestamp": ts, "data": {"factoryRunId": "f1"}, "provenance": deep},
        {"type": 3, "data": {}},
        {"type": "x", "data": []},
    ]
    lines = [json.dumps(event).encode() for event in agent]
    lines[1] += b"\r"
    lines.insert(3, b"{not json")
    lines.insert(5, b"   ")
    mcp = [{"timestamp": ts, "type": "RESPONSE", "server_id": "github", "id": 1, "http_status": 429,
            "retry_after": "soon", "error": {"code": -1, "message": "see https://x.test/?q=1"}},
           {"timestamp": ts, "type": "guard_blocked", "server_id": 9, "tool": "search"}]
    audit = [{"ts": 1790899201.0, "host": "api.github.com", "status": "200", "decision": "allowed", "bytes": -1}]
    usage = [{"ts": 1790899201000, "model": "m", "input_tokens": 5, "output_tokens": "x", "steering": {"type": "token",
              "threshold": 81}}]
    files = {"agent-session.jsonl": lines, "mcp-logs/rpc-messages.jsonl": [json.dumps(r).encode() for r in mcp],
             "sandbox/firewall/logs/audit.jsonl": [json.dumps(r).encode() for r in audit],
             "sandbox/firewall/logs/token-usage.jsonl": [json.dumps(r).encode() for r in usage]}
    for name, content in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(b"\n".join(content) + b"\n")
    return root


CRAFTED_DIGEST = "8e47bd5885b548af45f5ef994f47a040ecb9d2fcf5fb66cc18935e8912d37a6c"
"""``_unified`` of ``_crafted_root`` with the mask ``hunter2`` at bb92ba2."""


def test_the_crafted_edges_unify_to_the_bytes_they_did(tmp_path: Path) -> None:
    root = _crafted_root(tmp_path / "root")
    unified = _unified(root, tmp_path / "aw_session.jsonl", ("hunter2",))
    assert b"hunter2" not in unified and b"ghp_" not in unified and b"and ***" in unified
    assert all(code in unified for code in (b"invalid_field", b"malformed_jsonl", b"invalid_event", b"nesting_too_deep"))
    assert _digest(unified) == CRAFTED_DIGEST
