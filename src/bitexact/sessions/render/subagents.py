"""Audit and logs rows of sub-agents, keyed by agent definition (T-UAS-073, 7.2).

``run_rows(artifact_dir)`` picks one run's evidence (``usage/aw_session.jsonl``
first; ``agent-session.jsonl`` only for older runs without it; never
``agent-stdio.log``) and ``audit_rows(records)`` reads one run's unified session (``aw_session.jsonl``
records, or a canonical agent trace) and returns one ``AgentRow`` per agent
definition - the ``agent_usage`` / ``subagent_costs`` rows of ``gh aw
audit``.  ``logs_rows(runs)`` combines the rows of several runs by
definition and effort (``gh aw logs``).

Evidence, per instance (matched by the instance ``agentId``):

- lifecycle: ``subagent.started`` / ``subagent.configured`` /
  ``subagent.completed`` / ``subagent.failed`` give the definition
  (``agentName``), display names (``agentDisplayName``; never from
  ``subagent.selected``), reasoning effort, model and the outcome;
- requests: each ``subagent.request`` is one request with its served model
  and token counts (Pi, 7.5);
- per-agent metrics: ``session.result.data.agentMetrics`` is the authoritative
  snapshot (7.2) - for an instance it lists, it *replaces* the counts of the
  instance's requests instead of adding to them; the latest snapshot wins;
- proxy requests: ``firewall.token_usage`` observations supply per-agent
  proxy credits (``proxy_aic``): each ``subagent.request``, in observation
  order, claims the first unclaimed proxy request with the same bare served
  model and input/output token counts.  Classifier traffic (``purpose:
  routing_classification``) is never reconciled.  A correlated proxy
  request confirms the model its sub-agent request reported; uncorrelated
  proxy traffic is attributed to no instance.

Attribution is scoped to the final retry session: in a unified file each
agent source path (``provenance.path`` of ``agent`` records) is one session,
the final one being the session whose first record comes last in the merged
order; records of earlier sessions never contribute, even when timestamps
interleave them.

Served models come only from that runner- and proxy-written evidence - the
agent-writable ``awf-routing-outcome.json`` (``model.routing_outcome``) is
never read.  Provider prefixes are removed (``anthropic/claude-x`` ->
``claude-x``), alias names are not listed, and dated IDs stay as served.

Choices where the specification is silent (documented in
docs/sessions-readers.md): ``agentMetrics`` may be an object keyed by
instance ID or a list of objects carrying ``agentId``; its counters are read
from ``requests`` (or ``modelRequests``), ``inputTokens``, ``outputTokens``
(snake_case accepted), credits from ``nanoAiu``, and per-model counts from a
``models`` object.  An entry keyed ``main`` (or ``agentType: "main"``) is the
main agent's row.  An *alias* is a model name that is one lowercase word
without digits, ``-``, ``.`` or ``/`` (``small``, ``fast``, ``auto``), which no
concrete model ID is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from bitexact.canon import loads
from bitexact.errors import StrictJSONError
from bitexact.sessions.unified_model import supported_header
from bitexact.sessions.unify.files import CollectionIOError, SymlinkRefusedError, probe, read_file

MIXED = "mixed"
"""The effort of a row whose instances disagree."""

_LIFECYCLE = frozenset({"subagent.started", "subagent.configured", "subagent.completed", "subagent.failed"})
_DISPLAY_SOURCES = frozenset({"subagent.started", "subagent.completed", "subagent.failed"})
_ALIAS = re.compile(r"[a-z]+\Z")


class SubagentEvidenceError(ValueError):
    """A record the sub-agent reader cannot use (names the field)."""


def served_model(value: Any) -> str | None:
    """The bare served model ID of ``value``, or ``None`` for non-strings and aliases."""
    if not isinstance(value, str) or not value.strip():
        return None
    bare = value.rsplit("/", 1)[-1]
    if not bare or _ALIAS.match(bare):
        return None
    return bare


@dataclass(frozen=True)
class ModelRequests:
    """One ``subagent_model_requests`` row: requests and tokens served by one model."""

    model: str
    requests: int = 0
    input_tokens: int | None = None
    output_tokens: int | None = None


@dataclass(frozen=True)
class AgentRow:
    """One ``agent_usage`` / ``subagent_costs`` row (one agent definition)."""

    name: str
    agent_type: str
    display_names: tuple[str, ...] = ()
    instances: int = 0
    completed: int = 0
    failed: int = 0
    requests: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    credits_nano_aiu: int | None = None
    proxy_aic: float | None = None
    """AWF proxy credits correlated to this definition's sub-agent requests (absent: none correlated)."""
    effort: str | None = None
    models: tuple[str, ...] = ()
    model_requests: tuple[ModelRequests, ...] = ()
    runs: int = 1


