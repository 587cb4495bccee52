"""The entry point the recording layer calls: apply the policy to one step.

``apply_policy`` returns a :class:`Captured`: the data to store, the entry's
``capture`` block (``None`` when nothing needs declaring), the gaps to record
beside the entry, and whether the entry must not be written at all.
``scrub_text`` scrubs one text (``bitexact capture test``, log lines) and
``scrub_stream`` a streamed body once reassembled, never chunk by chunk.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterable
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any

import orjson

from bitexact.canon import canonicalize
from bitexact.capture.block import (
    BLOCK_VERSION,
    HASH_ONLY_PLACEHOLDER,
    KEY_UNAVAILABLE,
    WITHHELD_PLACEHOLDER,
    commit_hash_only,
    withheld_digest,
    withheld_digest_of,
)
from bitexact.capture.budget import BudgetExhausted, Clock, Deadline
from bitexact.capture.clean import MAX_CHARS as CLEAN_MAX_CHARS
from bitexact.capture.clean import clean
from bitexact.capture.errors import CaptureInputError, HintError, ScrubFailedError
from bitexact.capture.hints import (
    COLLECTOR_ONLY,
    UPSTREAM,
    Hint,
    hint_field,
    parse_custody,
)
from bitexact.capture.paths import spell
from bitexact.capture.policy import CapturePolicy
from bitexact.capture.rules import NONE
from bitexact.capture.scan import DetectorFailed
from bitexact.capture.streamed import Streamed, split_streamed
from bitexact.capture.walk import HINT, SCRUB, TOO_LARGE, Walk
from bitexact.crypto import ALGORITHMS, chain_hash
from bitexact.errors import CanonicalizationError
from bitexact.evidence.identity import COMPOSITION, workflow_digest
from bitexact.gcpause import gc_paused

_PAUSE_GC_FROM = 256 * 1024
"""Steps from this size (bytes of JSON) are scanned with the cyclic collector paused."""

# Declarations a collector made that the recorder leaves as they arrived.
_SETTLED_MODES = frozenset({"hash-only", "withheld", "unscanned"})


@dataclass(frozen=True)
class Captured:
    """What the policy made of one step.

    ``data`` is what the entry stores; ``block`` its ``capture`` block (or
    ``None``); ``gaps`` the declared gaps to record beside it; ``withheld``
    is true when the entry must not be written at all (only its gap).
    """

    data: dict[str, Any]
    block: dict[str, Any] | None
    gaps: tuple[dict[str, Any], ...]
    withheld: bool


def _refused(field: str, reason: str) -> Captured:
    gap = {"cause": "invalid_argument", "field": field, "reason": reason}
    return Captured({}, None, (gap,), True)


def _size(data: dict[str, Any]) -> int:
    """The step's size as JSON, in bytes (what the budget is proportional to)."""
    try:
        return len(orjson.dumps(data))
    except (TypeError, orjson.JSONEncodeError):
        pass
    try:
        return len(json.dumps(data, ensure_ascii=False, default=str).encode("utf-8"))
    except (ValueError, RecursionError):
        return 0  # cyclic or too deep: the walk refuses it with a typed error


def _source(source: int | None) -> dict[str, Any]:
    if source is None or source >= NONE:
        return {}
    return {"hint": True} if source == HINT else {"rule": source}


def _check_hint_targets(hints: tuple[Hint, ...], data: dict[str, Any]) -> None:
    for position, hint in enumerate(hints):
        if len(hint.segments) != 2:
            continue
        key, sub = hint.segments
        if key in data and not isinstance(data[key], dict):
            raise HintError(
                hint_field(hint.path, position),
                "names a sub-key of something that is not an object; a hint names KEY or KEY.SUBKEY of an object",
            )
        if key not in data and f"{key}.{sub}" in data:
            # A flat dotted key (OpenTelemetry-style attributes): the hint meant it, and matched nothing, so the
            # value was stored as sent with no custody and no gap. Refused, as a hint that is not one.
            raise HintError(
                hint_field(hint.path, position),
                "names KEY.SUBKEY, but the data holds no KEY and does hold a key with a dot in it; a dot in a key"
                " is written ~1 in a hint (KEY~1SUBKEY)",
            )


def apply_policy(
    policy: CapturePolicy,
    kind: str,
    data: dict[str, Any],
    *,
    hints: dict[str, Any] | None = None,
    alg: str = "blake2b-256",
    applied_by: str = "recorder",
    prior: dict[str, Any] | None = None,
    clock: Clock | None = None,
) -> Captured:
    """Apply ``policy`` to one step of ``kind`` holding ``data``.

    ``hints`` is the event's ``custody`` ({path: hint}); ``prior`` a
    collector's capture block for this event, whose hash-only, withheld and
    unscanned fields are left as they arrived and not declared again;
    ``clock`` drives the scan deadline (tests). The caller's ``data`` is never
    changed.
    """
    streamed: tuple[Streamed, ...] = ()
    if hints and isinstance(data, dict):  # split_streamed() finds nothing with no hints: not called
        streamed, hints = split_streamed(kind, data, hints)
    captured = _apply(policy, kind, data, hints=hints, alg=alg, applied_by=applied_by, prior=prior, clock=clock)
    if not streamed or captured.withheld:
        return captured
    return _with_streamed(policy, captured, streamed, applied_by)


