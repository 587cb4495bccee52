"""An import the store stops mid-way says what it left (the eighteenth session's crash audit)."""

from __future__ import annotations

import json
from pathlib import Path

from cli.real_command import run_bitexact


def _fat_log(path: Path, turns: int) -> Path:
    """A Claude log of ``turns`` user messages of about 20 KB each."""
    with open(path, "w", encoding="utf-8") as out:
        out.write(json.dumps({"type": "system", "subtype": "init", "session_id": "fat", "model": "m", "cwd": "/w",
                              "tools": [], "uuid": "u-init"}) + "\n")
        for turn in range(turns):
            out.write(json.dumps({"type": "user", "message": {"role": "user", "content": [
                {"type": "text", "text": f"turn {turn} " + "lorem ipsum " * 1700}]}, "session_id": "fat",
                "uuid": f"u-{turn}", "timestamp": "2026-10-02T00:00:01Z"}) + "\n")
    return path


def test_an_import_the_store_stops_mid_way_names_the_partial_run_and_the_next_step(
    small_disk: Path, tmp_path: Path
) -> None:
    """A store failing mid-import (here a full disk; a sqlite3 shell keeping it locked is the same) was said
    as the store's words alone ("import stopped: ...: database or disk is full", or "... nothing was
    written"), though the run held the entries written so far and a retry is refused by it. Ctrl-C named
    the run and the next step; now a store failure does too."""
    home = small_disk / "home"
    log = _fat_log(tmp_path / "fat.jsonl", 1500)  # ~30 MB of entries for a 24 MiB disk
    done = run_bitexact(home, "import", "session", str(log))
    assert done.returncode == 1, done.stderr
    runs = json.loads(run_bitexact(home, "runs", "--json").stdout)
    assert len(runs) == 1 and not runs[0]["sealed"] and runs[0]["steps"] > 0
    run_id, steps = runs[0]["run_id"], runs[0]["steps"]
    said = " ".join(done.stderr.split())
    assert said.startswith("error: import stopped: ")
    assert (f"import of fat.jsonl stopped: run {run_id} was left unsealed after {steps} entries; accept its"
            f' truncated history with `bitexact repair {run_id} --by NAME --note "import interrupted"`') in said
    retry = run_bitexact(home, "import", "session", str(log))
    assert retry.returncode == 1 and f"was already imported as run {run_id}" in retry.stderr
