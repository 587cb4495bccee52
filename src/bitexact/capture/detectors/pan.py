"""Card numbers (PANs): issuer prefix, length and the Luhn check, in any script's digits.

A candidate is a run of digit groups joined by separators (a space, hyphen,
``+``, no-break space, or ``%20``/``%2D`` as a URL encodes them; up to three
in a row), in any script's decimal digits. Within a run, every window of
whole consecutive groups holding 12 to 19 digits is considered, so a card
number written next to other numbers ("4111 1111 1111 1111 123") is found;
a run of digits with no separator is one group and is never cut. The digits
of a decimal fraction (after ``0.``) are not a candidate. A window
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

import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import accumulate
from typing import Any

from bitexact.capture.budget import BudgetExhausted, Deadline
from bitexact.capture.detectors.base import RUN_CHARS, SEPARATOR_UNIT, Finding, ascii_digits

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
    ("2200", "2204", _LONG),  # Mir
    ("2205", "2205", (16,)),  # BORICA
    ("2221", "2720", (16,)),  # Mastercard 2-series
    ("300", "305", (14, 15, 16, 17, 18, 19)),  # Diners Club
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


_RUN = re.compile(rf"\d[{RUN_CHARS}]{{{MIN_DIGITS - 1},}}")
# Separators first, so the digits of %20 are read as a separator, not a group.
_PIECE = re.compile(r"(?:%2[0dD]|[ \-+\u00a0])+|\d+|\D")
_SEPARATOR = re.compile(rf"{SEPARATOR_UNIT}{{1,3}}")
_PLAIN_SEPARATORS = frozenset({" ", "-", "+", "\u00a0", "%20", "%2D", "%2d", " - ", "  ", "   ", "--"})
_TO_SPACE = str.maketrans("-+", "  ")
_BULK_GROUPS = 64  # a run of at least this many groups has its Luhn sums done in bulk


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


class _GroupLuhn(dict[str, int]):
    """What a group of ASCII digits adds to a Luhn sum ending with its last digit."""

    def __missing__(self, group: str) -> int:
        raw = group.encode("ascii")
        value = sum(raw[-1::-2]) + sum(raw[-2::-2].translate(_DOUBLED)) - 48 * len(raw)
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
        """The card numbers in one run of ``text`` starting at ``base``."""
        if base >= 2 and text[base - 1] == "." and text[base - 2].isdecimal():
            return  # the digits of a decimal fraction (0.4532...) are not a card number
        if run.isdecimal():
            # One group of digits: a card number only if it is all of it.
            if MIN_DIGITS <= len(run) <= MAX_DIGITS:
                self.candidates += 1
                digits = ascii_digits(run)
                if is_pan(digits):
                    found.append(Finding(base, base + len(run), self.token(digits), NAME))
            return
        if run.isascii() and "%" not in run and "d" not in run and "D" not in run:
            tokens = run.translate(_TO_SPACE).split(" ")
            if tokens[-1] == "":
                tokens.pop()  # the run ended on a separator
            if "" not in tokens:
                # One single separator between groups (the common case): each
                # group starts at its digit offset plus one character per group before it.
                self._windows(None, list(map(len, tokens)), "".join(tokens), deadline, found, base=base, groups=tokens)
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
                self._windows(starts, lengths, ascii_digits("".join(groups)), deadline, found)
                starts, lengths, groups = [], [], []
            position += len(piece)
        self._windows(starts, lengths, ascii_digits("".join(groups)), deadline, found)

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
    ) -> None:
        """Every window of whole groups holding 12 to 19 digits; the longest card number from each group.

        ``starts`` gives each group's position in the text; ``None`` means the
        groups are ``base`` onwards, one separator character apart.
        """
        count = len(lengths)
        if not count or len(digits) < MIN_DIGITS:
            return
        if groups is not None and count >= _BULK_GROUPS:
            tally = Counter(lengths)
            tally[lengths[-1]] -= 1  # every group but the last (which may be odd)
            if not any(length & 1 for length, number in tally.items() if number):
                self._windows_bulk(starts, lengths, digits, groups, +tally, deadline, found, base=base)
                return
        offsets = [0, *accumulate(lengths)]
        total_digits = offsets[-1]
        raw = digits.encode("ascii")
        at = deadline.at
        clock = deadline.clock
        plausible = _PLAUSIBLE
        allowed = _ALLOWED
        doubled = _DOUBLED
        candidates = 0
        i = 0
        while i < count:
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
                            if (sum(window[-1::-2]) + sum(window[-2::-2].translate(doubled)) - 48 * size) % 10 == 0:
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
            i = best
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
    ) -> None:
        """:meth:`_windows` for a long run of even-length groups, the Luhn sums done in bulk.

        When every group before a window's end has an even number of digits,
        each group's last digit is an even number of digits from the end of
        every window it is in, so it adds one fixed amount to the Luhn sum of
        each. With running sums of those amounts mod 10, a window passes Luhn
        exactly when the running sums at its two ends are equal, and the
        equal pairs k groups apart are found for every start at once by
        XOR-ing the two byte strings as integers. The windows ending with an
        odd-length last group are checked one by one. Only windows that pass
        Luhn reach the issuer check; the longest card number from each group
        wins, as in :meth:`_windows`, which gives the same findings.
        """
        deadline.check()
        count = len(lengths)
        offsets = [0, *accumulate(lengths)]
        even = count - (lengths[-1] & 1)  # groups [0, even) all have an even length
        amounts = map(_LUHN_LAST_PLAIN.__getitem__, groups[:even])
        running = bytes(map((10).__rmod__, accumulate(amounts, initial=0)))
        # Only group counts some window can have 12 to 19 digits with: at least
        # as many as the longest groups need to reach 12, at most as many as the
        # shortest fit in 19. (Counted, not sorted: a run can hold millions of groups.)
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
        for k in range(fewest, min(most, even) + 1):
            deadline.check()
            width = even + 1 - k
            # A zero byte at i: the window of k groups from group i passes Luhn.
            same = (int.from_bytes(running[k:], "big") ^ int.from_bytes(running[:width], "big")).to_bytes(width, "big")
            find = same.find
            i = find(0)
            while i != -1:
                if at is not None and clock() > at:
                    self.candidates += candidates
                    raise BudgetExhausted()
                a = offsets[i]
                size = offsets[i + k] - a
                if MIN_DIGITS <= size <= MAX_DIGITS:
                    candidates += 1
                    if digits[a : a + 4] in allowed[size] and i + k > best.get(i, -1):
                        best[i] = i + k
                i = find(0, i + 1)
        self.candidates += candidates
        for i in range(even, -1, -1) if even < count else ():
            size = offsets[count] - offsets[i]
            if size > MAX_DIGITS:
                break
            if size >= MIN_DIGITS:
                self.candidates += 1
                if is_pan(digits[offsets[i] : offsets[count]]):
                    best[i] = count  # the longest from i: no window from i ends later
        resume = 0
        for i in sorted(best):
            if i < resume:
                continue
            j = best[i]
            card = digits[offsets[i] : offsets[j]]
            if starts is None:
                span = (base + offsets[i] + i, base + offsets[j] + j - 1)
            else:
                span = (starts[i], starts[j - 1] + lengths[j - 1])
            found.append(Finding(span[0], span[1], self.token(card), NAME))
            resume = j
