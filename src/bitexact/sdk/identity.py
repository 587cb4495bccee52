"""The identity rule every write door applies, field by field (collector-protocol.md, Identity events).

* ``scope`` is a list of strings; every other known field is a string, and
  ``on_behalf_of`` and ``authority_ref`` are not empty;
* ``on_behalf_of_type`` is one of human, organization, service or agent, and
  ``interaction_mode`` one of interactive or autonomous;
* ``on_behalf_of_type`` and ``authority_ref`` come with a kept
  ``on_behalf_of`` in the same event (a refused party takes them with it);
* ``workflow_digest`` is never accepted: the recorder computes it (here:
  :func:`workflow_digest`, the run's hash of the canonical JSON of the kept
  composition fields, when ``workflow`` is kept);
* a field set to null is left out, and a key the protocol does not name is
  kept as sent (``__proto__`` included: it is data, and names no party);
* an identity that keeps nothing is refused whole, as a gap.

A refused field is never written; the gap beside the entry declares it, with
the length of the canonical JSON of the refused fields as sent and a digest
of it keyed with the capture key, or ``"digest": "dropped: no capture key"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Protocol

from bitexact.canon import canonicalize
from bitexact.evidence.identity import COMPOSITION as COMPOSITION  # re-exported: the recipe is the evidence layer's
from bitexact.evidence.identity import workflow_digest as workflow_digest

FIELDS: Final[tuple[str, ...]] = (
    "principal", "agent_id", "delegation_from", "scope", "policy_version", "prompt_pack_version",
    "model_version", "workflow", "workflow_version", "environment", "code", "workflow_instance",
    "on_behalf_of", "on_behalf_of_type", "authority_ref", "interaction_mode",
)
"""The fields an identity entry's data may carry, in reader order (protocol vectors, identity_fields)."""

ENUMS: Final[dict[str, tuple[str, ...]]] = {
    "on_behalf_of_type": ("human", "organization", "service", "agent"),
    "interaction_mode": ("interactive", "autonomous"),
}
NOT_EMPTY: Final[frozenset[str]] = frozenset({"on_behalf_of", "authority_ref"})
NEEDS_PARTY: Final[tuple[str, ...]] = ("on_behalf_of_type", "authority_ref")
COMPUTED: Final[str] = "workflow_digest"
DROPPED_NO_KEY: Final[str] = "dropped: no capture key"


class CaptureKey(Protocol):
    key_id: str

    def hmac_sha256(self, message: bytes) -> bytes: ...


@dataclass(frozen=True)
class IdentityVerdict:
    """What the rule keeps of an identity, and why it refused each other field."""

    kept: dict[str, Any]
    refused: dict[str, str]
    refused_values: dict[str, Any]
    """The refused fields as sent (never written: only their length and keyed digest are)."""

    @property
    def refused_whole(self) -> bool:
        """Nothing is left to write: the gap takes the entry's place."""
        return not self.kept


def _field_problem(name: str, value: Any) -> str | None:
    if name == COMPUTED:
        return "workflow_digest is computed by the recorder from the composition fields, never accepted"
    if name == "scope":
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            return "scope must be a list of strings"
        return None
    if not isinstance(value, str):
        return f"{name} must be a string"
    if name in NOT_EMPTY and not value:
        return f"{name} must not be empty"
    allowed = ENUMS.get(name)
    if allowed is not None and value not in allowed:
        return f"{name} must be one of {', '.join(allowed)}"
    return None


def apply_identity_rule(data: Mapping[str, Any]) -> IdentityVerdict:
    """Split ``data`` into the fields the rule keeps and those it refuses (with the reason)."""
    kept: dict[str, Any] = {}
    refused: dict[str, str] = {}
    values: dict[str, Any] = {}
    for name, value in data.items():
        if value is None:
            continue
        problem = _field_problem(name, value) if (name in FIELDS or name == COMPUTED) else None
        if problem is None:
            kept[name] = value
        else:
            refused[name] = problem
            values[name] = value
    if "on_behalf_of" not in kept:
        for name in NEEDS_PARTY:
            if name in kept:
                refused[name] = f"{name} needs on_behalf_of in the same identity"
                values[name] = kept.pop(name)
    ordered = {name: refused[name] for name in sorted(refused)}
    return IdentityVerdict(kept, ordered, {name: values[name] for name in sorted(values)})


def withheld(values: Mapping[str, Any], key: CaptureKey | None) -> dict[str, Any]:
    """The gap's ``withheld``: the length of the canonical JSON of ``values``, and its keyed digest.

    The digest is the capture layer's (:func:`bitexact.capture.withheld_digest`,
    opened by :func:`bitexact.capture.open_withheld` with the same bytes), so
    ``verify --open-withheld`` tests a candidate against it. With no capture
    key it is dropped and said so: a refused party is short enough to guess,
    and an unkeyed digest would let anyone test each guess.
    """
    from bitexact.capture.block import withheld_digest
    from bitexact.errors import CanonicalizationError

    try:
        content = canonicalize(dict(values))
    except CanonicalizationError:
        # A refused value canonical JSON cannot hold (-0.0): nothing exact to digest, and saying so is
        # the declaration; the refusal itself stands.
        return {"length": None, "digest": "dropped: not canonical JSON"}
    declared = withheld_digest(key, content)
    declared["length"] = declared.pop("bytes")
    return declared


def identity_gap(verdict: IdentityVerdict, key: CaptureKey | None) -> dict[str, Any]:
    """The ``gap`` marker declaring what the rule refused (``fields`` is empty when nothing was stated)."""
    gap: dict[str, Any] = {"cause": "invalid_argument", "where": "sdk", "fields": dict(verdict.refused)}
    if verdict.refused_values:
        gap["withheld"] = withheld(verdict.refused_values, key)
    return gap
