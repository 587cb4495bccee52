"""`bitexact.run`'s on/off arguments take a bool: `strict="false"` turned strict mode on (a non-empty string)."""

from __future__ import annotations

from typing import Any

import pytest

import bitexact
from bitexact.sdk.errors import SdkArgumentError


@pytest.mark.parametrize("name", ["strict", "capture_nondeterminism", "journal_small"])
@pytest.mark.parametrize("value", ["false", "0", 2, 0.0, [True]])
def test_an_on_off_argument_that_is_no_bool_is_refused_naming_it(home: Any, name: str, value: object) -> None:
    with pytest.raises(SdkArgumentError, match=f"{name} is on or off") as refused:
        with bitexact.run(**{name: value}):
            pass
    assert refused.value.field == name


@pytest.mark.parametrize("value", [True, False, 1, 0])
def test_a_bool_or_its_integer_is_taken(home: Any, value: object) -> None:
    with bitexact.run(strict=value, journal_small=value) as r:
        r.marker("x")
    assert r.strict is bool(value) and r.sealed
