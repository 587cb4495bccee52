"""Audit entries through the write path: store redaction (write-ahead) and repair."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from bitexact.errors import EvidenceError, StateRefusedError, StoreDamagedError
from bitexact.evidence.export import redaction_plan
from bitexact.evidence.paths import parse_field
from bitexact.evidence.redaction import check_redactable, claim_token, derived_digests, redact_entry
from bitexact.recording.journal import discard_folded, unfolded_journals
from bitexact.recording.writer import RunWriter
from bitexact.store import ConflictError, Store, WalKeptError, store_home


class UnfoldedJournalsError(EvidenceError, StateRefusedError):
    """A redaction refused because the run's journals are not all folded into its chain yet: a state of
    the run (``bitexact repair`` folds them, then the same redaction goes through), not a bad field."""


@dataclass(frozen=True)
class PendingClaim:
    """One field a ``redaction`` entry (at ``claim_step``) claims: ``path`` of entry ``step``."""

    claim_step: int
    step: int
    path: str


def check_claimable(
    store: Store, run_id: str, steps: int, fields: Sequence[str], *, redacted_ok: bool = False
) -> list[str]:
    """The ``STEP:PATH`` tokens of ``fields`` if a redaction could claim them now, else :class:`EvidenceError`.

    Each step must exist (of ``steps``), each path be committed and
    redactable; a path already redacted is refused unless ``redacted_ok``
    (a request filed for it is then simply already done). A digest over the
    values named (:func:`derived_digests`) is claimed with them.
    """
    tokens: list[str] = []
    for step, paths in sorted(redaction_plan(fields).items()):
        if step >= steps:
            raise EvidenceError(f"run {run_id} has no step {step} (it has {steps} steps)")
        entry = store.entry(run_id, step)
        for path in paths:
            check_redactable(entry, path)
            if path in entry.get("redacted", []) and not redacted_ok:
                raise EvidenceError(f"step {step}: path {path} is already redacted")
            tokens.append(claim_token(step, path))
        # A context's content_hash (an identity's workflow_digest) goes with the values it hashes.
        tokens.extend(claim_token(step, path) for path in derived_digests(entry, paths))
    return tokens


def record_claim(
    writer: RunWriter, fields: list[str], *, by: str, reason: str, requested_by: str | None = None
) -> list[str]:
    """Step 1 of store redaction: validate the targets and append the ``redaction`` claim.

    Nothing is removed yet; :func:`apply_pending` does that. A crash between
    the two leaves a claim that verify reports as not applied until resumed.
    ``requested_by`` names who requested a dual-control redaction that ``by``
    approved (bundle spec §5: ``redaction`` carries ``requested_by`` under
    dual control); it is written only when given.
    """
    if not fields:
        raise EvidenceError("name at least one field to redact with --field STEP:PATH")
    if not by.strip():
        raise EvidenceError("--by must name who is redacting")
    if requested_by is not None and not requested_by.strip():
        raise EvidenceError("requested_by must name who requested the redaction")
    tokens = check_claimable(writer.recorder.store, writer.run_id, writer.steps, fields)
    refuse_unfolded(writer.recorder.store, writer.run_id)
    data: dict[str, Any] = {"fields": tokens, "by": by, "reason": reason}
    if requested_by is not None:
        data["requested_by"] = requested_by
    store, run_id = writer.recorder.store, writer.run_id

    def not_claimed_meanwhile() -> None:
        # Checked again where the claim lands: two `redact`s of one field at once both passed the checks
        # above and both claimed it (two claims of one value on the chain, each exiting 0).
        claimed = {claim_token(claim.step, claim.path) for claim in _claims(store, run_id)}
        taken = [token for token in tokens if token in claimed]
        if taken:
            raise EvidenceError(f"{', '.join(taken)} of run {run_id} was claimed by another redaction meanwhile"
                                f" (another `bitexact redact` of it at the same time?): `bitexact show {run_id}`"
                                f" says whether it is removed; if not, `bitexact redact --resume {run_id}`")

    writer.append("redaction", data, force_checkpoint=True, guard=not_claimed_meanwhile)
    return tokens


def refuse_unfolded(store: Store, run_id: str) -> None:
    """Refuse (:class:`UnfoldedJournalsError`) a claim on a run whose journals are not all folded into its chain: one may hold a copy of
    the value (an entry written just before its process died keeps its journal until a repair), and a copy
    under the host key would outlive the redaction. The repair folds or removes them all."""
    home = store_home(store)
    if home is None:
        return
    left = unfolded_journals(home, run_id)
    if left:
        shown = ", ".join(left[:3]) + (f" and {len(left) - 3} more" if len(left) > 3 else "")
        raise UnfoldedJournalsError(
            f"run {run_id} has {len(left)} journal(s) not folded into its chain ({shown}); one may hold "
            f"a copy of the value, which would outlive the redaction: run `bitexact repair {run_id} "
            "--by NAME --note TEXT` first (or redact once its recording has ended)"
        )


_CLAIM_PAGE: Final[int] = 256
"""Entries read at a time, from the head back, looking for a run's redaction claims."""


