"""A field its producer withheld as too large while it streamed past, never holding it whole (mem18).

An HTTP response body streamed through a wrapped client can be far larger
than ``BITEXACT_MAX_BODY_BYTES``, past which the policy withholds it unread
anyway. The exchange stops holding such a body once it is certain to be
withheld, and hands the write path what the declaration needs instead: the
SHA-256 of the canonical JSON ``{path: value}`` the withheld digest is taken
over, and its length, both computed as the body passed. The entry stores
``"[withheld]"`` at the path, as it would have.

It travels with the entry's custody hints (so a journal and ``bitexact
repair`` carry it too), as ``{path: {"too_large": {"sha256": HEX, "bytes": N}}}``
(``"sha256": null`` for a value with no canonical form, whose digest is dropped as the walk drops it):
a form :func:`parse_custody` refuses, so no agent's custody can carry it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from bitexact.capture.block import WITHHELD_PLACEHOLDER

TOO_LARGE_HINT: Final[str] = "too_large"
"""The key of a streamed-too-large marker in a custody hint's place."""

STREAMED_KINDS: Final[frozenset[str]] = frozenset({"http_call"})
"""The kinds whose entries may carry one: only an exchange's body is withheld as it streams."""


@dataclass(frozen=True)
class Streamed:
    """A field withheld as too large before the write path saw it: where, and the digest of what it was."""

    path: str
    key: str
    subkey: str
    sha256: bytes | None  # None: the value had no canonical form
    size: int


def streamed_hint(sha256: bytes | None, size: int) -> dict[str, Any]:
    """The hint value an exchange gives for a field it withheld as it streamed."""
    return {TOO_LARGE_HINT: {"sha256": None if sha256 is None else sha256.hex(), "bytes": size}}


def split_streamed(kind: str, data: dict[str, Any],
                   hints: dict[str, Any] | None) -> tuple[tuple[Streamed, ...], dict[str, Any] | None]:
    """The streamed-too-large markers of ``hints``, and the hints without them.

    A marker counts only on a kind that carries one, at ``KEY.SUBKEY`` whose
    value in ``data`` is the placeholder; anything else is left in the hints,
    where :func:`parse_custody` refuses it as a hint that is not one.
    """
    if not hints or kind not in STREAMED_KINDS:
        return (), hints
    found: list[Streamed] = []
    rest: dict[str, Any] = {}
    for path, value in hints.items():
        marker = _marker(path, value, data)
        if marker is None:
            rest[path] = value
        else:
            found.append(marker)
    return tuple(found), (rest or None) if found else hints


def _marker(path: Any, value: Any, data: dict[str, Any]) -> Streamed | None:
    if not (isinstance(path, str) and isinstance(value, dict) and set(value) == {TOO_LARGE_HINT}):
        return None
    body = value[TOO_LARGE_HINT]
    if not isinstance(body, dict) or set(body) != {"sha256", "bytes"}:
        return None
    digest, size = body["sha256"], body["bytes"]
    if not (isinstance(size, int) and not isinstance(size, bool) and size >= 0):
        return None
    raw: bytes | None = None
    if digest is not None:
        if not (isinstance(digest, str) and len(digest) == 64):
            return None
        try:
            raw = bytes.fromhex(digest)
        except ValueError:
            return None
    key, dot, subkey = path.partition(".")
    if not dot or "~" in path or "." in subkey:
        return None
    owner = data.get(key)
    if not isinstance(owner, dict) or owner.get(subkey) != WITHHELD_PLACEHOLDER:
        return None
    return Streamed(path, key, subkey, raw, size)
