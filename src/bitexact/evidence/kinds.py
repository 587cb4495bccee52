"""Entry kinds and the provenance each may carry (bundle spec §5)."""

from __future__ import annotations

from typing import Final, Literal

from bitexact.evidence.vocabulary import ALLOWED_PROV, AUDIT_KINDS

__all__ = ["ALLOWED_PROV", "AUDIT_KINDS", "KINDS", "Prov", "default_prov"]

Prov = Literal["observed", "asserted", "synthetic"]

KINDS: Final[frozenset[str]] = frozenset(ALLOWED_PROV)


def default_prov(kind: str) -> str:
    """The provenance a kind takes when the caller does not say (its first allowed class)."""
    return ALLOWED_PROV[kind][0]