@dataclass
class _Instance:
    agent_id: str
    agent_type: str = "subagent"
    agent_name: str | None = None
    display_names: set[str] = field(default_factory=set)
    effort: str | None = None
    outcome: str | None = None
    models: set[str] = field(default_factory=set)
    per_model: dict[str, list[int | None]] = field(default_factory=dict)
    requests: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    credits: int | None = None
    proxy_aic: float | None = None
    snapshot: bool = False


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _first(data: Mapping[str, Any], *names: str) -> Any:
    for name in names:
        if name in data:
            return data[name]
    return None


def _add(total: int | None, value: int | None) -> int | None:
    if value is None:
        return total
    return value if total is None else total + value


def _instance_id(data: Mapping[str, Any]) -> str | None:
    value = _first(data, "agentId", "agent_id")
    if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value):
        return str(value)
    return None


def _event_stream(records: Sequence[Any]) -> Iterable[tuple[str, Mapping[str, Any], Any]]:
    """``(type, data, agent source path or None)`` of each event record."""
    for index, record in enumerate(records):
        if not isinstance(record, Mapping):
            raise SubagentEvidenceError(f"record {index}: not a JSON object")
        kind, data = record.get("type"), record.get("data")
        if not isinstance(kind, str):
            raise SubagentEvidenceError(f"record {index}: field 'type' is not a string")
        provenance = record.get("provenance")
        path = None
        if isinstance(provenance, Mapping) and provenance.get("component") == "agent":
            path = provenance.get("path")
        if isinstance(data, Mapping):
            yield kind, data, path


def _final_session(records: Sequence[Any]) -> Any:
    """The agent source path of the final retry session, or ``None`` (one session).

    Each agent source path of a unified file is one session; the final retry
    is the one whose first record comes last in the merged (timestamp) order.
    """
    first_seen: dict[Any, int] = {}
    for index, (_kind, _data, path) in enumerate(_event_stream(records)):
        if path is not None and path not in first_seen:
            first_seen[path] = index
    if len(first_seen) < 2:
        return None
    return max(first_seen, key=first_seen.__getitem__)


def _lifecycle(instance: _Instance, kind: str, data: Mapping[str, Any]) -> None:
    name = _first(data, "agentName", "agent_name")
    if isinstance(name, str) and name:
        instance.agent_name = name
    if kind in _DISPLAY_SOURCES:
        display = _first(data, "agentDisplayName", "agent_display_name")
        if isinstance(display, str) and display:
            instance.display_names.add(display)
    effort = _first(data, "reasoningEffort", "reasoning_effort", "effort")
    if isinstance(effort, str) and effort:
        instance.effort = effort
    model = served_model(data.get("model"))
    if model is not None:
        instance.models.add(model)
    if kind == "subagent.completed":
        instance.outcome = "completed"
    elif kind == "subagent.failed":
        instance.outcome = "failed"