def _with_streamed(policy: CapturePolicy, captured: Captured, streamed: tuple[Streamed, ...],
                   applied_by: str) -> Captured:
    """``captured`` with each field its producer withheld as it streamed declared as too large, as the walk
    declares one it withholds for its size: the same block declaration, and a ``scrub_failed`` gap whose digest
    is over the canonical ``{path: value}`` the producer hashed. Such a gap holds that field alone: a digest
    over it and other withheld fields would need the value whole (docs/capture.md, "Size bound")."""
    fields = dict(captured.block["fields"]) if captured.block is not None else {}
    key = None if policy.off else policy.key
    added: list[dict[str, Any]] = []
    for item in streamed:
        owner = captured.data.get(item.key)
        if not isinstance(owner, dict) or owner.get(item.subkey) != WITHHELD_PLACEHOLDER:
            continue  # its parent was withheld or committed whole: that declaration covers it
        fields[item.path] = {"mode": "withheld", "cause": "scrub_failed", "reason": TOO_LARGE}
        added.append({"cause": "scrub_failed", "fields": {item.path: TOO_LARGE},
                      "withheld": {"digest": "dropped: not canonical JSON"} if item.sha256 is None
                      else withheld_digest_of(key, item.sha256, item.size)})
    if not added:
        return captured
    if captured.block is not None:
        block = {**captured.block, "fields": dict(sorted(fields.items()))}
    else:
        block = {"v": BLOCK_VERSION, "applied_by": applied_by, "policy": policy.run_meta_value,
                 "fields": dict(sorted(fields.items()))}
    gaps = list(captured.gaps)
    at = next((i + 1 for i, gap in enumerate(gaps) if gap.get("cause") == "scrub_failed"), 0)
    gaps[at:at] = added
    return Captured(captured.data, block, tuple(gaps), False)


