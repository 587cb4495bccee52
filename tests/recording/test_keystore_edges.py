"""Recorder key store edges, found in review: concurrent rotations never clobber a retired key; init with a file
where keys/ goes fails with a message."""

from __future__ import annotations

import os
import types
from pathlib import Path

import pytest
from click.testing import CliRunner

import bitexact.crypto.keystore as keystore_module
from bitexact.cli import cli
from bitexact.crypto.keystore import KeyStore


def test_concurrent_rotation_never_clobbers_a_retired_key(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two `keys rotate` at once: the second process rotates between our existence check and our move.

    The interleaving is forced deterministically: another KeyStore (another process)
    runs a whole rotation right before this rotation's os.replace.
    """
    first = KeyStore(home).init()
    real_os = os
    fired: list[bool] = []

    def replace(src: object, dst: object) -> None:
        if not fired:
            fired.append(True)
            monkeypatch.setattr(keystore_module, "os", real_os)  # the other process uses the real os
            KeyStore(home).rotate()  # the other `bitexact keys rotate`, interleaved
        real_os.replace(src, dst)  # type: ignore[arg-type]

    proxy = types.SimpleNamespace(chmod=os.chmod, replace=replace)
    monkeypatch.setattr(keystore_module, "os", proxy)
    try:
        KeyStore(home).rotate()
    except Exception:  # noqa: BLE001 - refusing the second rotation is an acceptable outcome
        pass
    listed = {k.public_key for k in KeyStore(home).public_keys()}
    # Every key that ever signed must stay listed, or runs it signed no longer verify with the trust file.
    assert first.public_hex in listed, "the first recorder key was overwritten in keys/retired/"


def test_keys_init_with_a_file_where_the_keys_directory_goes_fails_clearly(home: Path) -> None:
    home.mkdir(parents=True)
    (home / "keys").write_text("not a directory\n")
    result = CliRunner().invoke(cli, ["keys", "init"], env={"BITEXACT_HOME": str(home)})
    assert not isinstance(result.exception, OSError), f"uncaught {result.exception!r} (traceback, no message)"
    assert result.exit_code == 1
    assert "keys" in result.output
