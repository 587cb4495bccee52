"""Bounded windows: what the scan reads at once never grows with the step, and never changes a finding.

Two places read a large input a piece at a time:

* a long run of digit groups is read by the card-number detector in windows
  of ``pan.RUN_WINDOW`` characters, each holding the ``pan.SPAN`` characters
  after it (the most a card number can span, 19 single digits joined by
  three ``%20``s each), so a card number straddling a boundary is decided
  whole;
* a large batch of texts is read in parts of about ``walk.BATCH_CHARS``
  characters, cut only between texts.

Every other detector reads each text whole (a Bearer token or a key=value
value has no longest length a window could overlap by). Each test here
shrinks the windows and checks the findings are exactly those read whole.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bitexact.canon import canonicalize
from bitexact.capture import apply_policy, parse_policy
from bitexact.capture import walk as walk_module
from bitexact.capture.budget import Deadline
from bitexact.capture.detectors import IbanDetector, PanDetector, PanIbanDetector, build, luhn_ok
from bitexact.capture.detectors import pan as pan_module
from bitexact.capture.scan import Scanner

WHOLE = 10**9
SCRIPTS = {"ascii": ord("0"), "arabic-indic": 0x0660, "devanagari": 0x0966, "thai": 0x0E50, "fullwidth": 0xFF10,
           "mathematical bold": 0x1D7CE}
SEPARATORS = [" ", "-", "+", "\u00a0", "%20", "%2D", "%2d", " - ", "--", "%20%20%20"]


def with_check_digit(body: str) -> str:
    return next(body + d for d in "0123456789" if luhn_ok(body + d))


CARDS = {
    "visa16": "4111111111111111",
    "amex15": "378282246310005",
    "diners14": "30569309025904",
    "visa13": "4222222222222",
    "visa19": with_check_digit("455673758601234567"),
    "maestro12": with_check_digit("67596498264"),
}


def in_script(digits: str, zero: int) -> str:
    return "".join(chr(zero + int(d)) for d in digits)


def grouped(digits: str, size: int, separator: str) -> str:
    return separator.join(digits[i : i + size] for i in range(0, len(digits), size))


@contextmanager
def windows(run_window: int, *, bulk_groups: int | None = None, batch: int | None = None,
            size_block: int | None = None) -> Iterator[None]:
    """Shrink the windows (and the thresholds of the bulk paths) for the block."""
    saved = (pan_module.RUN_WINDOW, pan_module._BULK_GROUPS, walk_module.BATCH_CHARS, walk_module._SIZE_BLOCK)
    pan_module.RUN_WINDOW = run_window
    if bulk_groups is not None:
        pan_module._BULK_GROUPS = bulk_groups
    if batch is not None:
        walk_module.BATCH_CHARS = batch
    if size_block is not None:
        walk_module._SIZE_BLOCK = size_block
    try:
        yield
    finally:
        pan_module.RUN_WINDOW, pan_module._BULK_GROUPS, walk_module.BATCH_CHARS, walk_module._SIZE_BLOCK = saved


def merged(found: Any) -> list[tuple[int, int, str]]:
    """Findings as the scrub applies them: overlapping spans merged under the first one's token (every
    group's longest window is a finding, so windows starting inside a card number overlap it)."""
    out: list[tuple[int, int, str]] = []
    for f in sorted(found, key=lambda f: (f.start, -f.end)):
        if out and f.start < out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], f.end), out[-1][2])
        else:
            out.append((f.start, f.end, f.token))
    return out


def cards_in(text: str, detector: Any = None) -> list[tuple[int, int, str]]:
    return merged((detector or PanDetector()).find(text, Deadline.unlimited()))


def covers(found: list[tuple[int, int, str]], start: int, end: int, token: str) -> bool:
    """One scrubbed span, starting where the card does, reaching at least its end, under its token."""
    return len(found) == 1 and found[0][0] == start and found[0][1] >= end and found[0][2] == token


