"""Activation and downstream evidence: prompts, skills, experiments, graders, evals.

Grader and eval results are imported only when attributed to the current
run (T-UAS-059): the run ID and attempt come from runner-owned
``aw_info.json``, else from the supplied collector environment.  Records of
other runs or other attempts are excluded; unattributed records, or a
missing current run ID, produce warnings.  Kept records keep their original
source index.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from bitexact.sessions import unified_model as um
from bitexact.sessions.unify.builder import SourceBuilder
from bitexact.sessions.unify.decode import json_document, json_lines, json_object
from bitexact.sessions.unify.observations import ISO_CLOCK, stamp
from bitexact.sessions.unify.project import MISSING, Projector, first_present


def read_prompt(event_type: str):  # -> reader
    """Reader of one split activation prompt file: exact content, untimed, redacted like every source (T-UAS-060)."""

    def read(builder: SourceBuilder, payload: bytes) -> None:
        try:
            text = payload.decode("utf-8")
        except UnicodeDecodeError as exc:
            builder.warn("invalid_utf8", f"invalid UTF-8 at byte {exc.start}; prompt omitted")
            return
        builder.add(event_type, {"content": builder.redact(text)}, index=0)

    return read


# ----------------------------------------------------------------- skills

SKILL = Projector(
    um.SkillEntry,
    {"source": ("path", "relative_source"), "sha256": ("digest", "content_sha256"),
     "purpose": ("description",)},
)


def read_skill_inventory(builder: SourceBuilder, payload: bytes) -> None:
    """Installed skills (never contents) and advisory exact-name/scope conflicts."""
    document = json_document(builder, payload)
    if document is MISSING:
        return
    raw = document.get("skills") if isinstance(document, dict) else document
    if not isinstance(raw, list):
        builder.warn("invalid_skill_inventory", "expected a skills array; no events")
        return
    skills = []
    for position, entry in enumerate(raw):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            builder.warn("invalid_skill_inventory", f"skill {position}: no name; omitted")
            continue
        skills.append(builder.project(SKILL(entry)))
    skills.sort(key=lambda s: (s["name"], repr(s.get("scope")), repr(s.get("source"))))
    builder.add("skill.inventory", {"skills": skills}, index=0)
    by_name: dict[str, list[dict[str, Any]]] = {}
    for skill in skills:
        by_name.setdefault(skill["name"], []).append(skill)
    index = 1
    for name, group in by_name.items():
        if len(group) < 2:
            continue
        scopes = {repr(s.get("scope")) for s in group}
        entries = [{k: s[k] for k in ("source", "scope") if k in s} for s in group]
        kind = "scope" if len(scopes) > 1 else "exact_name"
        builder.add("skill.conflict", {"name": name, "kind": kind, "entries": entries}, index=index)
        index += 1


# ----------------------------------------------------------------- experiments

EXPERIMENT = Projector(um.ExperimentData)


def _assignments(document: Mapping[str, Any]) -> Any:
    # A wrapper object holds the map under "assignments"; otherwise the file
    # *is* the name -> variant map, even for an experiment named "assignments".
    if isinstance(document.get("assignments"), dict):
        return dict(document["assignments"])
    return {k: v for k, v in document.items() if not isinstance(v, (dict, list))}


def read_assignments(builder: SourceBuilder, payload: bytes) -> None:
    """The current run's complete name -> variant assignment map."""
    document = json_object(builder, payload)
    if document is None:
        return
    wrapped = isinstance(document.get("assignments"), dict)
    data = builder.project(EXPERIMENT(document)) if wrapped else {}
    data["assignments"] = _assignments(document)
    builder.add("experiment.assignment", data, index=0)


def read_experiment_state(builder: SourceBuilder, payload: bytes) -> None:
    """Downloaded state snapshot: historical ledger entries stay separate observations."""
    document = json_document(builder, payload)
    if document is MISSING:
        return
    entries: Any = document
    if isinstance(document, dict):
        entries = first_present(document, "history", "ledger", "entries")
        if entries is MISSING:
            entries = [document]
    if not isinstance(entries, list):
        builder.warn("invalid_record", "experiment state is not an object or array; skipped")
        return
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            builder.warn("invalid_record", f"entry {index}: not an object; omitted")
            continue
        native, key = stamp(entry, ISO_CLOCK)
        builder.add("experiment.state", builder.project(EXPERIMENT(entry)), index=index, key=key,
                    timestamp=native)


