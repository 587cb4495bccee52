"""Removing committed values while keeping their commitments (bundle spec §6).

Used by store redaction (after the claim is on the chain) and by export-time
redaction (in the exported copy only). Commitments and the hash never change.
"""

from __future__ import annotations

import copy
from typing import Any

from bitexact.errors import EvidenceError
from bitexact.evidence.identity import COMPOSITION
from bitexact.evidence.kinds import AUDIT_KINDS
from bitexact.evidence.paths import split_path


def claim_token(step: int, path: str) -> str:
    """The ``"<i>:<path>"`` token a ``redaction`` entry lists."""
    return f"{step}:{path}"


_INTERPRETED: dict[str, frozenset[str]] = {
    "run_end": frozenset({"steps"}),
    "fork": frozenset({"source_run", "at_step", "source_prev_hash"}),
    "run_meta": frozenset({"capture_policy"}),
}
"""Data paths a verifier reads (bundle spec §5, and the capture clause's run_meta.capture_policy):
removing one breaks the verdict at every tier, or hides what it must say (no capture policy in force)."""


def check_redactable(entry: dict[str, Any], path: str) -> None:
    """Refuse audit entries, the data paths verifiers read, and paths the entry never committed."""
    if entry.get("kind") in AUDIT_KINDS:
        raise EvidenceError(
            f"step {entry.get('step')}: a {entry.get('kind')} audit entry cannot be redacted"
            " - the audit trail is what a redaction is accountable to"
        )
    if path in _INTERPRETED.get(str(entry.get("kind")), ()):
        raise EvidenceError(
            f"step {entry.get('step')}: {entry.get('kind')}.{path} cannot be redacted - verifiers read it"
            " (the seal's length, a fork's source, the capture policy in force), so the verdict would no"
            " longer hold or would no longer say what it must"
        )
    if path not in entry.get("commitments", {}):
        raise EvidenceError(
            f"step {entry.get('step')}: no committed path {path!r}"
            # Quoted as repr (as the path asked for is): committed paths are recorded keys, and a control
            # character or bidi override in one must not reach the operator's terminal raw.
            f" (committed: {', '.join(repr(p) for p in sorted(entry.get('commitments', {}))) or 'none'})"
        )


_DIGESTS: dict[str, tuple[str, frozenset[str]]] = {
    "context": ("content_hash", frozenset({"content"})),
    "identity": ("workflow_digest", frozenset(COMPOSITION)),
}
"""kind -> (a committed digest, the top-level keys whose values it hashes): unsalted, it would let anyone
holding the bundle test a guess at a value redacted under one of those keys (docs/capture.md makes them
again over what is stored for the same reason)."""


def derived_digests(entry: dict[str, Any], paths: list[str]) -> list[str]:
    """The digest path a redaction of ``paths`` must take with them (as a list of zero or one), unless it is
    named already, already redacted, or not committed by ``entry``."""
    digest, covered = _DIGESTS.get(str(entry.get("kind")), ("", frozenset()))
    if (not digest or digest in paths or digest in entry.get("redacted", [])
            or digest not in entry.get("commitments", {})):
        return []
    return [digest] if any(split_path(path)[0] in covered for path in paths) else []


def is_applied(entry: dict[str, Any], path: str) -> bool:
    """True when ``path`` is already redacted in ``entry``."""
    return path in entry.get("redacted", [])


def redact_entry(entry: dict[str, Any], paths: list[str]) -> dict[str, Any]:
    """Return a copy of ``entry`` with ``paths`` removed, husks kept, markers sorted."""
    for path in paths:
        check_redactable(entry, path)
    out = copy.deepcopy(entry)
    data: dict[str, Any] = out.setdefault("data", {})
    salts: dict[str, str] = out.get("salts", {})
    marked = set(out.get("redacted", []))
    for path in paths:
        top, sub = split_path(path)
        if sub is None:
            data.pop(top, None)
        else:
            inner = data.get(top)
            if isinstance(inner, dict):
                inner.pop(sub, None)  # an emptied object stays as the {} husk
        salts.pop(path, None)
        marked.add(path)
    if salts:
        out["salts"] = salts
    else:
        out.pop("salts", None)
    out["redacted"] = sorted(marked)
    return out


def redactions_map(entries_markers: dict[int, list[str]]) -> dict[str, list[str]]:
    """The signed ``redactions`` map: decimal step -> sorted markers (§9)."""
    return {str(step): sorted(paths) for step, paths in sorted(entries_markers.items()) if paths}
