"""Dual-control redaction requests: one principal requests, a different one approves or rejects.

A request, and each decision on it, is a custody record on the run (the
store's record of who opened, tested or asked what), so the request is
accountable before anything changes and nothing on the evidence chain moves
until a second principal approves:

* ``redaction-request`` - ``request`` (id), ``fields`` (``STEP:PATH``),
  ``by``, ``reason``, ``source`` (``capture-backfill``), ``at``;
* ``redaction-approve`` / ``redaction-reject`` - ``request``, ``by``, ``at``
  (and ``reason`` for a rejection);
* ``redaction-withdraw`` - ``request``, ``by``, ``reason``, ``at``: written
  by the filer itself when another request turned out to be pending first.

A request's status is derived from those records: the *first* decision on
it wins, so two approvers racing each other perform one redaction. An
approval performs the store redaction of :mod:`bitexact.recording.audit`,
claim first, then removal, with ``requested_by`` in the ``redaction``
entry (bundle spec §5). A crash after the approval record and before the
removal leaves an approved request with fields unclaimed or not removed;
:func:`approve_request` completes it on its next call, and so does
:func:`finish_approval` (``bitexact redact --resume RUN``), which needs no
new principal: the approval is on record.

Principals are compared with surrounding space removed and case folded, so
``alice`` cannot approve ``Alice``'s request. They are the names given; this
module does not authenticate anyone (see :func:`dual_control_required`).
"""

from __future__ import annotations

import dataclasses
import secrets
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from bitexact.config import env_flag
from bitexact.errors import EvidenceError, StoreBusyError, StoreError
from bitexact.evidence.paths import parse_field
from bitexact.evidence.timefmt import now_iso
from bitexact.recording.audit import apply_pending, check_claimable, record_claim, refuse_unfolded
from bitexact.recording.writer import RunWriter
from bitexact.store import Store

REQUEST: Final[str] = "redaction-request"
APPROVE: Final[str] = "redaction-approve"
REJECT: Final[str] = "redaction-reject"
WITHDRAW: Final[str] = "redaction-withdraw"
DECISIONS: Final[frozenset[str]] = frozenset({APPROVE, REJECT, WITHDRAW})
ENV_DUAL_CONTROL: Final[str] = "BITEXACT_REQUIRE_DUAL_CONTROL"


class RequestError(EvidenceError):
    """A dual-control request cannot be filed, approved or rejected as asked."""


class RequestPendingError(RequestError):
    """A redaction request is already pending for the run."""


class NoPendingRequestError(RequestError):
    """There is no pending redaction request to decide."""


class SamePrincipalError(RequestError):
    """The principal deciding a request is the one who filed it."""


class DecidedElsewhereError(RequestError):
    """Another decision on the request was recorded first; it stands."""


class ApprovalUnfinishedError(RequestError):
    """The approval is recorded, but its redaction could not be carried out to the end; the next approve does."""


def dual_control_required(env: Mapping[str, str] | None = None) -> bool:
    """Whether ``BITEXACT_REQUIRE_DUAL_CONTROL`` is on.

    On: ``1``, ``true``, ``yes``, ``on``; off: unset, empty, ``0``, ``false``,
    ``no``, ``off`` (any case). Anything else raises ``ValueError``
    (:class:`bitexact.config.SettingError`): a setting nobody can read is not
    silently taken as off.
    """
    return env_flag(ENV_DUAL_CONTROL, env=env)


def same_principal(a: str, b: str) -> bool:
    """Whether two typed principal names name the same person (space trimmed, case folded, and compared
    in one Unicode form: ``José`` typed with a combining accent is the ``José`` typed without one)."""
    return _folded(a) == _folded(b)


def _folded(name: str) -> str:
    # Unicode caseless matching: normalize, fold, normalize again (NFKC: compatibility forms too).
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", name.strip()).casefold())