def test_the_longest_card_number_fits_in_the_span() -> None:
    longest = grouped(CARDS["visa19"], 1, "%20%20%20")
    assert len(longest) == pan_module.SPAN
    assert cards_in(f"x {longest} x") == [(2, 2 + pan_module.SPAN, "[PAN ****" + CARDS["visa19"][-4:] + "]")]


# -- a card number straddling every window boundary ------------------------------


def run_around(card: str, separator: str, zero: int, *, before: int = 40, after: int = 60) -> tuple[str, int]:
    """A long run: groups of zeros (no issuer starts with 0), the card, more zeros; and where the card starts."""
    zeros = in_script("0000", zero)
    head = "ref " + separator.join([zeros] * before) + separator
    return head + card + separator + separator.join([zeros] * after) + " end", len(head)


@pytest.mark.parametrize("script", sorted(SCRIPTS))
@pytest.mark.parametrize("separator", SEPARATORS)
def test_a_card_number_straddling_every_window_boundary_position_is_found(script: str, separator: str) -> None:
    zero = SCRIPTS[script]
    for name in ("visa16", "amex15", "visa19"):
        card = grouped(in_script(CARDS[name], zero), 4, separator)
        text, start = run_around(card, separator, zero)
        token = f"[PAN ****{CARDS[name][-4:]}]"
        whole = cards_in(text)
        assert covers(whole, start, start + len(card), token)
        run_start = text.index(in_script("0", zero))
        # Move the first window's end across every position from before the card to after it.
        for window in range(start - run_start - 8, start - run_start + len(card) + 8):
            with windows(window, bulk_groups=4):
                assert cards_in(text) == whole, (name, window)


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_the_longest_card_number_straddling_every_boundary_position(script: str) -> None:
    zero = SCRIPTS[script]
    card = grouped(in_script(CARDS["visa19"], zero), 1, "%20%20%20")
    text, start = run_around(card, " ", zero, before=10, after=10)
    whole = cards_in(text)
    assert covers(whole, start, start + len(card), f"[PAN ****{CARDS['visa19'][-4:]}]")
    run_start = text.index(in_script("0", zero))
    for window in range(1, start - run_start + len(card) + 4):
        with windows(window):
            assert cards_in(text) == whole, window


def test_many_card_numbers_in_one_long_run_each_window_size() -> None:
    separators = [" ", "-", "%20", " - "]
    parts = []
    for i in range(60):
        name = sorted(CARDS)[i % len(CARDS)]
        parts.append(grouped(CARDS[name], 4, separators[i % len(separators)]))
        parts.append(" ".join(["0000"] * (i % 7)) or "00")
    text = " ".join(parts)
    whole = cards_in(text)
    assert len(whole) == 60
    for window in (1, 2, 3, 5, 8, 13, 40, 97, 181, 182, 500):
        for bulk in (1, 4, 64, WHOLE):
            with windows(window, bulk_groups=bulk):
                assert cards_in(text) == whole, (window, bulk)


# -- the other detectors read each text whole --------------------------------------


OTHERS = {
    "iban": "DE89 3704 0044 0532 0130 00",
    "credentials": "token=" + "s3cr3t" * 40,
    "us_ssn": "SSN 123-45-6789.",
    "email": "mail ann.lee@example.com now",
    "account": "ACCT-12345678",
}
POLICY_ALL = {"detectors": {"pan": {}, "iban": {}, "credentials": {}, "us_ssn": {"require_context": True},
                            "email": {}, "custom": [{"name": "account", "pattern": "ACCT-\\d{8}"}]}}


@pytest.mark.parametrize("kind", sorted(OTHERS))
def test_every_detectors_match_beside_and_inside_a_windowed_run(kind: str) -> None:
    scanner = Scanner(build(parse_policy(POLICY_ALL, name="t", env={}).detectors))
    value = OTHERS[kind]
    zeros = " ".join(["0000"] * 80)
    card = grouped(CARDS["visa16"], 4, " ")
    for at in range(0, len(zeros), 7):
        text = f"{zeros[:at]}x {value} x{zeros[at:]} {card} {zeros}"
        whole = scanner.scrub_text(text, Deadline.unlimited())
        assert whole[1][kind] == 1 and whole[1]["pan"] == 1, (kind, at, whole[1])
        for window in (1, 16, 100):
            with windows(window, bulk_groups=4):
                assert scanner.scrub_text(text, Deadline.unlimited()) == whole