def _apply(
    policy: CapturePolicy,
    kind: str,
    data: dict[str, Any],
    *,
    hints: dict[str, Any] | None = None,
    alg: str = "blake2b-256",
    applied_by: str = "recorder",
    prior: dict[str, Any] | None = None,
    clock: Clock | None = None,
) -> Captured:
    """:func:`apply_policy` once the streamed-too-large markers are taken out of ``hints``."""
    if not isinstance(data, dict):
        raise CaptureInputError(f"a step's data is a JSON object, not {type(data).__name__}")
    if alg not in ALGORITHMS:
        raise CaptureInputError(f"alg is one of {', '.join(ALGORITHMS)}, not {alg!r}")
    if not isinstance(applied_by, str) or not applied_by:
        raise CaptureInputError("applied_by names who applied the policy (recorder, or a collector's name)")
    if COLLECTOR_ONLY in data:
        return _refused(COLLECTOR_ONLY, "capture is the collector's field alone; a source may not set it")
    parsed: tuple[Hint, ...] = ()
    if hints is not None:  # most steps carry no custody: parse_custody(None) is ()
        try:
            parsed = parse_custody(hints)
            _check_hint_targets(parsed, data)
        except HintError as exc:
            return _refused(exc.field, exc.reason)

    rules = policy.step_rules(kind, data)
    if not parsed and rules.star >= NONE and not (rules.by_key or rules.by_subkey or rules.by_name):
        return Captured(data, None, (), False)  # nothing to do: every field kept as captured
    size = _size(data)
    # Only a step past the bound as JSON is measured field by field: what a field gives the scan is no
    # larger than the step's JSON (but for a double JSON writes with an exponent, read as its up to 21
    # digits). With the policy off nothing is scanned for it to bound (a hinted scrub is never withheld).
    bounded = not policy.off and size > policy.max_body_bytes
    if policy.off:
        deadline = Deadline.unlimited()  # a hint's scrub with the policy off is never withheld
    else:
        deadline = Deadline.for_size(policy.budget_ms, size, clock)
    # A context's content_hash or an identity's workflow_digest is read as any field: the card detector
    # never reads a hex digest's digits as a card number (detectors/pan.py, in_hex_digest).
    skip = _settled_paths(prior) if prior is not None else frozenset()
    if (
        not parsed
        and not skip
        and not policy.off
        and not (rules.by_key or rules.by_subkey or rules.by_name)
        and rules.mode(rules.star) == SCRUB
        and size <= CLEAN_MAX_CHARS
        and not bounded
    ):
        try:
            if clean(data, policy.scanner, deadline):
                return Captured(data, None, (), False)  # the walk would change and declare nothing
        except BudgetExhausted:
            pass  # the walk runs out too, and declares what it could not scan
    walk = Walk(rules, parsed, policy.scanner, skip_paths=skip)
    # A large step's scan allocates millions of findings and pieces: keep it linear.
    with gc_paused() if size >= _PAUSE_GC_FROM else nullcontext():
        walk.run(data)
        if bounded:
            walk.withhold_larger_than(policy.max_body_bytes)
        walk.scan(deadline)
        out = walk.finish()
        walk.release()
    key = None if policy.off else policy.key

    fields: dict[str, dict[str, Any]] = {}
    unavailable: list[str] = []
    withheld: dict[str, str] = {}
    withheld_values: dict[str, Any] = {}
    for unit in walk.withheld_units():
        path = walk.path(unit.chain)
        if policy.off:
            # Off never withholds a hinted field as a failed scrub: it is
            # committed with no key instead, never kept as sent.
            walk.set_field(unit, HASH_ONLY_PLACEHOLDER)
            declaration, _ = commit_hash_only(unit.original, path, key=None, linkable=False, alg=alg)
            fields[path] = {**declaration, "hint": True}
            unavailable.append(path)
            continue
        fields[path] = {"mode": "withheld", "cause": "scrub_failed", "reason": unit.withheld}
        withheld[path] = unit.withheld or "budget"
        # The digest is over what was withheld, as captured: its own key included.
        withheld_values[walk.captured_path(unit.chain)] = unit.original
    for unit in walk.units:
        if unit.withheld is None and unit.counts:
            fields[walk.path(unit.chain)] = {
                "mode": "scrub",
                "found": dict(sorted(unit.counts.items())),
                **_source(unit.source),
            }
    for item in walk.hash_only:
        if walk.units[item.unit].withheld:
            continue
        path = walk.path(item.chain)
        declaration, missing = commit_hash_only(item.value, path, key=key, linkable=item.linkable, alg=alg)
        scrubbed_key = fields.get(path, {}).get("found") if fields.get(path, {}).get("mode") == "scrub" else None
        fields[path] = {**declaration, **_source(item.source)}
        if scrubbed_key:
            # Its key held what a detector found, and was renamed: declared, as any scrub is.
            fields[path]["found"] = scrubbed_key
        if missing:
            unavailable.append(path)
    for chain, _rule, unit_index in walk.unscanned:
        if not walk.units[unit_index].withheld:
            fields.setdefault(walk.path(chain), {"mode": "unscanned"})
    # A claim is declared where its field is stored (its key may have been renamed).
    stored_at = {walk.captured_path(unit.chain): unit for unit in walk.units}
    for hint in parsed:
        if hint.mode != UPSTREAM or not _present(data, hint.segments):
            continue
        stored = stored_at.get(spell(hint.segments))
        path = spell(hint.segments) if stored is None else walk.path(stored.chain)
        if not _stored(out, path):
            continue  # inside an object kept hash-only or withheld whole: that declaration covers it
        # The tool's name is the agent's text, stored in the block: the detectors read it too.
        claim = {"by": policy.scanner.scrub_text(hint.by, Deadline.unlimited())[0]} if hint.by else {}
        if path in fields:
            fields[path].update({"claim": UPSTREAM, **claim})
        else:
            fields[path] = {"mode": UPSTREAM, **claim}

    gaps: list[dict[str, Any]] = []
    if withheld:
        gaps.append(
            {
                "cause": "scrub_failed",
                "fields": dict(sorted(withheld.items())),
                "withheld": _withheld_digest(key, withheld_values),
            }
        )
    if unavailable:
        gaps.append({"cause": KEY_UNAVAILABLE, "paths": sorted(unavailable)})
    block = None
    if fields:
        block = {
            "v": BLOCK_VERSION,
            "applied_by": applied_by,
            "policy": policy.run_meta_value,
            "fields": dict(sorted(fields.items())),
        }
        if kind == "context":
            out = _context_hash_as_stored(out, fields, alg)
        elif kind == "identity":
            out = _workflow_digest_as_stored(out, fields, alg)
    return Captured(out, block, tuple(gaps), False)


_ALTERING_MODES = frozenset({"scrub", "hash-only", "withheld"})


