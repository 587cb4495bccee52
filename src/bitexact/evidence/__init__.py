"""The evidence model: entries, chains, checkpoints, redaction, bundles, verification.

See docs/bundle-format.md for the format this package produces and checks.
"""
