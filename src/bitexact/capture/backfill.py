"""Backfill: which stored fields of a recorded run the policy in force would remove.

A run recorded with the policy off, or under an earlier rule set, can hold
what the policy in force removes. Backfill never rewrites it: it names, by
``STEP:PATH`` (committed paths, bundle-format.md §4.1), every stored field
the policy in force keeps hash-only and every field whose value or key a
detector finds something in (or runs out of time on, which the scrub would
have withheld), for one dual-control redaction request
(capture-controls.md, "Backfilling a recorded run"). Filing and approving
that request is the recording layer's (:mod:`bitexact.recording.requests`).

How a field is found: the policy is applied to the entry's data as stored,
exactly as the write path would apply it, and a committed path is named
when what the policy would store there differs from what is stored (a
scrubbed value, a ``[hash-only]`` or ``[withheld]`` placeholder, a key a
scrub would rename). So a field is named for the same reasons, and only
those, that it would have been changed at capture. Skipped:

* paths already redacted, or claimed by a redaction entry on the chain;
* the product's own blocks - a relayed event's ``aer_source`` and a gap's
  declaration (a marker's ``gap``) - and the product's own kinds;
* base64 bytes no detector reads (declared ``unscanned``, so unchanged),
  unless the policy in force keeps them hash-only (pci's ``*.b64``): then
  they are named, whether the run stored them with the policy off or
  declared them ``unscanned`` at capture (that removed nothing);
* fields the entry's own capture block already settled (hash-only or
  withheld at capture), which the policy leaves as they are.

The capture key is never used: a hash-only field is found by its
placeholder, and computing a keyed commitment to find it would be a use of
the key nobody needs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from bitexact.canon import canonicalize
from bitexact.capture.apply import apply_policy
from bitexact.capture.block import WITHHELD_KEY
from bitexact.capture.hints import COLLECTOR_ONLY
from bitexact.capture.policy import CapturePolicy
from bitexact.capture.rules import GOVERNED_KINDS
from bitexact.errors import BitExactError, CanonicalizationError
from bitexact.evidence.kinds import AUDIT_KINDS
from bitexact.evidence.paths import escape, parse_field
from bitexact.store import Store

PRODUCT_KEYS: Final[frozenset[str]] = frozenset({"aer_source"})
"""Top-level keys of any entry that are the product's own declarations, never an agent's value."""
IMPORTED_KEYS: Final[frozenset[str]] = frozenset({"source"})
"""The same, in the entries of an imported run (``run_meta.import``): the importer's ``source`` block
(a file's digest and name), written after the capture policy ran."""
GAP_KEY: Final[str] = "gap"


class BackfillError(BitExactError, ValueError):
    """Backfill cannot run (the policy is off, or a stored entry cannot be read as the policy would)."""


@dataclass(frozen=True)
class BackfillField:
    """One stored field the policy in force would remove, and why."""

    step: int
    path: str
    why: str

    @property
    def token(self) -> str:
        """``STEP:PATH``, as a redaction claim spells it."""
        return f"{self.step}:{self.path}"


@dataclass(frozen=True)
class BackfillPlan:
    """What one redaction request for a run would name under the policy in force."""

    run_id: str
    policy_digest: str
    fields: tuple[BackfillField, ...]

    @property
    def tokens(self) -> list[str]:
        """Every ``STEP:PATH``, in step order and the entry's own path order."""
        return [f.token for f in self.fields]

    @property
    def reason(self) -> str:
        """The request's reason; it names the policy's digest."""
        return (
            f"capture backfill: {len(self.fields)} stored field(s) the capture policy in force"
            f" (digest {self.policy_digest}) removes"
        )


def claimed_tokens(entries: Iterable[Mapping[str, Any]]) -> set[tuple[int, str]]:
    """Every ``(step, path)`` a redaction entry of the run claims, applied or not."""
    claimed: set[tuple[int, str]] = set()
    for entry in entries:
        if entry.get("kind") != "redaction":
            continue
        fields = entry.get("data", {}).get("fields", [])
        for token in fields if isinstance(fields, list) else []:
            try:
                claimed.add(parse_field(token))
            except (ValueError, TypeError, AttributeError):
                continue
    return claimed


def _same(a: Any, b: Any) -> bool:
    # Canonical bytes, not ==: 1 == 1.0 == True in Python, never in the record.
    try:
        return canonicalize(a) == canonicalize(b)
    except CanonicalizationError:
        return False


def _why(stored_path: str, block: Mapping[str, Any] | None, renamed: bool) -> str:
    """A short reason for the CLI: the modes declared at, under or over the field as it would be stored."""
    reasons: list[str] = []
    for declared, declaration in (block or {}).get("fields", {}).items():
        if declared == stored_path or declared.startswith(stored_path + ".") or stored_path.startswith(declared + "."):
            mode = declaration.get("mode")
            if mode == "scrub":
                found = ", ".join(f"{k} {v}" for k, v in declaration.get("found", {}).items())
                reasons.append(f"scrub ({found})" if found else "scrub")
            elif mode in ("hash-only", "withheld"):
                reasons.append(str(mode))
    if renamed and not any(part.startswith(WITHHELD_KEY) for part in stored_path.split(".")):
        reasons.append("its key holds what a detector finds: the key itself stays in the commitments")
    return "; ".join(dict.fromkeys(reasons)) or "changed"


@dataclass(frozen=True)
class _Position:
    path: str          # the committed path as stored now
    value: Any
    stored_path: str   # where the policy would store it (a whole object kept hash-only: its key)
    stored: Any
    renamed: bool      # a scrub would rename a key on the way


def _positions(original: dict[str, Any], stored: dict[str, Any]) -> Iterator[_Position]:
    """Every committed path of ``original`` beside what the policy would store in its place.

    A scrub renames keys in place and keeps their order, so the stored data
    has the same keys at the same positions: position, not name, says which
    stored field a committed path became.
    """
    if len(original) != len(stored):
        raise ValueError(f"the policy stored {len(stored)} top-level keys for {len(original)}")
    for (key, value), (new_key, new_value) in zip(original.items(), stored.items()):
        if isinstance(value, dict) and value:
            same_shape = isinstance(new_value, dict) and len(new_value) == len(value)
            subs = iter(new_value.items()) if same_shape else None
            for sub, item in value.items():
                path = f"{escape(key)}.{escape(sub)}"
                if subs is not None:
                    new_sub, new_item = next(subs)
                    yield _Position(path, item, f"{escape(new_key)}.{escape(new_sub)}", new_item,
                                    new_key != key or new_sub != sub)
                else:  # the object as a whole became one value (kept hash-only, or withheld)
                    yield _Position(path, item, escape(new_key), new_value, new_key != key)
        else:
            yield _Position(escape(key), value, escape(new_key), new_value, new_key != key)


def _removing(block: Any) -> dict[str, Any] | None:
    """The declarations of an entry's capture block that removed something (hash-only, withheld): those
    fields are settled. Bytes stored ``unscanned`` removed nothing, so a policy that keeps them hash-only
    (pci's ``*.b64``) names them, as it names the same bytes in a run recorded with the policy off."""
    if not isinstance(block, dict) or not isinstance(block.get("fields"), dict):
        return None
    kept = {path: declaration for path, declaration in block["fields"].items()
            if isinstance(declaration, dict) and declaration.get("mode") in ("hash-only", "withheld")}
    return {**block, "fields": kept}


def entry_fields(policy: CapturePolicy, entry: Mapping[str, Any], skip: set[tuple[int, str]],
                 own: frozenset[str] = frozenset()) -> list[BackfillField]:
    """The committed paths of one stored entry that the policy would store differently (``own``: more
    top-level keys that are the product's own, as :data:`IMPORTED_KEYS` in an imported run)."""
    kind = entry.get("kind")
    data = entry.get("data")
    step = entry.get("step")
    if kind in AUDIT_KINDS or kind not in GOVERNED_KINDS or not isinstance(data, dict) or not isinstance(step, int):
        return []
    scanned = {k: v for k, v in data.items()
               if k not in PRODUCT_KEYS and k not in own and not (kind == "marker" and k == GAP_KEY)}
    if COLLECTOR_ONLY in scanned:
        # The write path refuses such data, so a stored entry holding it did not come through it.
        raise BackfillError(f"step {step}: its data holds {COLLECTOR_ONLY!r}, which no entry written by the"
                            " write path holds; review it by hand")
    if not scanned:
        return []
    prior = _removing(entry.get("capture"))
    captured = apply_policy(policy, kind, scanned, alg=str(entry.get("alg", "blake2b-256")), prior=prior)
    if captured.withheld:  # only an invalid hint or a source-set capture key withholds whole; neither is here
        raise BackfillError(f"step {step}: the policy refuses its data ({captured.gaps[0].get('reason', '')})")
    committed = entry.get("commitments", {})
    redacted = set(entry.get("redacted", []))
    found: list[BackfillField] = []
    try:
        positions = list(_positions(scanned, captured.data))
    except ValueError as exc:
        raise BackfillError(f"step {step}: {exc}; review it by hand") from None
    for at in positions:
        if at.path in redacted or (step, at.path) in skip or at.path not in committed:
            continue
        if at.renamed or not _same(at.value, at.stored):
            found.append(BackfillField(step, at.path, _why(at.stored_path, captured.block, at.renamed)))
    return found


def plan_backfill(store: Store, run_id: str, policy: CapturePolicy) -> BackfillPlan:
    """Every stored field of ``run_id`` the policy in force would remove.

    Raises :class:`BackfillError` when the policy is off (there is nothing
    to backfill against) and ``RunNotFoundError`` for an unknown run.
    """
    if policy.off or policy.digest is None:
        raise BackfillError("the capture policy is off: there is nothing to backfill against")
    store.run(run_id)
    skip = claimed_tokens(store.entries(run_id))
    keyless = dataclasses.replace(policy, key=None)  # never use the key to find a placeholder
    fields: list[BackfillField] = []
    own: frozenset[str] = frozenset()
    for entry in store.entries(run_id):
        data = entry.get("data")
        if entry.get("kind") == "run_meta" and isinstance(data, dict) and isinstance(data.get("import"), dict):
            own = IMPORTED_KEYS
        fields.extend(entry_fields(keyless, entry, skip, own))
    return BackfillPlan(run_id, policy.digest, tuple(fields))


__all__ = [
    "BackfillError",
    "BackfillField",
    "BackfillPlan",
    "claimed_tokens",
    "entry_fields",
    "plan_backfill",
]
