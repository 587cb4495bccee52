"""Export, verification, keys and store redaction (issue 2 items 4, 6, 7, 8): regression tests, each for a
bug a review found."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from cli.real_command import run_bitexact as bx

from bitexact.canon import canonicalize
from bitexact.crypto import chain_hash
from bitexact.crypto.keystore import KeyStore
from bitexact.evidence.identity import workflow_digest
from bitexact.recording import CheckpointPolicy, Recorder
from bitexact.store import open_store



def _recorded(home: Path, kind: str, data: dict[str, Any]) -> tuple[str, str]:
    """A sealed run holding one ``kind`` entry with ``data`` (step 1); returns (run id, the run's alg)."""
    store = open_store(home)
    try:
        recorder = Recorder(store, KeyStore(home).current_or_init(),
                            checkpoints=CheckpointPolicy(every=64, seconds=3600))
        writer = recorder.start(name="edges7")
        writer.append(kind, data)
        writer.seal()
        return writer.run_id, recorder.alg
    finally:
        store.close()


def _bundle_text(home: Path, tmp_path: Path, run_id: str, fmt: str, *redact: str) -> str:
    out = tmp_path / f"bundle.{fmt}"
    args = [a for token in redact for a in ("--redact", token)]
    done = bx(home, "export", run_id, "-o", str(out), "--format", fmt, *args)
    assert done.returncode == 0, done.stderr
    verdict = bx(home, "verify", str(out))
    assert verdict.returncode == 0, verdict.stdout
    text = out.read_text(encoding="utf-8")
    if fmt == "dsse":  # the bundle is the envelope's base64 payload
        return base64.b64decode(json.loads(text)["payload"]).decode("utf-8")
    return text


# --- a redaction leaves no unsalted digest of the value it destroys ---------------------------------------

_CONTENT = {"answer": "blue", "note": "favourite colour"}


def _context_guess_digest(alg: str) -> str:
    """What anyone holding the bundle computes to test the guess "blue" against a context's content_hash."""
    return chain_hash(alg, canonicalize(_CONTENT))


@pytest.mark.parametrize("fmt", ["json", "jsonl", "dsse"])
def test_store_redaction_of_context_content_leaves_no_content_hash_to_test_guesses_against(
        tmp_path: Path, fmt: str) -> None:
    """docs/capture.md: a content_hash over content kept out of the store "would be an unkeyed digest of
    values kept out of the store, against which anyone could test a guess". `bitexact redact N:content.X`
    destroyed the value but kept the context's content_hash, an unsalted hash of the whole content, so the
    redacted value could be confirmed by guessing from the bundle."""
    home = tmp_path / "home"
    run_id, alg = _recorded(home, "context", {"name": "answers", "content": dict(_CONTENT),
                                              "content_hash": _context_guess_digest("blake2b-256")})
    assert alg == "blake2b-256"
    done = bx(home, "redact", run_id, "--field", "1:content.answer", "--by", "dpo", "--reason", "erasure")
    assert done.returncode == 0, done.stderr
    text = _bundle_text(home, tmp_path, run_id, fmt)
    assert "blue" not in text
    assert _context_guess_digest(alg) not in text
    verdict = bx(home, "verify", run_id, "--expect-recorder-key", _public_key(home))
    assert verdict.returncode == 0, verdict.stdout


@pytest.mark.parametrize("fmt", ["json", "jsonl", "dsse"])
def test_export_redaction_of_context_content_leaves_no_content_hash_to_test_guesses_against(
        tmp_path: Path, fmt: str) -> None:
    """As above, for `export --redact N:content.X`: the exported copy kept the unsalted content_hash."""
    home = tmp_path / "home"
    run_id, alg = _recorded(home, "context", {"name": "answers", "content": dict(_CONTENT),
                                              "content_hash": _context_guess_digest("blake2b-256")})
    text = _bundle_text(home, tmp_path, run_id, fmt, "1:content.answer")
    assert "blue" not in text
    assert _context_guess_digest(alg) not in text


def test_store_redaction_of_a_workflow_field_leaves_no_workflow_digest_to_test_guesses_against(
        tmp_path: Path) -> None:
    """docs/capture.md: an identity's workflow_digest over composition fields kept out of the store would let
    anyone test a guess at them. `bitexact redact N:code` kept the digest over the destroyed value."""
    home = tmp_path / "home"
    fields = {"workflow": "refunds", "code": "git:4f2a9c1"}
    digest = workflow_digest(fields, "blake2b-256")
    assert digest is not None
    run_id, _ = _recorded(home, "identity", {**fields, "principal": "ops", "workflow_digest": digest})
    done = bx(home, "redact", run_id, "--field", "1:code", "--by", "dpo", "--reason", "erasure")
    assert done.returncode == 0, done.stderr
    text = _bundle_text(home, tmp_path, run_id, "json")
    assert "4f2a9c1" not in text
    assert digest not in text


def _public_key(home: Path) -> str:
    return KeyStore(home).current().public_hex


def test_a_second_content_redaction_after_the_content_hash_went_is_not_refused(tmp_path: Path) -> None:
    """Redacting one content field takes the content_hash with it; redacting another field later must not be
    refused for the content_hash being already redacted."""
    home = tmp_path / "home"
    run_id, _ = _recorded(home, "context", {"name": "answers", "content": dict(_CONTENT),
                                            "content_hash": _context_guess_digest("blake2b-256")})
    first = bx(home, "redact", run_id, "--field", "1:content.answer", "--by", "dpo", "--reason", "erasure")
    assert first.returncode == 0, first.stderr
    second = bx(home, "redact", run_id, "--field", "1:content.note", "--by", "dpo", "--reason", "erasure")
    assert second.returncode == 0, second.stderr
    out = tmp_path / "b.json"
    assert bx(home, "export", run_id, "-o", str(out)).returncode == 0
    verdict = bx(home, "verify", str(out), "--expect-recorder-key", _public_key(home))
    assert verdict.returncode == 0, verdict.stdout
    entry = json.loads(out.read_text())["entries"][1]
    assert entry["redacted"] == ["content.answer", "content.note", "content_hash"]


# --- verify RUN -----------------------------------------------------------------------------------------

def test_verify_stored_run_json_is_json_when_the_recorder_key_cannot_be_read(tmp_path: Path) -> None:
    """`verify --json` "Print[s] the verdict as JSON", input problems included (form "input", exit 2). For a
    stored run on a host whose recorder key file is unusable, the key error escaped as a plain error line
    on stderr, nothing on stdout, exit 1 ("does not verify")."""
    home = tmp_path / "home"
    run_id, _ = _recorded(home, "tool_call", {"tool": "t", "args": [], "kwargs": {}, "result": 1})
    (home / "keys" / "recorder.key").write_text("not a key\n")
    done = bx(home, "verify", run_id, "--json")
    verdict = json.loads(done.stdout)
    assert verdict["ok"] is False and verdict["form"] == "input"
    assert "recorder.key" in verdict["message"]
    assert done.returncode == 2