def _context_hash_as_stored(out: dict[str, Any], fields: dict[str, dict[str, Any]], alg: str) -> dict[str, Any]:
    """A ``context``'s ``content_hash`` over its content as stored, once the policy changed that content.

    The bundle format has ``content_hash`` be the hash of the entry's content;
    a hash of the content as sent would be an unkeyed digest of the values
    the policy kept out of the store, against which anyone could test a
    guess (a card number, a PIN). When the content is not stored at all, the
    hash goes with it.
    """
    if "content_hash" not in out or not any(
        (path == "content" or path.startswith("content.")) and declared.get("mode") in _ALTERING_MODES
        for path, declared in fields.items()
    ):
        return out
    digest: str | None = None
    if "content" in out:
        try:
            digest = chain_hash(alg, canonicalize(out["content"]))
        except CanonicalizationError:
            pass  # the write path refuses such content anyway, naming it
    # In place, every other key where it was: backfill pairs stored fields with the policy's by position.
    return {key: (digest if key == "content_hash" else value) for key, value in out.items()
            if key != "content_hash" or digest is not None}


def _workflow_digest_as_stored(out: dict[str, Any], fields: dict[str, dict[str, Any]],
                               alg: str) -> dict[str, Any]:
    """An ``identity``'s ``workflow_digest`` over its composition fields as stored, once the policy changed
    one of them: as for a context's ``content_hash``, a digest of the fields as sent could not be recomputed
    by a reader, and would let anyone test a guess at what the policy kept out of the store. With no
    ``workflow`` stored, the digest goes with it. A digest the policy itself governs is left as it made it."""
    if "workflow_digest" in fields or not any(
        path in COMPOSITION and declared.get("mode") in _ALTERING_MODES for path, declared in fields.items()
    ):
        return out
    try:
        digest = workflow_digest(out, alg)
    except CanonicalizationError:
        digest = None  # the write path refuses such fields anyway, naming them
    return {key: (digest if key == "workflow_digest" else value) for key, value in out.items()
            if key != "workflow_digest" or digest is not None}


def _present(data: dict[str, Any], segments: tuple[str, ...]) -> bool:
    if segments[0] not in data:
        return False
    return len(segments) == 1 or (isinstance(data[segments[0]], dict) and segments[1] in data[segments[0]])


def _stored(data: Any, path: str) -> bool:
    """Whether a committed path (one or two escaped keys) names a value the entry stores."""
    value = data
    for part in path.split(".", 1):
        key = part.replace("~1", ".").replace("~0", "~")
        if not isinstance(value, dict) or key not in value:
            return False
        value = value[key]
    return True


def _settled_paths(prior: dict[str, Any] | None) -> frozenset[str]:
    if not isinstance(prior, dict) or not isinstance(prior.get("fields"), dict):
        return frozenset()
    return frozenset(
        path
        for path, declaration in prior["fields"].items()
        if isinstance(declaration, dict) and declaration.get("mode") in _SETTLED_MODES
    )


def _withheld_digest(key: Any | None, values: dict[str, Any]) -> dict[str, Any]:
    try:
        content = canonicalize(values)
    except CanonicalizationError:
        return {"digest": "dropped: not canonical JSON"}
    return withheld_digest(key, content)


def scrub_text(policy: CapturePolicy, text: str, *, clock: Clock | None = None) -> tuple[str, dict[str, int]]:
    """``text`` as the policy in force would store it, and what each detector found.

    With the policy off the text is returned as it is. Raises
    :class:`ScrubFailedError` when the scan runs out of its budget or a
    detector fails (the caller must not keep the text).
    """
    if not isinstance(text, str):
        raise CaptureInputError(f"scrub_text takes a str, not {type(text).__name__}")
    if policy.off:
        return text, {}
    deadline = Deadline.for_size(policy.budget_ms, len(text.encode("utf-8", "surrogatepass")), clock)
    try:
        scrubbed, counts = policy.scanner.scrub_text(text, deadline)
    except BudgetExhausted:
        raise ScrubFailedError("the text could not be scanned within the policy's budget") from None
    except DetectorFailed as exc:
        raise ScrubFailedError(str(exc)) from None
    return scrubbed, dict(sorted(counts.items()))


def reassemble(chunks: Iterable[bytes | str], *, encoding: str = "utf-8") -> str:
    """A streamed body as one text: bytes decoded across chunk boundaries, errors replaced."""
    decoder = codecs.getincrementaldecoder(encoding)(errors="replace")
    parts: list[str] = []
    for chunk in chunks:
        parts.append(chunk if isinstance(chunk, str) else decoder.decode(chunk))
    parts.append(decoder.decode(b"", final=True))
    return "".join(parts)


def scrub_stream(
    policy: CapturePolicy, chunks: Iterable[bytes | str], *, encoding: str = "utf-8", clock: Clock | None = None
) -> tuple[str, dict[str, int]]:
    """Scrub a streamed body once reassembled, so a value split across chunks is still found."""
    return scrub_text(policy, reassemble(chunks, encoding=encoding), clock=clock)


__all__ = ["Captured", "apply_policy", "reassemble", "scrub_stream", "scrub_text"]
