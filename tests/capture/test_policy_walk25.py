"""The policy's dispatch, the clean walk and the scanner's joined pass store and declare exactly what they did.

policy25 cut instructions from the recorded call's policy: ``Scanner.scrub_many`` returns before its bookkeeping
when its joined pass finds nothing and no text needs a second read, the clean walk inlines ``replaced_whole`` and
its descent into objects and lists, and ``apply_policy`` works a kind's rules out once (``CapturePolicy.step_rules``)
and skips parsing absent custody, streamed markers and prior blocks. The reference below is that code as it was
(6ae0a3d), kept here as an oracle: ``old_apply_policy`` (the dispatch), ``OldTexts``/``old_clean`` (the clean walk)
and ``OldScanner.scrub_many`` (the joined pass; every nested call of the reference scanner goes through it too).
Every step is run both ways and everything the policy returns must be the same: the data stored, the capture
block, the gaps, whether the entry is withheld, or the error raised. Random commitments and nonces (a hash-only
field's) are the only parts compared as "present". The steps: every object and string of the capture tests' data
files and the protocol vectors, the false-positive tests' rows, the hostile benchmark's fragments, lists and objects
(as text, as a list, as a JSON document), and hypothesis-generated JSON values of credential names, card numbers,
IBANs and their look-alikes; under the default, pci, off, every-detector and a rules policy (``where``, ``KEY``,
``KEY.SUBKEY``, ``*.NAME``, hash-only, keep).
"""

from __future__ import annotations

import bisect
import dataclasses
import importlib.util
import json
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from itertools import accumulate
from pathlib import Path
from typing import Any

import pytest
from capture.support import still_clock
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bitexact.capture import load_policy, parse_policy
from bitexact.capture.apply import (
    _PAUSE_GC_FROM,
    Captured,
    _check_hint_targets,
    _context_hash_as_stored,
    _present,
    _refused,
    _settled_paths,
    _size,
    _source,
    _stored,
    _with_streamed,
    _withheld_digest,
    _workflow_digest_as_stored,
    apply_policy,
)
from bitexact.capture.block import BLOCK_VERSION, HASH_ONLY_PLACEHOLDER, KEY_UNAVAILABLE, commit_hash_only
from bitexact.capture.budget import BudgetExhausted, Clock, Deadline
from bitexact.capture.clean import MAX_CHARS, MAX_DEPTH, _BYTES_KEY, _Texts, _Unclean, clean
from bitexact.capture.clean import MAX_CHARS as CLEAN_MAX_CHARS
from bitexact.capture.detectors import Finding
from bitexact.capture.errors import CaptureInputError, HintError
from bitexact.capture.hints import COLLECTOR_ONLY, UPSTREAM, parse_custody
from bitexact.capture.paths import spell
from bitexact.capture.policy import CapturePolicy
from bitexact.capture.rules import GOVERNED_KINDS, NONE, StepRules
from bitexact.capture.scan import (
    _DOCUMENT_HIDES,
    _PLUS_ONE,
    _REPEAT_FROM,
    _SCAN_ALONE,
    _SEPARATOR,
    DetectorFailed,
    Scanner,
    _may_hold_kube_secret,
    _may_hold_name_value,
    _may_hold_sensitive,
    _may_hold_sensitive_attributes,
    _may_hold_sensitive_values,
    apply_findings,
    looks_like_document,
)
from bitexact.capture.streamed import Streamed, split_streamed
from bitexact.capture.terminal import ESC
from bitexact.capture.walk import NAME_VALUE_KEYS, SCRUB, Walk, argv_passwords, credential_pair, name_value, replaced_whole
from bitexact.crypto import ALGORITHMS
from bitexact.gcpause import gc_paused

# ---------------------------------------------------------------------------------------------------------------
# The reference: the policy's dispatch, the clean walk and the scanner's joined pass as they were at 6ae0a3d.
# ---------------------------------------------------------------------------------------------------------------


def old_repeats(texts: list[str]) -> bool:
    if len(texts) > 8:
        return len(set(texts)) < len(texts)
    return any(text == other for at, text in enumerate(texts) for other in texts[at + 1:])



