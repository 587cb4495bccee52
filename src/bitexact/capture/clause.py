"""The capture clause of a verdict: what the record kept of each field, counted from declarations.

``bitexact verify`` adds it to its ``OK:`` line through the verifier's
:class:`~bitexact.evidence.verify.verdict.ClauseProvider` hook, and prints
the scope line after the verdict (capture-controls.md, "What the record keeps
of a field"). Everything here is counted from what the entries *declare* -
their ``capture`` blocks and the ``run_meta`` policy - never from their
values: a verifier cannot see what a policy removed, only what the recorder
said it removed, and the clause says exactly that.

For a run with two scrubbed fields and one hash-only field the clause is::

    , 2 fields scrubbed before capture (iban 1, pan 2), 1 field hash-only (never held; 1 can be opened with key 3a9f..)

A bundle with no capture blocks and a policy in force gets no clause and no
scope line, so its verdict reads exactly as any conforming verifier's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

SCOPE_SENTENCE: Final[str] = (
    "Scrubbed and hash-only fields prove that a value was presented and which rule removed it. "
    "They do not prove what the value was, they cannot be replayed, and hash-only custody is not "
    "HIPAA de-identification."
)
OFF_SENTENCE: Final[str] = (
    "A run recorded with no capture policy in force kept every value as captured, "
    "card numbers, IBANs and credentials included."
)
OFF_CLAUSE: Final[str] = "no capture policy was in force"
UPSTREAM: Final[str] = "scrubbed-upstream"
KEY_ID_SHOWN: Final[int] = 4
"""Hex characters of a key id the clause shows (``3a9f..``), as the contract writes it."""


Revoked = Mapping[str, str] | Callable[[], Mapping[str, str]] | None
"""Revoked capture keys (id -> date), or a function returning them when first needed."""


def _plural(count: int, singular: str, plural: str | None = None) -> str:
    return f"{count} {singular if count == 1 else (plural or singular + 's')}"


def short_key(key_id: str) -> str:
    """A key id as the clause prints it: its first four hex characters and ``..``."""
    return key_id[:KEY_ID_SHOWN] + ".."


NAMED_PER_KEY: Final[int] = 20
"""Fields a revoked-key clause names by place; the rest are counted ("and N more")."""


@dataclass
class CaptureCounts:
    """What the declarations of one or more runs add up to (mutable while a verification runs)."""

    runs: set[str] = field(default_factory=set)
    off_runs: set[str] = field(default_factory=set)
    scrubbed: int = 0
    found: Counter[str] = field(default_factory=Counter)
    hash_only: int = 0
    openable: Counter[str] = field(default_factory=Counter)  # key id -> fields
    unopenable: int = 0
    linkable: int = 0
    withheld: int = 0
    too_large: int = 0  # of the withheld: past the size bound (BITEXACT_MAX_BODY_BYTES), never scanned
    unscanned: int = 0
    claimed: int = 0
    under_key: dict[str, list[str]] = field(default_factory=dict)  # key id -> the first ["RUN step:path"]
    digested: Counter[str] = field(default_factory=Counter)  # key id -> fields a gap's withheld digest covers

    def add_run_meta(self, run_id: str, data: object) -> None:
        """A ``run_meta`` that declares ``capture_policy: off`` marks its run."""
        if isinstance(data, Mapping) and data.get("capture_policy") == "off":
            self.off_runs.add(run_id)

    def add_block(self, run_id: str, step: int, block: object) -> None:
        """Count one entry's capture block; anything malformed counts for nothing, never raises."""
        if not isinstance(block, Mapping):
            return
        fields = block.get("fields")
        if not isinstance(fields, Mapping):
            return
        for path, declaration in fields.items():
            if isinstance(path, str) and isinstance(declaration, Mapping):
                self._add_field(run_id, step, path, declaration)

    def add_gap(self, run_id: str, step: int, gap: object) -> None:
        """A gap marker whose withheld digest is keyed: its fields are committed under that key too (whoever
        holds it can test guesses at them), so a revoked key names them as it names hash-only fields."""
        if not isinstance(gap, Mapping):
            return
        withheld = gap.get("withheld")
        fields = gap.get("fields")
        key_id = withheld.get("key_id") if isinstance(withheld, Mapping) else None
        if not isinstance(key_id, str) or not key_id or not isinstance(fields, Mapping):
            return
        at = gap.get("step")
        where = at if isinstance(at, int) and not isinstance(at, bool) else step
        for path in fields:
            if isinstance(path, str):
                self._name_under(key_id, run_id, where, path)
                self.digested[key_id] += 1

    def _name_under(self, key_id: str, run_id: str, step: int, path: str) -> None:
        named = self.under_key.setdefault(key_id, [])
        if len(named) < NAMED_PER_KEY:  # bounded: a streamed verify keeps constant memory
            named.append(f"{run_id}\x00{step}:{path}")

    def under(self, key_id: str) -> int:
        """Fields whose content a holder of ``key_id`` can test guesses at: hash-only or digested in a gap."""
        return self.openable[key_id] + self.digested[key_id]

    def _add_scrub(self, found: object) -> None:
        self.scrubbed += 1
        if isinstance(found, Mapping):
            for detector, count in found.items():
                if isinstance(detector, str) and isinstance(count, int) and not isinstance(count, bool):
                    self.found[detector] += count

    def _add_field(self, run_id: str, step: int, path: str, declaration: Mapping[str, Any]) -> None:
        mode = declaration.get("mode")
        found = declaration.get("found")
        if mode == "scrub":
            self._add_scrub(found)
        elif mode == "hash-only":
            self.hash_only += 1
            if isinstance(found, Mapping) and found:
                # Its key held what a detector finds: that scrub is declared here, and counted as one.
                self._add_scrub(found)
            key_id = declaration.get("key_id")
            if isinstance(key_id, str) and key_id and not declaration.get("unopenable"):
                self.openable[key_id] += 1
                self._name_under(key_id, run_id, step, path)
            else:
                self.unopenable += 1
            if declaration.get("linkable") is True:
                self.linkable += 1
        elif mode == "withheld":
            self.withheld += 1
            if declaration.get("reason") == "too_large":
                self.too_large += 1
        elif mode == "unscanned":
            self.unscanned += 1
        if mode == UPSTREAM or declaration.get("claim") == UPSTREAM:
            self.claimed += 1


