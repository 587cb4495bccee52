"""Shared pytest configuration for the session tests.

Every test declares the UAS requirement IDs it covers with
``@pytest.mark.uas("T-UAS-020", ...)``; the conformance report is built from
these markers and the test outcomes.
"""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "uas(*ids): UAS requirement IDs (T-UAS-NNN) a test covers")
