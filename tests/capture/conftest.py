"""Shared fixtures for the capture policy tests: a clean environment (the capture keys are in tests/conftest.py)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # The policy in force comes from the environment; tests choose their own.
    monkeypatch.delenv("BITEXACT_CAPTURE_POLICY", raising=False)
    monkeypatch.delenv("BITEXACT_CAPTURE_KEY", raising=False)


