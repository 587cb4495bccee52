"""DSSE envelopes around a run (bundle spec §10.2, §12.2), and the envelope checks a bag reuses."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bitexact.canon import loads
from bitexact.crypto import verify_strict
from bitexact.errors import StrictJSONError
from bitexact.evidence.verify.bundle import verify_bundle_document
from bitexact.evidence.verify.encodings import derives_key_id, strict_b64decode
from bitexact.evidence.verify.failure import CheckFailed
from bitexact.evidence.verify.pins import Pins
from bitexact.evidence.verify.verdict import ClauseProviderFactory, Verdict, failed
from bitexact.evidence.vocabulary import (
    DSSE_PAYLOAD_TYPE,
    RUN_PREDICATE,
    STATEMENT_TYPE,
)


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE pre-authentication encoding: ``DSSEv1 SP len(type) SP type SP len(body) SP body``."""
    kind = payload_type.encode("utf-8")
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


def open_envelope(envelope: dict[str, Any], pins: Pins, prefix: str = "envelope ") -> bytes:
    """DSSE checks 1-4: payload type, base64, an accepted signature; returns the payload bytes."""
    payload_type = envelope.get("payloadType")
    if payload_type != DSSE_PAYLOAD_TYPE:
        raise CheckFailed(f"{prefix}unsupported payloadType {payload_type!r}")
    payload = strict_b64decode(envelope.get("payload"))
    if payload is None:
        raise CheckFailed(f"{prefix}payload is not valid base64")
    message = pae(payload_type, payload)
    signatures = envelope.get("signatures")
    for signature in signatures if isinstance(signatures, list) else ():
        if not isinstance(signature, dict):
            continue
        raw = strict_b64decode(signature.get("sig"))
        public_key = signature.get("public_key")
        if raw is None or not pins.trusts_bundle_key(public_key):
            continue  # skipped, not refused: a later signature may still be acceptable
        if verify_strict(public_key, raw, message):
            if "keyid" in signature and not derives_key_id(signature["keyid"], public_key):
                raise CheckFailed(f"{prefix}signature keyid does not match its public_key")
            return payload
    raise CheckFailed(
        f"{prefix}signature verification failed - no acceptable signature over the payload"
    )


def _statement_predicate(payload: bytes) -> object:
    """DSSE checks 5-9 for a run envelope; returns the predicate."""
    try:
        statement = loads(payload)
    except StrictJSONError:
        raise CheckFailed("envelope payload is not JSON") from None
    if not isinstance(statement, dict):
        raise CheckFailed("unsupported statement type None")
    if statement.get("_type") != STATEMENT_TYPE:
        raise CheckFailed(f"unsupported statement type {statement.get('_type')!r}")
    predicate_type = statement.get("predicateType")
    if predicate_type != RUN_PREDICATE:
        raise CheckFailed(
            f"unsupported predicateType {predicate_type!r} - a run envelope states {RUN_PREDICATE}"
        )
    predicate = statement.get("predicate")
    bundle = predicate if isinstance(predicate, dict) else {}
    subject = _first_subject(statement)
    name = subject.get("name")
    if not isinstance(name, str) or name != bundle.get("run_id"):
        raise CheckFailed("statement subject does not name the bundle run")
    digest = subject.get("digest")
    head = digest.get("head") if isinstance(digest, dict) else None
    chain = bundle.get("chain")
    if not isinstance(head, str) or not isinstance(chain, dict) or head != chain.get("head_hash"):
        raise CheckFailed("statement subject digest does not pin the chain head")
    return predicate


def _first_subject(statement: dict[str, Any]) -> dict[str, Any]:
    # Only subject[0] is checked (§10.2); a missing one names nothing.
    subjects = statement.get("subject")
    if isinstance(subjects, list) and subjects and isinstance(subjects[0], dict):
        return subjects[0]
    return {}


def verify_envelope(
    envelope: dict[str, Any], pins: Pins, *, clauses: Sequence[ClauseProviderFactory] = ()
) -> Verdict:
    """Verify a DSSE run envelope, then its predicate with the same pins."""
    try:
        predicate = _statement_predicate(open_envelope(envelope, pins))
    except CheckFailed as failure:
        return failed(failure.message, form="dsse")
    except Exception as exc:  # a verifier never crashes (§12.2)
        return failed(f"malformed envelope: {exc!r}", form="dsse")
    verdict, _ = verify_bundle_document(predicate, pins, form="dsse", clauses=clauses)
    return verdict
