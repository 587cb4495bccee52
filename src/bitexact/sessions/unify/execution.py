"""The single main-agent ``agent.execution`` aggregate (UAS 4.8, T-UAS-067).

Evidence, merged into one record:

- the recorded final exit code (``agent_execution_exit_code.txt``);
- an explicit ``agent.execution`` snapshot found in the agent stream;
- persisted diagnostics (``agent-errors.jsonl``: categories, codes, types,
  exit codes from the live detector);
- canonical ``session.error`` events and ``session.result.errors`` entries of
  the *main* agent (child-agent context never supplies classifications);
- anchored harness lines of agent stdio (the last ``done: exitCode=N``),
  anchored startup signatures and recognized engine diagnostic prefixes
  (``API Error: NNN``, ``Error: [CAPIError: ]NNN``, ``ERROR:``/``[ERROR]``,
  ``terminated by signal SIGxxx``); only column-0 lines count, so indented
  or labeled echoes of child/tool output and fenced quotations are skipped.

Exit-code precedence is the order above; intermediate attempt and tool exit
codes are never used.  Tool failures and errors quoted in messages or tool
payloads are not execution errors.  Collections are unique and sorted:
error codes by string form with numbers before strings on ties, ``1e3`` and
``1000`` being one code and ``0`` distinct from ``"0"``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bitexact.sessions.unified_model import MAX_SAFE_INTEGER
from bitexact.sessions.unify.project import MISSING, first_present

_DONE = re.compile(r"^(?:\[[^\]\n]{0,64}\]\s*)?done: exitCode=(-?\d{1,10})\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_STARTUP_SIGNATURES = (
    (re.compile(r"^Error: [Mm]odel \S+ is not (?:supported|available)"), "model_not_supported_error"),
    (re.compile(r"^Error: (?:401 |Unauthorized|Authentication failed)"), "authentication_failed"),
    (re.compile(r"^Error: 403 .*(?:[Ii]nference|Copilot)"), "inference_access_error"),
)
"""Anchored startup error signatures mined from stdio (whole-line, outside fences)."""

_ENGINE_DIAGNOSTICS = (
    # Claude Code: ``API Error: 429 {"type":"error","error":{"type":"rate_limit_error",...}}``
    ("api", re.compile(r"^API Error: (?P<code>[1-5]\d\d)\b(?P<rest>.*)$")),
    # Copilot CLI: ``Error: CAPIError: 503 ...`` / ``Error: 400 ...``
    ("capi", re.compile(r"^Error: CAPIError: (?P<code>[1-5]\d\d)\b(?P<rest>.*)$")),
    ("api", re.compile(r"^Error: (?P<code>[1-5]\d\d)\b(?P<rest>.*)$")),
    # Codex: ``ERROR: stream error: ... status 502 ...`` / ``[ERROR] ... status code 429``
    ("api", re.compile(r"^(?:ERROR:|\[ERROR\]) (?P<rest>(?:.*?\bstatus(?: code)?:? (?P<code>[1-5]\d\d)\b)?.*)$")),
)
"""Recognized engine diagnostic prefixes (whole line, column 0, outside fences).

