"""The contract's fixtures, shared by the capture-verdict tests (their conftest) and the capture CLI's
verify tests: imported into a module, pytest finds them there."""

from __future__ import annotations

from pathlib import Path

import pytest

from bitexact.crypto import SigningKey
from bitexact.store import Store
from capture_verdict.support import keyed_contract_env, recorded_contract


@pytest.fixture
def keyed_env(tmp_path: Path) -> dict[str, str]:
    """The contract's policy with a capture key, as BITEXACT_CAPTURE_POLICY names it."""
    return keyed_contract_env(tmp_path)


@pytest.fixture
def contract(store: Store, recorder_key: SigningKey, keyed_env: dict[str, str]) -> str:
    """The contract's run recorded under ``keyed_env``'s policy (step 2: the hash-only on_behalf_of)."""
    return recorded_contract(store, recorder_key, keyed_env)
