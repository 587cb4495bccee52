"""One-line summaries of entries for `bitexact show`."""

from __future__ import annotations

import re
from typing import Any

_WIDTH = 72


_CONTROLS = re.compile("[\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""Control characters and bidirectional overrides: recorded data (a page an agent read) must not clear the
screen, recolour the table or reorder what a reviewer reads. Shown as escapes instead."""


def _clip(text: str) -> str:
    text = " ".join(str(text).split())
    text = _CONTROLS.sub(lambda found: found.group().encode("unicode_escape").decode("ascii"), text)
    return text if len(text) <= _WIDTH else text[: _WIDTH - 1] + "…"


def summarize(entry: dict[str, Any]) -> str:
    """What a person scanning a run wants to see of one entry."""
    data = entry.get("data", {})
    kind = entry.get("kind")
    if kind == "tool_call":
        status = data.get("status") or ("error" if data.get("error") else "ok")
        return _clip(f"{data.get('tool', '?')}() → {status}")
    if kind == "http_call":
        request, response = data.get("request", {}), data.get("response", {})
        if not isinstance(request, dict) or not isinstance(response, dict):
            return "http exchange"
        return _clip(f"{request.get('method', '?')} {request.get('path', '')} → {response.get('status', 'error')}")
    if kind == "context":
        source = data.get("source")
        if isinstance(source, dict):  # an imported session event names its file, not a string
            source = source.get("file") or source.get("name") or source.get("engine")
        return _clip(f"{data.get('name') or data.get('type', '?')} ({source or 'no source'})")
    if kind == "identity":
        return _clip(", ".join(f"{k}={v}" for k, v in data.items() if isinstance(v, (str, int))))
    if kind == "human_decision":
        return _clip(f"{data.get('actor', '?')}: {data.get('decision', '?')} step {data.get('binds_step', '-')}")
    if kind == "marker":
        return _clip(str(data.get("note", "")))
    if kind == "run_meta":
        return _clip(f"{data.get('name') or 'run'} · python {data.get('python', '?')} · policy {data.get('capture_policy', '?')}")
    if kind == "run_end":
        return f"sealed at {data.get('steps')} steps"
    if kind == "redaction":
        return _clip(f"{len(data.get('fields', []))} field(s) by {data.get('by', '?')}: {data.get('reason', '')}")
    if kind == "repair":
        return _clip(f"{data.get('by', '?')}: {data.get('note', '')}")
    if kind == "model":
        return _clip(str(data.get("model") or data.get("type") or "model call"))
    if kind == "nondet":
        return _clip(f"{data.get('source')} = {data.get('value')}")
    return _clip(", ".join(sorted(data)))
