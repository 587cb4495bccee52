"""Collection: select sources, project, redact, interleave and account (UAS 3.5, 4.7, 4.8).

``collect`` reads the downloaded runtime root and returns the complete,
ordered unified records - the ``session.format`` header first, the
interleaved source observations, the collector's derived records, explicit
warnings, and the closing ``session.collection`` coverage record.  Nothing
is written here (``write.py`` does that), and no source file is modified.

Source events are serialized as they are projected into each source's
``SpillStore`` (moved to an anonymous temporary file in ``spill_dir`` past a
small threshold), so the collection holds a constant amount per source plus
the source being read; ``Collection.iter_records`` streams the merged order
(``interleave.merge_runs``).  The header is a constant and every record
that depends on totals (estimate, warnings, coverage) comes last, so no
second pass is needed.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from bitexact.sessions import unified_model as um
from bitexact.sessions.unify import downstream, execution, workflow
from bitexact.sessions.unify import observations as obs
from bitexact.sessions.unify.agent import add_agent_events
from bitexact.sessions.unify.baseline import Pricing, baseline_estimate
from bitexact.sessions.unify.builder import CollectionWarning, SourceBuilder
from bitexact.sessions.unify.decode import blank, json_document, json_lines
from bitexact.sessions.unify.files import (
    CollectionIOError,
    SymlinkRefusedError,
    UnifyError,
    list_dir,
    probe,
    read_file,
)
from bitexact.sessions.unify.interleave import merge_runs
from bitexact.sessions.unify.inventory import read_inventory
from bitexact.sessions.unify.otel import read_otlp
from bitexact.sessions.unify.project import MISSING
from bitexact.sessions.unify.redact import Redactor, masks_from_log
from bitexact.sessions.unify.sources import (
    AGENT_ERRORS_CANDIDATES,
    CATALOGUE,
    COPILOT_SESSIONS_DIR,
    EXIT_CODE_CANDIDATES,
    RUNTIME_AW_INFO,
    SESSION_DIR_LIMIT,
    STDIO_PATH,
    Candidate,
    SourceSpec,
)

Reader = Callable[[SourceBuilder, bytes], None]
MAX_PARSER_DIAGNOSTICS = 100
"""Parser diagnostics copied into warnings per agent source; the rest are counted."""


@dataclass(frozen=True)
class Collection:
    """Everything one collection produced, in file order.

    Source events stay serialized in their builders' stores and are merged
    only while ``iter_records`` is consumed (any number of times), so the
    merged file never exists in memory.  ``close()`` (or ``with``) releases
    the stores' temporary files.
    """

    head: list[dict[str, Any]]
    sources: list[SourceBuilder]
    events: int
    """Number of source events (between ``head`` and ``trailer``)."""
    trailer: list[dict[str, Any]]
    coverage: dict[str, Any]
    warnings: list[CollectionWarning]

    def iter_records(self) -> Iterator[dict[str, Any] | bytes]:
        """Records in file order: collector dicts and source events as serialized lines (with LF)."""
        yield from self.head
        yield from merge_runs(self.sources)
        yield from self.trailer

    @property
    def records(self) -> list[dict[str, Any]]:
        """All records decoded as dicts (convenient for small collections and tests)."""
        return [orjson.loads(r) if isinstance(r, bytes) else r for r in self.iter_records()]

    def __len__(self) -> int:
        return len(self.head) + self.events + len(self.trailer)

    def close(self) -> None:
        """Release every source's stored records."""
        for source in self.sources:
            source.close()

    def __enter__(self) -> Collection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class _Context:
    root: Path
    redactor: Redactor
    env: Mapping[str, str]
    pricing: Pricing | None
    stdio: bool
    """Whether agent stdio was present when masks were collected (re-read when needed)."""
    spill_dir: Path | None = None
    aw_info: Mapping[str, Any] | None = None
    aw_info_builder: SourceBuilder | None = None
    run: downstream.RunIdentity = downstream.RunIdentity(None, None)
    agent_events: list[dict[str, Any]] = field(default_factory=list)
    agent_path: str | None = None
    snapshots: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[CollectionWarning] = field(default_factory=list)

    def builder(self, spec: SourceSpec, candidate: Candidate, path: str | None = None) -> SourceBuilder:
        return SourceBuilder(spec.name, spec.component, candidate.phase, path or candidate.path,
                             spec.sequential, redactor=self.redactor, spill_dir=self.spill_dir)

    def derived(self, source: str, component: str, phase: str, path: str) -> SourceBuilder:
        return SourceBuilder(source, component, phase, path, redactor=self.redactor, spill_dir=self.spill_dir)

    def read_stdio(self) -> bytes | None:
        """Agent stdio, read again where it is used rather than held for the whole collection."""
        return _read_optional(self.root, STDIO_PATH) if self.stdio else None

    def warn(self, spec: SourceSpec, code: str, message: str, path: str) -> None:
        self.warnings.append(CollectionWarning(code, spec.name, spec.component, message, path))


