"""The policy in force comes from the environment; every test here chooses its own."""

from __future__ import annotations

import pytest

from capture_verdict.support import ENV_NAMES


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)
