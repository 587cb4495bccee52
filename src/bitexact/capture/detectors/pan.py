"""Card numbers (PANs): issuer prefix, length and the Luhn check, in any script's digits.

A candidate is a run of digit groups joined by separators (a space, hyphen,
``+``, no-break space, or ``%20``/``%2D`` as a URL encodes them; up to three
in a row), in any script's decimal digits. Within a run, every window of
whole consecutive groups holding 12 to 19 digits is considered, so a card
number written next to other numbers ("4111 1111 1111 1111 123") is found;
a run of digits with no separator is one group and is never cut. A window of
several groups must be written as card numbers are (:func:`card_shaped`:
4-4-4-4 and its shorter and longer forms, American Express's 4-6-5, Diners
Club's 4-6-4, one digit a group), so the columns of a listing
("18752 1685023897") are no candidate; a group glued to a letter joins no
other group (:func:`glued_before`), and nothing inside a UUID is a card
number (:func:`in_uuid`). The digits
of a decimal fraction (after ``0.``) are not a candidate, nor is a group of
digits inside a hex digest of 32 or more characters (:func:`in_hex_digest`). A window
is a card number when its issuer prefix allows its length and the Luhn check
passes. From each group, the longest window that is a card number wins,
and the search goes on after it.

The first pass over the text is one flat character-class regex (the regex
engine's C loop). In a run, a start whose first four digits no issuer uses
is skipped at once; for a long run of even-length groups the Luhn sums of
all windows are done in bulk (:meth:`PanDetector._windows_bulk`), so only
windows that pass Luhn are looked at one by one.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

from bitexact.capture.budget import BudgetExhausted, Deadline
from bitexact.capture.detectors.base import (
    ESCAPE_TAIL,
    RUN_CHARS,
    SEPARATOR_UNIT,
    URL_ESCAPE,
    Finding,
    Sites,
    after_escape,
    ascii_digits,
)

NAME = "pan"
MIN_DIGITS = 12
MAX_DIGITS = 19

_ALL = tuple(range(MIN_DIGITS, MAX_DIGITS + 1))
_LONG = (16, 17, 18, 19)

# (first prefix, last prefix, lengths): prefixes first..last, all of one digit
# count. Broad on purpose: a false positive scrubs a number, a false negative
# stores a card number.
ISSUERS: tuple[tuple[str, str, tuple[int, ...]], ...] = (
    ("1", "1", (15,)),  # UATP
    ("1946", "1946", (16, 18, 19)),  # GPN (Indonesia)
    ("2200", "2204", _LONG),  # Mir
    ("2205", "2205", (16,)),  # BORICA
    ("2221", "2720", (16,)),  # Mastercard 2-series
    ("300", "305", (14, 15, 16, 17, 18, 19)),  # Diners Club
    ("31", "31", (19,)),  # China T-Union
    ("34", "34", (15,)),  # American Express
    ("353", "353", (16,)),  # RuPay/JCB co-brand
    ("3528", "3589", _LONG),  # JCB
    ("356", "356", (16,)),  # RuPay/JCB co-brand
    ("36", "36", (14, 15, 16, 17, 18, 19)),  # Diners Club International
    ("37", "37", (15,)),  # American Express
    ("38", "39", (14, 15, 16, 17, 18, 19)),  # Diners Club / Discover network
    ("4", "4", (13, 16, 19)),  # Visa
    ("50", "50", _ALL),  # Maestro, Dankort, Verve, RuPay 508
    ("51", "55", (16,)),  # Mastercard
    ("56", "69", _ALL),  # Maestro, Discover, UnionPay, RuPay, Troy, InterPayment
    ("81", "82", (16, 17, 18, 19)),  # UnionPay 81, RuPay 81/82
    ("8600", "8600", (16,)),  # UzCard
    ("9792", "9792", (16,)),  # Troy
    ("9860", "9860", (16,)),  # Humo
)


def _prefix_table() -> dict[int, bytes]:
    """For each length, a 10000-byte map from the first four digits to 1 (an issuer allows it)."""
    tables: dict[int, bytearray] = {n: bytearray(10000) for n in _ALL}
    for first, last, lengths in ISSUERS:
        width = len(first)
        scale = 10 ** (4 - width)
        for n in lengths:
            table = tables[n]
            for four in range(int(first) * scale, (int(last) + 1) * scale):
                table[four] = 1
    return {n: bytes(t) for n, t in tables.items()}


_PREFIX = _prefix_table()
# The same as sets of four-digit strings (a set lookup beats parsing an int),
# and the prefixes some length allows (a start with none is skipped at once).
_ALLOWED: list[frozenset[str]] = [
    frozenset(f"{four:04d}" for four in range(10000) if n in _PREFIX and _PREFIX[n][four])
    for n in range(MAX_DIGITS + 1)
]
_PLAUSIBLE: frozenset[str] = frozenset().union(*_ALLOWED)
_DOUBLED = bytes.maketrans(b"0123456789", b"0246813579")


def issuer_allows(digits: str) -> bool:
    """Whether an issuer prefix allows a card number of these ASCII digits and this length."""
    table = _PREFIX.get(len(digits))
    return table is not None and table[int(digits[:4])] == 1


def luhn_ok(digits: str) -> bool:
    """The Luhn check over ASCII digits (doubling every second digit from the right)."""
    raw = digits.encode("ascii")
    total = sum(raw[-1::-2]) + sum(raw[-2::-2].translate(_DOUBLED)) - 48 * len(raw)
    return total % 10 == 0


def is_pan(digits: str) -> bool:
    """Whether ASCII ``digits`` are a card number: issuer prefix, length and Luhn."""
    return issuer_allows(digits) and luhn_ok(digits)


_RUN = Sites(rf"\d[{RUN_CHARS}]{{{MIN_DIGITS - 1},}}")
# Separators first, so the digits of %20 are read as a separator, not a group; then any other URL escape of
# punctuation, whose digits (%22) are no group either: it ends a sub-run, as the character it encodes would.
_PIECE = re.compile(rf"(?:%2[0dD]|[ \-+\u00a0])+|{URL_ESCAPE}|\d+|\D")
_SEPARATOR = re.compile(rf"{SEPARATOR_UNIT}{{1,3}}")
_PLAIN_SEPARATORS = frozenset({" ", "-", "+", "\u00a0", "%20", "%2D", "%2d", " - ", "  ", "   ", "--"})
_TO_SPACE = str.maketrans("-+", "  ")
_NO_SEPARATORS = str.maketrans("", "", " -+")
_NOT_DIGIT = re.compile(r"[^0-9]")
_BULK_GROUPS = 64  # a run of at least this many groups has its Luhn sums done in bulk

RUN_WINDOW = 1 << 16
"""Characters of a longer run of digit groups read at once, so its lists stay small (and in cache)."""
SPAN = MAX_DIGITS + (MAX_DIGITS - 1) * 3 * 3
"""The most characters a card number can span: 19 digits and, between each two of its groups,
a separator of at most three units of at most three characters (``%20``)."""
# Where a group of digits starts as _PIECE reads a run: a digit with no digit before it (the
# digits of a URL escape, %20, %22 or %A0, belong to the escape), one right after such an escape, or
# one after a % that begins none. And the first digit of a magnetic stripe's track 1, `%B4111…^DOE/J^…`: its
# `%B` is the track's start sentinel and format code, not a URL escape of the byte B4, when a card number's
# count of digits follows it. (Not "up to the `^`": a run's groups are searched with the run's end as the
# text's, and the `^` lies past it.)
_GROUP_START = re.compile(rf"(?:(?<![\d%])(?<!%[A-Fa-f])|(?<={URL_ESCAPE}))\d|(?<=%)(?!{ESCAPE_TAIL})\d"
                          rf"|(?<=%B)\d(?=\d{{{MIN_DIGITS - 1},{MAX_DIGITS - 1}}}(?!\d))")



# Digit values (bytes), and doubled as Luhn doubles them (the digit sum of twice the digit).
_VALUE = bytes.maketrans(b"0123456789", bytes(range(10)))
_DOUBLED_VALUE = bytes.maketrans(b"0123456789", bytes((0, 2, 4, 6, 8, 1, 3, 5, 7, 9)))
# A window's Luhn sum (one byte, at most 9 x 19) mapped to 0 when it passes, 1 when it does not.
_LUHN_ZERO = bytes(0 if v % 10 == 0 else 1 for v in range(256))


def _luhn_passing(window: int, width: int, end: int) -> list[int]:
    """The group indices ``i < end`` whose window passes Luhn: byte ``i`` of ``window`` (``width`` bytes) is 0 mod 10.

    One ``translate`` maps every window's sum to 0 (passes) or 1, and ``find``
    jumps between the zeros in C: about one window in ten passes.
    """
    passing = window.to_bytes(width, "little")[:end].translate(_LUHN_ZERO)
    found: list[int] = []
    find = passing.find
    i = find(0)
    while i != -1:
        found.append(i)
        i = find(0, i + 1)
    return found


def _groups_needed(tally: Any, reached: Callable[[int], bool], otherwise: int) -> int:
    """How many groups, taken in ``tally``'s order ((length, count) pairs), first make ``reached`` true."""
    total = 0
    taken = 0
    for length, number in tally:
        for _ in range(min(number, MAX_DIGITS + 1)):
            total += length
            taken += 1
            if reached(total):
                return taken
    return otherwise