def _read_optional(root: Path, relative: str, refused: list[CollectionWarning] | None = None,
                   source: str = "", component: str = "") -> bytes | None:
    """An optional file's bytes, or None; a symbolic link is never followed, and with ``refused`` given
    it is reported there (a ``symlink_refused`` warning of ``source``) rather than read as absent."""
    status = probe(root, relative)
    if status.kind == "symlink" and refused is not None:
        refused.append(CollectionWarning("symlink_refused", source, component, "symbolic link not followed",
                                         relative))
    if status.kind != "file":
        return None
    try:
        return read_file(root, relative)
    except SymlinkRefusedError:
        return None


def _text(payload: bytes, builder: SourceBuilder) -> str:
    try:
        return payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        builder.warn("invalid_utf8", f"invalid UTF-8 at byte {exc.start}; undecodable bytes replaced")
        return payload.decode("utf-8", errors="replace")


# ----------------------------------------------------------------- agent stream


def _parse_log(builder: SourceBuilder, text: str, engine: str | None) -> list[dict[str, Any]] | None:
    try:
        from bitexact.sessions import parse
    except ImportError:
        builder.warn("parser_unavailable", "the engine parsers are not installed; log not parsed")
        return None
    try:
        result = parse(text, engine)
    except Exception as exc:  # a log the parsers cannot read must not stop collection
        builder.warn("unrecognized_format", f"parser refused the log ({type(exc).__name__})")
        return None
    diagnostics = list(getattr(result, "diagnostics", []) or [])
    for note in diagnostics[:MAX_PARSER_DIAGNOSTICS]:
        builder.warn("parser_diagnostic", str(note))
    if len(diagnostics) > MAX_PARSER_DIAGNOSTICS:
        extra = len(diagnostics) - MAX_PARSER_DIAGNOSTICS
        builder.warn("parser_diagnostic", f"{extra} further parser diagnostics not listed")
    return list(result.events)


def _canonical_stream(builder: SourceBuilder, payload: bytes) -> Iterator[dict[str, Any]]:
    # A generator: each record is projected before the next is decoded.
    for _ordinal, line, record in json_lines(builder, payload):
        if isinstance(record.get("type"), str) and isinstance(record.get("data"), dict):
            yield record
        else:
            builder.warn("invalid_event", f"line {line}: not a canonical event; skipped", line)


def _engine_hint(ctx: _Context) -> str | None:
    engine = (ctx.aw_info or {}).get("engine_id")
    try:
        from bitexact.sessions import ENGINES
    except ImportError:
        return None
    return engine if isinstance(engine, str) and engine in ENGINES else None


def _use_agent(ctx: _Context, builder: SourceBuilder, events: Iterable[dict[str, Any]], *,
               redacted: bool = False) -> None:
    if not redacted:
        events = (ctx.redactor.checked(e) for e in events)
    ctx.snapshots.extend(add_agent_events(builder, events, errors=ctx.agent_events))
    ctx.agent_path = ctx.agent_path or builder.path


