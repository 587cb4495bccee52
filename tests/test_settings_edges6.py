"""Environment settings (BITEXACT_*), read by every command and the SDK: regression tests, each for a bug a
review found.

Contract: README.md "Settings" ("A value BitExact cannot use is refused with a message naming the variable"),
docs/sdk.md (a run that cannot start: a declared gap, or RecordingError in strict mode), docs/capture-verify.md
(exit codes), and the product rule that a bad setting gets the same clear error, naming the variable, in every
command and in the SDK.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import bitexact
from bitexact.sdk import RecordingError


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("BITEXACT_"):
            monkeypatch.delenv(name, raising=False)


# -- BITEXACT_CAPTURE_POLICY / BITEXACT_CAPTURE_KEY in the SDK ----------------------------------------


@pytest.mark.parametrize("variable", ["BITEXACT_CAPTURE_POLICY", "BITEXACT_CAPTURE_KEY"])
def test_sdk_start_gap_for_an_unusable_policy_setting_names_the_variable(
    tmp_path: Path, clean_env: None, monkeypatch: pytest.MonkeyPatch, variable: str
) -> None:
    """A missing policy or capture key file was declared as just "...: PolicyError" (the SDK dropped the
    message that names the variable and the file), where `bitexact demo` names both."""
    monkeypatch.setenv(variable, str(tmp_path / "missing-file"))
    with bitexact.run(name="policy-setting", home=tmp_path / "home") as r:
        pass
    details = [gap.detail for gap in r.failures.gaps]
    assert len(details) == 1, details
    assert variable in details[0] and "missing-file" in details[0], details

    with pytest.raises(RecordingError) as raised, bitexact.run(name="policy-setting", home=tmp_path / "home",
                                                                 strict=True):
        pass
    assert variable in str(raised.value), str(raised.value)
