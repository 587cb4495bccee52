"""Committed paths: exactly two levels, ``~0``/``~1`` escaped (bundle spec §4.1)."""

from __future__ import annotations

from typing import Any

from bitexact.canon.encode import key_error


def escape(key: str) -> str:
    """Escape one key for use in a path: ``~`` first, then ``.``."""
    return key.replace("~", "~0").replace(".", "~1")


def unescape(part: str) -> str:
    """Undo :func:`escape`: ``~1`` first, then ``~0``."""
    return part.replace("~1", ".").replace("~0", "~")


def _key(key: Any) -> str:
    """``escape(key)``; a key that is not text is refused as canonicalization refuses it deeper down (§1.2)."""
    if not isinstance(key, str):
        raise key_error(key)
    return escape(key)


def committed_paths(data: dict[str, Any]) -> list[tuple[str, Any]]:
    """``(path, value)`` for every committed path of ``data``, in document order."""
    out: list[tuple[str, Any]] = []
    for key, value in data.items():
        # A plain key with nothing to escape (nearly every key) is its own path: no call per key.
        top = key if type(key) is str and "~" not in key and "." not in key else _key(key)
        if isinstance(value, dict) and value:
            for sub, item in value.items():
                plain = type(sub) is str and "~" not in sub and "." not in sub
                out.append((f"{top}.{sub if plain else _key(sub)}", item))
        else:
            out.append((top, value))
    return out


def split_path(path: str) -> tuple[str, str | None]:
    """Split a path at its first ``.`` and unescape both parts."""
    top, dot, sub = path.partition(".")
    return unescape(top), (unescape(sub) if dot else None)


def resolve(data: dict[str, Any], path: str) -> tuple[bool, Any]:
    """``(True, value)`` when ``path`` names a value present in ``data``."""
    top, sub = split_path(path)
    if top not in data:
        return False, None
    if sub is None:
        return True, data[top]
    inner = data[top]
    if isinstance(inner, dict) and sub in inner:
        return True, inner[sub]
    return False, None


def parse_field(token: str) -> tuple[int, str]:
    """Parse a ``STEP:PATH`` field reference as the CLI and claims spell it."""
    step_text, colon, path = token.partition(":")
    # The path may be empty: the key "" is a committed path like any other (spelled "", so "3:").
    if not colon:
        raise ValueError(f"{token!r} is not STEP:PATH (for example 3:result.policy)")
    if not step_text.isascii() or not step_text.isdigit() or (len(step_text) > 1 and step_text[0] == "0"):
        raise ValueError(f"{token!r}: the step must be a plain decimal index like 3")
    return int(step_text), path
