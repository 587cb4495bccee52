"""Publication views of a unified file ``aw_session.jsonl`` (UAS 8.5, T-UAS-065, T-UAS-066).

The view shows the file-format version separately from the observations,
per-component record counts, per-source agent statistics and
conversations, and one chronological trace in file order labelled with
component and phase.  Agent initialization, tool pairing and accounting are
scoped by provenance phase and source path after restoring source-local
order (``provenance.index``), so coincident IDs in different sources never
pair and gateway/firewall/accounting observations never join agent usage.
Untimed observations are labelled ``untimed``, never given a clock.  Prompt
records stay omitted unless the diagnostic view is requested.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from bitexact.sessions.render.budget import Document, size
from bitexact.sessions.render.escape import fence_for, neutralize_commands, single_line
from bitexact.sessions.render.markdown import disclosure, escape_inline
from bitexact.sessions.render.privacy import Publisher
from bitexact.sessions.render.summary import Conversation, build_conversations, content_text, tool_name
from bitexact.sessions.render.transcript import (
    information_lines,
    observation_fields,
    scalar,
    transcript_lines,
)
from bitexact.sessions.unified_model import header_version
from bitexact.sessions.unify.agent import explicit_failure


def _provenance(record: Mapping[str, Any]) -> Mapping[str, Any]:
    value = record.get("provenance")
    return value if isinstance(value, Mapping) else {}


def _source(record: Mapping[str, Any]) -> tuple[Any, Any]:
    prov = _provenance(record)
    return (_named(prov.get("phase")), _named(prov.get("path")))


def _named(value: Any) -> Any:
    """A source is named by strings; anything else (a list where a name belongs) is shown as written."""
    return value if value is None or isinstance(value, str) else repr(value)


def agent_conversations(records: Sequence[Mapping[str, Any]]) -> list[Conversation]:
    """Per-source, per-caller agent conversations in source-local order."""
    by_source: dict[tuple[Any, Any], list[Mapping[str, Any]]] = {}
    for record in records:
        if _provenance(record).get("component") == "agent":
            by_source.setdefault(_source(record), []).append(record)
    ordered: list[Mapping[str, Any]] = []
    for group in by_source.values():
        ordered.extend(sorted(group, key=lambda r: _index(r)))

    def label(source: Any, scope: tuple[Any, Any]) -> str:
        phase, path = source
        who = "main conversation"
        if scope != (None, None):
            agent, parent = scope
            who = "nested conversation (" + ", ".join(
                p for p in (f"agent {agent}" if agent is not None else "",
                            f"parent tool {parent}" if parent is not None else "") if p) + ")"
        return f"agent · {phase} · {path} — {who}"

    return build_conversations(ordered, source_of=_source, label_of=label)


def _index(record: Mapping[str, Any]) -> int:
    index = _provenance(record).get("index")
    return index if isinstance(index, int) and not isinstance(index, bool) else 0


def component_counts(records: Sequence[Mapping[str, Any]], pub: Publisher) -> list[str]:
    """``component: count`` lines, header excluded (names redacted, clipped and on one line)."""
    counts = Counter(str(_provenance(r).get("component")) for r in records[1:])
    return [f"{scalar(pub, name)}: {counts[name]}" for name in sorted(counts)]


def _agent_summary(pub: Publisher, kind: str, data: Mapping[str, Any]) -> str:
    if kind in ("assistant.message", "assistant.reasoning"):
        content = content_text(data.get("content"))
        text = content if isinstance(content, str) else scalar(pub, content)
        return scalar(pub, text, 160)
    if kind == "tool.execution_start":
        return f"{scalar(pub, tool_name(data))} toolCallId={scalar(pub, data.get('toolCallId'))}"
    if kind == "tool.execution_complete":
        outcome = "failure" if explicit_failure(data) else ("success" if data.get("success") is True else "unknown")
        return f"{scalar(pub, tool_name(data))} toolCallId={scalar(pub, data.get('toolCallId'))} outcome={outcome}"
    if kind == "session.init":
        return " ".join(f"{k}={scalar(pub, data[k])}" for k in ("sourceEngine", "model", "sessionId") if k in data)
    if kind == "session.result":
        return " ".join(f"{k}={scalar(pub, data[k])}" for k in ("status", "numTurns", "durationMs") if k in data)
    if kind == "assistant.refusal":
        return f"reason={scalar(pub, data.get('reason'))}" + (" partial" if data.get("partial") is True else "")
    return observation_fields(pub, kind, data)


def _fragment_key(record: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """Stream-fragment identity: same source, channel and message ID."""
    kind = record.get("type")
    data = record.get("data")
    if kind not in ("assistant.message", "assistant.reasoning") or not isinstance(data, Mapping):
        return None
    if data.get("messageId") is None or not isinstance(data.get("content"), str):
        return None
    prov = _provenance(record)
    return (prov.get("component"), prov.get("phase"), prov.get("path"), kind, repr(data["messageId"]))


def timeline_lines(records: Sequence[Mapping[str, Any]], pub: Publisher) -> list[str]:
    """One line per record in file order, with ``+Ns`` elapsed or ``untimed``.

    Adjacent fragments of one streamed message display as one entry at the
    first fragment's position and clock (8.4); the records are unchanged.
    """
    lines: list[str] = []
    clock: int | None = None
    previous_fragment: tuple[Any, ...] | None = None
    for record in records[1:]:
        if pub.private(dict(record)):
            continue
        fragment = _fragment_key(record)
        if fragment is not None and fragment == previous_fragment:
            continue
        previous_fragment = fragment
        prov = _provenance(record)
        kind = str(record.get("type"))
        raw_data = record.get("data")
        data = raw_data if isinstance(raw_data, Mapping) else {}
        summary = _agent_summary(pub, kind, data) if prov.get("component") == "agent" else observation_fields(pub, kind, data)
        stamp = prov.get("timestampMs")
        if isinstance(stamp, int) and not isinstance(stamp, bool):
            elapsed = 0 if clock is None else max(0, stamp - clock)
            clock = stamp if clock is None else max(clock, stamp)
            when = f"+{elapsed / 1000:g}s"
        else:
            when = "untimed"
        # Redacted before the budget can clip the line (a cut secret is no longer recognized).
        label = f"[{scalar(pub, str(prov.get('component')))}/{scalar(pub, str(prov.get('phase')))}]"
        lines.append(" ".join(p for p in (label, scalar(pub, kind), summary, when) if p))
    return lines


def _sections(records: Sequence[Mapping[str, Any]], pub: Publisher) -> tuple[list[str], list[tuple[str, list[str]]], list[tuple[str, list[str]]], list[str]]:
    version = header_version(records[0].get("data"))  # checked before rendering: 1.0 is shown as 1
    overview = [f"Unified session — file format version {version} — {len(records)} records",
                "Records by component: " + " · ".join(component_counts(records, pub))]
    conversations = agent_conversations(records)
    talks = [(single_line(pub.redactor.text(c.label)), transcript_lines(c, pub)) for c in conversations]
    stats = [(single_line(pub.redactor.text(c.label)), information_lines(c, pub)) for c in conversations]
    return overview, talks, stats, timeline_lines(records, pub)


def unified_markdown(records: Sequence[Mapping[str, Any]], pub: Publisher, budget: int) -> str:
    """The Actions view: one top-level ``Unified session`` disclosure."""
    overview, talks, stats, timeline = _sections(records, pub)
    conversation_lines = list(overview)
    for label, lines in talks:
        conversation_lines += ["", f"== {label} =="] + lines
    doc = Document(budget)
    doc.total = size("\n".join(conversation_lines + timeline)) + sum(size("\n".join(s)) for _, s in stats)
    if doc.open("<details>\n<summary>Unified session</summary>\n\n", "\n</details>\n"):
        disclosure_body(doc, conversation_lines)
        stats_lines: list[str] = []
        for label, lines in stats:
            stats_lines += [f"== {label} =="] + lines + [""]
        if not doc.truncated:
            disclosure(doc, "Statistics per source", [("", stats_lines or ["No agent sources."])])
        if not doc.truncated:
            disclosure(doc, f"Chronological trace ({len(timeline)} records)", [("", timeline)])
    return pub.final(doc.finish())


def disclosure_body(doc: Document, lines: list[str]) -> None:
    """The fenced transcript directly inside the top-level disclosure (workflow commands neutralized, 8.5)."""
    fence = fence_for(*lines)
    if not doc.open(f"{fence}text\n", f"{fence}\n\n"):
        return
    for line in lines:
        if not doc.write(neutralize_commands(line) + "\n", clip=True):
            return
    doc.close()


def unified_text(records: Sequence[Mapping[str, Any]], pub: Publisher, budget: int) -> str:
    """The console view of a unified file (commands neutralized)."""
    overview, talks, stats, timeline = _sections(records, pub)
    lines = list(overview)
    for label, body in talks:
        lines += [f"== {label} =="] + ["  " + x for x in body]
    lines.append("Statistics per source")
    for label, body in stats:
        lines += [f"  == {label} =="] + ["    " + x for x in body]
    lines.append(f"Chronological trace ({len(timeline)} records)")
    lines += ["  " + x for x in timeline]
    doc = Document(budget)
    doc.total = size("\n".join(lines))
    for line in lines:
        if not doc.write(neutralize_commands(line) + "\n", clip=True):
            break
    return pub.final(doc.finish())


__all__ = ["agent_conversations", "escape_inline", "timeline_lines", "unified_markdown", "unified_text"]