HEX_DIGEST_CHARS = 32
"""The shortest hex digest (MD5); SHA-1, SHA-256 and BLAKE2b-256 digests, git object ids, are longer."""
_HEX = frozenset("0123456789abcdefABCDEF")


def in_hex_digest(text: str, start: int, end: int) -> bool:
    """Whether the digits ``text[start:end]`` are part of a hex digest: a run of at least
    :data:`HEX_DIGEST_CHARS` hex characters, with a hex letter right beside the digits.

    About one SHA-256 digest in 200 holds a digit run that passes an issuer
    prefix and the Luhn check: scrubbing it would destroy a hash (a commit id,
    a content hash) the evidence means to keep. A card number is never written
    glued to hex letters, so a run with a hex letter on neither side is read
    as any other.
    """
    # A magnetic stripe's track 1 opens `%B` before the card number (`%B4111…^`): its start sentinel and
    # format code, no hex letter of a digest.
    before = start > 0 and text[start - 1] in _HEX and not text.startswith("%B", start - 2)
    after = end < len(text) and text[end] in _HEX
    if not (before or after):
        return False
    left, right = start, end
    while left > 0 and text[left - 1] in _HEX and end - left < HEX_DIGEST_CHARS:
        left -= 1
    while right < len(text) and text[right] in _HEX and right - left < HEX_DIGEST_CHARS:
        right += 1
    return right - left >= HEX_DIGEST_CHARS


