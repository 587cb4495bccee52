"""The evidence layer as a producer (entries, checkpoints, export, export-time redaction, the signature):
regression tests, each for a bug a review found."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bitexact.crypto import SigningKey
from bitexact.crypto.keystore import KeyStore
from bitexact.recording import CheckpointPolicy, Recorder
from bitexact.store import Store, open_store

BITEXACT = str(Path(sys.executable).parent / "bitexact")


def bx(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The real `bitexact` command against ``home`` with a clean BITEXACT_* environment."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("BITEXACT_")}
    clean.update({"BITEXACT_HOME": str(home), "COLUMNS": "200", "PYTHONIOENCODING": "utf-8", **env})
    return subprocess.run([BITEXACT, *args], env=clean, capture_output=True, text=True,
                          encoding="utf-8", errors="replace", timeout=120)


def _recorded(home: Path, data: dict[str, object], *, kind: str = "tool_call") -> str:
    """A sealed run holding one ``kind`` entry with ``data`` (step 1)."""
    store = open_store(home)
    try:
        writer = Recorder(store, KeyStore(home).current_or_init(),
                          checkpoints=CheckpointPolicy(every=64, seconds=3600)).start(name="edges6")
        writer.append(kind, data)
        writer.seal()
        return writer.run_id
    finally:
        store.close()


# --- export-time redaction ----------------------------------------------------------------------


def test_export_redact_error_never_prints_escape_sequences_from_recorded_keys(tmp_path: Path) -> None:
    """`export --redact STEP:PATH` naming a path the entry did not commit lists the committed paths, which
    are recorded keys (a page an agent read): they were printed raw, so `\\x1b[2J` cleared the operator's
    screen and a bidi override reordered the error they read."""
    home = tmp_path / "home"
    run_id = _recorded(home, {"tool": "fetch", "result": {"\x1b[2J\x1b[31mred": 1, "a\u202eb": 2}})
    out = bx(home, "export", run_id, "-o", str(tmp_path / "b.json"), "--redact", "1:result.nope")
    assert out.returncode == 2, out.stderr
    assert "no committed path 'result.nope'" in out.stderr, out.stderr
    assert "\x1b" not in out.stderr and "\u202e" not in out.stderr, repr(out.stderr)
    assert "red" in out.stderr  # the committed paths are still listed, escaped
    assert not (tmp_path / "b.json").exists()