UAS 4.8 requires recognized prefixes or anchored signatures but does not
enumerate them; this is the implementation's supported set.  Each match
contributes its HTTP status as a native code and an embedded provider error
type (``"type":"..._error"``).  Categories are added only where the status
maps onto the classification vocabulary of 4.8 (``_category``); nothing
else is invented.
"""

_PROVIDER_TYPE = re.compile(r'"type"\s*:\s*"([a-z_]{1,64}_error)"')
_QUOTA = re.compile(r"\bquota\b", re.I)


def _category(origin: str, status: int | None, rest: str) -> str | None:
    """The 4.8 classification a recognized diagnostic establishes, if any."""
    if status == 400:
        return "http_400_response_error"
    if status == 401:
        return "authentication_failed"
    if origin == "capi" and status == 429 and _QUOTA.search(rest):
        return "capi_quota_exceeded_error"
    if origin == "capi" and status is not None and status >= 500:
        return "capi_server_error"
    return None


_SIGNAL = re.compile(r"^(?:\[[^\]\n]{0,64}\]\s*)?(?:agent |process )?(?:terminated|killed) by signal (SIG[A-Z0-9]{2,10})\s*$")


def normalize_code(value: Any) -> int | str | None:
    """A native error/status code as a nonempty string or a safe integer, else ``None``."""
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        return value if value else None
    if isinstance(value, int):
        return value if abs(value) <= MAX_SAFE_INTEGER else None
    if isinstance(value, float) and value.is_integer() and abs(value) <= MAX_SAFE_INTEGER:
        return int(value)  # 1e3 and 1.0 are the integers 1000 and 1; -0.0 is 0
    return None


def exit_code(value: Any) -> int | None:
    """An exit code in 0..255 (integral JSON numbers accepted), else ``None``."""
    code = normalize_code(value)
    if isinstance(code, int) and 0 <= code <= 255:
        return code
    if isinstance(value, str) and value.strip().isdigit():
        code = int(value.strip())
        return code if 0 <= code <= 255 else None
    return None


def _code_order(code: int | str) -> tuple[str, int]:
    return (str(code), 0 if isinstance(code, int) else 1)


@dataclass
class ExecutionEvidence:
    """Accumulates 4.8 evidence; ``aggregate`` builds the record."""

    categories: set[str] = field(default_factory=set)
    codes: dict[tuple[str, Any], int | str] = field(default_factory=dict)
    types: set[str] = field(default_factory=set)
    exit_codes: list[tuple[int, int, str]] = field(default_factory=list)  # (rank, code, path)
    paths: list[str] = field(default_factory=list)

    def _source(self, path: str) -> None:
        if path not in self.paths:
            self.paths.append(path)

    def category(self, value: Any, path: str) -> None:
        if isinstance(value, str) and value:
            self.categories.add(value)
            self._source(path)

    def code(self, value: Any, path: str) -> None:
        code = normalize_code(value)
        if code is not None:
            self.codes[("n" if isinstance(code, int) else "s", code)] = code
            self._source(path)

    def error_type(self, value: Any, path: str) -> None:
        if isinstance(value, str) and value:
            self.types.add(value)
            self._source(path)

    def exit(self, value: Any, rank: int, path: str) -> None:
        code = exit_code(value)
        if code is not None:
            self.exit_codes.append((rank, code, path))

    def observed(self) -> bool:
        return bool(self.categories or self.codes or self.types or self.exit_codes)

    def aggregate(self) -> tuple[dict[str, Any], str] | None:
        """``(data, primary path)`` of the single aggregate, or ``None`` if nothing observed."""
        if not self.observed():
            return None
        categories = set(self.categories)
        # Invocation-cap exhaustion takes precedence over generic CAPI quota exhaustion.
        if "invocation_cap_exceeded" in categories:
            categories.discard("capi_quota_exceeded_error")
        data: dict[str, Any] = {
            "categories": sorted(categories),
            "errorCodes": sorted(self.codes.values(), key=_code_order),
            "errorTypes": sorted(self.types),
        }
        primary = self.paths[0] if self.paths else ""
        if self.exit_codes:
            rank, code, path = min(self.exit_codes, key=lambda item: item[0])
            data["exitCode"] = code
            primary = path
        return data, primary


_RANK_FILE, _RANK_SNAPSHOT, _RANK_DIAGNOSTIC, _RANK_HARNESS = range(4)


def _child_context(record: Mapping[str, Any], data: Mapping[str, Any] | None = None) -> bool:
    for source in (record, data or {}):
        if source.get("agentId") not in (None, "") or source.get("agent_id") not in (None, ""):
            return True
        for key in ("parentToolCallId", "parent_tool_call_id", "parentToolUseId", "parent_tool_use_id"):
            if source.get(key) not in (None, ""):
                return True
    return False


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def add_exit_file(evidence: ExecutionEvidence, text: str, path: str) -> bool:
    """The recorded final exit code; returns False when the file does not hold one."""
    code = exit_code(text.strip()) if text.strip() else None
    if code is None:
        return False
    evidence.exit(code, _RANK_FILE, path)
    return True


def add_snapshot(evidence: ExecutionEvidence, data: Mapping[str, Any], path: str) -> None:
    """An explicit ``agent.execution`` snapshot from the agent stream."""
    for value in _list(data.get("categories", [])):
        evidence.category(value, path)
    for value in _list(data.get("errorCodes", [])):
        evidence.code(value, path)
    for value in _list(data.get("errorTypes", [])):
        evidence.error_type(value, path)
    if "exitCode" in data:
        evidence.exit(data["exitCode"], _RANK_SNAPSHOT, path)


def add_diagnostic(evidence: ExecutionEvidence, record: Mapping[str, Any], path: str) -> None:
    """One persisted ``agent-errors.jsonl`` observation (main-agent context only)."""
    if _child_context(record):
        return
    for name in ("category", "categories"):
        for value in _list(record.get(name, [])):
            evidence.category(value, path)
    for name in ("errorCode", "code", "errorCodes", "statusCode"):
        if name in record:
            for value in _list(record[name]):
                evidence.code(value, path)
    for name in ("errorType", "errorTypes", "signal", "failureReason", "failure_reason"):
        if name in record:
            for value in _list(record[name]):
                evidence.error_type(value, path)
    value = first_present(record, "exitCode", "exit_code")
    if value is not MISSING:
        evidence.exit(value, _RANK_DIAGNOSTIC, path)


CANONICAL_ERROR_TYPES = frozenset({"session.error", "session.result"})
"""The canonical event types ``add_canonical`` reads."""


def add_canonical(evidence: ExecutionEvidence, events: Iterable[Mapping[str, Any]], path: str) -> None:
    """Engine/provider errors of the main agent from canonical events."""
    for event in events:
        kind, data = event.get("type"), event.get("data")
        if not isinstance(data, dict) or _child_context(event, data):
            continue
        if kind == "session.error":
            evidence.error_type(first_present(data, "errorType", "error_type"), path)
            for name in ("code", "statusCode", "status_code"):
                if name in data:
                    evidence.code(data[name], path)
        elif kind == "session.result" and isinstance(data.get("errors"), list):
            for entry in data["errors"]:
                if not isinstance(entry, dict) or _child_context(entry):
                    continue
                evidence.error_type(first_present(entry, "errorType", "error_type", "type"), path)
                for name in ("code", "errorCode", "error_code", "statusCode", "status_code"):
                    if name in entry:
                        evidence.code(entry[name], path)


def _engine_diagnostic(evidence: ExecutionEvidence, line: str, path: str) -> None:
    """Codes, provider types and categories of one recognized engine diagnostic line."""
    signal = _SIGNAL.match(line)
    if signal:
        # 4.8: a crash keeps its native signal name as an error type.
        evidence.error_type(signal.group(1), path)
        return
    for origin, pattern in _ENGINE_DIAGNOSTICS:
        match = pattern.match(line)
        if not match:
            continue
        status = int(match.group("code")) if match.group("code") is not None else None
        rest = match.group("rest") or ""
        if status is not None:
            evidence.code(status, path)
        category = _category(origin, status, rest)
        if category is not None:
            evidence.category(category, path)
        provider_type = _PROVIDER_TYPE.search(rest)
        if provider_type:
            evidence.error_type(provider_type.group(1), path)
        return


def add_stdio(evidence: ExecutionEvidence, text: str, path: str) -> None:
    """Anchored harness lines of agent stdio, skipping fenced quotations."""
    fenced = False
    last_exit: int | None = None
    for line in text.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        if fenced:
            continue
        match = _DONE.match(line)
        if match:
            last_exit = int(match.group(1))
            continue
        for pattern, category in _STARTUP_SIGNATURES:
            if pattern.match(line):
                evidence.category(category, path)
        _engine_diagnostic(evidence, line, path)
    if last_exit is not None:
        evidence.exit(last_exit, _RANK_HARNESS, path)