def _hash_only_part(counts: CaptureCounts) -> str:
    details = []
    for index, (key_id, count) in enumerate(sorted(counts.openable.items(), key=lambda kv: (-kv[1], kv[0]))):
        opened = "can be opened with key" if index == 0 else "with key"
        details.append(f"{count} {opened} {short_key(key_id)}")
    if counts.unopenable:
        details.append(f"{counts.unopenable} can never be opened")
    return f"{_plural(counts.hash_only, 'field')} hash-only (never held; {', '.join(details)})"


def _field_names(counts: CaptureCounts, key_id: str) -> str:
    several = len(counts.runs) > 1
    names = []
    for item in counts.under_key.get(key_id, []):
        run_id, _, where = item.partition("\x00")
        names.append(f"{run_id} {where}" if several else where)
    more = counts.under(key_id) - len(names)
    if more > 0:
        names.append(f"and {more:,} more")
    return ", ".join(names)


def clause_text(counts: CaptureCounts, revoked: Mapping[str, str]) -> str | None:
    """The clause (without the leading ``, ``), or ``None`` when nothing is declared."""
    parts: list[str] = []
    if counts.off_runs:
        if len(counts.runs) > 1:
            parts.append(f"{_plural(len(counts.off_runs), 'run')} recorded with no capture policy in force")
        else:
            parts.append(OFF_CLAUSE)
    if counts.scrubbed:
        detail = ", ".join(f"{name} {n}" for name, n in sorted(counts.found.items()))
        found = f" ({detail})" if detail else ""
        parts.append(f"{_plural(counts.scrubbed, 'field')} scrubbed before capture{found}")
    if counts.hash_only:
        parts.append(_hash_only_part(counts))
    if counts.linkable:
        parts.append(
            f"{_plural(counts.linkable, 'field')} linkable (equal values give equal commitments under its key)"
        )
    if counts.withheld > counts.too_large:
        parts.append(f"{_plural(counts.withheld - counts.too_large, 'field')} withheld (the scan could not finish)")
    if counts.too_large:
        parts.append(f"{_plural(counts.too_large, 'field')} withheld (larger than the size bound, never scanned)")
    if counts.unscanned:
        parts.append(f"{_plural(counts.unscanned, 'field')} kept unscanned (bytes no detector reads)")
    if counts.claimed:
        parts.append(f"{_plural(counts.claimed, 'field')} claimed cleaned upstream (asserted, not checked)")
    for key_id in sorted(k for k in {*counts.openable, *counts.digested} if k in revoked):
        parts.append(
            f"{_plural(counts.under(key_id), 'field')} committed under revoked key {short_key(key_id)}"
            f" (guessable by its holder from {revoked[key_id]}: {_field_names(counts, key_id)})"
        )
    return ", ".join(parts) if parts else None


