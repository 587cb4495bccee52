"""Helpers for the merger tests: artifact trees, running the merger, reading its output."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from bitexact.sessions.unify import UnifyReport, unify

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "unify"
ALL = FIXTURES / "interleaved_all_components"


def write_tree(root: Path, files: dict[str, Any]) -> Path:
    """Create files below ``root``: lists become JSONL, dicts JSON, str/bytes verbatim."""
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, str):
            path.write_text(content, encoding="utf-8")
        elif isinstance(content, list):
            path.write_text("".join(json.dumps(r) + "\n" for r in content), encoding="utf-8")
        else:
            path.write_text(json.dumps(content), encoding="utf-8")
    return root


def run(root: Path, out_dir: Path, **kwargs: Any) -> tuple[list[dict[str, Any]], UnifyReport, bytes]:
    """Run the merger (empty environment unless given) and decode its output."""
    kwargs.setdefault("env", {})
    out = out_dir / "aw_session.jsonl"
    report = unify(root, out, **kwargs)
    data = out.read_bytes()
    return [json.loads(line) for line in data.decode("utf-8").splitlines()], report, data


def of_type(records: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    """Records of one type, in file order."""
    return [r for r in records if r["type"] == kind]


def warnings(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The ``session.collection_warning`` payloads."""
    return [r["data"] for r in of_type(records, "session.collection_warning")]


def coverage(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The ``session.collection`` payload."""
    (record,) = of_type(records, "session.collection")
    return record["data"]


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file below ``root`` (to prove sources are not modified)."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