class OldScanner(Scanner):
    """The scanner with ``scrub_many`` as it was (every nested call, a document's included, goes through it)."""

    def scrub_many(
        self,
        texts: Sequence[str],
        deadline: Deadline,
        *,
        context_of: Callable[[int], str | None] | None = None,
        depth: int = 0,
    ) -> dict[int, tuple[str, Counter[str]]]:
        if not texts or not self.detectors:
            return {}
        context = context_of or (lambda index: None)
        changed: dict[int, tuple[str, Counter[str]]] = {}
        # A large text is scanned on its own: joining would only copy it.
        lengths = list(map(len, texts))
        large = [i for i, size in enumerate(lengths) if size >= _SCAN_ALONE] if max(lengths) >= _SCAN_ALONE else []
        for index in large:
            new, counts = self.scrub_text(texts[index], deadline, context=context(index), depth=depth)
            if counts:
                changed[index] = (new, counts)
        if large:
            rest = [i for i in range(len(texts)) if len(texts[i]) < _SCAN_ALONE]
            if rest:
                inner = self.scrub_many(
                    [texts[i] for i in rest], deadline, context_of=lambda i: context(rest[i]), depth=depth
                )
                changed.update({rest[i]: result for i, result in inner.items()})
            return changed
        if len(texts) == 1:
            new, counts = self.scrub_text(texts[0], deadline, context=context(0), depth=depth)
            return {0: (new, counts)} if counts else {}
        # A long text that stands twice (a result echoing its arguments) is scanned once, and so is every
        # other text that repeats then: each text is read as it would be alone, so what the joined pass finds in it is its own wherever
        # it stands; only a rescan takes the context of each place it stands in.
        distinct: Sequence[str] = texts
        if sum(map(_REPEAT_FROM.__le__, lengths)) > 1 and old_repeats([t for t in texts if len(t) >= _REPEAT_FROM]):
            distinct = list(dict.fromkeys(texts))
        joined = _SEPARATOR.join(distinct)
        # Each text's start: the lengths before it, and a NUL after each.
        starts = [*accumulate(map(_PLUS_ONE, lengths if distinct is texts else map(len, distinct)), initial=0)]
        direct: dict[int, list[Finding]] = {}
        rescan: set[int] = set()
        for detector in self.detectors:
            for finding in self._run(detector, joined, deadline, True):
                first = bisect.bisect_right(starts, finding.start) - 1
                last = bisect.bisect_right(starts, max(finding.start, finding.end - 1)) - 1
                # A match that takes the separator after its text (a custom \D) is no finding of that text.
                past_end = finding.end > starts[first] + len(distinct[first])
                if first != last or past_end or not finding.token or not detector.context_free:
                    rescan.update(range(first, last + 1))
                    continue
                base = starts[first]
                direct.setdefault(first, []).append(
                    Finding(finding.start - base, finding.end - base, finding.token, finding.detector)
                )
        # A JSON document with escapes can hide what its raw text does not show.
        position = joined.find("\\")
        while position != -1:
            index = bisect.bisect_right(starts, position) - 1
            if looks_like_document(distinct[index]):
                rescan.add(index)
            position = joined.find("\\", starts[index + 1]) if index + 1 < len(distinct) else -1
        # A text holding terminal codes is read as a terminal shows it too (Scanner.findings): the texts as shown
        # are read joined, and one that holds a finding there is scanned alone.
        position = joined.find(ESC)
        if position != -1:
            coded: list[int] = []
            while position != -1:
                index = bisect.bisect_right(starts, position) - 1
                coded.append(index)
                position = joined.find(ESC, starts[index + 1]) if index + 1 < len(distinct) else -1
            rescan.update(self._found_on_screen(distinct, coded, deadline))
        # So can one holding a number in exponent form, or a credential as a [name, value] pair or a name/value
        # object: read as text, none shows (the walk reads them, held as data). Only documents are searched.
        for index, text in enumerate(distinct) if ("{" in joined or "[" in joined) else ():
            opening = text[:1]
            if (index not in rescan and (opening in "{[" or opening.isspace()) and looks_like_document(text)
                    and (_DOCUMENT_HIDES.search(text)
                         or (self.by_key and (_may_hold_name_value(text) or _may_hold_kube_secret(text)
                                              or _may_hold_sensitive(text)
                                              or _may_hold_sensitive_attributes(text)
                                              or _may_hold_sensitive_values(text))))):
                rescan.add(index)
        spot = None if distinct is texts else {text: at for at, text in enumerate(distinct)}
        for index in sorted(rescan.union(direct)) if spot is None else range(len(texts)):
            at = index if spot is None else spot[texts[index]]
            if at not in rescan and at not in direct:
                continue
            text = texts[index]
            if at in rescan or looks_like_document(text):
                new, counts = self.scrub_text(text, deadline, context=context(index), depth=depth)
            else:
                new, counts = apply_findings(text, direct[at], self.rank)
            if counts:
                changed[index] = (new, counts)
        return changed