# ----------------------------------------------------------------- graders and evals


@dataclass(frozen=True)
class RunIdentity:
    """The current run's ID and attempt (``None`` when unavailable)."""

    run_id: Any
    attempt: Any


def _same(a: Any, b: Any) -> bool:
    return str(a) == str(b)


def _record_run(record: Mapping[str, Any]) -> tuple[Any, Any]:
    run = record.get("run")
    if isinstance(run, dict):
        return run.get("id", MISSING), run.get("attempt", MISSING)
    return (first_present(record, "run_id", "runId"), first_present(record, "run_attempt", "runAttempt"))


def attributed(builder: SourceBuilder, current: RunIdentity, record: Mapping[str, Any],
               line: int, *, use_attempt: bool) -> bool:
    """Whether a result record belongs to the current run (warning when unattributed)."""
    run_id, attempt = _record_run(record)
    if current.run_id is None:
        builder.warn("no_current_run", f"line {line}: current run ID unavailable; result omitted", line)
        return False
    if run_id is MISSING or run_id is None:
        builder.warn("unattributed_result", f"line {line}: result has no run ID; omitted", line)
        return False
    if not _same(run_id, current.run_id):
        return False
    if use_attempt and attempt is not MISSING and current.attempt is not None:
        return _same(attempt, current.attempt)
    return True


GRADER_SPEC = Projector(um.GraderSpec)
GRADER_RUN = Projector(um.GraderRun, {"graderCount": ("grader_count",)})


def _grader_list(value: Any) -> Any:
    if not isinstance(value, list):
        return MISSING
    return [GRADER_SPEC(g).data for g in value if isinstance(g, dict)]


def _grader_run(value: Any) -> Any:
    return GRADER_RUN(value).data if isinstance(value, dict) else MISSING


def _metrics(value: Any) -> Any:
    if not isinstance(value, list):
        return MISSING
    out = []
    for metric in value:
        if not isinstance(metric, dict):
            return MISSING
        entry = {k: metric[k] for k in ("id", "value") if k in metric}
        if any(isinstance(v, (dict, list)) for v in entry.values()):
            return MISSING
        out.append(entry)
    return out


GRADER_MANIFEST = Projector(um.GraderManifestData, converters={"graders": _grader_list})
GRADER_RESULT = Projector(
    um.GraderResultData,
    {"messages": ("diagnostics",)},
    {"run": _grader_run, "metrics": _metrics},
)


def read_grader_manifest(builder: SourceBuilder, payload: bytes) -> None:
    """Grader definitions without scripts."""
    document = json_object(builder, payload)
    if document is None:
        return
    builder.add("grader.manifest", builder.project(GRADER_MANIFEST(document)), index=0)


def read_grader_results(current: RunIdentity):  # -> reader
    """Grader results of the current run and attempt only."""

    def read(builder: SourceBuilder, payload: bytes) -> None:
        for index, line, record in json_lines(builder, payload):
            if not attributed(builder, current, record, line, use_attempt=True):
                continue
            native, key = stamp(record, ISO_CLOCK)
            builder.add("grader.result", builder.project(GRADER_RESULT(record)), index=index,
                        key=key, timestamp=native)

    return read


EVAL = Projector(um.EvalResultData, {"experiments": ("experiment_assignments", "assignments")})


def read_eval_results(current: RunIdentity):  # -> reader
    """Eval answers of the current run (attempt used when the record supplies it)."""

    def read(builder: SourceBuilder, payload: bytes) -> None:
        for index, line, record in json_lines(builder, payload):
            if not attributed(builder, current, record, line, use_attempt=True):
                continue
            native, key = stamp(record, ISO_CLOCK)
            builder.add("eval.result", builder.project(EVAL(record)), index=index, key=key,
                        timestamp=native)

    return read
