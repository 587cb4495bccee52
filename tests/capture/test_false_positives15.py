"""Ordinary identifiers and numeric output are no card numbers or IBANs (audit 15, finding F1).

The default policy replaced parts of UUIDs (`2f564894-1098-4529-82f0-…` → `2f[PAN ****2982]f0-…`,
`ba6313d1-274d-42ad-8ea7-…` → `[IBAN]-…`) and columns of `ls -l`, vmstat and /proc rows
(`18752 1685023897 apt` → `[PAN ****3897] apt`), destroying evidence. docs/capture.md (rows `pan`
and `iban`) now says: nothing inside a UUID is a card or an IBAN; a group glued to a letter joins
no other group; a window of several groups is a card only written as cards are; an IBAN's BBAN must
have its country's digits. Real cards and IBANs in the forms the docs list are still found.
"""

from __future__ import annotations

import random
import uuid

import pytest

from bitexact.capture import load_policy, scrub_text
from bitexact.capture.detectors import IbanDetector, PanDetector, luhn_ok
from bitexact.capture.budget import Deadline

POLICY = load_policy()


def unchanged(text: str) -> None:
    assert scrub_text(POLICY, text) == (text, {}), scrub_text(POLICY, text)[0]


# -- 1. UUIDs ------------------------------------------------------------------------------------

AUDIT_UUIDS = [
    "2f564894-1098-4529-82f0-cc98fe621d37",  # was 2f[PAN ****2982]f0-…
    "ba6313d1-274d-42ad-8ea7-b2c45c70e55d",  # was [IBAN]-…
    "64555702-9280-4985-a002-458fd976973f",
    "41111111-1111-1111-1111-111111111111",
]


@pytest.mark.parametrize("text", AUDIT_UUIDS)
def test_the_audits_uuids_are_kept_in_any_case(text: str) -> None:
    for written in (text, text.upper(), f"id={text}", f'{{"request_id": "{text}"}}'):
        unchanged(written)


def test_twenty_thousand_random_uuids_are_kept() -> None:
    rng = random.Random(7)
    ids = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(20_000)]
    for chunk in range(0, len(ids), 1000):  # one id a line, as a log or a listing holds them
        unchanged("\n".join(ids[chunk : chunk + 1000]))
        unchanged("\n".join(i.upper() for i in ids[chunk : chunk + 1000]))


def test_an_iban_inside_a_uuid_is_none() -> None:
    # Andorra's BBAN (4n4n12c) allows the hex letters of a UUID's last part, and AD is a hex country code:
    # only the UUID rule keeps this one.
    iban = _with_iban_check("AD", "34567890abcdef123456").lower()
    written = f"{iban[:4]}-{iban[4:8]}-{iban[8:12]}-{iban[12:]}"
    assert IbanDetector().find(written, Deadline.unlimited())  # alone it is an IBAN: length, format, mod 97
    unchanged(f"0123abcd-{written}")


# -- 2. a digit group glued to a letter ----------------------------------------------------------


def test_a_group_glued_to_a_letter_starts_or_ends_no_window_of_several_groups() -> None:
    # The audit's UUID without its last part: "564894-1098-4529-82" made a card number.
    unchanged("2f564894-1098-4529-82f0")
    unchanged("build 7b4111-1111-1111-1111c done")


def test_a_card_number_glued_to_a_word_whole_is_still_found() -> None:
    for text in ("Visa4111111111111111", "card 4111111111111111xxxx"):
        scrubbed, counts = scrub_text(POLICY, text)
        assert counts == {"pan": 1} and "4111111111111111" not in scrubbed


# -- 3. an IBAN's BBAN has its country's structure -----------------------------------------------


def _with_iban_check(country: str, bban: str) -> str:
    """``country``, the check digits that make the mod-97 remainder 1, and ``bban`` (upper-cased)."""
    numeric = "".join(str(int(c, 36)) for c in bban.upper() + country + "00")
    return f"{country}{98 - int(numeric) % 97:02d}{bban.upper()}"


@pytest.mark.parametrize(("country", "bban"), [("BA", "6313d1274d42ad8e"), ("BE", "13d1274d42ad"),
                                               ("DE", "3704004405320130ab")])
def test_letters_where_the_countrys_bban_has_digits_make_no_iban(country: str, bban: str) -> None:
    text = _with_iban_check(country, bban)  # right length, mod-97 = 1
    unchanged(f"ref {text} end")
    unchanged(f"ref {text.lower()} end")