class OldTexts(_Texts):
    """The clean walk's ``members`` and ``value`` as they were."""

    def members(self, value: dict[Any, Any], depth: int) -> None:
        # An object holding no key name_value looks for is no name/value object: asked in C, without the call.
        pair = None if NAME_VALUE_KEYS.isdisjoint(value) else name_value(self.scanner, value)
        if pair is None:  # nearly every object: no role to look up
            texts, contexts, scanner = self.texts, self.contexts, self.scanner
            for key, item in value.items():
                if type(key) is not str:
                    self.member(key, item, depth, owner=value)  # a key that is not text, or a subclass's
                    continue
                # member(key, item, depth, PLAIN, value) and, for a string, value() and scalar() inline: this
                # runs once per key of every step, and three Python calls per key were most of the walk's cost.
                texts.append(key)
                contexts.append(None)
                if replaced_whole(scanner, key, item, value):
                    raise _Unclean  # replaced whole by the credential token
                if type(item) is str:
                    if key == _BYTES_KEY:
                        raise _Unclean  # declared unscanned
                    texts.append(item)
                    contexts.append(key)
                    continue
                if key == _BYTES_KEY and isinstance(item, str):
                    raise _Unclean
                self.value(item, key, depth)
            return
        for key, item in value.items():
            self.member(key, item, depth, pair.role(key), value)

    def value(self, value: Any, context: str | None, depth: int) -> None:
        kind = type(value)
        if kind is dict:
            if depth >= MAX_DEPTH:
                raise _Unclean
            self.members(value, depth + 1)
        elif kind is list:
            if depth >= MAX_DEPTH:
                raise _Unclean
            if credential_pair(self.scanner, value) or argv_passwords(self.scanner, value):
                raise _Unclean  # a [name, value] pair whose value is replaced whole, an argv list's password
            texts, contexts = self.texts, self.contexts
            for item in value:
                if type(item) is str:  # value() then scalar() of a string, inline: most items are
                    texts.append(item)
                    contexts.append(context)
                else:
                    self.value(item, context, depth + 1)
        elif isinstance(value, (dict, list, tuple)):
            raise _Unclean  # a subclass or a tuple: the walk decides what it makes of it
        else:
            self.scalar(value, context)



def old_clean(data: dict[str, Any], scanner: Scanner, deadline: Deadline) -> bool:
    found = OldTexts(scanner)
    try:
        found.members(data, 1)
    except (_Unclean, RecursionError):
        return False
    if sum(map(len, found.texts)) > MAX_CHARS:
        return False
    try:
        changed = scanner.scrub_many(found.texts, deadline, context_of=found.contexts.__getitem__)
    except DetectorFailed:
        return False
    except BudgetExhausted:
        raise
    return not changed


