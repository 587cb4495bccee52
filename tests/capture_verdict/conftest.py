"""The policy in force comes from the environment; every test here chooses its own."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from capture_verdict import fixtures as _contract_fixtures
from capture_verdict.support import ENV_NAMES, invoker

# The contract's fixtures, taken into this module, where pytest finds them.
keyed_env = _contract_fixtures.keyed_env
contract = _contract_fixtures.contract


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def bx(home: Path) -> Any:
    """The CLI, in process, against the test's data directory."""
    return invoker(home)
