"""What a recording would store of one field: ``bitexact capture test``.

The text is put at a path of a step of a kind (and the step's own fields a
``where`` reads), and the step goes through :func:`apply_policy`, the
function every recording calls. So the answer is what a run under the same
policy stores there - scrubbed, kept as captured, hash-only or withheld -
and the rule that decided it, never what the detectors alone would make of
the text (audit17 F3: with ``{"fields": []}`` the detectors' answer was a
scrubbed card number where a run stored it whole).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bitexact.capture.apply import apply_policy
from bitexact.capture.errors import PolicyError
from bitexact.capture.paths import spell
from bitexact.capture.policy import CapturePolicy
from bitexact.capture.rules import GOVERNED_KINDS, NONE, FieldRule, StepRules, parse_path

DEFAULT_KIND = "tool_call"
DEFAULT_PATH = "result"


class TrialInputError(ValueError):
    """A ``--kind``, ``--path`` or ``--where`` that names no field a step could hold; says which and why."""


@dataclass(frozen=True)
class FieldTrial:
    """One field as a recording stores it.

    ``mode`` is ``scrub`` (a scrub rule applied; ``found`` counts what it
    replaced, empty when nothing was found), ``keep`` (kept as captured),
    ``hash-only``, ``withheld`` (``cause`` and ``reason`` say why) or
    ``unscanned``. ``stored`` is the value the entry holds at the path (a
    placeholder for hash-only and withheld), ``None`` when the entry holds
    nothing there (its key was changed: ``declared`` says where it went).
    ``rule`` is the deciding rule (``None`` when no rule names the field or
    the policy is off).
    """

    kind: str
    path: str
    mode: str
    stored: Any
    found: dict[str, int]
    rule: FieldRule | None
    declared: dict[str, dict[str, Any]]
    gaps: tuple[dict[str, Any], ...]
    policy_off: bool

    def to_json(self) -> dict[str, Any]:
        """The trial as ``capture test --json`` prints it."""
        return {
            "kind": self.kind,
            "path": self.path,
            "mode": self.mode,
            "text": self.stored,
            "found": self.found,
            "rule": None if self.rule is None else {"index": self.rule.index, **self.rule.to_json()},
            "declared": self.declared,
            "gaps": list(self.gaps),
        }

    def decided_by(self) -> str:
        """Which rule decided, in words: ``by rule 0 (* * -> scrub)``, or why none did."""
        if self.policy_off:
            return "the policy is off: every field is kept as captured"
        if self.rule is None:
            return "no rule names it"
        rule = self.rule
        where = f" where {dict(rule.where)}" if rule.where else ""
        return f"by rule {rule.index} ({rule.kind} {rule.path} -> {rule.mode}{where})"


def _segments(path: str) -> tuple[str, ...]:
    try:
        shape, key, subkey = parse_path(path, "--path")
    except PolicyError as exc:
        raise TrialInputError(f"--path {path!r}: {exc.reason}") from None
    if shape not in ("key", "subkey") or key is None:
        raise TrialInputError(f"--path {path!r}: name one field, KEY or KEY.SUBKEY (a dot in a key is ~1)")
    return (key,) if subkey is None else (key, subkey)


def _step(segments: tuple[str, ...], text: str, where: dict[str, Any]) -> dict[str, Any]:
    if segments[0] in where:
        raise TrialInputError(f"--where {segments[0]}: that is the field under test (--path); name another")
    value: Any = text if len(segments) == 1 else {segments[1]: text}
    return {**where, segments[0]: value}


def _related(declared: dict[str, dict[str, Any]], spelled: str) -> dict[str, dict[str, Any]]:
    """The declarations of the field, of an object holding it, or of what is under it."""
    return {
        path: declaration
        for path, declaration in declared.items()
        if path == spelled or spelled.startswith(path + ".") or path.startswith(spelled + ".")
    }


def _stored_at(data: Any, segments: tuple[str, ...]) -> Any:
    """The value the entry holds at ``segments``; a placeholder an ancestor was stored as stands for it."""
    value = data
    for segment in segments:
        if isinstance(value, str):
            return value  # the object holding the field was stored as [hash-only] or [withheld]
        if not isinstance(value, dict) or segment not in value:
            return None
        value = value[segment]
    return value


def try_field(
    policy: CapturePolicy,
    text: str,
    *,
    kind: str = DEFAULT_KIND,
    path: str = DEFAULT_PATH,
    where: dict[str, Any] | None = None,
) -> FieldTrial:
    """Apply ``policy`` to a step of ``kind`` holding ``text`` at ``path`` (and ``where``'s fields)."""
    if kind not in GOVERNED_KINDS:
        raise TrialInputError(f"--kind {kind!r}: the policy governs {', '.join(GOVERNED_KINDS)}")
    segments = _segments(path)
    data = _step(segments, text, dict(where or {}))
    captured = apply_policy(policy, kind, data)
    spelled = spell(segments)
    every = dict((captured.block or {}).get("fields", {}))
    stored = _stored_at(captured.data, segments)
    declared = _related(every, spelled)
    if stored is None and not declared:
        declared = every  # its key was changed (a key read after the deadline is [withheld key]): all of them
    rules = StepRules.select(() if policy.off else policy.rules, kind, data)
    index = rules.rule_at(segments)
    rule = None if index >= NONE else policy.rules[index]
    own = declared.get(spelled) or next(iter(declared.values()), None)
    if captured.withheld:
        mode, found = "withheld", {}
    elif own is not None:
        mode = str(own.get("mode"))
        found = dict(own.get("found", {})) if mode == "scrub" else {}
    else:
        mode, found = ("scrub" if rule is not None and rule.mode == "scrub" else "keep"), {}
    return FieldTrial(
        kind=kind,
        path=spelled,
        mode=mode,
        stored=stored,
        found=found,
        rule=rule,
        declared=declared,
        gaps=captured.gaps,
        policy_off=policy.off,
    )


__all__ = ["DEFAULT_KIND", "DEFAULT_PATH", "FieldTrial", "TrialInputError", "try_field"]