def test_a_match_longer_than_any_window_is_found_whole() -> None:
    scanner = Scanner(build(parse_policy(POLICY_ALL, name="t", env={}).detectors))
    secret = "a1" * 100_000  # a 200,000-character credential value: longer than a run window
    text = " ".join(["0000"] * 30_000) + f" Authorization: Bearer {secret}\nnext token={secret}&x=1"
    with windows(64):
        scrubbed, counts = scanner.scrub_text(text, Deadline.unlimited())
    assert secret not in scrubbed and counts["credentials"] == 2
    assert scrubbed.endswith("Authorization: Bearer [CREDENTIAL]\nnext token=[CREDENTIAL]&x=1")


def test_values_at_every_part_boundary_of_a_large_batch() -> None:
    policy = parse_policy(POLICY_ALL, name="t", env={})
    values = [OTHERS[k] for k in sorted(OTHERS)] + [grouped(CARDS["amex15"], 4, "%20"), "plain", "12", "x"]
    # A bare SSN is found only under a key that is a cue: the key each text is read with must follow it.
    data = {"result": [{"note": values[i % len(values)], "n": i, ("ssn" if i % 3 else "id"): "123-45-6789"}
                       for i in range(300)]}
    whole = apply_policy(policy, "tool_call", data)
    assert whole.block is not None
    assert whole.block["fields"]["result"]["found"]["us_ssn"] == 200 + 300 // len(values)
    for batch, block in ((1, 1), (7, 3), (64, 2), (200, 5), (1 << 20, 1024)):
        with windows(3, batch=batch, size_block=block):
            parts = apply_policy(policy, "tool_call", data)
        assert canonicalize(parts.data) == canonicalize(whole.data) and parts.block == whole.block


# -- properties: windowed and whole are the same ----------------------------------


@st.composite
def digit_runs(draw: st.DrawFn) -> str:
    """Runs of digit groups in any script, any separators (some that end a run), card numbers and IBANs among them."""
    zero = draw(st.sampled_from(sorted(SCRIPTS.values())))
    pieces = []
    for _ in range(draw(st.integers(1, 60))):
        choice = draw(st.integers(0, 9))
        if choice == 0:
            card = in_script(draw(st.sampled_from(sorted(CARDS.values()))), zero)
            pieces.append(grouped(card, draw(st.sampled_from([1, 2, 3, 4, 5, 16])), draw(st.sampled_from(SEPARATORS))))
        elif choice == 1:
            pieces.append(draw(st.sampled_from(["DE89 3704 0044 0532 0130 00", "GB82WEST12345698765432", "x", "%", "%2",
                                                "0.", "    ", "d", "D"])))
        else:
            pieces.append(in_script(draw(st.text("0123456789", min_size=1, max_size=draw(st.sampled_from([2, 4, 7])))),
                                    zero))
        pieces.append(draw(st.sampled_from(SEPARATORS + ["    ", "x", "%2", " %"])))
    return "".join(pieces)


@settings(max_examples=300, deadline=None)
@given(digit_runs(), st.integers(1, 300), st.sampled_from([1, 3, 64, WHOLE]))
def test_windowed_card_and_iban_findings_are_those_of_the_whole_run(text: str, window: int, bulk: int) -> None:
    shared = PanIbanDetector(PanDetector(), IbanDetector())
    whole = shared.find(text, Deadline.unlimited())
    with windows(window, bulk_groups=bulk):
        assert shared.find(text, Deadline.unlimited()) == whole
        assert PanDetector().find(text, Deadline.unlimited()) == [f for f in whole if f.detector == "pan"]