@dataclass(frozen=True)
class RedactionRequest:
    """A request as its custody records make it; ``status`` is pending, approved, rejected or withdrawn."""

    request_id: str
    run_id: str
    fields: tuple[str, ...]
    requested_by: str
    reason: str
    source: str
    requested_at: str
    status: str = "pending"
    decided_by: str | None = None
    decided_at: str | None = None
    decision_reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        """For ``bitexact redaction status --json``."""
        return {
            "request": self.request_id,
            "run_id": self.run_id,
            "status": self.status,
            "fields": list(self.fields),
            "requested_by": self.requested_by,
            "reason": self.reason,
            "source": self.source,
            "requested_at": self.requested_at,
            "decided_by": self.decided_by,
            "decided_at": self.decided_at,
            "decision_reason": self.decision_reason,
        }


_STATUS: Final[dict[str, str]] = {APPROVE: "approved", REJECT: "rejected", WITHDRAW: "withdrawn"}


def requests_from(run_id: str, records: Iterable[Mapping[str, Any]]) -> list[RedactionRequest]:
    """Every request in custody order, each with the first decision recorded on it."""
    found: dict[str, RedactionRequest] = {}
    for record in records:
        event = record.get("event")
        request_id = record.get("request")
        if not isinstance(request_id, str):
            continue
        if event == REQUEST and request_id not in found:
            found[request_id] = RedactionRequest(
                request_id=request_id,
                run_id=run_id,
                fields=tuple(str(f) for f in record.get("fields", [])),
                requested_by=str(record.get("by", "")),
                reason=str(record.get("reason", "")),
                source=str(record.get("source", "")),
                requested_at=str(record.get("at", "")),
            )
        elif event in DECISIONS and request_id in found and found[request_id].status == "pending":
            request = found[request_id]
            reason = record.get("reason")
            found[request_id] = dataclasses.replace(
                request, status=_STATUS[str(event)], decided_by=str(record.get("by", "")),
                decided_at=str(record.get("at", "")), decision_reason=reason if isinstance(reason, str) else None,
            )
    return list(found.values())


def list_requests(store: Store, run_id: str) -> list[RedactionRequest]:
    """The run's redaction requests, oldest first. Raises ``RunNotFoundError``."""
    store.run(run_id)
    return requests_from(run_id, store.custody(run_id))


def pending_request(store: Store, run_id: str) -> RedactionRequest | None:
    """The run's pending request (the oldest, should two have been filed), or ``None``."""
    return next((r for r in list_requests(store, run_id) if r.status == "pending"), None)


def _check_fields(fields: Sequence[str]) -> tuple[str, ...]:
    if not fields:
        raise RequestError("a redaction request names at least one STEP:PATH")
    for token in fields:
        try:
            parse_field(token)
        except ValueError as exc:
            raise RequestError(str(exc)) from None
    return tuple(fields)


def _check_by(by: str, what: str) -> None:
    if not isinstance(by, str) or not by.strip():
        raise RequestError(f"--by must name who {what}")


def file_request(
    store: Store, run_id: str, fields: Sequence[str], *, by: str, reason: str, source: str = "capture-backfill"
) -> RedactionRequest:
    """File one request naming ``fields``; refused while another is pending for the run."""
    _check_by(by, "requests the redaction")
    tokens = _check_fields(fields)
    if not reason.strip():
        raise RequestError("a redaction request says why (its reason)")
    # A field no redaction could claim (no such step, an uncommitted path, an audit entry) is refused
    # now: an approval could never carry it out.
    check_claimable(store, run_id, store.head(run_id)[0], tokens, redacted_ok=True)
    waiting = pending_request(store, run_id)
    if waiting is not None:
        raise RequestPendingError(
            f"run {run_id} already has a pending redaction request ({waiting.request_id}, by {waiting.requested_by},"
            f" {len(waiting.fields)} field(s)); approve or reject it first"
        )
    request_id = secrets.token_hex(8)
    store.add_custody(run_id, {"event": REQUEST, "request": request_id, "fields": list(tokens), "by": by,
                               "reason": reason, "source": source, "at": now_iso()})
    first = pending_request(store, run_id)
    if first is not None and first.request_id != request_id:
        # Another filer got in between the check and the record: theirs stands, ours is withdrawn.
        store.add_custody(run_id, {"event": WITHDRAW, "request": request_id, "by": by, "at": now_iso(),
                                   "reason": f"request {first.request_id} was already pending"})
        raise RequestPendingError(f"run {run_id}: request {first.request_id} was filed first and is pending")
    return next(r for r in list_requests(store, run_id) if r.request_id == request_id)


