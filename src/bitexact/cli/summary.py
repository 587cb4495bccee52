"""One-line summaries of entries for `bitexact show`."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from bitexact.cli.output import glyph, plain

SUMMARY_WIDTH = 72
"""The most characters a summary holds (a longer one is clipped, ending in "…")."""
_WIDTH = SUMMARY_WIDTH


_CLOCK = re.compile(r"T(\d{2}:\d{2}:\d{2})(\.\d{1,3})?")


def _unchanged(char: str) -> str:
    return char


def summarize(entry: dict[str, Any], *, printed: bool = True) -> str:
    """What a person scanning a run wants to see of one entry. A value redaction removed shows as
    ``[redacted]``, never as the default an absent value gets (``ok``, ``error``, ``no source``).

    ``printed`` (a table's cell): the summary's own arrows, dots and ellipsis are ASCII where stdout cannot
    carry them (:func:`~bitexact.cli.output.glyph`). A summary in a JSON document (``printed=False``) is the
    same text whatever stream it is written to: JSON writes what the stream cannot carry as escapes.
    """
    return _summary(entry, glyph if printed else _unchanged)


def _summary(entry: dict[str, Any], glyph: Callable[[str], str]) -> str:
    def _clip(text: str) -> str:
        text = plain(" ".join(str(text).split()))
        if len(text) <= _WIDTH:
            return text
        ellipsis = glyph("…")
        return text[: _WIDTH - len(ellipsis)] + ellipsis

    return _summarize(entry, glyph, _clip)


def clock_of(ts: str) -> str:
    """The ``ts`` column of `bitexact show`: an entry's time of day to the millisecond (``10:15:30.123``).

    An ISO time whose microseconds are 0 has no fraction at all (the spec
    allows it), so it is read, not sliced; a ``ts`` of another shape is shown
    as it is, control characters as escapes.
    """
    found = _CLOCK.search(ts)
    return found.group(1) + (found.group(2) or "") if found else plain(ts)


REDACTED = "[redacted]"
"""What a summary shows for a value redaction removed: never a default that would read as the value."""


def _redacted(entry: dict[str, Any], path: str) -> bool:
    """Whether redaction removed the value at ``path`` (a dotted data path), the object holding it, or a
    value inside it: a summary must not fill the gap with a default that reads as a recorded value."""
    return any(gone == path or gone.startswith(path + ".") or path.startswith(gone + ".")
               for gone in entry.get("redacted") or ())


def _shown(entry: dict[str, Any], path: str, value: Any) -> Any:
    """``value``, read at ``path``, or :data:`REDACTED` when redaction removed it."""
    return REDACTED if _redacted(entry, path) else value


def _tool_status(entry: dict[str, Any], data: dict[str, Any]) -> str:
    status = data.get("status") or ("error" if data.get("error") or _redacted(entry, "error") else "ok")
    return str(_shown(entry, "status", status))


def _context_source(entry: dict[str, Any], data: dict[str, Any]) -> str:
    source = data.get("source")
    if isinstance(source, dict):  # an imported session event names its file, not a string
        source = source.get("file") or source.get("name") or source.get("engine")
    return str(_shown(entry, "source", source or "no source"))


def _summarize(entry: dict[str, Any], glyph: Callable[[str], str], _clip: Callable[[str], str]) -> str:
    data = entry.get("data", {})
    kind = entry.get("kind")

    def shown(path: str, value: Any) -> Any:
        return _shown(entry, path, value)

    if kind == "tool_call":
        return _clip(f"{shown('tool', data.get('tool', '?'))}() {glyph('→')} {_tool_status(entry, data)}")
    if kind == "http_call":
        request, response = data.get("request", {}), data.get("response", {})
        if not isinstance(request, dict) or not isinstance(response, dict):
            return "http exchange"
        method = shown("request.method", request.get("method", "?"))
        path = shown("request.path", request.get("path", ""))
        return _clip(f"{method} {path} {glyph('→')} {shown('response.status', response.get('status', 'error'))}")
    if kind == "context":
        name = shown("name", data.get("name")) or shown("type", data.get("type", "?"))
        return _clip(f"{name} ({_context_source(entry, data)})")
    if kind == "identity":
        return _clip(", ".join(f"{k}={v}" for k, v in data.items() if isinstance(v, (str, int))))
    if kind == "human_decision":
        return _clip(f"{shown('actor', data.get('actor', '?'))}: {shown('decision', data.get('decision', '?'))} "
                     f"step {shown('binds_step', data.get('binds_step', '-'))}")
    if kind == "marker":
        return _clip(str(shown("note", data.get("note", ""))))
    if kind == "run_meta":
        return _clip(f"{shown('name', data.get('name')) or 'run'} {glyph('·')} python {shown('python', data.get('python', '?'))}"
                     f" {glyph('·')} policy {shown('capture_policy', data.get('capture_policy', '?'))}")
    if kind == "run_end":
        return f"sealed at {data.get('steps')} steps"
    if kind == "redaction":
        return _clip(f"{len(data.get('fields', []))} field(s) by {data.get('by', '?')}: {data.get('reason', '')}")
    if kind == "repair":
        return _clip(f"{data.get('by', '?')}: {data.get('note', '')}")
    if kind == "model":
        return _clip(str(shown("model", data.get("model")) or shown("type", data.get("type")) or "model call"))
    if kind == "nondet":
        return _clip(f"{shown('source', data.get('source'))} = {shown('value', data.get('value'))}")
    return _clip(", ".join(sorted(data)))