def _request(instance: _Instance, data: Mapping[str, Any]) -> None:
    tokens_in, tokens_out = _tokens(data)
    instance.requests = _add(instance.requests, 1)
    instance.input_tokens = _add(instance.input_tokens, tokens_in)
    instance.output_tokens = _add(instance.output_tokens, tokens_out)
    model = served_model(data.get("model"))
    if model is not None:
        instance.models.add(model)
        row = instance.per_model.setdefault(model, [0, None, None])
        row[0] = (row[0] or 0) + 1
        row[1], row[2] = _add(row[1], tokens_in), _add(row[2], tokens_out)


def _metric_entries(metrics: Any) -> list[tuple[str, Mapping[str, Any]]]:
    if isinstance(metrics, Mapping):
        return [(str(k), v) for k, v in metrics.items() if isinstance(v, Mapping)]
    if isinstance(metrics, list):
        out: list[tuple[str, Mapping[str, Any]]] = []
        for entry in metrics:
            agent_id = _instance_id(entry) if isinstance(entry, Mapping) else None
            if agent_id is not None:
                out.append((agent_id, entry))
        return out
    return []


def _snapshot(instance: _Instance, entry: Mapping[str, Any]) -> None:
    """An authoritative per-agent snapshot replaces the instance's counters."""
    instance.snapshot = True
    instance.requests = _count(_first(entry, "requests", "modelRequests", "model_requests"))
    instance.input_tokens = _count(_first(entry, "inputTokens", "input_tokens"))
    instance.output_tokens = _count(_first(entry, "outputTokens", "output_tokens"))
    instance.credits = _count(_first(entry, "nanoAiu", "nano_aiu"))
    name = _first(entry, "agentName", "agent_name")
    if isinstance(name, str) and name:
        instance.agent_name = name
    display = _first(entry, "agentDisplayName", "agent_display_name")
    if isinstance(display, str) and display:
        instance.display_names.add(display)
    models = entry.get("models")
    if isinstance(models, Mapping):
        instance.per_model = {}
        for raw_model, counts in models.items():
            model = served_model(raw_model)
            if model is None or not isinstance(counts, Mapping):
                continue
            instance.models.add(model)
            instance.per_model[model] = [
                _count(_first(counts, "requests", "modelRequests")) or 0,
                _count(_first(counts, "inputTokens", "input_tokens")),
                _count(_first(counts, "outputTokens", "output_tokens")),
            ]


def _tokens(data: Mapping[str, Any]) -> tuple[int | None, int | None]:
    nested = data.get("usage")
    usage: Mapping[str, Any] = nested if isinstance(nested, Mapping) else data
    return (_count(_first(usage, "input_tokens", "inputTokens")),
            _count(_first(usage, "output_tokens", "outputTokens")))


def _correlate_proxy(requests: list[tuple[_Instance, Mapping[str, Any]]],
                     proxy: list[Mapping[str, Any]]) -> None:
    """Add proxy credits to instances: each sub-agent request claims the first
    unclaimed proxy request with the same served model and token counts (7.2)."""
    claimed: set[int] = set()
    for instance, request in requests:
        model = served_model(request.get("model"))
        tokens = _tokens(request)
        if model is None or None in tokens:
            continue
        for position, record in enumerate(proxy):
            if position in claimed or served_model(record.get("model")) != model or _tokens(record) != tokens:
                continue
            claimed.add(position)
            aic = record.get("aic")
            if isinstance(aic, (int, float)) and not isinstance(aic, bool) and aic >= 0:
                instance.proxy_aic = aic if instance.proxy_aic is None else instance.proxy_aic + aic
            break