def _decide(store: Store, run_id: str, event: str, *, by: str, reason: str | None) -> RedactionRequest:
    request = pending_request(store, run_id)
    if request is None:
        raise NoPendingRequestError(f"run {run_id} has no pending redaction request")
    if same_principal(by, request.requested_by):
        raise SamePrincipalError(
            f"{request.requested_by} requested this redaction ({request.request_id}) and {by} names the same"
            " principal; a different principal must decide it"
        )
    record: dict[str, Any] = {"event": event, "request": request.request_id, "by": by, "at": now_iso()}
    if reason is not None:
        record["reason"] = reason
    store.add_custody(run_id, record)
    decided = next(r for r in list_requests(store, run_id) if r.request_id == request.request_id)
    if decided.status != _STATUS[event] or decided.decided_by != by:
        raise DecidedElsewhereError(
            f"request {request.request_id} was {decided.status} by {decided.decided_by} first; that decision stands"
        )
    return decided


def reject_request(store: Store, run_id: str, *, by: str, reason: str) -> RedactionRequest:
    """Reject the pending request; nothing on the run changes."""
    _check_by(by, "rejects the request")
    if not reason.strip():
        raise RequestError("--reason is required: say why the request is rejected")
    return _decide(store, run_id, REJECT, by=by, reason=reason)


@dataclass(frozen=True)
class Approval:
    """What an approval did: the request, the fields claimed and removed, those already gone."""

    request: RedactionRequest
    redacted: tuple[str, ...]
    already: tuple[str, ...]
    completed: bool = False
    """True when this call finished an approval an earlier call recorded but did not carry out."""


def _done_tokens(store: Store, run_id: str) -> set[str]:
    """Every ``STEP:PATH`` already redacted or claimed on the chain."""
    done: set[str] = set()
    for entry in store.entries(run_id):
        done.update(f"{entry['step']}:{path}" for path in entry.get("redacted", []))
        if entry.get("kind") == "redaction":
            done.update(t for t in entry.get("data", {}).get("fields", []) if isinstance(t, str))
    return done


def _removed_tokens(store: Store, run_id: str) -> set[str]:
    """Every ``STEP:PATH`` whose value is already removed (claimed and applied)."""
    return {f"{entry['step']}:{path}" for entry in store.entries(run_id) for path in entry.get("redacted", [])}


def unfinished_approval(store: Store, run_id: str) -> RedactionRequest | None:
    """An approved request some of whose fields are not removed yet: a crash after the approval record,
    before its claim or between the claim and the removal (a claimed value is still stored until then)."""
    approved = [r for r in list_requests(store, run_id) if r.status == "approved"]
    if not approved:
        return None
    removed = _removed_tokens(store, run_id)
    return next((r for r in approved if any(t not in removed for t in r.fields)), None)


def unclaimed_approval(store: Store, run_id: str) -> tuple[RedactionRequest, tuple[str, ...]] | None:
    """An approved request some of whose fields have no claim on the chain yet, with those fields: a crash
    after the approval record and before its claim. Nothing on the chain says the values are to go, so
    ``bitexact verify`` passes and :func:`bitexact.recording.audit.pending_claims` finds nothing; only the
    custody records say the approval was given. (A field claimed but not removed is a pending claim.)"""
    request = unfinished_approval(store, run_id)
    if request is None:
        return None
    done = _done_tokens(store, run_id)
    unclaimed = tuple(t for t in request.fields if t not in done)
    return (request, unclaimed) if unclaimed else None


