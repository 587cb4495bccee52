"""Custom patterns cannot stall a write (audit17 F1): a bounded match width, and a search the deadline stops."""

from __future__ import annotations

import re

import pytest

from bitexact.capture import PolicyError, apply_policy, parse_policy
from bitexact.capture.budget import BudgetExhausted, Deadline
from bitexact.capture.detectors.custom import MAX_WIDTH, WINDOW, CustomDetector, pattern_width
from capture.support import StepClock




def test_the_audits_pattern_is_refused_at_load_naming_the_field_and_its_width() -> None:
    audit = "\\w{64}" * 84 + "-"  # 505 characters, every quantifier <= 64: accepted before
    with pytest.raises(PolicyError) as caught:
        parse_policy({"detectors": {"custom": [{"name": "ok", "pattern": r"EMP-[0-9]{6}"},
                                               {"name": "slow", "pattern": audit}]}})
    assert caught.value.field == "detectors.custom[1].pattern"
    assert f"can match up to {64 * 84 + 1} characters, more than {MAX_WIDTH}" in str(caught.value)


@pytest.mark.parametrize(
    ("pattern", "width"),
    [(r"EMP-[0-9]{6}", 10), (r"ACCT-\d{8}", 13), (r"\b\d{4}\b", 4), (r"\d{4}-?\d{4}", 9),
     (r"[0-9a-f]{64}", 64), (r"user@[a-z]{1,64}", 69), (r"x{0}y", 1), (r"\w{64}\w{64}", 128)],
)
def test_the_width_is_the_sum_of_the_atoms_upper_repeats(pattern: str, width: int) -> None:
    assert pattern_width(pattern) == width
    parse_policy({"detectors": {"custom": [{"name": "p", "pattern": pattern}]}})


def test_one_character_past_the_bound_is_refused() -> None:
    with pytest.raises(PolicyError, match="can match up to 129 characters"):
        parse_policy({"detectors": {"custom": [{"name": "p", "pattern": r"\w{64}\w{64}-"}]}})


def test_a_long_search_with_no_match_stops_at_the_deadline() -> None:
    # Before, the deadline was read only at a match: a text with none ran to its end.
    detector = CustomDetector("wide", r"\w{64}\w{63}-")
    deadline = Deadline.for_size(1, 10, StepClock())
    with pytest.raises(BudgetExhausted):
        detector.find("a" * (3 * WINDOW), deadline)


def test_a_scan_over_budget_withholds_the_field_and_declares_it() -> None:
    policy = parse_policy({"detectors": {"custom": [{"name": "wide", "pattern": r"\w{64}\w{63}-"}]},
                           "fields": [{"kind": "*", "path": "*", "mode": "scrub"}], "budget_ms": 1})
    text = "a" * (3 * WINDOW)
    captured = apply_policy(policy, "tool_call", {"tool": "t", "result": text}, clock=StepClock())
    assert text not in str(captured.data)
    # The step's keys are read under the same deadline: each field is withheld under [withheld key].
    assert set(captured.data.values()) == {"[withheld]"} and len(captured.data) == 2
    assert captured.block is not None
    declared = captured.block["fields"]
    assert set(declared) == set(captured.data)
    assert all(f == {"mode": "withheld", "cause": "scrub_failed", "reason": "budget"} for f in declared.values())
    (gap,) = captured.gaps
    assert gap["cause"] == "scrub_failed" and gap["fields"] == dict.fromkeys(declared, "budget")


@pytest.mark.parametrize(
    ("pattern", "sample"),
    [(r"\bEMP-[0-9]{6}\b", "EMP-123456"), (r"\d{4}-?\d{4}", "1234-5678"), (r"\d{4}-?\d{4}", "12345678"),
     (r"\w{64}\w{64}", "w" * 128), (r"[a-z]{3,64}\d", "abcdefgh7"), (r"\bEMP-[0-9]{6}\b", "EMP-1234567")],
)
def test_matches_across_a_window_edge_are_found_as_one_search_finds_them(pattern: str, sample: str) -> None:
    # The first window ends at WINDOW: the sample straddles it at every offset, after and before other matches.
    detector = CustomDetector("p", pattern)
    for before in range(1, len(sample)):
        text = f"{sample} " + " " * (WINDOW - before - len(sample) - 1) + sample + f" {sample}" + " " * 300
        assert text.index(sample, 1) == WINDOW - before
        expected = [m.span() for m in re.finditer(pattern, text)]
        found = [(f.start, f.end) for f in detector.find(text, Deadline.unlimited())]
        assert found == expected, before
        straddles = (WINDOW - before, WINDOW - before + len(sample)) in expected
        assert straddles == (sample != "EMP-1234567"), before  # \b past the sample holds, or not, as in one search
