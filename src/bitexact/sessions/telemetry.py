"""Bootstrap legacy telemetry projection and canonical persistence (UAS 8.2, T-UAS-046..048, T-UAS-060).

``legacy_telemetry(events)`` derives the legacy metric-reader record
``{"type": "result", "num_turns": ..., "usage": {...}}`` from canonical
``session.result`` data with the section 6 alias and snapshot-selection
rules (``bitexact.sessions.usage.select_accounting``): the latest valid
value per metric wins, snapshots are never summed, and an absent or invalid
metric is omitted - never zero.  Only root-scope results count; nested
child conversations keep their own accounting.  With nothing projectable it
returns ``{}``: no metric record is fabricated.

The ``type: "result"`` record exists only at this telemetry boundary; it is
never inserted into the canonical array.  ``enrich_telemetry`` appends it
to a telemetry file best-effort (idempotent, newline-safe, never raising),
and ``persist_agent_session`` writes the redacted canonical
``agent-session.jsonl`` for conclusion to reuse.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bitexact.sessions.render.summary import caller_scope
from bitexact.sessions.unify.redact import Redactor
from bitexact.sessions.unify.write import serialize, write_atomic
from bitexact.sessions.usage import read_token, select_accounting, valid_count, valid_metric

_USAGE_FIELDS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def legacy_telemetry(events: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The legacy telemetry record projected from canonical results, or ``{}``."""
    root_results = [
        e for e in events
        if isinstance(e, Mapping) and e.get("type") == "session.result"
        and isinstance(e.get("data"), Mapping) and caller_scope(e) == (None, None)
    ]
    selected = select_accounting(root_results)
    record: dict[str, Any] = {"type": "result"}
    if valid_count(selected.get("numTurns")):
        record["num_turns"] = int(selected["numTurns"])
    if valid_metric(selected.get("durationMs")):
        record["duration_ms"] = selected["durationMs"]
    if valid_metric(selected.get("totalCostUsd")):
        record["total_cost_usd"] = selected["totalCostUsd"]
    usage = selected.get("usage")
    if isinstance(usage, Mapping):
        projected = {f: read_token(usage, f) for f in _USAGE_FIELDS}
        projected = {f: v for f, v in projected.items() if v is not None}
        if projected:
            record["usage"] = projected
    return record if len(record) > 1 else {}


@dataclass(frozen=True)
class EnrichmentOutcome:
    """What ``enrich_telemetry`` did: ``appended``, ``present``, ``nothing`` or ``failed``."""

    status: str
    detail: str = ""


def _suitable(line: str) -> bool:
    try:
        record = json.loads(line)
    except ValueError:
        return False
    return isinstance(record, dict) and record.get("type") == "result" and (
        "num_turns" in record or "usage" in record)


def enrich_telemetry(path: Path, events: Sequence[Mapping[str, Any]]) -> EnrichmentOutcome:
    """Append the projection to a JSONL telemetry file, best-effort (T-UAS-047).

    Idempotent: a file that already holds a legacy result with metrics is
    left alone.  A missing final newline is supplied first so the record is
    a standalone line.  I/O failures are reported, never raised, and the
    canonical events are never touched.
    """
    record = legacy_telemetry(events)
    if not record:
        return EnrichmentOutcome("nothing", "no projectable metrics")
    path = Path(path)
    try:
        existing = path.read_text(encoding="utf-8") if path.exists() else ""
        if any(_suitable(line) for line in existing.splitlines() if line.strip()):
            return EnrichmentOutcome("present", "a legacy telemetry result is already present")
        prefix = "\n" if existing and not existing.endswith("\n") else ""
        with path.open("a", encoding="utf-8", newline="\n") as handle:
            handle.write(prefix + json.dumps(record, separators=(",", ":")) + "\n")
    except (OSError, UnicodeDecodeError) as exc:
        return EnrichmentOutcome("failed", f"telemetry enrichment skipped: {type(exc).__name__}")
    return EnrichmentOutcome("appended")


def persist_agent_session(events: Sequence[Mapping[str, Any]], path: Path, *, masks: Iterable[str] = ()) -> int:
    """Write the redacted canonical trace as compact ``agent-session.jsonl``; returns bytes written.

    The artifact mask/credential policy is applied to decoded string values
    of redacted *copies* (T-UAS-060); ``events`` are not modified.
    """
    redactor = Redactor(masks)
    data = serialize(redactor.value(dict(e)) for e in events)
    write_atomic(Path(path), data)
    return len(data)
