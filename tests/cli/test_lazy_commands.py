"""Commands load on first use: `bitexact --help` and `bitexact verify FILE` import none of the write
path, the capture detectors, the session readers or httpx, and every listed command is the real one."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import bitexact.capture
from bitexact.cli import COMMANDS, cli

HEAVY = ("bitexact.capture.detectors", "bitexact.capture.apply", "bitexact.recording", "bitexact.sessions",
         "bitexact.sdk", "httpx")
"""Modules a command that neither records nor scrubs has no use for (about 0.3 s and 35 MiB to import)."""


def _loaded_after(*args: str, home: Path) -> set[str]:
    """The modules a fresh interpreter has loaded after running ``bitexact ARGS`` (which must exit 0)."""
    script = (
        "import json, sys\n"
        "from bitexact.cli import main\n"
        f"sys.argv = ['bitexact', *{list(args)!r}]\n"
        "try:\n"
        "    main()\n"
        "finally:\n"
        "    print(json.dumps(sorted(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env={"BITEXACT_HOME": str(home), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.splitlines()[-1]))


def _heavy(modules: set[str]) -> list[str]:
    return sorted(name for name in modules if any(name == h or name.startswith(h + ".") for h in HEAVY))


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_listed_command_loads_as_itself(name: str) -> None:
    command = cli.get_command(click.Context(cli), name)
    assert isinstance(command, click.Command)
    assert command.name == name


def test_the_sessions_group_carries_its_views() -> None:
    # The views register on the group when their module loads; the lazy entry must load that module.
    group = cli.get_command(click.Context(cli), "sessions")
    assert isinstance(group, click.Group)
    assert {"parse", "render", "unify", "compact", "validate", "conformance"} <= set(group.commands)


def test_unknown_command_is_refused_by_name() -> None:
    result = CliRunner().invoke(cli, ["verfiy"])
    assert result.exit_code == 2
    assert "No such command 'verfiy'" in result.output


def test_help_lists_every_command_with_its_summary() -> None:
    result = CliRunner().invoke(cli, ["--help"])
    assert result.exit_code == 0
    listing = result.output.split("Commands:\n", 1)[1].splitlines()
    assert [line.split()[0] for line in listing] == sorted(COMMANDS)
    for line in listing:
        name = line.split()[0]
        assert line.split(None, 1)[1] == COMMANDS[name].summary


def test_help_imports_no_command(tmp_path: Path) -> None:
    loaded = _loaded_after("--help", home=tmp_path)
    assert _heavy(loaded) == []
    assert not {lazy.module for lazy in COMMANDS.values()} & loaded


def test_verify_of_a_file_imports_neither_write_path_nor_detectors(tmp_path: Path, demo_bundle: Path) -> None:
    loaded = _loaded_after("verify", str(demo_bundle), home=tmp_path)
    assert "bitexact.evidence.verify" in loaded  # it did verify
    assert _heavy(loaded) == []
    assert "bitexact.store.sqlite" not in loaded  # a file is not looked up in any store


@pytest.fixture(scope="module")
def demo_bundle(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("demo-home")
    result = CliRunner().invoke(cli, ["--home", str(home), "demo", "--json"])
    assert result.exit_code == 0, result.output
    bundle = Path(json.loads(result.stdout)["bundle"])
    assert bundle.is_file()
    return bundle


def test_capture_names_resolve_to_their_modules() -> None:
    assert sorted(bitexact.capture.__all__) == sorted(bitexact.capture._HOMES)
    for name in bitexact.capture.__all__:
        value = getattr(bitexact.capture, name)
        home = sys.modules[f"bitexact.capture.{bitexact.capture._HOMES[name]}"]
        assert value is getattr(home, name), name


def test_capture_names_typed_for_checkers_are_the_names_served() -> None:
    # The TYPE_CHECKING imports give type checkers the names the module's __getattr__ serves at run time.
    tree = ast.parse(Path(bitexact.capture.__file__).read_text())
    guarded = next(node for node in tree.body if isinstance(node, ast.If))
    typed = {alias.name: node.module for node in guarded.body if isinstance(node, ast.ImportFrom)
             for alias in node.names}
    assert typed == {name: f"bitexact.capture.{module}" for name, module in bitexact.capture._HOMES.items()}


def test_capture_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'apply_polic'"):
        bitexact.capture.apply_polic  # noqa: B018
