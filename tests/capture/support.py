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


def resolve(data: Any, path: str) -> Any:
    """The value at a capture-block path (escaped segments; a decimal segment indexes an array)."""
    value = data
    for segment in path.split("."):
        key = segment.replace("~1", ".").replace("~0", "~")
        value = value[int(key)] if isinstance(value, list) else value[key]
    return value


def assert_block_matches_data(data: dict[str, Any], block: dict[str, Any] | None) -> None:
    """Every path the block declares is where the data stores it, with the placeholder its mode implies."""
    for path, field in (block or {}).get("fields", {}).items():
        value = resolve(data, path)
        if field["mode"] == "hash-only":
            assert value == "[hash-only]", path
        elif field["mode"] == "withheld":
            assert value == "[withheld]", path