def finish_approval(writer: RunWriter) -> Approval | None:
    """Carry out an approval a crash left unfinished (claim, then removal), under the approver who gave it;
    None when there is none. What ``bitexact redact --resume`` runs before it applies pending claims: the
    approval is recorded, so no second principal is asked for again."""
    request = unfinished_approval(writer.recorder.store, writer.run_id)
    if request is None:
        return None
    return _carry_out(writer, request, request.decided_by or "", completed=True)


def _carry_out(writer: RunWriter, request: RedactionRequest, approver: str, *, completed: bool) -> Approval:
    store = writer.recorder.store
    done = _done_tokens(store, writer.run_id)
    todo = [t for t in request.fields if t not in done]
    # Finishing an approval, a field claimed but not removed is this approval's own claim: removed now.
    settled = _removed_tokens(store, writer.run_id) if completed else done
    already = tuple(t for t in request.fields if t in settled)
    try:
        if todo:
            record_claim(writer, todo, by=approver, reason=request.reason, requested_by=request.requested_by)
        apply_pending(store, writer.run_id)
    except StoreBusyError:
        # Its "nothing was written" is not so: the approval (and perhaps the claim) is on the run.
        raise ApprovalUnfinishedError(
            f"request {request.request_id} is approved by {approver}, but another process kept the store locked,"
            f" so its values are not removed yet; once it lets go, `bitexact redaction approve {writer.run_id}"
            " --by NAME` finishes it"
        ) from None
    except (StoreError, OSError) as exc:
        # A full disk, a failing one: the approval is on the custody chain all the same, which the store's own
        # words ("database or disk is full") would not tell the approver.
        raise ApprovalUnfinishedError(
            f"request {request.request_id} is approved by {approver}, but its values are not all removed: {exc};"
            f" once the cause is fixed, `bitexact redaction approve {writer.run_id} --by NAME` finishes it"
        ) from None
    return Approval(request, tuple(t for t in request.fields if t not in settled), already, completed)


def approve_request(writer: RunWriter, *, by: str) -> Approval:
    """Approve the run's pending request as ``by`` and perform the redaction it names.

    The approval is recorded on the custody chain, then the ``redaction``
    claim (``by`` the approver, ``requested_by`` the requester) is appended,
    then the values are removed. Fields redacted since the request was filed
    are left as they are. An approved request a crash left unfinished is
    finished first, under the approver who approved it.
    """
    _check_by(by, "approves the request")
    store = writer.recorder.store
    unfinished = unfinished_approval(store, writer.run_id)
    if unfinished is not None:
        return _carry_out(writer, unfinished, unfinished.decided_by or by, completed=True)
    waiting = pending_request(store, writer.run_id)
    if waiting is not None:
        # Checked before the approval is recorded: an approval that could not be carried out would
        # read as approved, and block every later approval on the run while it retried.
        done = _done_tokens(store, writer.run_id)
        check_claimable(store, writer.run_id, writer.steps, [t for t in waiting.fields if t not in done])
        refuse_unfolded(store, writer.run_id)
    request = _decide(store, writer.run_id, APPROVE, by=by, reason=None)
    return _carry_out(writer, request, by, completed=False)


__all__ = [
    "APPROVE",
    "ENV_DUAL_CONTROL",
    "REJECT",
    "REQUEST",
    "WITHDRAW",
    "Approval",
    "ApprovalUnfinishedError",
    "DecidedElsewhereError",
    "NoPendingRequestError",
    "RedactionRequest",
    "RequestError",
    "RequestPendingError",
    "SamePrincipalError",
    "approve_request",
    "dual_control_required",
    "file_request",
    "finish_approval",
    "list_requests",
    "pending_request",
    "reject_request",
    "same_principal",
    "unclaimed_approval",
    "unfinished_approval",
]
