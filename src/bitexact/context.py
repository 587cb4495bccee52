"""Causal context between agents: ``bitexact.context.format_context`` / ``parse_context``.

A re-export of :mod:`bitexact.sdk.causal`, where the hybrid logical clock
lives too.
"""

from bitexact.sdk.causal import (
    ENV_VAR,
    CausalContext,
    ContextFormatError,
    HybridClock,
    format_context,
    parse_context,
)

__all__ = ["ENV_VAR", "CausalContext", "ContextFormatError", "HybridClock", "format_context", "parse_context"]
