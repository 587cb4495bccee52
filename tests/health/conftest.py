"""The real `bitexact` command, with the capture, redaction and health commands, against a fresh home."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from capture_verdict.support import ENV_NAMES, invoker


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ENV_NAMES:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def bx(home: Path) -> Any:
    return invoker(home)
