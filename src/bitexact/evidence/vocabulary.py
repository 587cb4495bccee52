"""The fixed words of the bundle format: formats, algorithms, kinds and provenance (§3-§5, §10).

The producer (entries, checkpoints, export) and the verifier both read them here.
"""

from __future__ import annotations

from typing import Final

from bitexact.crypto import GENESIS

__all__ = ["GENESIS"]  # re-exported: the verifier names every fixed word from here

FORMAT_JSON: Final = "bitexact-bundle/1"
FORMAT_JSONL: Final = "bitexact-bundle-jsonl/1"
FORMAT_GRAPH: Final = "bitexact-provenance-graph/1"

DSSE_PAYLOAD_TYPE: Final = "application/vnd.in-toto+json"
STATEMENT_TYPE: Final = "https://in-toto.io/Statement/v1"
RUN_PREDICATE: Final = "https://bitexact.dev/run/v1"
GRAPH_PREDICATE: Final = "https://bitexact.dev/provenance-graph/v1"

ALGORITHMS: Final = ("blake2b-256", "sha256")
ENTRY_VERSION: Final = 2

PROVENANCES: Final = ("observed", "asserted", "synthetic")

#: kind -> the provenance classes it may carry, in the order the message lists them (§5).
ALLOWED_PROV: Final[dict[str, tuple[str, ...]]] = {
    **{k: ("observed",) for k in ("run_meta", "run_end", "fork", "http_call", "nondet")},
    "tool_call": ("observed", "asserted"),
    **{
        k: ("asserted",)
        for k in (
            "identity", "context", "human_decision", "decision_record", "marker", "model",
            "redaction", "repair", "hold", "hold_release",
        )
    },
    "injected": ("synthetic",),
}

#: Kinds that may follow a seal and may never be redacted (§5, §6).
AUDIT_KINDS: Final = frozenset({"redaction", "repair", "hold", "hold_release"})

#: Keys of an entry that the chain hash leaves out (§4).
UNHASHED_ENTRY_KEYS: Final = frozenset({"hash", "data", "salts", "redacted"})

#: The signed bodies: a missing key counts as null (§7, §8).
CHECKPOINT_BODY_KEYS: Final = ("run_id", "seq", "steps", "head_hash", "prev_checkpoint", "alg", "key_id")
WORM_BODY_KEYS: Final = ("type", "run_id", "steps", "head_hash", "alg", "key_id", "anchored_at")
