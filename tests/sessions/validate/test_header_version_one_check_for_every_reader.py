"""validate, render, compact and import read the session.format version through one check (T-UAS-064).

An integral float is the integer Draft-07 takes it for, so ``1.0`` is version 1
for all four; anything else that is not the integer 1 is refused by all four.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from bitexact.cli import cli
from bitexact.sessions.compact import RunBinding, resolve_full_session

BODY = {"type": "assistant.message", "data": {"content": "hi"}, "timestamp": "2026-10-02T00:00:00Z",
        "provenance": {"component": "agent", "phase": "agent", "path": "agent-session.jsonl", "index": 0,
                       "timestampMs": 1790899200000}}


def _file(tmp_path: Path, version_text: str) -> Path:
    header = ('{"type":"session.format","data":{"version":' + version_text + '},"provenance":{"component":'
              '"collector","phase":"conclusion","path":"usage/aw_session.jsonl","index":0}}')
    path = tmp_path / "aw_session.jsonl"
    path.write_text(header + "\n" + json.dumps(BODY, separators=(",", ":")) + "\n", encoding="utf-8")
    return path


def _bx(tmp_path: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, list(args), env={"BITEXACT_HOME": str(tmp_path / "home"), "COLUMNS": "300"})


def _exits(tmp_path: Path, path: Path) -> dict[str, int]:
    return {
        "validate": _bx(tmp_path, "sessions", "validate", "unified", str(path)).exit_code,
        "compact": _bx(tmp_path, "sessions", "compact", str(path)).exit_code,
        "render": _bx(tmp_path, "sessions", "render", str(path)).exit_code,
        "import": _bx(tmp_path, "import", "session", str(path)).exit_code,
    }


@pytest.mark.uas("T-UAS-064")
@pytest.mark.parametrize("version", ["1", "1.0", "1e0", "10e-1"])
def test_every_reader_takes_an_integral_one(tmp_path: Path, version: str) -> None:
    assert _exits(tmp_path, _file(tmp_path, version)) == {"validate": 0, "compact": 0, "render": 0, "import": 0}


@pytest.mark.uas("T-UAS-064")
@pytest.mark.parametrize(("version", "said"), [
    ("2", "unsupported file-format version 2 "), ("2.0", "unsupported file-format version 2 "),
    ("1.5", "invalid file-format version"), ("0", "invalid file-format version"),
    ("true", "invalid file-format version"), ('"1"', "invalid file-format version"),
    ("null", "invalid file-format version"),
])
def test_every_reader_refuses_anything_else_with_the_same_words(tmp_path: Path, version: str, said: str) -> None:
    path = _file(tmp_path, version)
    assert _exits(tmp_path, path) == {"validate": 1, "compact": 2, "render": 2, "import": 2}
    assert said in _bx(tmp_path, "sessions", "validate", "unified", str(path)).stderr
    for command in (("sessions", "compact"), ("sessions", "render"), ("import", "session")):
        assert said in _bx(tmp_path, *command, str(path)).stderr, command


@pytest.mark.uas("T-UAS-064")
def test_the_imported_run_records_the_version_as_the_integer(tmp_path: Path) -> None:
    imported = _bx(tmp_path, "import", "session", str(_file(tmp_path, "1.0")), "--json")
    assert imported.exit_code == 0, imported.output
    assert json.loads(imported.stdout)["source"]["format_version"] == 1
    assert type(json.loads(imported.stdout)["source"]["format_version"]) is int


@pytest.mark.uas("T-UAS-064")
def test_render_names_the_version_as_the_integer(tmp_path: Path) -> None:
    rendered = _bx(tmp_path, "sessions", "render", str(_file(tmp_path, "1.0")), "--format", "text")
    assert rendered.exit_code == 0 and "file format version 1 " in rendered.stdout


@pytest.mark.uas("T-UAS-064", "T-UAS-079")
@pytest.mark.parametrize(("version", "available"), [(1, True), (1.0, True), (True, False), (2, False)])
def test_full_session_resolution_reads_the_header_the_same_way(tmp_path: Path, version: object,
                                                               available: bool) -> None:
    binding = RunBinding("octo/repo", "9001", "2", "octo/repo/.github/workflows/agent.lock.yml@refs/heads/main")
    folder = tmp_path / "7"
    folder.mkdir()
    (folder / "artifact.json").write_text(json.dumps({"id": "7", "repository": binding.repository,
                                                      "runId": binding.run_id, "runAttempt": binding.run_attempt,
                                                      "workflow": binding.workflow}))
    header = {"type": "session.format", "data": {"version": version},
              "provenance": {"component": "collector", "phase": "conclusion", "path": "usage/aw_session.jsonl",
                             "index": 0}}
    (folder / "aw_session.jsonl").write_text(json.dumps(header) + "\n")
    assert resolve_full_session(tmp_path, ["7"], binding).available is available
