"""Entry kinds and the provenance each may carry (bundle spec §5)."""

from __future__ import annotations

from typing import Final, Literal

Prov = Literal["observed", "asserted", "synthetic"]

ALLOWED_PROV: Final[dict[str, tuple[str, ...]]] = {
    "run_meta": ("observed",),
    "run_end": ("observed",),
    "fork": ("observed",),
    "http_call": ("observed",),
    "nondet": ("observed",),
    "tool_call": ("observed", "asserted"),
    "identity": ("asserted",),
    "context": ("asserted",),
    "human_decision": ("asserted",),
    "decision_record": ("asserted",),
    "marker": ("asserted",),
    "model": ("asserted",),
    "redaction": ("asserted",),
    "repair": ("asserted",),
    "hold": ("asserted",),
    "hold_release": ("asserted",),
    "injected": ("synthetic",),
}
"""Every kind the format knows, with the provenance classes it allows."""

KINDS: Final[frozenset[str]] = frozenset(ALLOWED_PROV)
AUDIT_KINDS: Final[frozenset[str]] = frozenset({"redaction", "repair", "hold", "hold_release"})
"""Kinds that may follow a seal and are never redacted (§6)."""


def default_prov(kind: str) -> str:
    """The provenance a kind takes when the caller does not say (its first allowed class)."""
    return ALLOWED_PROV[kind][0]