def _instances(records: Sequence[Any]) -> dict[str, _Instance]:
    final = _final_session(records)
    instances: dict[str, _Instance] = {}
    proxy_requests: list[Mapping[str, Any]] = []
    requests: list[tuple[_Instance, Mapping[str, Any]]] = []
    metrics: Any = None
    for kind, data, path in _event_stream(records):
        if final is not None and path is not None and path != final:
            continue  # earlier retry sessions never contribute (7.2)
        if kind in _LIFECYCLE or kind == "subagent.request":
            agent_id = _instance_id(data)
            if agent_id is None:
                continue
            instance = instances.setdefault(agent_id, _Instance(agent_id))
            if kind == "subagent.request":
                _request(instance, data)
                requests.append((instance, data))
            else:
                _lifecycle(instance, kind, data)
        elif kind == "session.result" and "agentMetrics" in data:
            metrics = data["agentMetrics"]  # a later snapshot replaces an earlier one
        elif kind == "firewall.token_usage" and data.get("purpose") != "routing_classification":
            # Classifier traffic is identified by purpose and never reconciled per agent.
            proxy_requests.append(data)
    _correlate_proxy(requests, proxy_requests)
    for agent_id, entry in _metric_entries(metrics):
        instance = instances.setdefault(agent_id, _Instance(agent_id))
        if agent_id == "main" or _first(entry, "agentType", "agent_type") == "main":
            instance.agent_type = "main"
            instance.agent_name = instance.agent_name or "main"
        _snapshot(instance, entry)
    return instances


def _row_key(instance: _Instance) -> tuple[str, str, bool]:
    if instance.agent_name:
        return instance.agent_type, instance.agent_name, True
    names = sorted(instance.display_names)
    if names:
        return instance.agent_type, names[0], False
    # Neither definition nor display name: the instance ID keeps the row visible.
    return instance.agent_type, instance.agent_id, False


def _combine_effort(values: Iterable[str | None]) -> str | None:
    distinct = set(values)
    if len(distinct) == 1:
        return distinct.pop()
    return MIXED


def _merge_models(rows: Iterable[Iterable[ModelRequests]]) -> tuple[ModelRequests, ...]:
    merged: dict[str, ModelRequests] = {}
    for group in rows:
        for item in group:
            seen = merged.get(item.model)
            merged[item.model] = item if seen is None else ModelRequests(
                item.model, seen.requests + item.requests,
                _add(seen.input_tokens, item.input_tokens), _add(seen.output_tokens, item.output_tokens))
    return tuple(merged[m] for m in sorted(merged))


def audit_rows(records: Iterable[Any]) -> tuple[AgentRow, ...]:
    """One run's rows, one per agent definition (see module docstring).

    Models are each instance's own evidence; a row without any has none
    (never another agent's proxy traffic).  Rows are sorted by role (main
    first) and name.  Raises ``SubagentEvidenceError`` for a
    record that is not an event object.
    """
    instances = _instances(list(records))
    groups: dict[tuple[str, str, bool], list[_Instance]] = {}
    for instance in instances.values():
        groups.setdefault(_row_key(instance), []).append(instance)
    rows = []
    for (agent_type, name, by_definition), members in groups.items():
        requests = input_tokens = output_tokens = credits = None
        proxy_aic: float | None = None
        models: set[str] = set()
        for member in members:
            if member.proxy_aic is not None:
                proxy_aic = member.proxy_aic if proxy_aic is None else proxy_aic + member.proxy_aic
            requests = _add(requests, member.requests)
            input_tokens = _add(input_tokens, member.input_tokens)
            output_tokens = _add(output_tokens, member.output_tokens)
            credits = _add(credits, member.credits)
            models |= member.models
        per_model = _merge_models(
            [ModelRequests(m, c[0] or 0, c[1], c[2]) for m, c in sorted(member.per_model.items())]
            for member in members
        )
        display = sorted({d for m in members for d in m.display_names}) if by_definition else []
        rows.append(AgentRow(
            name=name,
            agent_type=agent_type,
            display_names=tuple(display),
            instances=len(members),
            completed=sum(1 for m in members if m.outcome == "completed"),
            failed=sum(1 for m in members if m.outcome == "failed"),
            requests=requests,
            input_tokens=input_tokens,
            output_tokens=output_tokens,
            credits_nano_aiu=credits,
            proxy_aic=proxy_aic,
            effort=_combine_effort(m.effort for m in members),
            models=tuple(sorted(models)),
            model_requests=per_model,
        ))
    rows.sort(key=lambda r: (r.agent_type != "main", r.name))
    return tuple(rows)