def old_apply_policy(
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
    streamed: tuple[Streamed, ...] = ()
    if isinstance(data, dict):
        streamed, hints = split_streamed(kind, data, hints)
    captured = old_apply(policy, kind, data, hints=hints, alg=alg, applied_by=applied_by, prior=prior, clock=clock)
    if not streamed or captured.withheld:
        return captured
    return _with_streamed(policy, captured, streamed, applied_by)

def old_apply(
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
    if not isinstance(data, dict):
        raise CaptureInputError(f"a step's data is a JSON object, not {type(data).__name__}")
    if alg not in ALGORITHMS:
        raise CaptureInputError(f"alg is one of {', '.join(ALGORITHMS)}, not {alg!r}")
    if not isinstance(applied_by, str) or not applied_by:
        raise CaptureInputError("applied_by names who applied the policy (recorder, or a collector's name)")
    if COLLECTOR_ONLY in data:
        return _refused(COLLECTOR_ONLY, "capture is the collector's field alone; a source may not set it")
    try:
        parsed = parse_custody(hints)
        _check_hint_targets(parsed, data)
    except HintError as exc:
        return _refused(exc.field, exc.reason)

    governed = kind in GOVERNED_KINDS and not policy.off
    rules = StepRules.select(policy.rules if governed else (), kind, data)
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
    skip = _settled_paths(prior)
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
            if old_clean(data, policy.scanner, deadline):
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



# ---------------------------------------------------------------------------------------------------------------
# The comparison.
# ---------------------------------------------------------------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
_RANDOM = frozenset({"commitment", "nonce", "keyed"})  # a hash-only commitment's salt and nonce are fresh each time


def _reference(policy: CapturePolicy) -> CapturePolicy:
    return dataclasses.replace(policy, scanner=OldScanner(policy.scanner.detectors))


def _every_detector() -> CapturePolicy:
    return parse_policy({"detectors": {"pan": {"keep_last4": True}, "iban": {}, "credentials": {},
                                       "us_ssn": {"require_context": True}, "email": {},
                                       "custom": [{"name": "account", "pattern": "ACCT-\\d{8}"}]}})


def _with_rules() -> CapturePolicy:
    return parse_policy({"fields": [
        {"kind": "tool_call", "where": {"tool": "kyc_lookup"}, "path": "result", "mode": "hash-only"},
        {"kind": "tool_call", "path": "kwargs.limit", "mode": "keep"},
        {"kind": "*", "path": "*.password", "mode": "hash-only"},
        {"kind": "http_call", "path": "response", "mode": "keep"},
        {"kind": "*", "path": "*", "mode": "scrub"},
    ]})


POLICIES = {"default": load_policy("default"), "pci": load_policy("pci"), "off": load_policy("off"),
            "every": _every_detector(), "rules": _with_rules()}
REFERENCES = {name: _reference(policy) for name, policy in POLICIES.items()}
KINDS = ("tool_call", "model_call", "http_call", "context", "identity", "marker")


def _normal(value: Any) -> Any:
    """``value`` with each random commitment, nonce and keyed digest replaced by a mark of its presence."""
    if isinstance(value, dict):
        return {key: ("<random>" if key in _RANDOM else _normal(item)) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_normal(item) for item in value]
    return value


def _outcome(apply: Callable[..., Captured], policy: CapturePolicy, kind: str, data: Any,
             **extra: Any) -> tuple[Any, ...]:
    # On a clock that never moves neither side runs out of its budget and withholds what the other read.
    extra.setdefault("clock", still_clock)
    try:
        captured = apply(policy, kind, data, **extra)
    except Exception as exc:  # the same error, named the same way
        return ("raised", type(exc).__name__, str(exc))
    return (_normal(captured.data), [type(k) for k in captured.data], _normal(captured.block),
            _normal(captured.gaps), captured.withheld)


def assert_same(data: Any, *, kinds: Sequence[str] = ("tool_call",), policies: Sequence[str] = tuple(POLICIES),
                **extra: Any) -> None:
    for name in policies:
        for kind in kinds:
            new = _outcome(apply_policy, POLICIES[name], kind, data, **extra)
            old = _outcome(old_apply_policy, REFERENCES[name], kind, data, **extra)
            assert new == old, (name, kind, data)
    scanner, reference = POLICIES["every"].scanner, REFERENCES["every"].scanner
    if isinstance(data, dict):
        # The clean walk and the joined pass on their own: the same texts, the same answer.
        walked, old_walked = _Texts(scanner), OldTexts(scanner)
        outcomes = []
        for texts in (walked, old_walked):
            try:
                texts.members(data, 1)
                outcomes.append((texts.texts, texts.contexts))
            except (_Unclean, RecursionError) as exc:
                outcomes.append(type(exc).__name__)
        assert outcomes[0] == outcomes[1], data
        for policy in (POLICIES["default"], POLICIES["every"]):
            clean_new = _clean_or_error(clean, data, policy.scanner)
            clean_old = _clean_or_error(old_clean, data, _reference(policy).scanner)
            assert clean_new == clean_old, data
        if isinstance(outcomes[0], tuple) and outcomes[0][0]:
            texts, contexts = outcomes[0]
            assert _many(scanner, texts, contexts) == _many(reference, texts, contexts), data


def _clean_or_error(run: Callable[..., bool], data: dict[str, Any], scanner: Scanner) -> Any:
    try:
        return run(data, scanner, Deadline.unlimited())
    except Exception as exc:
        return ("raised", type(exc).__name__, str(exc))


def _many(scanner: Scanner, texts: list[str], contexts: list[str | None]) -> Any:
    try:
        return scanner.scrub_many(texts, Deadline.unlimited(), context_of=contexts.__getitem__)
    except Exception as exc:
        return ("raised", type(exc).__name__, str(exc))


def _objects(value: Any) -> list[Any]:
    """Every object and every string inside ``value`` (``value`` itself included)."""
    found: list[Any] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            found.append(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            found.append(item)
    return found


def _as_steps(value: Any) -> list[dict[str, Any]]:
    """``value`` as the steps an agent would record holding it."""
    if isinstance(value, dict):
        return [value, {"tool": "lookup", "result": value}]
    if isinstance(value, str):
        return [{"tool": "lookup", "args": [value], "result": value}, {"output": value, "lines": value.splitlines()}]
    return [{"tool": "lookup", "args": value}, {"tool": "lookup", "result": {"items": value}}]


# -- the capture tests' data files and the protocol vectors ------------------------------------------------------

DATA = ROOT / "tests" / "capture" / "data"
JSON_FILES = [ROOT / "tests" / "data" / "sdk" / "protocol-vectors.json", *sorted(DATA.glob("*.json"))]
TEXT_FILES = sorted(path for path in DATA.iterdir() if path.suffix not in (".json", ".md"))


@pytest.mark.parametrize("path", JSON_FILES, ids=lambda path: path.name)
def test_every_object_and_string_of_the_json_data_files(path: Path) -> None:
    values = _objects(json.loads(path.read_text(encoding="utf-8")))
    assert values
    for value in values:
        for step in _as_steps(value):
            assert_same(step, kinds=KINDS if isinstance(value, dict) else ("tool_call",))


@pytest.mark.parametrize("path", TEXT_FILES, ids=lambda path: path.name)
def test_every_text_data_file(path: Path) -> None:
    text = path.read_text(encoding="utf-8", errors="replace")
    for step in _as_steps(text):
        assert_same(step)


# -- the false-positive tests' rows ------------------------------------------------------------------------------


def _rows(module_name: str) -> list[Any]:
    """Every string, object and list a false-positive test module holds: its constants, its parametrized rows and
    the texts its tests write inline (a test's docstring left out)."""
    module = _load(module_name)
    found: list[Any] = []
    for name, value in vars(module).items():
        if name.isupper() and isinstance(value, (str, dict, list, tuple)):
            found.append(value)
        code = getattr(value, "__code__", None)
        if name.startswith("test_") and code is not None:  # the texts a test writes inline
            found.extend(const for const in code.co_consts if isinstance(const, str) and len(const) >= 8
                         and const != code.co_consts[0])
        for mark in getattr(value, "pytestmark", ()):
            if mark.name == "parametrize":
                for row in mark.args[1]:
                    row = getattr(row, "values", row)
                    found.extend(row if isinstance(row, tuple) else (row,))
    leaves: list[Any] = []
    for value in found:
        if isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
            leaves.append(list(value))
            leaves.extend(value)
        elif isinstance(value, (str, dict)):
            leaves.append(value)
        elif isinstance(value, (list, tuple)):
            leaves.extend(item for item in value if isinstance(item, (str, dict)))
    return leaves


def _load(module_name: str) -> Any:
    return __import__(f"tests.capture.{module_name}", fromlist=["_"])


@pytest.mark.parametrize("module_name", ["test_false_positives15", "test_false_positives16"])
def test_the_false_positive_rows(module_name: str) -> None:
    rows = _rows(module_name)
    assert len(rows) > 30
    for row in rows:
        for step in _as_steps(row):
            assert_same(step, kinds=("tool_call", "model_call"))


# -- the hostile benchmark's inputs ------------------------------------------------------------------------------


def _hostile() -> Any:
    spec = importlib.util.spec_from_file_location("capture_hostile25", ROOT / "benchmarks" / "capture_hostile.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


HOSTILE = _hostile()


@pytest.mark.parametrize("size", [200, 1200])
def test_the_hostile_fragments_as_text_a_list_and_a_document(size: int) -> None:
    fragments = (*HOSTILE.FRAGMENTS, *HOSTILE.LATEST_FRAGMENTS, *HOSTILE.TERMINAL_FRAGMENTS)
    assert len(fragments) > 100
    for fragment in fragments:
        text = (fragment * (size // len(fragment) + 1))[:size]
        words = [fragment] * max(1, size // (8 * len(fragment)))
        for step in (*_as_steps(text), {"tool": "t", "args": words}, {"tool": "t", "result": json.dumps(words)},
                     {"tool": "t", "result": json.dumps({"log": text})}):
            assert_same(step, policies=("default", "every"))


def test_the_hostile_lists_and_objects_as_data_and_as_documents() -> None:
    for run in (*HOSTILE.LISTS, *HOSTILE.OBJECTS):
        items = [*run] * 20
        for step in ({"tool": "t", "args": items}, {"tool": "t", "result": {"items": items}},
                     {"tool": "t", "result": json.dumps(items)}, *(_as_steps(item) for item in run
                                                                   if isinstance(item, dict))):
            for one in step if isinstance(step, list) else [step]:
                assert_same(one, policies=("default", "every", "rules"))


# -- the benchmark's call and hand-picked steps ------------------------------------------------------------------

KIB = "k" * 1000
VISA = "4111111111111111"
IBAN = "DE89370400440532013000"
CASES: list[dict[str, Any]] = [
    {"tool": "tool", "args": [KIB], "kwargs": {}, "result": {"answer": KIB[:24], "echo": KIB}, "status": "ok"},
    {"tool": "tool", "args": [KIB], "kwargs": {}, "result": {"answer": VISA, "echo": KIB}, "status": "ok"},
    {"tool": "kyc_lookup", "result": {"name": "x", "password": "hunter2"}, "kwargs": {"limit": VISA}},
    {"a": KIB + VISA, "b": KIB + VISA, "c": [KIB, KIB]}, {"a": "x" * 70000, "b": VISA}, {"a": ["x" * 70000, VISA]},
    {"doc": json.dumps({"password": "hunter2"}), "doc2": json.dumps(["--api-key", "abc"])},
    {"doc": '{"a": "4111\\u00311111111111111"}'}, {"esc": "\x1b[1mpassword\x1b[0m: hunter2"},
    {"n": 4111111111111111, "f": 4.111111111111111e15, "small": 7, "neg": -4111111111111111},
    {"b64": "aGVsbG8="}, {"headers": ["Authorization", "Bearer abcdefghijklmnop"]}, {"argv": ["mysql", "-psecret"]},
    {"name": "DB_PASSWORD", "value": "x"}, {"kind": "Secret", "data": {"a": "b"}}, {"iban": IBAN, "also": IBAN},
    {"doc": '{"n": 4.111111111111111E15}'}, {"doc": '{"name": "DB_PASSWORD", "value": "x1y2z3"}'},
    {"doc": '["--api-key", "abcdef123456"]'}, {"doc": '{"kind": "Secret", "data": {"a": "b"}}'},
    {"capture": {"v": 1}}, {"empty": {}, "list": [], "nested": {"e": {}}},
]


@pytest.mark.parametrize("data", CASES)
def test_hand_picked_steps(data: dict[str, Any]) -> None:
    assert_same(data, kinds=KINDS)


@pytest.mark.parametrize("hints", [None, {}, {"result": "hash-only"}, {"result.answer": "withheld"},
                                   {"args": {"mode": "upstream", "by": "vault"}}, {"nope": 3}, "not an object"])
def test_custody_hints_are_read_as_before(hints: Any) -> None:
    assert_same(CASES[0], kinds=KINDS, hints=hints)
    assert_same(CASES[1], hints=hints)


@pytest.mark.parametrize("prior", [None, {}, {"fields": {"result": {"mode": "hash-only"}}}, {"fields": 3}, "x"])
def test_a_collectors_prior_block_is_read_as_before(prior: Any) -> None:
    assert_same(CASES[1], kinds=KINDS, prior=prior)


def test_a_where_rule_is_still_read_per_step() -> None:
    for tool in ("kyc_lookup", "search", 3, None):
        assert_same({"tool": tool, "result": {"answer": "match"}}, kinds=KINDS, policies=("rules",))
    # A step of a kind first seen with one tool is not decided by that step's rules for the next.
    assert apply_policy(POLICIES["rules"], "tool_call", {"tool": "kyc_lookup", "result": "m"}).data["result"] \
        == HASH_ONLY_PLACEHOLDER
    assert apply_policy(POLICIES["rules"], "tool_call", {"tool": "search", "result": "m"}).data["result"] == "m"


def test_the_rules_kept_for_a_kind_are_those_select_makes() -> None:
    for name, policy in POLICIES.items():
        for kind in (*GOVERNED_KINDS, "marker", "other"):
            for _ in range(2):  # worked out, then kept
                made = StepRules.select(policy.rules if kind in GOVERNED_KINDS and not policy.off else (), kind,
                                        {"tool": "search"})
                assert policy.step_rules(kind, {"tool": "search"}) == made, (name, kind)


# -- hypothesis-generated steps ----------------------------------------------------------------------------------

from .test_clean import CLEAN_TEXT, Tagged, mixed_steps  # noqa: E402
from .test_property import ibans, pans, secrets, written_iban, written_pan  # noqa: E402

NAMES = st.sampled_from(["password", "api_key", "token", "Authorization", "client_secret", "signature", "key",
                         "name", "value", "Value", "kind", "data", "stringData", "sensitive", "b64", "logprob",
                         "DB_PASSWORD", "--password", "mysql", "tool", "result", "args", "limit", "passwd",
                         "token_count", "keyboard", "secretary", "Secret"])
LOOK_ALIKES = st.one_of(
    st.text("0123456789 -", min_size=12, max_size=24),  # digit runs that fail the Luhn check, or pass by chance
    st.from_regex(r"[A-Z]{2}[0-9]{2}[A-Z0-9]{10,20}", fullmatch=True),  # IBAN-shaped, mostly bad check digits
    st.uuids().map(str), st.integers(10**11, 10**19), st.floats(1e11, 1e19),
)
SCALARS = st.one_of(CLEAN_TEXT, NAMES, LOOK_ALIKES, pans().flatmap(written_pan), ibans().flatmap(written_iban),
                    secrets, st.booleans(), st.none(), st.integers(), CLEAN_TEXT.map(Tagged))
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(NAMES | CLEAN_TEXT, inner, max_size=4)
    | st.tuples(NAMES, inner).map(list) | inner.map(lambda value: json.dumps(value, default=str)),
    max_leaves=20)


@pytest.mark.filterwarnings("ignore::hypothesis.errors.HypothesisWarning")  # the strategy's repr is long
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.dictionaries(NAMES | CLEAN_TEXT, VALUES, max_size=6), kind=st.sampled_from(KINDS))
def test_generated_json_values_of_credentials_cards_ibans_and_look_alikes(data: dict[str, Any], kind: str) -> None:
    assert_same(data, kinds=(kind,))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=mixed_steps(), extra=st.sampled_from([{}, {"ssn": "123-45-6789"}, {"ref": "ACCT-12345678"},
                                                  {"email": "dana@example.com"}, {"secret": "x"}]))
def test_the_clean_steps_mixed_steps(data: dict[str, Any], extra: dict[str, Any]) -> None:
    assert_same({**data, **extra})


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(secret=secrets | pans().flatmap(written_pan) | ibans().flatmap(written_iban), key=NAMES)
def test_generated_credentials_cards_and_ibans_under_every_key(secret: str, key: str) -> None:
    assert_same({key: secret, "result": {key: secret}, "args": [key, secret]}, kinds=("tool_call", "http_call"))
