"""`bitexact capture`, `bitexact import session` and `bitexact sessions` driven as a user would, from the shell.

Every test runs the real console script (tests/cli/real_command.py) against a data directory of its own.
"""

from __future__ import annotations

from pathlib import Path

from cli.real_command import run_bitexact

from bitexact.capture import load_policy
from bitexact.crypto.keystore import KeyStore
from bitexact.recording import Recorder
from bitexact.store import open_store

CLAUDE_LOG = Path(__file__).parent.parent / "sessions" / "fixtures" / "claude" / \
    "jsonl_full_session_with_debug_and_trailing_extension.jsonl"
VISA = "4111 1111 1111 1111"


def _no_traceback(stderr: str) -> None:
    assert "Traceback" not in stderr, stderr


def _record(home: Path, data: dict[str, object]) -> str:
    """A sealed run holding one tool_call ``data``, recorded in-process with the policy off."""
    store = open_store(home)
    try:
        recorder = Recorder(store, KeyStore(home).current_or_init(), policy=load_policy("off"))
        writer = recorder.start(name="odd")
        writer.append("tool_call", data)
        writer.seal()
        return writer.run_id
    finally:
        store.close()


# -- capture keygen ---------------------------------------------------------------------------------------


def test_keygen_with_an_empty_output_path_is_an_error_not_a_traceback(tmp_path: Path) -> None:
    """`capture keygen -o ''` died with a ValueError traceback (`PosixPath('.') has an empty name`):
    the empty path reached write_private_file, which cannot name a temporary beside '.'."""
    result = run_bitexact(tmp_path / "home", "capture", "keygen", "-o", "", cwd=tmp_path)
    _no_traceback(result.stderr)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith("error: -o"), result.stderr
    assert result.stdout == ""
