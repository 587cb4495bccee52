"""Shared fixtures for the capture policy tests: vectors, keys, a clean environment."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # The policy in force comes from the environment; tests choose their own.
    monkeypatch.delenv("BITEXACT_CAPTURE_POLICY", raising=False)
    monkeypatch.delenv("BITEXACT_CAPTURE_KEY", raising=False)


@pytest.fixture
def key_file(tmp_path: Path) -> Path:
    """A real capture key file (64 hex, owner-only), made by the key source module."""
    from bitexact.crypto.keysources import generate_key_file

    path = tmp_path / "capture.key"
    generate_key_file(path)
    return path


@pytest.fixture
def other_key_file(tmp_path: Path) -> Path:
    from bitexact.crypto.keysources import generate_key_file

    path = tmp_path / "other.key"
    generate_key_file(path)
    return path
