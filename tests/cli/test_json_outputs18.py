"""`--json` on the operator commands that change state: `keys init`, `keys rotate`, `redact` and `repair`
printed only a sentence, which a script automating erasure requests or key rotation had to parse."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli.real_command import demo_run, run_bitexact


def _json(home: Path, *args: str) -> Any:
    result = run_bitexact(home, *args, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def _current(home: Path) -> dict[str, Any]:
    [current] = [key for key in _json(home, "keys", "show") if key["status"] == "current"]
    return dict(current)


def _steps(home: Path, run_id: str) -> list[dict[str, Any]]:
    return list(_json(home, "show", run_id)["steps"])


def test_keys_init_and_rotate_say_which_keys_as_json(tmp_path: Path) -> None:
    home = tmp_path / "home"
    made = _json(home, "keys", "init")
    assert made == {"key_id": _current(home)["key_id"], "public_key": _current(home)["public_key"],
                    "path": made["path"]}
    assert Path(made["path"]).is_file() and Path(made["path"]).is_relative_to(home)
    rotated = _json(home, "keys", "rotate")
    assert rotated["retired"] == {"key_id": made["key_id"], "public_key": made["public_key"]}
    assert rotated["current"]["key_id"] == _current(home)["key_id"] != made["key_id"]
    assert rotated["compromised"] is False and rotated["at"]
    again = _json(home, "keys", "rotate", "--compromised")
    assert again["retired"]["key_id"] == rotated["current"]["key_id"] and again["compromised"] is True
    listed = {key["key_id"]: key["status"] for key in _json(home, "keys", "show")}
    assert listed[again["retired"]["key_id"]] == "compromised"


def test_redact_as_json_names_the_fields_and_the_claims_step(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run_id = demo_run(home)
    done = _json(home, "redact", run_id, "--field", "3:result.policy", "--by", "dpo:alice", "--reason", "118")
    claim = _steps(home, run_id)[done["claim_step"]]
    assert claim["kind"] == "redaction" and claim["data"]["fields"] == done["redacted"] == ["3:result.policy"]
    assert done["run_id"] == run_id
    assert run_bitexact(home, "verify", run_id).returncode == 0
    assert _json(home, "redact", run_id, "--resume") == {"run_id": run_id, "applied": [], "approval": None}


def test_repair_as_json_names_its_step(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run_id = demo_run(home)
    done = _json(home, "repair", run_id, "--by", "ops:alice", "--note", "accepted as recorded")
    steps = _steps(home, run_id)
    assert done == {"run_id": run_id, "step": len(steps) - 1, "folded": [], "not_folded": [],
                    "pending_redactions": []}
    assert steps[done["step"]]["kind"] == "repair"