# How card numbers are written in groups (rules version 7 and later): every group but the last of four
# digits, the last of one to four (4-4-4-4, 4-4-4-4-3, 4-4-4-1); American Express's 4-6-5 and Diners
# Club's 4-6-4, each only with its issuer's prefix; or one digit a group (a number read out digit by
# digit). A window of several groups in any other shape ("18752 1685023897", 5 + 10 digits: two columns
# of a listing) is no card number.
_AMEX = ("34", "37")
_DINERS = ("300", "301", "302", "303", "304", "305", "36", "38", "39")


def card_shaped(lengths: list[int] | tuple[int, ...], first: str = "") -> bool:
    """Whether digit groups of these lengths, in order, are written as a card number is (see docs/capture.md).

    ``first`` is the window's first ASCII digits (at least four), which decide whether 4-6-5 (American
    Express) and 4-6-4 (Diners Club) are its issuer's forms.
    """
    if len(lengths) < 2:
        return True
    last = lengths[-1]
    if 1 <= last <= 4 and all(length == 4 for length in lengths[:-1]):
        return True
    if all(length == 1 for length in lengths):
        return True
    shape = tuple(lengths)
    if shape == (4, 6, 5):
        return first.startswith(_AMEX)
    return shape == (4, 6, 4) and first.startswith(_DINERS)