def scope_text(counts: CaptureCounts) -> str | None:
    """The scope line: the no-policy sentence first, then the scrubbed and hash-only one."""
    sentences = []
    if counts.off_runs:
        sentences.append(OFF_SENTENCE)
    if counts.scrubbed or counts.hash_only:
        sentences.append(SCOPE_SENTENCE)
    return " ".join(sentences) if sentences else None


class CaptureClause:
    """A :class:`~bitexact.evidence.verify.verdict.ClauseProvider` for the capture clause.

    One instance serves one verification. It may see the entries of several
    runs (a bag or pack, when the verifier shares one provider across its
    members): runs are told apart by ``run_id``, and with more than one the
    no-policy clause counts runs instead.
    """

    def __init__(self, revoked: Revoked = None) -> None:
        self._revoked = revoked
        self.counts = CaptureCounts()

    @property
    def revoked(self) -> Mapping[str, str]:
        """Revoked key id -> date; resolved (once) only when a field was committed under some key."""
        if callable(self._revoked):
            self._revoked = dict(self._revoked())
        return self._revoked or {}

    def observe(self, step: int, entry: Mapping[str, Any]) -> None:
        """Count one verified entry's declarations."""
        run_id = entry.get("run_id")
        run = run_id if isinstance(run_id, str) else ""
        self.counts.runs.add(run)
        if entry.get("kind") == "run_meta":
            self.counts.add_run_meta(run, entry.get("data"))
        if "capture" in entry:
            self.counts.add_block(run, step, entry["capture"])
        if entry.get("kind") == "marker":
            data = entry.get("data")
            if isinstance(data, Mapping):
                self.counts.add_gap(run, step, data.get("gap"))

    def clause(self) -> str | None:
        """The text after ``, `` on the OK line, or ``None``."""
        keyed = self.counts.openable or self.counts.digested
        return clause_text(self.counts, self.revoked if keyed else {})

    def scope_lines(self) -> Sequence[str]:
        """At most one line: the scope the verdict states, printed after it."""
        text = scope_text(self.counts)
        return (text,) if text else ()


def capture_clause(revoked: Revoked = None) -> Callable[[], CaptureClause]:
    """A factory for ``verify_*(..., clauses=[capture_clause(policy.revoked)])``.

    ``revoked`` maps a revoked capture key id to the date from which it may
    be in other hands (the policy in force's ``revoked_keys``), or is a
    function returning that map, called at most once and only when a
    verified bundle holds a field committed under a key (loading a policy
    loads its keys, which a plain verify should not need). Fields committed
    under a revoked key are named in the clause.
    """
    cache: dict[str, dict[str, str]] = {}

    def resolved() -> dict[str, str]:
        if "map" not in cache:
            cache["map"] = dict(revoked() if callable(revoked) else (revoked or {}))
        return cache["map"]

    return lambda: CaptureClause(resolved)


__all__ = [
    "OFF_CLAUSE",
    "OFF_SENTENCE",
    "SCOPE_SENTENCE",
    "CaptureClause",
    "CaptureCounts",
    "capture_clause",
    "clause_text",
    "scope_text",
    "short_key",
]
