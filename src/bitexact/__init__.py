"""BitExact: an evidence recorder for AI agents.

Every model call, tool call, HTTP call, context, identity claim and human
decision of an agent run becomes an entry in a hash chain with salted
per-field commitments, signed with ed25519 and exportable as a bundle that
anyone can verify offline (see docs/bundle-format.md).
"""

__version__ = "0.1.0"