def glued_before(text: str, position: int) -> bool:
    """Whether a letter stands right before ``position``: a group of digits starting there is part of a word.

    ``f564894`` in ``2f564894-1098-…`` is no card number's first group. Not a letter that ends a URL escape
    of punctuation (``%3A4111…``), the ``B`` of a magnetic stripe's ``%B`` (``%B4111…^``), or the letter
    of a backslash escape (a ``\\n`` written in a log line before the digits).
    """
    if position == 0 or not text[position - 1].isalpha():
        return False
    if after_escape(text, position) or text.startswith("%B", position - 2):
        return False
    return not (position >= 2 and text[position - 2] == "\\")


def glued_after(text: str, position: int) -> bool:
    """Whether a letter stands right at ``position``, after a group of digits: the group is part of a word."""
    return position < len(text) and text[position].isalpha()


_UUID = re.compile(r"[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}")
UUID_CHARS = 36


def in_uuid(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` overlaps a UUID (8-4-4-4-12 hex digits, any case): an identifier, no value."""
    for match in _UUID.finditer(text, max(0, start - UUID_CHARS), min(len(text), end + UUID_CHARS)):
        if match.start() < end and match.end() > start:
            return True
    return False


_BARE_D = re.compile(r"(?<!%2)[dD]")  # a "d" that is no part of a %2D: it ends a sub-run of groups
_DIGITS = re.compile(r"\d+")


def _outside_digests(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The parts of the run ``text[start:end]`` left once every group of digits inside a hex digest is taken out.

    Only a group at the edge of a sub-run can touch a hex letter: the run's first and last, and one beside
    a ``d`` that no ``%2D`` holds (such a ``d`` ends a sub-run in :meth:`PanDetector._scan_groups` too).
    A group glued to a letter (:func:`glued_before`, :func:`glued_after`) is part of a word or an
    identifier (``2f564894-1098-…``): it joins no other group in a window, and is a part of its own, a card
    number only whole (``Visa4111111111111111``). Each part starts at a group of digits, as a run does.
    """
    parts: list[tuple[int, int]] = []
    cuts = [start, *(m.start() for m in _BARE_D.finditer(text, start, end)), end]
    for low, high in zip(cuts, cuts[1:]):
        low += low != start  # past the "d"
        head = _GROUP_START.search(text, low, high)
        if head is None:
            continue
        group_end = _DIGITS.match(text, head.start(), high).end()  # type: ignore[union-attr]
        if head.start() == low and low:
            digest = text[low - 1] in _HEX and in_hex_digest(text, low, group_end)
            if digest or glued_before(text, low):
                if not digest and group_end - low >= MIN_DIGITS:
                    parts.append((low, group_end))  # glued to a word: a card number only whole, on its own
                head = _GROUP_START.search(text, group_end, high)  # the next group, after a separator
                if head is None:
                    continue
        low = head.start()
        alone: tuple[int, int] | None = None
        if high < len(text) and (text[high] in _HEX or glued_after(text, high)):
            tail = high
            while tail > low and text[tail - 1].isdecimal():
                tail -= 1
            # The digits of a trailing %20 are no group.
            if tail < high and (tail == 0 or text[tail - 1] != "%"):
                if in_hex_digest(text, tail, high):
                    high = tail
                elif tail > low and glued_after(text, high):
                    if high - tail >= MIN_DIGITS:
                        alone = (tail, high)  # glued to a word: a card number only whole, on its own
                    high = tail
        if low < high:
            parts.append((low, high))
        if alone is not None:
            parts.append(alone)
    return parts


class _GroupLuhn(dict[str, int]):
    """What a group of ASCII digits adds to a Luhn sum ending with its last digit, mod 10."""

    def __missing__(self, group: str) -> int:
        raw = group.encode("ascii")
        value = (sum(raw[-1::-2]) + sum(raw[-2::-2].translate(_DOUBLED)) - 48 * len(raw)) % 10
        if len(self) < 200_000:  # groups repeat (there are 10,000 of four digits); bound the memory
            self[group] = value
        return value


_LUHN_LAST_PLAIN = _GroupLuhn()


@dataclass
class PanDetector:
    """Card numbers; ``keep_last4`` keeps the last four digits in the token."""

    keep_last4: bool = True
    name: str = field(default=NAME, init=False)
    context_free: bool = field(default=True, init=False)
    candidates: int = field(default=0, init=False, compare=False)

    def token(self, digits: str) -> str:
        """The replacement token for the card number ``digits``."""
        return f"[PAN ****{digits[-4:]}]" if self.keep_last4 else "[PAN]"

    def find(
        self,
        text: str,
        deadline: Deadline,
        *,
        context: str | None = None,
        prefilter: bool = False,
    ) -> list[Finding]:
        """Every card number in ``text``."""
        found: list[Finding] = []
        for run in _RUN.finditer(text):
            deadline.check()
            self.scan_run(text, run.group(), run.start(), deadline, found)
        return found

    def scan_run(self, text: str, run: str, base: int, deadline: Deadline, found: list[Finding]) -> None:
        """The card numbers in one run of ``text`` starting at ``base``, appended to ``found`` in text order.

        A card number whose digits sit inside a hex digest (:func:`in_hex_digest`) is dropped, whichever
        path found it: a site that starts at hex letters is read as a run of several groups. A group of
        digits inside a digest is no part of any window (:func:`_outside_digests`), so the digits ending
        one digest and starting the next, a space apart, are never read as a card number.
        """
        first = len(found)
        opened = base
        end = base + len(run)
        # A URL escape's "%" is one or two characters before the run (%22, %A0): only then is the regex asked.
        if base and "%" in text[max(0, base - 2) : base] and not _GROUP_START.match(text, base):
            # The run starts at the digits of a URL escape (%20, %22, %A0): they are the character it
            # encodes, and the run's first group is the one after it ("card%204111111111111111").
            head = _GROUP_START.search(text, base, end)
            if head is None:
                return
            base, run = head.start(), text[head.start() : end]
        # A letter beside the run (str.isalpha, inline: this runs for every run) sends it to _outside_digests,
        # which tells a glued group (glued_before, glued_after) from one after a URL escape or a %B.
        if ("d" in run or "D" in run or (base and ((c := text[base - 1]) in _HEX or c.isalpha()))
                or (end < len(text) and ((c := text[end]) in _HEX or c.isalpha()))):
            for start, stop in _outside_digests(text, base, end):
                self._scan_run(text, text[start:stop], start, deadline, found)
        else:
            self._scan_run(text, run, base, deadline, found)
        if len(found) > first:
            # A card number found inside a UUID spans one of its hyphens, or is its last part, after one.
            hyphen = "-" in text[max(0, opened - 1) : end]
            found[first:] = [f for f in found[first:]
                             if not (text[f.start:f.end].isdecimal() and in_hex_digest(text, f.start, f.end))
                             and not (hyphen and in_uuid(text, f.start, f.end))]

    def _scan_run(self, text: str, run: str, base: int, deadline: Deadline, found: list[Finding]) -> None:
        """:meth:`scan_run` before the hex-digest check.

        A run longer than :data:`RUN_WINDOW` characters is read in windows, so
        the lists made for it never grow with it. A window decides the card
        numbers that start in its first RUN_WINDOW characters, and holds the
        :data:`SPAN` characters after them, which hold all of any card number
        starting there and the character after it: it decides them exactly as
        the whole run would. The next window starts at the first group past
        that point, as the search over the whole run goes on from every group.
        """
        if base >= 2 and text[base - 1] == "." and text[base - 2].isdecimal():
            # The digits of a decimal fraction (0.4532...) are not a card number; the groups after
            # them can be one ("paid 12.50 4111 1111 1111 1111").
            cut = next((i for i, char in enumerate(run) if not char.isdecimal()), len(run))
            after = _GROUP_START.search(run, cut)
            if after is None:
                return
            run, base = run[after.start():], base + after.start()
        if run.isdecimal():
            # One group of digits: a card number only if it is all of it.
            if MIN_DIGITS <= len(run) <= MAX_DIGITS:
                self.candidates += 1
                digits = ascii_digits(run)
                if is_pan(digits):
                    found.append(Finding(base, base + len(run), self.token(digits), NAME))
            return
        size = len(run)
        position = 0
        while size - position > RUN_WINDOW + SPAN:
            limit = position + RUN_WINDOW
            self._scan_groups(run[position : limit + SPAN], base + position, base + limit, deadline, found)
            # The next window starts at the first group past this one's decided part, inside a card
            # number found or not: every group is a window's start (see _windows).
            start = _GROUP_START.search(run, limit)
            if start is None:
                return
            position = start.start()
        self._scan_groups(run[position:] if position else run, base + position, base + size, deadline, found)

    def _scan_groups(self, run: str, base: int, limit: int, deadline: Deadline, found: list[Finding]) -> None:
        """The card numbers starting before ``limit`` in a run (or window of one) that starts with a group."""
        if run.isascii() and "%" not in run and "d" not in run and "D" not in run:
            if len(run) >= 3 * _BULK_GROUPS and self._uniform(run, base, limit, deadline, found):
                return
            tokens = run.translate(_TO_SPACE).split(" ")
            if tokens[-1] == "":
                tokens.pop()  # the run ended on a separator
            if "" not in tokens:
                # One single separator between groups (the common case): each
                # group starts at its digit offset plus one character per group before it.
                self._windows(None, list(map(len, tokens)), "".join(tokens), deadline, found,
                              base=base, groups=tokens, limit=limit)
                return
        # Split the run into groups of digits; a separator that is not one
        # (a lone "%", a "d") ends a sub-run, which is scanned on its own.
        starts: list[int] = []
        lengths: list[int] = []
        groups: list[str] = []
        position = base
        for piece in _PIECE.findall(run):
            if piece[0].isdecimal():
                starts.append(position)
                lengths.append(len(piece))
                groups.append(piece)
            elif piece not in _PLAIN_SEPARATORS and not _SEPARATOR.fullmatch(piece):
                self._windows(starts, lengths, ascii_digits("".join(groups)), deadline, found, limit=limit)
                starts, lengths, groups = [], [], []
            position += len(piece)
        self._windows(starts, lengths, ascii_digits("".join(groups)), deadline, found, limit=limit)

    def _uniform(self, run: str, base: int, limit: int, deadline: Deadline, found: list[Finding]) -> bool:
        """A run of groups of one even length joined by single separators, the last group of any length.

        Returns False, having done nothing, for a run that is not one. For
        one that is, no list of groups is made at all: with every group the
        same even length, each digit's place in its group says whether Luhn
        doubles it in every window, so the groups' Luhn sums are column sums
        of the digits, and the sums of all windows of k groups are k shifted
        copies of them added up, one byte per window (at most 9 x 19), as
        integers. Windows ending with the last group are checked one by one.
        The findings are those of :meth:`_windows`.
        """
        first = _NOT_DIGIT.search(run)
        length = first.start() if first is not None else 0
        if not length or length & 1 or length > MAX_DIGITS:
            return False
        stripped = run.rstrip(" -+")
        last_separator = max(stripped.rfind(" "), stripped.rfind("-"), stripped.rfind("+"))
        body = stripped[:last_separator]  # every group but the last, and the separators between them
        count, rest = divmod(len(body) + 1, length + 1)
        if last_separator < 0 or rest or count < _BULK_GROUPS or body[length :: length + 1].strip(" -+"):
            return False
        digits = body.translate(_NO_SEPARATORS)
        if len(digits) != count * length:
            return False  # another separator stands somewhere: the groups are not all one length
        deadline.check()
        last = stripped[last_separator + 1 :]
        raw = digits.encode("ascii")
        sums = 0
        for column in range(length):
            # Counted from a group's end, its first digit is an odd number of places away: doubled.
            table = _DOUBLED_VALUE if column % 2 == 0 else _VALUE
            sums += int.from_bytes(raw[column::length].translate(table), "little")
        stop = min(count + 1, -(-(limit - base) // (length + 1)))  # groups that start before limit
        best: dict[int, int] = {}  # start group -> end group of its longest card number
        at = deadline.at
        clock = deadline.clock
        candidates = 0
        window = 0
        several_shaped = card_shaped((length, length))  # equal groups: the answer is the same for any number
        for k in range(1, MAX_DIGITS // length + 1):
            if k > 1 and not several_shaped:
                break  # groups of one length other than four: no card number is written so
            window += sums >> (8 * (k - 1))  # byte i: the Luhn sum of the k groups from group i
            size = k * length
            if size < MIN_DIGITS or k > count:
                continue
            allowed = _ALLOWED[size]
            end = min(stop, count - k + 1)
            for i in _luhn_passing(window, count, end):
                if at is not None and clock() > at:
                    self.candidates += candidates
                    raise BudgetExhausted()
                candidates += 1
                a = i * length
                if digits[a : a + 4] in allowed:
                    best[i] = i + k  # longer than any found from i before (k only grows)
        self.candidates += candidates
        whole = digits + last
        for i in range(count, -1, -1):  # the windows ending with the last group
            size = (count - i) * length + len(last)
            if size > MAX_DIGITS:
                break
            if size >= MIN_DIGITS and i < stop:
                self.candidates += 1
                if is_pan(whole[i * length :]) and card_shaped((length,) * (count - i) + (len(last),)):
                    best[i] = count + 1
        step = length + 1
        for i in sorted(best):  # every group's longest window: overlapping findings merge (see _windows)
            j = best[i]
            if j <= count:
                card, end_at = whole[i * length : j * length], base + j * step - 1
            else:
                card, end_at = whole[i * length :], base + count * step + len(last)
            found.append(Finding(base + i * step, end_at, self.token(card), NAME))
        return True

    @staticmethod
    def _stop(starts: list[int] | None, offsets: list[int], base: int, limit: int) -> int:
        """How many groups start before ``limit`` (see :meth:`_windows` for ``starts``)."""
        if starts is not None:
            return bisect.bisect_left(starts, limit)
        stop = len(offsets) - 1
        while stop and base + offsets[stop - 1] + stop - 1 >= limit:
            stop -= 1
        return stop

    def _windows(
        self,
        starts: list[int] | None,
        lengths: list[int],
        digits: str,
        deadline: Deadline,
        found: list[Finding],
        *,
        base: int = 0,
        groups: list[str] | None = None,
        limit: int,
    ) -> None:
        """Every window of whole groups holding 12 to 19 digits; the longest card number from each group.

        ``starts`` gives each group's position in the text; ``None`` means the
        groups are ``base`` onwards, one separator character apart. Only
        windows starting before ``limit`` are considered; the groups after it
        are what those windows may extend into.
        """
        count = len(lengths)
        if not count or len(digits) < MIN_DIGITS:
            return
        if groups is not None and count >= _BULK_GROUPS:
            tally = Counter(lengths)
            tally[lengths[-1]] -= 1  # every group but the last (which may be odd)
            if not any(length & 1 for length, number in tally.items() if number):
                self._windows_bulk(starts, lengths, digits, groups, +tally, deadline, found, base=base, limit=limit)
                return
        offsets = [0, *accumulate(lengths)]
        total_digits = offsets[-1]
        stop = self._stop(starts, offsets, base, limit)
        raw = digits.encode("ascii")
        at = deadline.at
        clock = deadline.clock
        plausible = _PLAUSIBLE
        allowed = _ALLOWED
        doubled = _DOUBLED
        candidates = 0
        i = 0
        while i < stop:
            if at is not None and clock() > at:
                self.candidates += candidates
                raise BudgetExhausted()
            a = offsets[i]
            if total_digits - a < MIN_DIGITS:
                break  # no window from here on can hold a card number
            four = digits[a : a + 4]
            best = -1
            if four in plausible:
                j = i
                while j < count:
                    size = offsets[j + 1] - a
                    if size > MAX_DIGITS:
                        break
                    j += 1
                    if size >= MIN_DIGITS:
                        candidates += 1
                        if four in allowed[size]:
                            window = raw[a : a + size]
                            if ((sum(window[-1::-2]) + sum(window[-2::-2].translate(doubled)) - 48 * size) % 10 == 0
                                    and (j - i == 1 or card_shaped(lengths[i:j], four))):
                                best = j
            if best < 0:
                i += 1
                continue
            card = digits[a : offsets[best]]
            if starts is None:
                span = (base + a + i, base + offsets[best] + best - 1)
            else:
                span = (starts[i], starts[best - 1] + lengths[best - 1])
            found.append(Finding(span[0], span[1], self.token(card), NAME))
            # The next group, never the group after this window: a card number can start inside it
            # ("60000005 4111 1111 1111 1111": both windows pass). Overlapping findings merge.
            i += 1
        self.candidates += candidates

    def _windows_bulk(
        self,
        starts: list[int] | None,
        lengths: list[int],
        digits: str,
        groups: list[str],
        tally: Counter[int],
        deadline: Deadline,
        found: list[Finding],
        *,
        base: int = 0,
        limit: int,
    ) -> None:
        """:meth:`_windows` for a long run of even-length groups, the Luhn sums done in bulk.

        When every group before a window's end has an even number of digits,
        each group's last digit is an even number of digits from the end of
        every window it is in, so it adds one fixed amount to the Luhn sum of
        each. With those amounts mod 10 as one byte per group, the sums of
        all windows of k groups are k shifted copies of them added up as
        integers (a byte never carries: at most 9 x 9), and a window passes
        Luhn exactly when its byte is 0 mod 10. The windows ending with an
        odd-length last group are checked one by one. Only windows that pass
        Luhn reach the issuer check; the longest card number from each group
        wins, as in :meth:`_windows`, which gives the same findings.
        """
        deadline.check()
        count = len(lengths)
        offsets = [0, *accumulate(lengths)]
        stop = self._stop(starts, offsets, base, limit)
        even = count - (lengths[-1] & 1)  # groups [0, even) all have an even length
        amounts = int.from_bytes(bytes(map(_LUHN_LAST_PLAIN.__getitem__, groups[:even])), "little")
        # Only group counts some window can have 12 to 19 digits with: at least
        # as many as the longest groups need to reach 12, at most as many as the
        # shortest fit in 19. (Counted, not sorted: a run can hold many groups.)
        if even == count:
            tally = tally + Counter({lengths[-1]: 1})  # the last group is even: it counts too
        ordered = sorted(tally.items())  # (length, how many) of the groups [0, even)
        fewest = _groups_needed(reversed(ordered), lambda total: total >= MIN_DIGITS, even + 1)
        most = _groups_needed(ordered, lambda total: total > MAX_DIGITS, even + 1) - 1
        best: dict[int, int] = {}  # start group -> end group of its longest card number
        at = deadline.at
        clock = deadline.clock
        allowed = _ALLOWED
        candidates = 0
        window = 0
        for k in range(1, min(most, even) + 1):
            window += amounts >> (8 * (k - 1))  # byte i: the Luhn sum of the k groups from group i, mod 10 each
            if k < fewest:
                continue
            deadline.check()
            end = min(stop, even + 1 - k)
            for i in _luhn_passing(window, even, end):
                if at is not None and clock() > at:
                    self.candidates += candidates
                    raise BudgetExhausted()
                a = offsets[i]
                size = offsets[i + k] - a
                if MIN_DIGITS <= size <= MAX_DIGITS:
                    candidates += 1
                    if digits[a : a + 4] in allowed[size] and (k == 1 or card_shaped(lengths[i : i + k], digits[a : a + 4])):
                        best[i] = i + k  # longer than any found from i before (k only grows)
        self.candidates += candidates
        for i in range(even, -1, -1) if even < count else ():
            size = offsets[count] - offsets[i]
            if size > MAX_DIGITS:
                break
            if size >= MIN_DIGITS and i < stop:
                self.candidates += 1
                if is_pan(digits[offsets[i] : offsets[count]]) and card_shaped(lengths[i:count], digits[offsets[i] :]):
                    best[i] = count  # the longest from i: no window from i ends later
        for i in sorted(best):  # every group's longest window: overlapping findings merge (see _windows)
            j = best[i]
            card = digits[offsets[i] : offsets[j]]
            if starts is None:
                span = (base + offsets[i] + i, base + offsets[j] + j - 1)
            else:
                span = (starts[i], starts[j - 1] + lengths[j - 1])
            found.append(Finding(span[0], span[1], self.token(card), NAME))
