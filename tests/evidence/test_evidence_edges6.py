"""The evidence layer as a producer (entries, checkpoints, export, export-time redaction, the signature):
regression tests, each for a bug a review found."""

from __future__ import annotations

import json
from pathlib import Path

from cli.real_command import run_bitexact as bx
from cli.real_command import run_on_terminal

from bitexact.crypto.keystore import KeyStore
from bitexact.recording import CheckpointPolicy, Recorder
from bitexact.store import open_store



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


# --- the verdict line ---------------------------------------------------------------------------


def _bundle_with_escape_key(tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / "home"
    run_id = _recorded(home, {"tool": "fetch"})
    bundle = tmp_path / "b.json"
    assert bx(home, "export", run_id, "-o", str(bundle)).returncode == 0
    doc = json.loads(bundle.read_text(encoding="utf-8"))
    doc["entries"][1]["data"]["\x1b]0;pwned\x07x\x1b[2J"] = 1  # OSC retitles, CSI clears the screen
    bundle.write_text(json.dumps(doc), encoding="utf-8")
    return home, bundle


def test_verify_line_on_a_terminal_never_runs_escape_sequences_from_the_bundle(tmp_path: Path) -> None:
    """A bundle is attacker-supplied input: a data key holding ESC sequences reached the FAIL line that names
    the path raw, so the verdict could retitle, clear or restyle the terminal it was read on."""
    home, bundle = _bundle_with_escape_key(tmp_path)
    code, text, _ = run_on_terminal(home, "verify", str(bundle), stderr_too=False)
    assert code == 1 and text.startswith("FAIL: step 1: uncommitted data at path"), text
    assert "\x1b" not in text and "\x07" not in text, repr(text)
    assert "\\x1b]0;pwned\\x07x\\x1b[2J" in text  # shown, as text


def test_verify_line_through_a_pipe_is_the_spec_line_byte_for_byte(tmp_path: Path) -> None:
    """Scripts compare verdict lines between conforming verifiers: through a pipe the line is the spec's
    (ASCII by backslashreplace only), control characters and all; click must not strip what looks like colour."""
    home, bundle = _bundle_with_escape_key(tmp_path)
    out = bx(home, "verify", str(bundle))
    assert out.returncode == 1, out.stderr
    assert out.stdout.startswith("FAIL: step 1: uncommitted data at path"), out.stdout
    assert "\x1b]0;pwned\x07x\x1b[2J" in out.stdout, repr(out.stdout)
