"""Capture policy loading, keys and the capture CLI: regression tests, each for a bug review 7 found.

Contract: capture-controls.md; project docs: docs/capture.md, docs/capture-keys.md.
"""

from __future__ import annotations

import pytest

from bitexact.capture import PolicyError, scrub_text
from bitexact.capture.policy import parse_policy


# -- 1. a quantifier written in another script's digits ----------------------------------


@pytest.mark.parametrize("pattern", ["ACCT-\\d{\u0668}", "ACCT-\\d{1,\u0668}", "A{\u0663}"])
def test_a_quantifier_in_non_ascii_digits_is_refused(pattern: str) -> None:
    """The validator read {٨} as a quantifier (its regex's \\d takes any script's digits), the regex engine
    reads it as the literal text "{٨}": a pattern outside the language was accepted and never matched."""
    with pytest.raises(PolicyError) as refused:
        parse_policy({"detectors": {"custom": [{"name": "acct", "pattern": pattern}]}}, env={})
    assert refused.value.field == "detectors.custom[0].pattern"


def test_an_ascii_quantifier_still_finds_what_it_names() -> None:
    policy = parse_policy({"detectors": {"custom": [{"name": "acct", "pattern": "ACCT-\\d{8}"}]}}, env={})
    assert scrub_text(policy, "ACCT-12345678") == ("[ACCT]", {"acct": 1})