def _read_agent(ctx: _Context, spec: SourceSpec) -> list[SourceBuilder]:
    for candidate in spec.candidates:
        if candidate.path == COPILOT_SESSIONS_DIR:
            sessions = _read_copilot_sessions(ctx, spec, candidate)
            if sessions:
                return sessions
            continue
        status = probe(ctx.root, candidate.path)
        if status.kind == "absent":
            continue
        if status.kind != "file":
            ctx.warn(spec, "symlink_refused" if status.kind == "symlink" else "not_regular_file",
                     "not a regular file; not followed", candidate.path)
            continue
        payload = read_file(ctx.root, candidate.path)
        builder = ctx.builder(spec, candidate)
        if candidate.path == "agent-session.jsonl":
            # The persisted canonical stream is authoritative even when empty.
            builder.empty = blank(payload)
            _use_agent(ctx, builder, _canonical_stream(builder, payload), redacted=True)
            return [builder]
        engine = "pi" if candidate.path == "pi-streaming.jsonl" else _engine_hint(ctx)
        events = _parse_log(builder, _text(payload, builder), engine) if not blank(payload) else []
        if not events:
            builder.warn("no_structured_events", "no structured agent events recovered; trying the next source")
            ctx.warnings.extend(builder.warnings)
            continue
        _use_agent(ctx, builder, events)
        return [builder]
    return []


def _read_copilot_sessions(ctx: _Context, spec: SourceSpec, candidate: Candidate) -> list[SourceBuilder]:
    names, truncated, refused = list_dir(ctx.root, candidate.path, limit=SESSION_DIR_LIMIT)
    for name in refused:  # "" is the directory itself
        ctx.warn(spec, "symlink_refused", "session directory is a symbolic link; not followed",
                 f"{candidate.path}/{ctx.redactor.text(name)}" if name else candidate.path)
    if truncated:
        ctx.warn(spec, "traversal_limit",
                 f"more than {SESSION_DIR_LIMIT} session directories; the rest were not read", candidate.path)
    builders = []
    for name in names:
        path = f"{candidate.path}/{name}/events.jsonl"
        status = probe(ctx.root, path)
        if status.kind != "file":
            if status.kind == "symlink":
                ctx.warn(spec, "symlink_refused", "symbolic link not followed", ctx.redactor.text(path))
            continue
        builder = ctx.builder(spec, candidate, ctx.redactor.text(path))
        payload = read_file(ctx.root, path)
        events = _parse_log(builder, _text(payload, builder), "copilot") if not blank(payload) else []
        if not events:
            builder.warn("no_structured_events", "no structured events recovered from the native session")
            ctx.warnings.extend(builder.warnings)
            continue
        _use_agent(ctx, builder, events)
        builders.append(builder)
    return builders


# ----------------------------------------------------------------- workflow metadata


def _read_aw_info(ctx: _Context) -> Reader:
    def read(builder: SourceBuilder, payload: bytes) -> None:
        document = json_document(builder, payload)
        if not isinstance(document, dict):
            if document is not MISSING:
                builder.warn("invalid_record", "aw_info.json is not a JSON object")
            builder.usable = False
            return
        ctx.aw_info = document
        ctx.aw_info_builder = builder
        data, refused = workflow.workflow_info(document)
        builder.refused.update(refused)
        builder.add("workflow.info", data, index=0)

    return read


