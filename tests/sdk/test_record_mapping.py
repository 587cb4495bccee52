"""`r.record` with a mapping that fails to read is a declared gap, as `r.context` and `record_tool_call`
declare the same input; it was raised into the agent."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pytest

import bitexact
from bitexact.sdk.errors import RecordingError


class Broken(Mapping[str, Any]):
    """A mapping whose keys cannot be read (a lazy view over a closed resource)."""

    def __getitem__(self, key: str) -> Any:
        raise KeyError(key)

    def __iter__(self) -> Iterator[str]:
        raise OSError("the resource behind this view is closed")

    def __len__(self) -> int:
        return 1


@pytest.mark.parametrize("kind", ["marker", "identity"])
def test_a_mapping_that_fails_to_read_is_a_declared_gap(home: Any, kind: str) -> None:
    with bitexact.run() as r:
        handle = r.record(kind, Broken())
        r.marker("after")
    assert not handle  # the empty handle of a gap
    [gap] = r.failures.gaps
    assert gap.kind == kind and "the resource behind this view is closed" in gap.detail
    assert r.sealed


def test_strict_mode_raises_it_as_a_recording_error(home: Any) -> None:
    with bitexact.run(strict=True) as r, pytest.raises(RecordingError, match="marker was not recorded"):
        r.record("marker", Broken())
