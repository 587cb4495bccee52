"""The credentials detector's package: its modules import one way, and every name it exported is still there.

credentials.py was split by family into ``bitexact.capture.detectors.credentials`` (session 31): the names and
line helpers at the bottom, each family's module above them, ``detector.py`` on top. These tests keep it so: a
module importing one above it (a cycle, or a family reaching into the detector) fails here, not at import time
in some other order.
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import bitexact.capture.detectors.credentials as credentials

PACKAGE = Path(credentials.__file__).parent
PREFIX = "bitexact.capture.detectors.credentials"


def _imports(path: Path) -> tuple[set[str], list[int]]:
    """The package's modules ``path`` imports, and the lines of any import not at a module's top level."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    modules = {node.module.removeprefix(PREFIX + ".") for node in ast.walk(tree)
               if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(PREFIX + ".")}
    nested = [node.lineno for node in ast.walk(tree)
              if isinstance(node, (ast.Import, ast.ImportFrom)) and node not in tree.body]
    return modules, nested


def test_the_modules_import_one_way() -> None:
    graph = {}
    for path in sorted(PACKAGE.glob("*.py")):
        modules, nested = _imports(path)
        assert nested == [], f"{path.name}: an import inside a function (lines {nested})"
        graph[path.stem] = modules
    assert len(graph) > 10, "the package's modules were not found"
    order = list(graphlib.TopologicalSorter(graph).static_order())  # raises CycleError on a cycle
    assert order[-2:] == ["detector", "__init__"]
    assert all("detector" not in imported for name, imported in graph.items() if name != "__init__")
    assert all("__init__" not in imported and PREFIX not in imported for imported in graph.values())


def test_every_exported_name_is_there() -> None:
    """The names other modules, tests and benchmarks import from the package (it was one module) resolve."""
    from bitexact.capture.detectors.credentials import (  # noqa: F401
        _MARK_GUARDS,
        ARGV_COMMAND_AT,
        COMMAND_WORDS,
        COMPOUND_ENDINGS,
        CREDENTIAL_KEYS,
        CREDENTIAL_NAMES,
        EVERY_LITERAL,
        EXE_SUFFIX,
        NAME_ENDS,
        NAME_MEMBERS,
        TABLE_KEYS,
        TOKEN,
        VALUE_MEMBERS,
        CredentialsDetector,
        argv_secrets,
        held_literals,
        holds_credential,
        is_credential_name,
        mask_marks,
        names_a_command,
        names_credential,
        percent_decode,
        sensitive_attribute_names,
        sensitive_value_names,
    )

    assert sorted(credentials.__all__) == credentials.__all__
    assert [name for name in credentials.__all__ if not hasattr(credentials, name)] == []
    assert CredentialsDetector.__module__ == PREFIX + ".detector"


def test_state_is_one_object() -> None:
    """A name re-exported by the package is the object its module holds (a cache is never copied)."""
    from bitexact.capture.detectors.credentials import names, skeleton

    assert credentials.is_credential_name is names.is_credential_name
    assert credentials.CREDENTIAL_NAMES is names.CREDENTIAL_NAMES
    assert credentials.held_literals is skeleton.held_literals
