"""The identity entry's computed field: ``workflow_digest`` (collector-protocol.md, Identity events).

It lives with the evidence, below every door, because a reader recomputes it
from the entry's own fields, and the capture layer must know it for what it
is: a hash whose hex digits can read as a card number.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from bitexact.canon import canonicalize
from bitexact.crypto import chain_hash

COMPOSITION: Final[tuple[str, ...]] = (
    "workflow", "workflow_version", "policy_version", "prompt_pack_version", "model_version", "code",
)
"""What the workflow is made of, and so what its digest covers: not who runs it (principal, parties), nor
where (environment), nor which run of it (workflow_instance)."""


def workflow_digest(kept: Mapping[str, Any], alg: str) -> str | None:
    """The digest of the workflow's composition: ``alg`` over the canonical JSON of the kept
    :data:`COMPOSITION` fields, or None when no ``workflow`` was kept.

    Two runs with the same digest ran the same workflow, at the same
    version, under the same policy, prompts, model and code, whoever ran
    them and wherever; a reader recomputes it from the entry's own fields.
    """
    if "workflow" not in kept:
        return None
    return chain_hash(alg, canonicalize({name: kept[name] for name in COMPOSITION if name in kept}))
