"""`bitexact.run(...)`'s arguments are refused where the run is written, naming the argument (session 32's audit).

`bitexact.run(name=123)` (or a list) was accepted and stored a name that is no text in `run_meta`; and
`@bitexact.run(strict="yes")` on a function was refused only at the function's first call, where the decorator
is far from the mistake. Both now raise `SdkArgumentError` at `bitexact.run(...)`, before any run starts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import bitexact
from bitexact.sdk import SdkArgumentError


@pytest.mark.parametrize("name", [123, ["a"], b"bytes", 1.5])
def test_a_name_that_is_no_text_is_refused(home: Path, name: object) -> None:
    with pytest.raises(SdkArgumentError, match="name names the run: give a string") as info:
        bitexact.run(name=name)  # type: ignore[arg-type]
    assert info.value.field == "name"
    assert not (home / "bitexact.db").exists()  # nothing was started


@pytest.mark.parametrize(("option", "value"), [("strict", "yes"), ("capture_nondeterminism", "false"),
                                               ("journal_small", 2)])
def test_a_flag_is_refused_where_the_decorator_is_written(home: Path, option: str, value: object) -> None:
    with pytest.raises(SdkArgumentError, match=f"{option} is on or off") as info:
        @bitexact.run(**{option: value})  # type: ignore[arg-type]
        def agent() -> None:
            raise AssertionError("never defined, never called")
    assert info.value.field == option


def test_names_and_flags_of_every_accepted_kind_still_run(home: Path) -> None:
    with bitexact.run(name="task", strict=1, capture_nondeterminism=False, journal_small=None) as r:
        r.marker("m")
    assert r.sealed

    @bitexact.run
    def bare() -> str:
        return "ok"

    assert bare() == "ok"
