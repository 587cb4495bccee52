"""entry25: ``checks.entry`` keeps a plain ASCII kind/prov/ts without ``column_text``'s call, and refuses as before.

The shortcut takes a ``str`` that is ASCII, not empty and holds no U+0000; everything else goes the long way,
so the column values taken and the refusals (message and field) are ``column_text``'s, value by value.
"""

from __future__ import annotations

from typing import Any

import pytest

from bitexact.evidence.entry import build_entry
from bitexact.store import checks
from bitexact.store.base import RecordError


class Tag(str):
    pass


def _entry() -> dict[str, Any]:
    return build_entry(run_id="run-1", step=0, kind="tool_call", prov="observed", data={"tool": "t"},
                       prev="0" * 64, alg="blake2b-256", ts="2026-12-01T20:00:00+00:00")


VALUES: list[Any] = ["tool_call", "x", "caf\u00e9", "\U0001F600", "\x7f", " ", "a\x00b", "\x00", "\ud800", "a\udfff",
                     "", None, 3, Tag("t"), Tag(""), Tag("a\x00")]


def _expected(key: str, value: Any) -> tuple[str, Any]:
    """What the checks before the shortcut gave: the column value, or the refusal's message and field."""
    if not isinstance(value, str) or not value:
        return "refused", (f"entry.{key} must be a non-empty string; got {value!r:.80}", key)
    try:
        return "kept", checks.column_text(value, f"entry.{key}", key)
    except RecordError as exc:
        return "refused", (str(exc), exc.field)


@pytest.mark.parametrize("key", ["kind", "prov", "ts"])
@pytest.mark.parametrize("value", VALUES)
def test_a_text_column_is_kept_or_refused_as_column_text_says(key: str, value: Any) -> None:
    record = {**_entry(), key: value}
    try:
        fields = checks.entry("run-1", record)
    except RecordError as exc:
        assert _expected(key, value) == ("refused", (str(exc), exc.field))
    else:
        kept = getattr(fields, key)
        assert _expected(key, value) == ("kept", kept)
        assert kept is value
