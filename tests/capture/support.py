"""Helpers for the capture tests: the copied vectors, policy files, test keys."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"


def vectors(name: str) -> Any:
    """A vectors section copied into tests/capture/data."""
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


def write_policy(tmp_path: Path, policy: dict[str, Any], name: str = "policy.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(policy), encoding="utf-8")
    return path
