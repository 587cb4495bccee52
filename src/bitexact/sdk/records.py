"""The data of contexts, human decisions, markers and policy checks, checked at the call.

Each function builds an entry's data from an SDK call's arguments, or raises
:class:`~bitexact.sdk.errors.SdkArgumentError` naming the argument that is
wrong. Nothing here writes.

Policy checks use the protocol's one vocabulary (protocol-vectors.json,
``check_outcomes``): a check returns pass, fail, warn or held; ``error`` is a
check that raised; an outcome outside the vocabulary is recorded as
``unknown``, with what the check said kept beside it, never guessed into
one of the others. The bundle format has no ``policy_check`` kind, so a
check is an asserted ``marker`` whose data carries ``policy_check``.
"""

from __future__ import annotations

import base64
import enum
from collections.abc import Mapping
from typing import Any, Final

from bitexact.canon import canonicalize
from bitexact.crypto import chain_hash
from bitexact.sdk.errors import SdkArgumentError
from bitexact.sdk.handle import RecordHandle
from bitexact.sdk.jsonable import MAX_SAFE_INT, exception_data, to_jsonable

OUTCOMES: Final[tuple[str, ...]] = ("pass", "fail", "warn", "held", "error", "unknown")
DECIDED: Final[tuple[str, ...]] = ("pass", "fail", "warn", "held")
POLICY_CHECK_KIND: Final[str] = "marker"


def _text(value: Any, field: str, *, empty: bool = False) -> str:
    if not isinstance(value, str):
        raise SdkArgumentError(f"{field} must be a string, not {type(value).__name__}", field=field)
    if not empty and not value.strip():
        raise SdkArgumentError(f"{field} must not be empty", field=field)
    return str.__str__(value)  # a str subclass (a `(str, Enum)` member) as the text it holds, as it is stored


def _optional_text(value: Any, field: str) -> str | None:
    return None if value is None else _text(value, field, empty=True)


def _binding(value: Any, field: str, run_id: str | None, bound: int | None = None) -> dict[str, Any]:
    """What ``binds_step`` records: ``{field: step}``; for a handle of this run whose entry became a
    declared gap, ``{field: None, "binds_record": "<kind> #<seq>"}`` (the decision is still recorded,
    naming the record its gap declares); ``{}`` for None. A wrong value raises, naming ``field``.

    ``bound``: the steps the run has so far, counting those its entries still being written may take
    (none known: not checked); a step at or past it is none the decision can review (its own, or one the
    run never reaches), and is refused."""
    if value is None:
        return {}
    if isinstance(value, RecordHandle):  # the step it became
        if value.run_id != run_id:
            raise SdkArgumentError(f"{field}: the handle is of run {value.run_id}, not of this run ({run_id})",
                                   field=field)
        step = value.step()
        if step is None:
            return {field: None, "binds_record": f"{value.kind} #{value.seq}"}
        return {field: step}
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_SAFE_INT:
        raise SdkArgumentError(f"{field} must be a step number (0 to 2^53 - 1) or a RecordHandle", field=field)
    if bound is not None and value >= bound:
        raise SdkArgumentError(f"{field} {value} is not a step of run {run_id}: it has {bound} step(s) so far"
                               f" (0 to {bound - 1}, counting entries still being written); a decision binds an"
                               " entry recorded before it (its RecordHandle, or r.last_step(kind))", field=field)
    return {field: value}


def context_data(name: Any, content: Any, source: Any, alg: str) -> dict[str, Any]:
    """A ``context``: ``content`` (text becomes ``{"text": ...}``), its hash, and where it came from.

    Raises :class:`SdkArgumentError` for an argument that is wrong, and
    :class:`~bitexact.errors.CanonicalizationError` for content canonical
    JSON cannot hold (``-0.0``): the run declares that one as a gap.
    """
    _text(name, "name")
    if isinstance(content, str):
        content = {"text": content}
    elif isinstance(content, Mapping):
        content = dict(content)  # a MappingProxyType, a ChainMap...: its items, never its repr
    else:
        raise SdkArgumentError(f"content must be text or a mapping, not {type(content).__name__}", field="content")
    content = to_jsonable(content)
    data: dict[str, Any] = {"name": name, "content": content,
                            "content_hash": chain_hash(alg, canonicalize(content))}
    source = _optional_text(source, "source")
    if source is not None:
        data["source"] = source
    return data


def bytes_context_data(name: Any, data: Any, source: Any, alg: str) -> dict[str, Any]:
    """A ``context`` of bytes: ``content.b64`` (the capture policy's ``*.b64`` rules apply)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise SdkArgumentError(f"data must be bytes, not {type(data).__name__}", field="data")
    content = {"b64": base64.b64encode(bytes(data)).decode("ascii")}
    return context_data(name, content, source, alg)


def human_decision_data(actor: Any, decision: Any, reason: Any, binds_step: Any,
                        run_id: str | None = None, bound: int | None = None) -> dict[str, Any]:
    """A ``human_decision``: who decided what, why, and the step under review (of run ``run_id``, below
    ``bound``)."""
    data: dict[str, Any] = {"actor": _text(actor, "actor"), "decision": _text(decision, "decision")}
    reason = _optional_text(reason, "reason")
    if reason is not None:
        data["reason"] = reason
    data.update(_binding(binds_step, "binds_step", run_id, bound))
    return data


def marker_data(note: Any) -> dict[str, Any]:
    """A ``marker``: an annotation."""
    return {"note": _text(note, "note")}


def outcome_of(value: Any, *, returned: bool = False) -> tuple[str, Any]:
    """``(outcome, reported)``: the vocabulary word, and what the check said when it was not one.

    An exception is ``error`` (the check raised it), unless the check ``returned`` it: then it is a result
    that says none of the words, ``unknown``; so is the word "error" a check ``returned``.
    """
    if isinstance(value, BaseException) and not returned:
        return "error", None
    if isinstance(value, enum.Enum) and isinstance(value.value, str):
        value = value.value  # a member is recorded as its value: `Verdict.PASS = "pass"` said pass
    # A check that returned the word "error" raised nothing: "error" is a check that raised, so what it
    # returned is a result saying none of the words a check returns, kept as it said it.
    if isinstance(value, str) and value in OUTCOMES and not (returned and value == "error"):
        return str.__str__(value), None  # the word itself: a `(str, Enum)` member's str() is its name
    return "unknown", to_jsonable(value)


def check_name(check: Any) -> str:
    """A policy check's name, or :class:`SdkArgumentError` naming ``check``."""
    return _text(check, "check")


def policy_check_data(
    check: Any, outcome: Any, *, reason: Any = None, detail: Any = None, binds_step: Any = None,
    run_id: str | None = None, returned: bool = False, bound: int | None = None,
) -> dict[str, Any]:
    """A policy check's marker data: ``note`` and ``policy_check`` {check, outcome, decided, ...};
    ``binds_step`` names a step of run ``run_id``; ``returned``: the check returned ``outcome``."""
    check = check_name(check)
    word, reported = outcome_of(outcome, returned=returned)
    record: dict[str, Any] = {"check": check, "outcome": word, "decided": word in DECIDED}
    if reported is not None or (word == "unknown" and outcome is None):
        record["reported"] = reported
    if word == "error" and isinstance(outcome, BaseException):
        record["error"] = exception_data(outcome)
    reason = _optional_text(reason, "reason")
    if reason is not None:
        record["reason"] = reason
    if detail is not None:
        record["detail"] = to_jsonable(detail)
    record.update(_binding(binds_step, "binds_step", run_id, bound))
    return {"note": f"policy check {check}: {word}", "policy_check": record}
