"""The bundle verifier: ``bitexact-bundle/1`` in every form, checked as bundle spec §12 orders.

Public API::

    verify_path(path, pins)    # a bag directory, a JSONL stream, a DSSE envelope or a JSON bundle
    verify_bundle(doc, pins)   # an already-parsed JSON-form bundle (the exporter's self-check)
    verify_lines(lines, pins)  # a JSONL bundle as an iterable of lines, streamed
    verify_cli(bundle, ...)    # the whole command line of §12.3 after argument parsing
    load_trust_file(path)      # a trust file (§11) -> (bundle_keys, recorder_keys)

Each returns a :class:`Verdict` whose ``line`` is exactly what a conforming
verifier prints. Nothing here raises for a bad bundle: the first failing
check becomes the ``FAIL:`` line.
"""

from __future__ import annotations

from collections.abc import Sequence

from bitexact.evidence.verify.bundle import verify_bundle_document
from bitexact.evidence.verify.dispatch import read_pins, verify_cli, verify_path
from bitexact.evidence.verify.jsonl import verify_lines
from bitexact.evidence.verify.pins import InputError, Pins, load_trust_file
from bitexact.evidence.verify.verdict import (
    ClauseProvider,
    ClauseProviderFactory,
    Verdict,
)


def verify_bundle(
    doc: object, pins: Pins, *, clauses: Sequence[ClauseProviderFactory] = ()
) -> Verdict:
    """Verify an already-parsed JSON-form bundle (§12.1, then ``--require-sealed``)."""
    verdict, _ = verify_bundle_document(doc, pins, clauses=clauses)
    return verdict


__all__ = [
    "ClauseProvider",
    "ClauseProviderFactory",
    "InputError",
    "Pins",
    "Verdict",
    "load_trust_file",
    "verify_bundle",
    "read_pins",
    "verify_cli",
    "verify_lines",
    "verify_path",
]