def _model_config(ctx: _Context) -> SourceBuilder | None:
    """One ``model.config`` per run: ``runtime/aw_info.json`` first, else the selected copy.

    Returns a builder only when the runtime copy carries the event (or its
    warnings); an event added to the selected ``aw_info`` source stays there.
    """
    spec = SourceSpec("model.config", "workflow", (RUNTIME_AW_INFO,), "")
    runtime: SourceBuilder | None = None
    target: SourceBuilder | None = None
    config: Any = MISSING
    raw = _read_optional(ctx.root, RUNTIME_AW_INFO.path, ctx.warnings, spec.name, spec.component)
    if raw is not None and not blank(raw):
        runtime = ctx.builder(spec, RUNTIME_AW_INFO)
        document = json_document(runtime, raw)
        if isinstance(document, dict) and "model_config" in document:
            config, target = document["model_config"], runtime
    if config is MISSING and ctx.aw_info is not None and "model_config" in ctx.aw_info:
        config, target = ctx.aw_info["model_config"], ctx.aw_info_builder
    if runtime is not None and target is not runtime:
        ctx.warnings.extend(runtime.warnings)
    if target is None:
        return None
    data = workflow.model_config(config)
    if data is None:
        target.warn("invalid_model_config", "aw_info model_config violates the contract; no event")
        if target is not runtime:
            ctx.warnings.append(target.warnings[-1])
    else:
        target.add("model.config", data, index=target.count)
    return target if target is runtime else None


def _run_identity(ctx: _Context) -> downstream.RunIdentity:
    # aw_info.json first; the supplied collector environment only when the
    # recorded run identity is absent (an explicit env never reads os.environ).
    run_id, attempt = workflow.run_identity(ctx.aw_info)
    if run_id is None:
        run_id = ctx.env.get("GITHUB_RUN_ID") or None
        attempt = ctx.env.get("GITHUB_RUN_ATTEMPT") or None
    return downstream.RunIdentity(run_id, attempt)


# ----------------------------------------------------------------- readers


def _readers(ctx: _Context) -> dict[str, Reader]:
    return {
        "prompt.system": downstream.read_prompt("prompt.system"),
        "prompt.user": downstream.read_prompt("prompt.user"),
        "aw_info": _read_aw_info(ctx),
        "routing_outcome": workflow.read_routing_outcome,
        "endpoint_mismatch": workflow.read_endpoint_mismatch,
        "model_resolution": workflow.read_model_resolution,
        "inventory": read_inventory,
        "skills": downstream.read_skill_inventory,
        "daily_aic": obs.read_document("guardrail.daily_aic", obs.DAILY_AIC, require="status"),
        "admission": obs.read_document("guardrail.admission", obs.ADMISSION, require="status"),
        "mcp_configuration": obs.read_mcp_configuration,
        "mcp_log": obs.read_mcp_log,
        "http_access": obs.read_http_access,
        "token_usage": obs.read_token_usage("firewall.token_usage", obs.TRACKER_CLOCK),
        "firewall_events": obs.read_firewall_events,
        "model_routing": obs.read_model_routing,
        "upstream_errors": obs.read_upstream_errors,
        "rate_limits": obs.read_rate_limits,
        "plugins": obs.read_plugins,
        "otlp": read_otlp,
        "safe_output_requests": obs.read_safe_output_requests,
        "safe_output_results": obs.read_safe_output_results,
        "assignments": downstream.read_assignments,
        "experiment_state": downstream.read_experiment_state,
        "usage_report": obs.read_token_usage("usage.report", obs.ISO_CLOCK),
        "execution_result": obs.read_document("execution.result", obs.EXECUTION),
        "detection_result": obs.read_document("detection.result", obs.DETECTION),
        "grader_manifest": downstream.read_grader_manifest,
        "grader_results": lambda b, p: downstream.read_grader_results(ctx.run)(b, p),
        "eval_results": lambda b, p: downstream.read_eval_results(ctx.run)(b, p),
    }


def _read_spec(ctx: _Context, spec: SourceSpec, reader: Reader) -> SourceBuilder | None:
    for candidate in spec.candidates:
        status = probe(ctx.root, candidate.path)
        if status.kind == "absent":
            continue
        if status.kind != "file":
            ctx.warn(spec, "symlink_refused" if status.kind == "symlink" else "not_regular_file",
                     "not a regular file; not followed", candidate.path)
            continue
        try:
            payload = read_file(ctx.root, candidate.path)
        except SymlinkRefusedError:
            ctx.warn(spec, "symlink_refused", "symbolic link not followed", candidate.path)
            continue
        builder = ctx.builder(spec, candidate)
        builder.empty = blank(payload)
        if not builder.empty:
            reader(builder, payload)
        builder.finish()
        if spec.fallback and not builder.usable:
            ctx.warnings.extend(builder.warnings)
            continue
        return builder
    return None


