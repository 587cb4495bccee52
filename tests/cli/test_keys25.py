"""Session 25: every command that writes evidence refuses a current key the store marks compromised, naming
the key's file, and writes nothing. Session 22 made the write path refuse it (`Recorder._remember`) and ran
the SDK, `demo` and `export` against it; `redact`, `repair` and `import session` reach the same refusal
through `AppContext.recorder()`, which was read from the code and not run, and the demo's message named no
file (its recorder was built without the key files)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cli.real_command import restore_keys, run_bitexact, run_json

CLAUDE_LOG = (Path(__file__).parent.parent / "sessions" / "fixtures" / "claude"
              / "jsonl_full_session_with_debug_and_trailing_extension.jsonl")


def _refusal(home: Path, leaked: str, lead: str = "") -> str:
    return (f"error: {lead}recorder key {leaked} ({home / 'keys' / 'recorder.key'}) is recorded as compromised in the"
            " store, but the key files hold it as the current key (keys/ restored from a backup older than the"
            " mark, or copied from elsewhere): nothing signs with it; run `bitexact keys rotate --compromised"
            f" --expect-current {leaked}` to replace it, then hand relying parties a new trust file"
            " (`bitexact keys trust-file`)")


@pytest.fixture(scope="module")
def leaked_home(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """A home with the demo's run, whose key was replaced by `keys rotate --compromised` and then made current
    again by restoring keys/ from a backup older than the rotation. Returns (home, leaked key id, run id)."""
    base = tmp_path_factory.mktemp("keys25")
    home = base / "home"
    run_id = str(run_json(home, "demo")["run_id"])
    leaked = str(run_json(home, "keys", "show")[0]["key_id"])
    shutil.copytree(home / "keys", base / "backup")
    assert run_bitexact(home, "keys", "rotate", "--compromised").returncode == 0
    restore_keys(home, base / "backup")
    return home, leaked, run_id


def _state(home: Path) -> tuple[list[tuple[str, int]], list[str]]:
    """Every run with its step count, and the exports directory's files: what a refused command must leave."""
    runs = sorted((str(run["run_id"]), int(run["steps"])) for run in run_json(home, "runs"))
    return runs, sorted(path.name for path in (home / "exports").iterdir())


@pytest.mark.parametrize(("command", "lead"), [
    pytest.param(("redact", "{run}", "--field", "3:result", "--by", "dpo", "--reason", "erasure request"), "",
                 id="redact"),
    pytest.param(("repair", "{run}", "--by", "ops", "--note", "accepted"), "", id="repair"),
    pytest.param(("import", "session", "{log}"), "import stopped: ", id="import-session"),
    pytest.param(("demo",), "", id="demo"),
])
def test_a_command_that_writes_evidence_refuses_the_restored_leaked_key_and_writes_nothing(
    leaked_home: tuple[Path, str, str], command: tuple[str, ...], lead: str
) -> None:
    home, leaked, run_id = leaked_home
    before = _state(home)
    args = [part.format(run=run_id, log=CLAUDE_LOG) for part in command]
    result = run_bitexact(home, *args)
    assert result.returncode == 1, (result.stdout, result.stderr)
    # The refusal is the last line (the import first warns of the log's two non-JSON lines, as it always does).
    assert result.stderr.strip().splitlines()[-1] == _refusal(home, leaked, lead)
    assert _state(home) == before  # no run, no step (no redaction claim, no repair entry), no bundle
