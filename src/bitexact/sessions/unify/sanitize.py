"""The pre-upload runtime-mask redaction pass over an artifact tree (T-UAS-060).

``sanitize_tree(root)`` runs in the agent job before any summary rendering
or upload.  It first collects the runtime masks - ``::add-mask::`` values of
agent stdio plus caller-supplied values - *before* changing anything, keeps
them in memory only, and then rewrites every artifact source below ``root``
with those masks and the recognized credential shapes replaced by ``***``:

- ``.jsonl`` files line by line: each line is decoded and its decoded
  strings (object keys, native IDs, nested payloads) are redacted, then the
  line is re-encoded compactly; a line that needs no redaction stays
  byte-identical, and an undecodable line is redacted as text;
- ``.json`` files as one document, the same way;
- every other file as text (``.log``, ``.txt``, ``.md`` ...); bytes that
  are not UTF-8 pass through unchanged (surrogate escapes), so only needle
  matches change.

No mask value is written anywhere: there is no handoff file; the
conclusion job consumes the sanitized sources and keeps its own stdio mask
scan for unsanitized legacy inputs.  A source the pass cannot redact (read,
decode or write failure) is *removed*, so an ``always()`` upload cannot
publish it; the report names removed paths, never values.  Symbolic links
are neither followed nor rewritten (they are removed too: their target is
outside the pass's control).  The stdio log is rewritten last: its
``::add-mask::`` lines are where the masks are read from, so a pass stopped
part-way (Ctrl-C, a kill) can be run again and still applies them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bitexact.canon import loads as strict_loads
from bitexact.errors import StrictJSONError
from bitexact.sessions.unify.decode import loads as fast_loads
from bitexact.sessions.unify.redact import Redactor, masks_from_log
from bitexact.sessions.unify.sources import STDIO_PATH
from bitexact.sessions.unify.write import record_line, write_atomic


@dataclass(frozen=True)
class SanitizeReport:
    """What the pass did (paths relative to the root; no values)."""

    masks: int
    rewritten: tuple[str, ...]
    unchanged: tuple[str, ...]
    removed: tuple[tuple[str, str], ...]
    """``(path, reason)`` of every source removed because it could not be redacted."""


def _redact_text(redactor: Redactor, payload: bytes) -> bytes:
    # surrogateescape round-trips any byte sequence: only needle matches change.
    return redactor.text(payload.decode("utf-8", errors="surrogateescape")).encode("utf-8", errors="surrogateescape")


def _redact_jsonl(redactor: Redactor, payload: bytes) -> bytes:
    out: list[bytes] = []
    for raw in payload.split(b"\n"):
        line, cr = (raw[:-1], b"\r") if raw.endswith(b"\r") else (raw, b"")
        if not line.strip() or not redactor.may_match(line):
            out.append(raw)
            continue
        try:
            value = fast_loads(line)
        except StrictJSONError:
            # Undecodable: the text itself must still lose every needle.
            out.append(_redact_text(redactor, line) + cr)
            continue
        redacted = redactor.value(value)
        out.append(raw if redacted is value else record_line(redacted) + cr)
    return b"\n".join(out)


def _redact_json(redactor: Redactor, payload: bytes) -> bytes:
    if not redactor.may_match(payload):
        return payload
    try:
        value = strict_loads(payload)
    except StrictJSONError:
        return _redact_text(redactor, payload)
    redacted = redactor.value(value)
    return payload if redacted is value else record_line(redacted) + b"\n"


def _redact_file(redactor: Redactor, path: Path) -> bool:
    """Redact one regular file in place; True when it changed."""
    payload = path.read_bytes()
    if path.suffix == ".jsonl":
        new = _redact_jsonl(redactor, payload)
    elif path.suffix == ".json":
        new = _redact_json(redactor, payload)
    else:
        new = _redact_text(redactor, payload)
    if new == payload:
        return False
    write_atomic(path, new)
    return True


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def sanitize_tree(root: Path, masks: Sequence[str] = (), *, stdio: str = STDIO_PATH) -> SanitizeReport:
    """Apply the runtime masks to every source below ``root`` (see module docstring)."""
    root = Path(root)
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: artifact directory not found")
    registered = list(masks)
    stdio_path = root / stdio
    # Masks are collected before the pass rewrites stdio (which removes the
    # values from the ::add-mask:: lines themselves).
    if stdio_path.is_file() and not stdio_path.is_symlink():
        registered += masks_from_log(stdio_path.read_bytes().decode("utf-8", errors="replace"))
    redactor = Redactor(registered)
    rewritten: list[str] = []
    unchanged: list[str] = []
    removed: list[tuple[str, str]] = []

    def sanitize_file(path: Path) -> None:
        relative = redactor.text(path.relative_to(root).as_posix())
        if path.is_symlink() or not path.is_file():
            _remove(path)
            removed.append((relative, "not a regular file"))
            return
        try:
            changed = _redact_file(redactor, path)
        except (OSError, UnicodeDecodeError, ValueError, TypeError) as exc:
            _remove(path)
            removed.append((relative, f"redaction failed ({type(exc).__name__})"))
            return
        (rewritten if changed else unchanged).append(relative)

    stdio_last = False
    for directory, dirnames, filenames in os.walk(root, followlinks=False):
        base = Path(directory)
        for name in sorted(dirnames):
            if (base / name).is_symlink():
                relative = (base / name).relative_to(root).as_posix()
                _remove(base / name)
                removed.append((redactor.text(relative), "symbolic link"))
        dirnames[:] = sorted(d for d in dirnames if not (base / d).is_symlink())
        for name in sorted(filenames):
            if base / name == stdio_path:
                # Rewritten last: it holds the ::add-mask:: values, which its rewrite destroys. A pass stopped
                # before the end (Ctrl-C, a kill) leaves them readable, so running it again applies them to
                # the files not yet done; rewritten first (in name order), they were lost to the second pass.
                stdio_last = True
                continue
            sanitize_file(base / name)
    if stdio_last:
        sanitize_file(stdio_path)
    return SanitizeReport(len(redactor.masks), tuple(rewritten), tuple(unchanged), tuple(removed))


__all__ = ["SanitizeReport", "sanitize_tree"]
