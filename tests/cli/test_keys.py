"""`bitexact keys`: init refuses to overwrite, owner-only files, trust files, rotation."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from tests.cli.conftest import Invoke, recorded_run


def test_init_creates_an_owner_only_key_and_refuses_to_overwrite(bx: Invoke, home: Path) -> None:
    first = bx("keys", "init")
    assert first.exit_code == 0, first.output
    key_file = home / "keys" / "recorder.key"
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    before = key_file.read_bytes()
    again = bx("keys", "init")
    assert again.exit_code == 1
    assert "refusing to overwrite" in again.output
    assert key_file.read_bytes() == before


def test_show_prints_key_id_and_public_key(bx: Invoke) -> None:
    bx("keys", "init")
    shown = json.loads(bx("keys", "show", "--json").output)
    assert len(shown) == 1 and shown[0]["status"] == "current"
    assert len(shown[0]["public_key"]) == 64 and len(shown[0]["key_id"]) == 16


def test_rotation_keeps_earlier_runs_verifiable_through_the_trust_file(bx: Invoke, tmp_path: Path) -> None:
    run_id = recorded_run(bx)
    old_bundle = tmp_path / "old.json"
    assert bx("export", run_id, "-o", str(old_bundle)).exit_code == 0
    rotated = bx("keys", "rotate")
    assert rotated.exit_code == 0, rotated.output
    new_run = recorded_run(bx)
    trust = tmp_path / "trust.json"
    assert bx("keys", "trust-file", "-o", str(trust)).exit_code == 0
    assert len(json.loads(trust.read_text())["recorder_keys"]) == 2
    # The old run's checkpoints are by the retired key, its re-export is signed by the new one.
    for run in (run_id, new_run):
        bundle = tmp_path / f"{run}.json"
        assert bx("export", run, "-o", str(bundle)).exit_code == 0
        verdict = bx("verify", str(bundle), "--trust-file", str(trust), "--require-sealed")
        assert verdict.exit_code == 0, verdict.output
        assert "recorder-attested" in verdict.output
    old = bx("verify", str(old_bundle), "--trust-file", str(trust))
    assert old.exit_code == 0, old.output


def test_rotate_with_no_key_is_refused_and_makes_nothing(bx: Invoke, home: Path) -> None:
    """`keys rotate` before `keys init` made an empty store and keys/retired/ before it refused."""
    refused = bx("keys", "rotate")
    assert refused.exit_code == 1
    assert f"no key at {home / 'keys' / 'recorder.key'}: there is nothing to rotate" in refused.output
    assert "bitexact keys init" in refused.output
    assert not home.exists()
