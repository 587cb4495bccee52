"""IBANs: every country of the registry, its length and the mod-97 check."""

from __future__ import annotations

import random

import pytest

from bitexact.capture.budget import Deadline
from bitexact.capture.detectors import IbanDetector, iban_ok
from bitexact.capture.detectors.iban_registry import BBAN_FORMATS, FRENCH_OVERSEAS, LENGTHS, NATIONAL, REGISTRY

# Examples from the SWIFT IBAN registry and national banks.
KNOWN = [
    "DE89370400440532013000",
    "GB82WEST12345698765432",
    "FR1420041010050500013M02606",
    "NL91ABNA0417164300",
    "NO9386011117947",
    "BE68539007547034",
    "CH9300762011623852957",
    "MT84MALT011000012345MTLCAST001S",
    "LC55HEMM000100010012001200023015",
    "RU0304452522540817810538091310419",
]


def make_iban(country: str, rng: random.Random) -> str:
    """A valid IBAN for ``country``: a random numeric BBAN and computed check digits."""
    bban = "".join(rng.choice("0123456789") for _ in range(LENGTHS[country] - 4))
    numeric = "".join(str(int(c, 36)) for c in bban + country + "00")
    check = 98 - int(numeric) % 97
    return f"{country}{check:02d}{bban}"


def found(text: str) -> list[str]:
    return [text[f.start : f.end] for f in IbanDetector().find(text, Deadline.unlimited())]


def grouped(iban: str, separator: str = " ") -> str:
    return separator.join(iban[i : i + 4] for i in range(0, len(iban), 4))


@pytest.mark.parametrize("iban", KNOWN)
def test_known_ibans(iban: str) -> None:
    assert iban_ok(iban)
    assert found(f"pay to {iban} now") == [iban]
    assert found(f"pay to {grouped(iban)}.") == [grouped(iban)]


def test_the_registry_is_complete_for_the_sepa_area_and_beyond() -> None:
    assert len(REGISTRY) >= 89
    for country in ("DE", "FR", "GB", "IT", "ES", "NL", "BR", "SA", "UA", "RU", "LY", "SO", "NI", "MN", "OM", "YE"):
        assert country in REGISTRY


@pytest.mark.parametrize("country", sorted(LENGTHS))
def test_every_country_of_the_registry(country: str) -> None:
    rng = random.Random(country)
    iban = make_iban(country, rng)
    assert len(iban) == LENGTHS[country]
    assert found(f"IBAN: {iban}") == [iban]
    assert found(grouped(iban, "-")) == [grouped(iban, "-")]


@pytest.mark.parametrize("country", sorted(LENGTHS))
def test_a_changed_digit_fails_mod_97(country: str) -> None:
    iban = make_iban(country, random.Random(country))
    last = iban[-1]
    wrong = iban[:-1] + ("1" if last != "1" else "2")
    assert found(wrong) == []


def test_the_wrong_length_for_the_country_is_not_an_iban() -> None:
    assert found("DE8937040044053201300") == []  # 21 characters; Germany's are 22
    assert found("DE89370400440532013000X") == []  # runs on into a letter


def test_lower_case_and_url_encoded_separators() -> None:
    assert found("gb82west12345698765432") == ["gb82west12345698765432"]
    encoded = "DE89%203704%200044%200532%200130%2000"
    assert found(encoded) == [encoded]


def test_any_scripts_digits() -> None:
    arabic = "DE" + "".join(chr(0x0660 + int(d)) for d in "89370400440532013000")
    assert found(arabic) == [arabic]


def test_an_unknown_country_or_a_letter_before_is_not_an_iban() -> None:
    assert found("QQ89370400440532013000") == []
    assert found("XDE89370400440532013000") == []


def _published_lengths() -> dict[str, dict[str, int]]:
    import json
    from pathlib import Path

    return json.loads((Path(__file__).parent / "data" / "iban_lengths.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("country", sorted(_published_lengths()["swift_registry"]))
def test_every_country_of_the_published_swift_registry_has_its_length(country: str) -> None:
    assert LENGTHS.get(country) == _published_lengths()["swift_registry"][country]


@pytest.mark.parametrize("country", sorted(_published_lengths()["national"]))
def test_every_iban_in_national_use_has_its_length(country: str) -> None:
    assert LENGTHS.get(country) == _published_lengths()["national"][country]


def test_nothing_is_registered_that_the_published_lists_do_not_have() -> None:
    published = _published_lengths()
    assert set(LENGTHS) <= set(published["swift_registry"]) | set(published["national"])


def test_every_code_has_one_bban_format_and_the_lists_do_not_overlap() -> None:
    # LENGTHS is derived from BBAN_FORMATS: a code in a list with no format would have no length.
    assert set(BBAN_FORMATS) == REGISTRY | NATIONAL | FRENCH_OVERSEAS
    assert not REGISTRY & NATIONAL and not REGISTRY & FRENCH_OVERSEAS and not NATIONAL & FRENCH_OVERSEAS
