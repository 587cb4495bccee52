"""BitExact: an evidence recorder for AI agents.

Every model call, tool call, HTTP call, context, identity claim and human
decision of an agent run becomes an entry in a hash chain with salted
per-field commitments, signed with ed25519 and exportable as a bundle that
anyone can verify offline (see docs/bundle-format.md).
"""

__version__ = "0.1.0"

from typing import Any as _Any

_SDK_NAMES = ("run", "record_tool", "wrap", "instrument", "current_run")


def __getattr__(name: str) -> _Any:
    """``bitexact.run``, ``record_tool``, ``wrap``, ``instrument``: the SDK, loaded on first use."""
    if name in _SDK_NAMES:
        import bitexact.sdk as _sdk

        value = getattr(_sdk, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'bitexact' has no attribute {name!r}")
