"""Canonical JSON, the strict reader and the crypto layer: regression tests, each for a bug a review found.

Contracts: issue 2 items 2 and 3 (the strict reader refuses "with an error naming what and where"),
the bundle format spec §1 and §2, docs/bundle-format.md.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bitexact.canon import loads
from bitexact.errors import StrictJSONError

# -- the strict reader says where ------------------------------------------------------------


def _refusal(document: str | bytes) -> StrictJSONError:
    with pytest.raises(StrictJSONError) as info:
        loads(document)
    return info.value


@pytest.mark.parametrize(
    ("document", "message", "at"),
    [
        ('{"a": 1,\n "a": 2}', "duplicate key 'a'", '"a": 2'),
        ('{"k": {"x": 1, "y": 2, "\\u0078": 3}, "k2": 1}', "duplicate key 'x'", '"\\u0078"'),
        ('{"a": {"b": 1, "b": 2}, "a": 3}', "duplicate key 'b'", '"b": 2'),
        ('[1, 2, NaN]', "non-finite JSON constant 'NaN' is not allowed", "NaN"),
        ('{"x": [0.5, -Infinity]}', "non-finite JSON constant '-Infinity' is not allowed", "-Infinity"),
        ('{"NaN": "Infinity", "v": [1e3, -1e999]}', "non-finite number is not allowed", "-1e999"),
        ('[1, "9", ' + "9" * 5000 + "]", "integer literal of 5000 digits is too long", "9" * 5000),
    ],
)
def test_refusals_from_the_parser_hooks_carry_their_position(document: str, message: str, at: str) -> None:
    """A duplicate key, a NaN/Infinity constant, an overflowing or overlong literal were refused with no position.

    The issue asks for "an error naming what and where"; StrictJSONError.position stayed None for every
    refusal made inside the parser's hooks, so `capture policy check` said "duplicate key 'version'" and
    nothing about where in the file it was.
    """
    error = _refusal(document)
    assert str(error) == message  # the spec's message is unchanged
    assert error.position == document.rindex(at), (error.position, document.rindex(at))
    assert f"(at character {document.rindex(at)})" in error.where()


def test_nesting_refusal_carries_the_position_of_the_bracket_past_the_limit() -> None:
    """Nesting past 128 levels was refused with no position: the bracket opening level 129 is where."""
    document = '{"ok": "[[[[", "deep": ' + "[" * 129 + "]" * 129 + "}"
    error = _refusal(document)
    assert str(error) == "nesting deeper than 128 levels is refused"
    assert error.position == document.index("[" * 129) + 127  # the outer object is level 1


def test_invalid_utf8_position_is_a_character_offset() -> None:
    """StrictJSONError.position is documented as a character offset; for invalid UTF-8 it was the byte offset.

    b'"\\xc3\\xa9\\xff"': the bad byte is byte 3 but character 2 (é is two bytes), and where() said
    "invalid UTF-8 at byte 3: ... (at character 3)".
    """
    error = _refusal(b'["\xc3\xa9\xff"]')
    assert str(error).startswith("invalid UTF-8 at byte 4")
    assert error.position == 3
    assert error.where().endswith("(at character 3)")


def _bitexact(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    """The console script, run as a user runs it (PYTHONPATH passed on so the worktree's source wins)."""
    env = {"BITEXACT_HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return subprocess.run(
        [str(Path(sys.executable).with_name("bitexact")), *args],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )


def test_policy_check_names_where_the_duplicate_key_is(tmp_path: Path) -> None:
    """`bitexact capture policy check` on a policy with a repeated key: the error says where it is."""
    policy = tmp_path / "policy.json"
    text = '{"version": 1,\n "rules": [],\n "version": 1}'
    policy.write_text(text)
    done = _bitexact("capture", "policy", "check", str(policy), home=tmp_path / "home")
    assert done.returncode != 0
    assert "duplicate key 'version'" in done.stderr
    assert f"at character {text.rindex('version') - 1}" in done.stderr, done.stderr


@pytest.mark.parametrize("document", [b'\xef\xbb\xbf{"version": 1}', '\ufeff{"version": 1}'])
def test_a_leading_byte_order_mark_is_named(document: str | bytes) -> None:
    """A file saved with a UTF-8 BOM was refused as "Expecting value: line 1 column 1 (char 0)".

    The document visibly starts with `{`; the error must say what is wrong there (a BOM), as Python's
    own json.loads does, not point at a value that seems to be present.
    """
    error = _refusal(document)
    assert "byte order mark" in str(error), str(error)
    assert error.position == 0