# ----------------------------------------------------------------- derived records


def _execution(ctx: _Context) -> SourceBuilder | None:
    evidence = execution.ExecutionEvidence()
    spec = SourceSpec("agent.execution", "execution", (), "")
    carrier = ctx.derived(spec.name, "execution", "agent", "")
    for path in EXIT_CODE_CANDIDATES:
        raw = _read_optional(ctx.root, path, ctx.warnings, spec.name, spec.component)
        if raw is not None:
            if not execution.add_exit_file(evidence, raw.decode("utf-8", errors="replace"), path):
                carrier.path = path
                carrier.warn("invalid_exit_code", "exit-code file does not hold an integer 0-255")
            break
    if ctx.agent_path is not None:
        for snapshot in ctx.snapshots:
            execution.add_snapshot(evidence, snapshot.get("data", {}), ctx.agent_path)
    for path in AGENT_ERRORS_CANDIDATES:
        raw = _read_optional(ctx.root, path, ctx.warnings, "agent.errors", "execution")
        if raw is not None:
            errors_builder = ctx.derived("agent.errors", "execution", "agent", path)
            for _ordinal, _line, record in json_lines(errors_builder, raw):
                execution.add_diagnostic(evidence, record, path)
            ctx.warnings.extend(errors_builder.warnings)
            break
    if ctx.agent_path is not None:
        execution.add_canonical(evidence, ctx.agent_events, ctx.agent_path)
    stdio = ctx.read_stdio()
    if stdio is not None:
        execution.add_stdio(evidence, ctx.redactor.text(stdio.decode("utf-8", errors="replace")), STDIO_PATH)
        del stdio
    aggregate = evidence.aggregate()
    ctx.warnings.extend(carrier.warnings)
    if aggregate is None:
        return None
    data, primary = aggregate
    builder = ctx.derived(spec.name, "execution", "agent", primary)
    builder.add("agent.execution", data, index=0)
    return builder


def _job_results(ctx: _Context) -> SourceBuilder | None:
    results = ctx.env.get("GH_AW_JOB_RESULTS")
    if not results:
        return None
    builder = ctx.derived("workflow.job_result", "workflow", "conclusion", um.UNIFIED_PATH)
    # Raw: decoded first, then redacted as a value (a credential written with a JSON escape is found).
    workflow.read_job_results(builder, results, ctx.env.get("GH_AW_JOB_DURATIONS"))
    return builder


def _events_of(builders: Sequence[SourceBuilder], source: str, event_type: str) -> Iterator[dict[str, Any]]:
    # Lazy: payloads are decoded back from the stores only if the estimate reads them.
    return (e["data"] for b in builders if b.source == source for e in b.of_type(event_type))


# ----------------------------------------------------------------- assembly


def _collector(event_type: str, data: dict[str, Any], index: int) -> dict[str, Any]:
    return {
        "type": event_type,
        "data": data,
        "provenance": {"component": "collector", "phase": "conclusion", "path": um.UNIFIED_PATH,
                       "index": index},
    }


def header() -> dict[str, Any]:
    """The leading ``session.format`` record (T-UAS-064)."""
    return _collector("session.format", {"version": um.FORMAT_VERSION}, 0)