def logs_rows(runs: Iterable[Sequence[AgentRow]]) -> tuple[AgentRow, ...]:
    """Rows of several runs combined by definition and effort (``gh aw logs``)."""
    combined: dict[tuple[str, str, str | None], AgentRow] = {}
    for rows in runs:
        for row in rows:
            key = (row.agent_type, row.name, row.effort)
            seen = combined.get(key)
            if seen is None:
                combined[key] = row
                continue
            combined[key] = replace(
                seen,
                display_names=tuple(sorted(set(seen.display_names) | set(row.display_names))),
                instances=seen.instances + row.instances,
                completed=seen.completed + row.completed,
                failed=seen.failed + row.failed,
                requests=_add(seen.requests, row.requests),
                input_tokens=_add(seen.input_tokens, row.input_tokens),
                output_tokens=_add(seen.output_tokens, row.output_tokens),
                credits_nano_aiu=_add(seen.credits_nano_aiu, row.credits_nano_aiu),
                proxy_aic=(row.proxy_aic if seen.proxy_aic is None else
                           seen.proxy_aic if row.proxy_aic is None else seen.proxy_aic + row.proxy_aic),
                models=tuple(sorted(set(seen.models) | set(row.models))),
                model_requests=_merge_models([seen.model_requests, row.model_requests]),
                runs=seen.runs + row.runs,
            )
    return tuple(sorted(combined.values(), key=lambda r: (r.agent_type != "main", r.name, r.effort or "")))


RUN_SOURCES = ("usage/aw_session.jsonl", "aw_session.jsonl", "agent-session.jsonl")
"""Sub-agent evidence of one downloaded run, preferred first; agent-stdio.log is never one."""


@dataclass(frozen=True)
class RunRows:
    """One run's rows, the source they came from, and diagnostics about skipped sources."""

    rows: tuple[AgentRow, ...]
    source: str | None
    diagnostics: tuple[str, ...]


def _read_source(root: Path, relative: str) -> list[Any] | str:
    try:
        payload = read_file(root, relative)
    except SymlinkRefusedError:
        return f"{relative}: symbolic link not followed"
    except CollectionIOError as exc:
        return f"{relative}: unreadable ({exc})"
    records = []
    for number, line in enumerate(payload.split(b"\n"), start=1):
        if not line.strip():
            continue
        try:
            records.append(loads(line))
        except StrictJSONError:
            return f"{relative}: line {number}: invalid JSON; source skipped"
    if relative.endswith("aw_session.jsonl"):
        head = records[0] if records else None
        if not supported_header(head):
            return f"{relative}: no version-1 session.format header; source skipped"
    return records


def run_rows(artifact_dir: Path) -> RunRows:
    """Rows of one downloaded run: the unified session first, ``agent-session.jsonl`` only without it.

    A malformed preferred source produces a diagnostic and the reader
    continues with the next structured source; symbolic links are not
    followed.  With no usable source the rows are empty (unknown, not zero).
    """
    root = Path(artifact_dir)
    diagnostics: list[str] = []
    for relative in RUN_SOURCES:
        # Every component is checked: a linked usage/ directory is another run's evidence.
        try:
            status = probe(root, relative)
        except CollectionIOError as exc:
            diagnostics.append(f"{relative}: unreadable ({exc})")
            continue
        if status.kind == "symlink":
            diagnostics.append(f"{relative}: symbolic link not followed")
            continue
        if status.kind != "file":
            continue
        records = _read_source(root, relative)
        if isinstance(records, str):
            diagnostics.append(records)
            continue
        try:
            return RunRows(audit_rows(records), relative, tuple(diagnostics))
        except SubagentEvidenceError as exc:
            diagnostics.append(f"{relative}: {exc}; source skipped")
    return RunRows((), None, tuple(diagnostics))


__all__ = ["MIXED", "RUN_SOURCES", "AgentRow", "ModelRequests", "RunRows", "SubagentEvidenceError", "audit_rows",
           "logs_rows", "run_rows", "served_model"]
