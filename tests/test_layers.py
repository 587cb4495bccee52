"""Imports point only downward through the layers of docs/architecture.md.

Every ``import`` and ``from ... import`` of a ``bitexact`` module in the
source tree, at module level or inside a function, is checked against the
layer table: a module may import its own layer and those below it, never
one above. A new top-level module or package must be given a layer here,
so the table and the docs cannot drift apart silently.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src" / "bitexact"

LAYERS: dict[str, int] = {
    "errors": 0, "config": 0, "private_files": 0, "zerofill": 0, "gcpause": 0, "interruptible": 0,
    "credential_shapes": 0, "regex_syntax": 0,
    "canon": 1,
    "crypto": 2,
    "evidence": 3,
    "store": 4,
    "capture": 5,
    "recording": 6,
    "sdk": 7, "sessions": 7, "context": 7,  # context: the SDK's public face for causal context
    "health": 8, "demo": 8,
    "cli": 9, "__main__": 9,  # __main__: `python -m bitexact`, the command line
}
"""Top-level module or package -> its layer (docs/architecture.md, "Layers")."""


def _modules() -> list[Path]:
    return sorted(path for path in SOURCE.rglob("*.py") if path.relative_to(SOURCE).parts != ("__init__.py",))


def _imported(tree: ast.AST) -> list[tuple[int, str]]:
    """``(line, top-level name)`` of every bitexact module the tree imports.

    ``import bitexact`` and ``from bitexact import __version__`` name the
    package root, which imports nothing eagerly (its public API loads
    lazily): those are not layer crossings and are left out.
    """
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            parts = node.module.split(".")
            if parts[0] != "bitexact":
                continue
            if len(parts) > 1:
                found.append((node.lineno, parts[1]))
            else:
                found += [(node.lineno, alias.name) for alias in node.names if alias.name in LAYERS]
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "bitexact" and len(parts) > 1:
                    found.append((node.lineno, parts[1]))
    return found


def test_every_top_level_module_has_a_layer() -> None:
    tops = {path.relative_to(SOURCE).parts[0].removesuffix(".py") for path in _modules()}
    assert tops - set(LAYERS) == set(), "give each new top-level module a layer here and in docs/architecture.md"


@pytest.mark.parametrize("path", _modules(), ids=lambda path: str(path.relative_to(SOURCE)))
def test_imports_point_only_downward(path: Path) -> None:
    own = LAYERS[path.relative_to(SOURCE).parts[0].removesuffix(".py")]
    imported = _imported(ast.parse(path.read_text(encoding="utf-8")))
    upward = [f"line {line}: bitexact.{name} (layer {LAYERS[name]})" for line, name in imported
              if LAYERS.get(name, -1) > own]
    unknown = [f"line {line}: bitexact.{name}" for line, name in imported if name not in LAYERS]
    assert not upward, f"layer {own} imports upward: {upward}"
    assert not unknown, f"imports a module with no layer: {unknown}"


def test_the_check_sees_an_upward_import() -> None:
    """The checker itself: a store module importing the SDK is caught, one importing canon is not."""
    tree = ast.parse("from bitexact.sdk import run\nimport bitexact.canon\n\ndef f():\n    from bitexact.cli import main\n")
    assert _imported(tree) == [(1, "sdk"), (2, "canon"), (5, "cli")]
    assert [name for _, name in _imported(tree) if LAYERS[name] > LAYERS["store"]] == ["sdk", "cli"]