@pytest.mark.parametrize("iban", ["GB82 WEST 1234 5698 7654 32", "DE89 3704 0044 0532 0130 00",
                                  "BE68 5390 0754 7034", "BA39 1290 0794 0102 8494", "FR14 2004 1010 0505 0001 3M02 606",
                                  "NL91ABNA0417164300", "gb82west12345698765432"])
def test_real_ibans_are_still_found(iban: str) -> None:
    scrubbed, counts = scrub_text(POLICY, f"pay to {iban} today")
    assert (scrubbed, counts) == ("pay to [IBAN] today", {"iban": 1})


# -- 4. rows of numbers separated by single blanks -----------------------------------------------

LS_LINES = "\n".join([
    "-rwxr-xr-x 1 root root      18752 1685023897 apt",  # was [PAN ****3897] apt
    "-rwxr-xr-x 1 root root      15375 1744470991 corelist",
])
VMSTAT = " 1  0      0 23281864 107996 931172    0    0   189 10543  404  717 47  5 47  1  0"
PROC_STAT = "cpu  406829 0 39969 407409 8088 0 1046 739 0 0"
DISKSTATS = (" 254       0 vda 101565 28069 3267682 18641 1143551 108210 182193008 310536 0 114280 369637 152889 54"
             " 160310288 26055 364471 14403")


@pytest.mark.parametrize("text", [LS_LINES, VMSTAT, PROC_STAT, DISKSTATS])
def test_the_audits_listings_are_kept(text: str) -> None:
    unchanged(text)


def test_generated_ls_lines_are_kept() -> None:
    rng = random.Random(7)
    lines = [f"-rwxr-xr-x 1 root root {rng.randrange(10 ** rng.randint(1, 6)):>10} "
             f"{rng.randrange(1_500_000_000, 1_800_000_000)} tool{rng.randrange(100)}" for _ in range(500)]
    unchanged("\n".join(lines))


def test_rows_of_small_integers_are_kept_but_a_row_written_as_a_card_is() -> None:
    rng = random.Random(7)
    hits = []
    for _ in range(2000):
        row = " ".join(str(rng.randrange(10 ** rng.randint(1, 7))) for _ in range(17))
        scrubbed, counts = scrub_text(POLICY, row)
        if counts:
            hits.append(row)
    # Before: 1,126 of these 2,000 rows lost columns. The one left holds "1842 8604 4689 167": four
    # groups written 4-4-4-3 as a 15-digit card is, an issuer prefix (UATP's 1) and Luhn-valid.
    assert len(hits) == 1 and "1842 8604 4689 167" in hits[0]


def with_check_digit(body: str) -> str:
    return next(body + d for d in "0123456789" if luhn_ok(body + d))


VISA19 = with_check_digit("455673758601234567")


@pytest.mark.parametrize("card", [
    "4111 1111 1111 1111", "4111-1111-1111-1111", "4111+1111+1111+1111", "4111%201111%201111%201111",
    "3782 822463 10005",  # American Express 4-6-5
    "3056 930902 5904",  # Diners Club 4-6-4
    "3782 8224 6310 005", "4222 2222 2222 2", "3056 9309 0259 04",  # 15, 13, 14 digits in groups of four
    " ".join([VISA19[i : i + 4] for i in range(0, 19, 4)]),  # 4-4-4-4-3
    " ".join(VISA19),  # read out digit by digit
    "4111111111111111",
])
def test_cards_written_as_cards_are_still_found(card: str) -> None:
    scrubbed, counts = scrub_text(POLICY, f"paid with {card} today")
    assert counts == {"pan": 1} and scrubbed.startswith("paid with [PAN ****") and scrubbed.endswith("] today")


@pytest.mark.parametrize("text", [
    "18752 1685023897",  # 5 + 10
    "378282 246310005",  # 6 + 9: no card is written so
    "4111 11111111 1111",  # 4 + 8 + 4
    "5878 927143 3780",  # 4-6-4, but a Mastercard-range prefix: only Diners Club is written 4-6-4
    "6691 444877 38310",  # 4-6-5, no American Express prefix
])
def test_a_window_across_groups_of_other_sizes_is_no_card(text: str) -> None:
    assert PanDetector().find(text, Deadline.unlimited()) == []


def test_a_card_after_another_number_is_found_alone() -> None:
    scrubbed, counts = scrub_text(POLICY, "ref 60000005 4111 1111 1111 1111")
    assert (scrubbed, counts) == ("ref 60000005 [PAN ****1111]", {"pan": 1})