def collect(
    root: Path,
    *,
    masks: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    pricing: Pricing | None = None,
    spill_dir: Path | None = None,
) -> Collection:
    """Collect the unified session of the runtime root ``root`` (see module docstring).

    ``masks`` are registered secret values to redact in addition to the
    ``::add-mask::`` values of agent stdio; ``env`` is the collector
    environment (default: the process environment) consulted for
    ``GH_AW_JOB_RESULTS`` and, only when ``aw_info.json`` lacks one, the run
    identity; ``pricing`` reprices baseline requests (T-UAS-081);
    ``spill_dir`` receives the sources' anonymous temporary files (default:
    the system temporary directory).  Close the returned collection (or use
    it in a ``with`` block) to release them; on failure they are released
    here.
    """
    root = Path(root)
    if not root.is_dir():
        raise UnifyError(f"{root}: artifact directory not found")
    refused: list[CollectionWarning] = []
    stdio = _read_optional(root, STDIO_PATH, refused, "agent.stdio", "agent")
    registered = list(masks) + masks_from_log(stdio.decode("utf-8", errors="replace") if stdio else "")
    ctx = _Context(root, Redactor(registered), dict(os.environ if env is None else env), pricing,
                   stdio is not None, spill_dir, warnings=refused)
    del stdio
    selected: list[SourceBuilder] = []
    try:
        return _collect(ctx, selected)
    except BaseException:
        for builder in selected:
            builder.close()
        raise


def _collect(ctx: _Context, selected: list[SourceBuilder]) -> Collection:
    """Read every catalogued source in order, appending the selected builders to ``selected``."""
    readers = _readers(ctx)
    absent: list[dict[str, Any]] = []
    for spec in CATALOGUE:
        if spec.name == "agent":
            builders = _read_agent(ctx, spec)
        else:
            one = _read_spec(ctx, spec, readers[spec.reader])
            builders = [one] if one is not None else []
        if not builders:
            absent.append({"source": spec.name, "component": spec.component,
                           "phase": spec.candidates[0].phase,
                           "candidates": [c.path for c in spec.candidates]})
        for builder in builders:
            builder.finish()
            ctx.warnings.extend(builder.warnings)
            builder.seal()
            selected.append(builder)
        if spec.name == "workflow.info":
            ctx.run = _run_identity(ctx)
            if not builders:
                ctx.warn(spec, "workflow_metadata_absent", "no aw_info.json copy was found",
                         spec.candidates[0].path)
    for derived in (_model_config(ctx), _execution(ctx), _job_results(ctx)):
        if derived is not None:
            derived.finish()
            ctx.warnings.extend(derived.warnings)
            if derived.count:
                selected.append(derived)
    return _assemble(ctx, selected, absent)


def _assemble(ctx: _Context, selected: list[SourceBuilder], absent: list[dict[str, Any]]) -> Collection:
    for builder in selected:
        builder.seal()
    trailer: list[dict[str, Any]] = []
    config = next((e["data"] for b in selected for e in b.of_type("model.config")), None)
    if config is not None:
        estimate = baseline_estimate(
            config,
            _events_of(selected, "firewall.token_usage", "firewall.token_usage"),
            _events_of(selected, "firewall.model_routing", "firewall.model_routing"),
            ctx.aw_info,
            ctx.pricing,
        )
        if estimate is not None:
            trailer.append(_collector("model.baseline_estimate", estimate, 1))
    for warning in ctx.warnings:
        trailer.append(_collector("session.collection_warning", ctx.redactor.value(warning.data()),
                                  len(trailer) + 1))
    components = {b.component for b in selected}
    coverage = {
        "sources": [
            {"source": b.source, "component": b.component, "phase": b.phase, "path": b.path,
             "events": b.count, "untimedEvents": b.untimed,
             "warnings": len(b.warnings), "empty": b.empty}
            for b in selected
        ],
        "absentSources": absent,
        "absentComponents": sorted({s.component for s in CATALOGUE} - components),
        "eventCount": sum(b.count for b in selected),
        "untimedEventCount": sum(b.untimed for b in selected),
        "warningCount": len(ctx.warnings),
    }
    trailer.append(_collector("session.collection", coverage, len(trailer) + 1))
    return Collection([header()], selected, sum(b.count for b in selected), trailer, coverage, list(ctx.warnings))


__all__ = ["Collection", "CollectionIOError", "UnifyError", "collect", "header"]
