"""Card numbers: issuer prefix, length and Luhn, in any script's digits, however separated."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bitexact.capture.budget import BudgetExhausted, Deadline
from bitexact.capture.detectors import PanDetector, is_pan, luhn_ok
from capture.support import StepClock

# Test card numbers published by the card schemes and processors.
CARDS = {
    "visa": "4111111111111111",
    "visa13": "4222222222222",
    "mastercard": "5555555555554444",
    "mastercard2": "2223003122003222",
    "amex": "378282246310005",
    "discover": "6011111111111117",
    "diners": "30569309025904",
    "jcb": "3530111333300000",
    "unionpay19": "6212345678901265",
    "maestro": "6759649826438453",
}
SCRIPTS = {
    "arabic-indic": 0x0660,
    "devanagari": 0x0966,
    "bengali": 0x09E6,
    "thai": 0x0E50,
    "fullwidth": 0xFF10,
    "mathematical bold": 0x1D7CE,
}


def found(text: str, **options: bool) -> list[str]:
    detector = PanDetector(**options)
    return [text[f.start : f.end] for f in detector.find(text, Deadline.unlimited())]


def in_script(digits: str, zero: int) -> str:
    return "".join(chr(zero + int(d)) for d in digits)


def test_luhn_examples() -> None:
    assert luhn_ok("79927398713")
    assert not luhn_ok("79927398710")
    assert all(luhn_ok(card) for card in CARDS.values())


@pytest.mark.parametrize("scheme", sorted(CARDS))
def test_each_scheme_is_a_card_number(scheme: str) -> None:
    assert is_pan(CARDS[scheme])
    assert found(f"paid with {CARDS[scheme]} today") == [CARDS[scheme]]


def with_check_digit(body: str) -> str:
    """``body`` and the Luhn check digit that makes it valid."""
    return next(body + d for d in "0123456789" if luhn_ok(body + d))


def test_luhn_alone_is_not_enough_the_issuer_must_allow_the_length() -> None:
    no_issuer = with_check_digit("711111111111111")
    assert luhn_ok(no_issuer) and not is_pan(no_issuer)
    assert found(no_issuer) == []
    amex_length_17 = with_check_digit("3782822463100051")
    assert luhn_ok(amex_length_17) and not is_pan(amex_length_17)  # American Express is 15 digits
    assert found("order 0000000000000000") == []  # Luhn-valid, no issuer starts with 0


def test_a_wrong_check_digit_is_not_found() -> None:
    assert found("4111111111111112") == []


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_any_scripts_decimal_digits(script: str) -> None:
    text = in_script(CARDS["visa"], SCRIPTS[script])
    assert found(f"card {text}.") == [text]


def test_digits_of_mixed_scripts_in_one_number() -> None:
    text = in_script("4111", 0x0660) + "111111111111"
    assert found(text) == [text]


@pytest.mark.parametrize(
    "written",
    [
        "4111 1111 1111 1111",
        "4111-1111-1111-1111",
        "4111 - 1111 - 1111 - 1111",
        "4111\u00a01111\u00a01111\u00a01111",
        "4111%201111%201111%201111",
        "4111%2D1111%2d1111%2D1111",
        "4111+1111+1111+1111",
        "3782 822463 10005",
    ],
)
def test_separators_as_written_and_as_a_url_encodes_them(written: str) -> None:
    assert found(f"/pay?card={written}&x=1") == [written]


def test_a_card_number_next_to_other_numbers_in_one_run() -> None:
    assert found("4111 1111 1111 1111 123") == ["4111 1111 1111 1111"]
    assert found("ref 12 34 4111 1111 1111 1111 9") == ["4111 1111 1111 1111"]


def test_an_unbroken_run_of_digits_is_never_cut() -> None:
    # 17 digits with no separator: a number, not a card number glued to a digit.
    assert found("41111111111111111") == []


def test_four_separators_end_a_run() -> None:
    assert found("4111    1111 1111 1111") == []


def test_the_fraction_of_a_decimal_number_is_not_a_card_number() -> None:
    assert found("score 0.4111111111111111") == []


def test_two_card_numbers() -> None:
    assert found(f"{CARDS['visa']} and {CARDS['mastercard']}") == [CARDS["visa"], CARDS["mastercard"]]


def test_tokens_keep_the_last_four_only_when_asked() -> None:
    detector = PanDetector(keep_last4=True)
    assert [f.token for f in detector.find(CARDS["amex"], Deadline.unlimited())] == ["[PAN ****0005]"]
    detector = PanDetector(keep_last4=False)
    assert [f.token for f in detector.find(CARDS["amex"], Deadline.unlimited())] == ["[PAN]"]


def test_a_token_holds_nothing_to_find_again() -> None:
    assert found("[PAN ****1111]") == []




def test_the_detector_checks_the_deadline_at_every_run() -> None:
    clock = StepClock()
    deadline = Deadline(at=3.5, clock=clock)
    text = " x ".join([CARDS["visa"]] * 10)
    with pytest.raises(BudgetExhausted):
        PanDetector().find(text, deadline)
    assert clock.now < 10  # it stopped at the deadline, not at the end of the text


def test_the_detector_checks_the_deadline_at_every_group() -> None:
    clock = StepClock()
    deadline = Deadline(at=50.5, clock=clock)
    with pytest.raises(BudgetExhausted):
        PanDetector().find(" ".join(["123"] * 1000), deadline)  # one run of 1000 groups
    assert clock.now < 100


def test_a_long_run_summed_in_bulk_checks_the_deadline_at_every_candidate() -> None:
    clock = StepClock()
    deadline = Deadline(at=50.5, clock=clock)
    with pytest.raises(BudgetExhausted):
        PanDetector().find(" ".join(["4111 1111 1111 1111"] * 500), deadline)
    assert clock.now < 100


even_groups = st.lists(st.sampled_from(["4111", "1111", "5555", "4444", "0000", "12", "34", "987654", "4012", "8888"]), max_size=40)
odd_tail = st.sampled_from(["", "5", "123", "88888"])


@settings(max_examples=300, deadline=None)
@given(even_groups, odd_tail, st.sampled_from([" ", "-", "+"]), st.randoms(use_true_random=False))
def test_the_bulk_luhn_path_finds_what_the_loop_finds(groups: list[str], tail: str, separator: str, rng) -> None:
    from bitexact.capture.detectors import pan

    for _ in range(rng.randrange(3)):
        groups.insert(rng.randrange(len(groups) + 1), "4111 1111 1111 1111".replace(" ", separator))
    text = "ref " + separator.join(groups + ([tail] if tail else [])) + " end"
    saved = pan._BULK_GROUPS
    try:
        pan._BULK_GROUPS = 10**9
        by_loop = PanDetector().find(text, Deadline.unlimited())
        pan._BULK_GROUPS = 1
        in_bulk = PanDetector().find(text, Deadline.unlimited())
    finally:
        pan._BULK_GROUPS = saved
    assert in_bulk == by_loop