@st.composite
def uniform_runs(draw: st.DrawFn) -> str:
    """Groups of one even length joined by single separators, card numbers grouped the same way, any last group."""
    length = draw(st.sampled_from([2, 4, 6, 8, 12, 14, 16, 18]))
    separator = draw(st.sampled_from([" ", "-", "+"]))
    digits = []
    for _ in range(draw(st.integers(1, 120))):
        if draw(st.integers(0, 5)) == 0:
            digits.append(draw(st.sampled_from([CARDS["visa16"], CARDS["visa16"][:length * (16 // length)]])))
        else:
            digits.append(draw(st.text("0123456789", min_size=length, max_size=length)))
    body = "".join(digits)
    body = body[: len(body) - len(body) % length] or "12" * (length // 2)
    tail = draw(st.text("0123456789", max_size=20))
    return grouped(body, length, separator) + (separator + tail if tail else "") + draw(st.sampled_from(["", " ", "-"]))


@settings(max_examples=300, deadline=None)
@given(uniform_runs(), st.integers(1, 400))
def test_a_run_of_one_group_length_summed_in_bulk_finds_what_the_loop_finds(text: str, window: int) -> None:
    with windows(WHOLE, bulk_groups=WHOLE):
        by_loop = PanDetector().find(text, Deadline.unlimited())
    with windows(WHOLE, bulk_groups=1):
        in_bulk = PanDetector().find(text, Deadline.unlimited())
    with windows(window, bulk_groups=1):
        windowed = PanDetector().find(text, Deadline.unlimited())
    assert merged(in_bulk) == merged(by_loop) and merged(windowed) == merged(by_loop)


_leaves = st.sampled_from([
    "4111 1111 1111 1111", "4111%201111%201111%201111", "\u0664\u0661\u0661\u0661" * 4, "DE89 3704 0044 0532 0130 00",
    "token=abc123def", "Bearer abcdefgh12345678", "SSN 123-45-6789", "123-45-6789", "ann@example.com", "ACCT-12345678",
    json.dumps({"password": "p", "card": "4111111111111111"}), "ok", "", 4111111111111111, 12, 1.5, None,
    " ".join(["0000"] * 50) + " 4111 1111 1111 1111 " + " ".join(["1234"] * 50),
])
_keys = st.sampled_from(["a", "b", "note", "password", "ssn", "4111111111111111", "b64", "k.x"])
_values = st.recursive(_leaves, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_keys, inner, max_size=4),
                       max_leaves=20)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_keys, _values, min_size=1, max_size=4), st.integers(1, 200), st.sampled_from([1, 5, 64]),
       st.sampled_from([1, 2, 1024]))
def test_a_step_read_in_small_windows_and_parts_stores_what_it_stores_read_whole(
    data: dict[str, Any], window: int, batch: int, block: int
) -> None:
    policy = parse_policy(POLICY_ALL, name="t", env={})
    whole = apply_policy(policy, "tool_call", data)
    with windows(window, bulk_groups=4, batch=batch, size_block=block):
        parts = apply_policy(policy, "tool_call", data)
    assert canonicalize(parts.data) == canonicalize(whole.data)
    assert parts.block == whole.block and parts.gaps == whole.gaps


# -- the walk names containers by position -----------------------------------------


def test_a_container_held_in_two_places_is_written_in_each_place_apart() -> None:
    # The walk keeps each container's place in flat lists by position, not in maps by identity:
    # one object met in two places has two positions, and a write through one never shows in the other.
    card = grouped(CARDS["visa16"], 4, " ")
    shared = {"card": card, CARDS["visa16"]: "key holds a card", "n": 1}
    data = {"a": shared, "b": shared, "c": [shared, {"inner": shared}]}
    before = canonicalize(data)
    policy = parse_policy({"fields": [{"kind": "*", "path": "b", "mode": "keep"},
                                      {"kind": "*", "path": "*", "mode": "scrub"}]}, name="t", env={})
    captured = apply_policy(policy, "tool_call", data)
    scrubbed = {"card": "[PAN ****1111]", "[PAN ****1111]": "key holds a card", "n": 1}
    assert captured.data == {"a": scrubbed, "b": shared, "c": [scrubbed, {"inner": scrubbed}]}
    assert canonicalize(data) == before  # the caller's data is never changed
    assert captured.block is not None and set(captured.block["fields"]) == {"a.card", "a.[PAN ****1111]", "c"}
