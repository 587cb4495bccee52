"""Entry kinds and the provenance each may carry (bundle spec §5)."""

from __future__ import annotations

from typing import Final, Literal

from bitexact.errors import EvidenceError, stated
from bitexact.evidence.vocabulary import ALLOWED_PROV, AUDIT_KINDS

__all__ = ["ALLOWED_PROV", "AUDIT_KINDS", "KINDS", "Prov", "allowed_provs", "default_prov"]

Prov = Literal["observed", "asserted", "synthetic"]

KINDS: Final[frozenset[str]] = frozenset(ALLOWED_PROV)


def allowed_provs(kind: str) -> tuple[str, ...]:
    """The provenance classes ``kind`` may carry, its default first; an unknown kind is refused (a bare
    ``KeyError`` escaped every caller that handles the write path's refusals, a repair's fold among them)."""
    allowed = ALLOWED_PROV.get(kind)
    if allowed is None:
        raise stated(EvidenceError(f"unknown entry kind {kind!r}"))
    return tuple(allowed)


def default_prov(kind: str) -> str:
    """The provenance a kind takes when the caller does not say (its first allowed class)."""
    return allowed_provs(kind)[0]