def _claim_entries(store: Store, run_id: str) -> list[dict[str, Any]]:
    """The run's ``redaction`` entries, oldest first, reading only as far back as the first of them.

    The store counts a run's entries per kind in the same transaction that appends them, so the count
    says when every claim has been found; claims are audit entries appended after the run's own, so that
    is usually within the last page. A run never redacted reads no entry at all (``bitexact health``
    asks this of every run that holds a claim, on every call). Only the claims' own bodies are read: an entry
    of another kind that no longer reads back (a damaged row) left the values a claim had just landed for
    stored, and `redact --resume` unable to remove them, until the store was restored (the claim with it).
    """
    info = store.run(run_id)
    wanted = info.kinds.get("redaction", 0)
    found: list[dict[str, Any]] = []
    stop = info.steps
    while len(found) < wanted and stop > 0:
        start = max(0, stop - _CLAIM_PAGE)
        found = list(store.entries_of_kind(run_id, "redaction", start, stop)) + found
        stop = start
    if len(found) < wanted:  # a claim counted whose entry is gone: which values it claims is unknown
        raise StoreDamagedError(f"the store is damaged: run {run_id} counts {wanted} redaction claim(s), but"
                                f" {len(found)} read back")
    return found


def _claims(store: Store, run_id: str) -> list[PendingClaim]:
    """Every redaction claim on the chain, applied or not."""
    claims: list[PendingClaim] = []
    for entry in _claim_entries(store, run_id):
        for token in entry.get("data", {}).get("fields", []):
            try:
                step, path = parse_field(token)
            except ValueError:
                continue
            claims.append(PendingClaim(entry["step"], step, path))
    return claims


def pending_claims(store: Store, run_id: str) -> list[PendingClaim]:
    """Claims on the chain whose removal has not been applied yet."""
    claims = _claims(store, run_id)
    pending = []
    for claim in claims:
        target = store.entry(run_id, claim.step)
        if claim.path not in target.get("redacted", []):
            pending.append(claim)
    return pending


def apply_pending(store: Store, run_id: str) -> list[PendingClaim]:
    """Step 2 (and recovery): remove every claimed value not yet removed."""
    store.check_intact()  # a rewrite touches its entry's page alone: a damaged store is refused first
    pending = pending_claims(store, run_id)
    by_step: dict[int, list[str]] = {}
    for claim in pending:
        by_step.setdefault(claim.step, []).append(claim.path)
    for step, paths in sorted(by_step.items()):
        _rewrite_redacted(store, run_id, step, paths)  # each rewrite also empties the store's own log
    claimed = {claim.step for claim in _claims(store, run_id)}
    if not pending:
        try:
            store.flush_destroyed()  # a rewrite that landed but could not empty the log: finished here
        except WalKeptError:
            # The log is the store's, not the run's: for a run never redacted there is nothing of its own to
            # finish, and "the redacted value is gone ... a copy may remain" would be said of no value.
            if claimed:
                raise
    home = store_home(store)
    if home is not None:
        # A fold cut short keeps the journals it wrote until a repair names them: no copy of a destroyed
        # value may outlive the redaction there either. Every claimed step, not only the pending ones:
        # a redaction killed after its rewrites but before this leaves nothing pending to resume.
        if claimed:
            discard_folded(home, run_id, claimed)
    return pending


_REWRITE_ATTEMPTS = 3


def _rewrite_redacted(store: Store, run_id: str, step: int, paths: list[str]) -> None:
    """Remove ``paths`` from the stored entry; read again when another redaction of it landed meanwhile.

    The store refuses a rewrite that would restore a path already redacted
    (:class:`ConflictError`): that is another operator's redaction between
    this read and this write, and the entry is read again with it.
    """
    for attempt in range(_REWRITE_ATTEMPTS):
        entry: dict[str, Any] = store.entry(run_id, step)
        try:
            store.rewrite_entry(run_id, step, redact_entry(entry, paths))
            return
        except ConflictError:
            if attempt == _REWRITE_ATTEMPTS - 1:
                raise


def check_repair(by: str, note: str) -> None:
    """Refuse a repair that names no operator or says nothing, before anything is written."""
    if not by.strip():
        raise EvidenceError("--by must name the operator accepting the history")
    if not note.strip():
        raise EvidenceError("--note must say what is being accepted")


def record_repair(writer: RunWriter, *, by: str, note: str, extra: dict[str, Any] | None = None) -> int:
    """Append a ``repair`` entry: an operator accepting damaged or truncated history."""
    check_repair(by, note)
    data: dict[str, Any] = {"by": by, "note": note, "steps_found": writer.steps, "sealed": writer.sealed}
    if extra:
        data.update(extra)
    return writer.append("repair", data, force_checkpoint=True).step
