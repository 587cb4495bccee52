"""`--json` output never carries a control character a terminal acts on, and stays the same JSON.

JSON may carry C1 controls (U+0080-U+009F: U+009B is a CSI to a terminal
that reads it), line separators and bidirectional overrides raw. Recorded
data holding them reached the terminal through `show --json` as written.
"""

from __future__ import annotations

import json
from pathlib import Path

from cli.real_command import run_bitexact

from bitexact.crypto.keystore import KeyStore
from bitexact.recording import Recorder
from bitexact.store import open_store

ODD = "\x9b2J\x85\u2028\u202eevil\x7f"


def test_show_json_escapes_c1_controls_and_separators_from_recorded_data(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = open_store(home)
    try:
        writer = Recorder(store, KeyStore(home).current_or_init()).start(name="odd")
        writer.append("marker", {"note": ODD})
        writer.seal()
        run_id = writer.run_id
    finally:
        store.close()
    shown = run_bitexact(home, "show", run_id, "--json")
    assert shown.returncode == 0, shown.stderr
    assert not any(ch in shown.stdout for ch in "\x9b\x85\u2028\u202e\x7f"), repr(shown.stdout)
    for escape in ("\\u009b", "\\u0085", "\\u2028", "\\u202e", "\\u007f"):
        assert escape in shown.stdout
    assert json.loads(shown.stdout)["steps"][1]["data"] == {"note": ODD}  # the same JSON, decoded


def test_recorded_text_holding_an_emoji_code_is_printed_as_it_is(tmp_path: Path) -> None:
    """rich turned ":a:" in recorded text into an emoji: `show` printed the marker "ops:a: note" as
    "ops🅰 note" (and a run's name the same way), misquoting the evidence."""
    home = tmp_path / "home"
    store = open_store(home)
    try:
        writer = Recorder(store, KeyStore(home).current_or_init()).start(name="team:a:b")
        writer.append("marker", {"note": "ops:a: note :smile:"})
        writer.seal()
        run_id = writer.run_id
    finally:
        store.close()
    shown = run_bitexact(home, "show", run_id)
    assert shown.returncode == 0, shown.stderr
    assert "ops:a: note :smile:" in shown.stdout, shown.stdout
    assert "\U0001f170" not in shown.stdout and "\U0001f604" not in shown.stdout
    assert "team:a:b" in shown.stdout  # the run_meta row's summary names the run
