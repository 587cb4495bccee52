"""The scanner: every detector over every string, key and number of a value.

What a detector reads (capture-controls.md, "What each detector finds"):
every string at any depth, every number as its JSON text, every object
key, and a JSON object or array inside a string as the document it is -
each string token decoded (so an escaped digit hides nothing), each number
token, each key, and every value a repeated key shadows (the raw token
stream sees every pair). A value under a key in the credential table is
replaced whole.

Speed comes from scanning many values at once: :meth:`Scanner.scrub_many`
joins texts with NUL (which no detector reads across) and runs each detector
once over the whole, in the regex engine's C loops. A finding inside one
text from a detector that needs no context is applied as found; a text that
needs more (a JSON document with escapes, an SSN's context, a match across
a NUL) is scanned again on its own, where it is handled exactly.
"""

from __future__ import annotations

import bisect
import json
from decimal import Decimal, InvalidOperation
import re
from collections import Counter
from collections.abc import Callable, Sequence, Set
from dataclasses import dataclass
from itertools import accumulate, compress
from typing import Any, Final

import orjson

from bitexact.canon import STACK_SAFE_DEPTH, es6_number, nested_deeper_than
from bitexact.capture.budget import BudgetExhausted, Deadline
from bitexact.capture.detectors import Detector, Finding, ascii_lower, holds_credential, is_credential_name
from bitexact.capture.detectors.credentials import (
    ARGV_COMMAND_AT,
    COMMAND_WORDS,
    COMPOUND_ENDINGS,
    CREDENTIAL_NAMES,
    EXE_SUFFIX,
    NAME_ENDS,
    NAME_MEMBERS,
    VALUE_MEMBERS,
    argv_secrets,
    names_a_command,
    names_credential,
)
from bitexact.capture.detectors.credentials import TOKEN as CREDENTIAL_TOKEN
from bitexact.capture.detectors.documents import (
    ATTRIBUTES,
    MIRRORED,
    MIRRORED_VALUES,
    MIRRORS,
    QUOTED_SECRET_KIND,
    QUOTED_SECRET_MAPS,
    QUOTED_SENSITIVE,
    QUOTED_SENSITIVE_ATTRIBUTES,
    QUOTED_SENSITIVE_END,
    QUOTED_SENSITIVE_VALUES,
    SECRET_KIND,
    SECRET_MAPS,
    SENSITIVE,
    SENSITIVE_ATTRIBUTES,
)
from bitexact.capture.detectors.ordinary import SIBLING_NAMES, VALUE_NAMES, ordinary_document_key, ordinary_value
from bitexact.capture.terminal import ESC, mapped, shown

MAX_NESTED_DOCUMENTS = 32
"""JSON documents nested in strings deeper than this fail the scan (withheld, never kept)."""

_SEPARATOR = "\x00"
_SCAN_ALONE = 64 * 1024  # characters: a text this long is not joined with others
_PLUS_ONE = (1).__add__
_REPEAT_FROM = 256
"""Characters a text needs for scrub_many to look for it twice: a shorter one costs less to scan again than
to look for (a short key in every item of a list is scanned at each place, as before)."""
_JSON_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|[{}\[\]:,]|[^\s{}\[\]:,"]+', re.DOTALL)
_DOCUMENT_START = re.compile(r"\s*[\[{]")
_DOCUMENT_END = re.compile(r"[\]}]\s*\Z")


class DetectorFailed(Exception):
    """Internal: a detector raised, or a value could not be read; the field is withheld."""


_NAMES = "|".join(re.escape(k) for k in sorted(CREDENTIAL_NAMES))
# A name/value object's name member whose string ends as a credential name can (read to its closing quote once,
# then one lookbehind per ending): whether it names one is decided by the document's walk.
_NAME_MEMBER = re.compile(r"\"(?:name|key)\"\s*:\s*\"[^\"\\]*+(?:" + NAME_ENDS + r")\"", re.IGNORECASE | re.ASCII)
_ENDINGS = "|".join(COMPOUND_ENDINGS)
_DOCUMENT_HIDES = re.compile(
    r"\d[eE][+-]?\d|\[\s*\"(?:" + _NAMES + r"|[A-Za-z0-9_.\-]{0,96}(?:" + _ENDINGS + r"))\"\s*,"
    + r"|\"(?:[^\"\\/]*+[/\\])*+(?:" + "|".join(re.escape(w) for w in sorted(COMMAND_WORDS)) + r")" + EXE_SUFFIX + r"\"\s*,"
    + r"|\"--[A-Za-z0-9_.\-]{0,96}(?:" + _NAMES + "|" + _ENDINGS + r")\"\s*,",
    re.IGNORECASE | re.ASCII,
)
"""What a JSON document in a string can hold that its text does not show as such: an exponent-form
number (a card number as 4.111111111111111E15), a credential name opening a [name, value] pair (a
table name, or a name ending as a compound credential name can: the document's walk decides), a
command in an argv list, by its file name (``/usr/bin/mysql``, ``C:\\\\bin\\\\mysql.exe`` as JSON writes it; its
password flag and value are two of the list's strings), or a long flag named as a credential before another
item (``"--api-key",`` then its value). A name/value object naming a credential is asked apart
(:func:`_may_hold_name_value`): only a document holding a ``"value"`` key pays for that search."""


def looks_like_document(text: str) -> bool:
    """Whether ``text`` may be a JSON object or array (checked by parsing it)."""
    return _DOCUMENT_START.match(text) is not None and _DOCUMENT_END.search(text) is not None


def number_text(value: int | float) -> str:
    """A number as its JSON text (ECMAScript form for doubles, as canonical JSON writes it)."""
    if isinstance(value, int):
        return str(value)
    try:
        return es6_number(value)
    except (ValueError, ArithmeticError):
        return repr(value)


def apply_findings(text: str, findings: Sequence[Finding], rank: dict[str, int]) -> tuple[str, Counter[str]]:
    """Replace the findings' spans; overlapping spans merge under the first one's token.

    Spans are ordered by start, then longest, then detector order.
    """
    counts: Counter[str] = Counter()
    if not findings:
        return text, counts
    ordered = sorted(findings, key=lambda f: (f.start, -f.end, rank.get(f.detector, 99)))
    out: list[str] = []
    position = 0
    current = ordered[0]
    end = current.end
    for finding in ordered[1:]:
        if finding.start < end:
            end = max(end, finding.end)
            continue
        out.append(text[position : current.start])
        out.append(current.token)
        counts[current.detector] += 1
        position = end
        current = finding
        end = finding.end
    out.append(text[position : current.start])
    out.append(current.token)
    counts[current.detector] += 1
    out.append(text[end:])
    return "".join(out), counts


def _repeats(texts: list[str]) -> bool:
    """Whether one text stands twice in ``texts`` (long ones). A few are compared two by two, by length and
    then by content, which stops at the first difference: hashing each whole would read every character."""
    if len(texts) > 8:
        return len(set(texts)) < len(texts)
    for at, text in enumerate(texts, 1):  # a plain loop: a generator costs more than the few comparisons
        if text in texts[at:]:
            return True
    return False


@dataclass
class Scanner:
    """The policy's detectors, applied to texts and JSON values."""

    detectors: tuple[Detector, ...]

    def __post_init__(self) -> None:
        # A detector may stand for several (pan and iban share one pass).
        names = [n for d in self.detectors for n in getattr(d, "names", (d.name,))]
        self.rank = {name: i for i, name in enumerate(names)}
        self.by_key = "credentials" in names
        present = set(names)
        # The fewest digits a number must have for a detector to find anything
        # in it: a custom pattern may match any; an SSN has 9; a card number 12.
        if present - {"pan", "iban", "credentials", "us_ssn", "email"}:
            self.min_digits = 1
        elif "us_ssn" in present:
            self.min_digits = 9
        elif "pan" in present:
            self.min_digits = 12
        else:
            self.min_digits = 0  # no detector reads numbers
        self.int_floor = 10 ** (self.min_digits - 1) if self.min_digits else 0

    def int_needs_scan(self, value: int) -> bool:
        """Whether an integer has enough digits for any detector to find something in it."""
        return self.min_digits > 0 and (value >= self.int_floor or -value >= self.int_floor)

    def float_needs_scan(self, value: float) -> bool:
        """Whether a double's integer part has enough digits (its fraction is no card number)."""
        if self.min_digits == 1:
            return True
        return self.min_digits > 0 and abs(value) >= self.int_floor

    def number_needs_scan(self, text: str) -> bool:
        """The same rule for a number token of a JSON document."""
        if self.min_digits == 1:
            return True
        if self.min_digits == 0:
            return False
        integer = text.lstrip("-").partition(".")[0].partition("e")[0].partition("E")[0]
        if integer != text.lstrip("-"):
            try:
                return self.float_needs_scan(float(text))
            except ValueError:
                return True
        return len(integer) >= self.min_digits

    # -- one text -----------------------------------------------------------

    def findings(self, text: str, deadline: Deadline, *, context: str | None = None) -> list[Finding]:
        """Every detector's findings in one text.

        A text holding ESC (a tool's coloured output, a pty's transcript) is read twice: as written, and as a
        terminal shows it, its escape sequences taken out (:mod:`bitexact.capture.terminal`), each finding of
        that second read placed back over the characters it covers, the codes between them included. What a
        code hid (``ESC[1mpassword ESC[0m: x``) is found; what only the codes hold (a window title) still is.
        """
        found = self._found(text, deadline, context)
        if ESC in text:  # one C search; every other text is read once, as before
            screen = shown(text)
            if screen != text:
                on_screen = self._found(screen, deadline, context)
                if on_screen:
                    back = mapped(text, screen)
                    for finding in on_screen:
                        start, end = back.span(finding.start, finding.end)
                        found.append(Finding(start, end, finding.token, finding.detector))
        return found

    def _found(self, text: str, deadline: Deadline, context: str | None) -> list[Finding]:
        """Every detector's findings in ``text`` as it is."""
        found: list[Finding] = []
        for detector in self.detectors:
            try:
                found.extend(detector.find(text, deadline, context=context))
            except BudgetExhausted:
                raise
            except Exception as exc:  # a detector that raises fails its field, never the call
                raise DetectorFailed(f"detector {detector.name} failed: {type(exc).__name__}") from exc
        return found

    def scrub_text(
        self, text: str, deadline: Deadline, *, context: str | None = None, depth: int = 0
    ) -> tuple[str, Counter[str]]:
        """``text`` with every finding replaced, and the count per detector.

        A JSON object or array held in the text is scanned as the document it
        is, token by token, and rewritten only where a token changes.
        """
        if looks_like_document(text):
            scrubbed = self.scrub_document(text, deadline, depth=depth)
            if scrubbed is not None:
                return scrubbed
        return apply_findings(text, self.findings(text, deadline, context=context), self.rank)

    # -- many texts at once -------------------------------------------------

    def _run(self, detector: Detector, text: str, deadline: Deadline, prefilter: bool) -> list[Finding]:
        try:
            return detector.find(text, deadline, prefilter=prefilter)
        except BudgetExhausted:
            raise
        except Exception as exc:  # a detector that raises fails its field, never the call
            raise DetectorFailed(f"detector {detector.name} failed: {type(exc).__name__}") from exc

    def scrub_many(
        self,
        texts: Sequence[str],
        deadline: Deadline,
        *,
        context_of: Callable[[int], str | None] | None = None,
        depth: int = 0,
    ) -> dict[int, tuple[str, Counter[str]]]:
        """Scrub many texts at once; only the changed ones are returned, by index.

        The texts are joined with NUL and each detector runs once over the
        whole. A finding that lies inside one text, from a detector whose
        findings need no context, is applied as found; a text touched by any
        other finding (or a JSON document with escapes) is scanned on its own.
        """
        if not texts or not self.detectors:
            return {}
        context = context_of or (lambda index: None)
        changed: dict[int, tuple[str, Counter[str]]] = {}
        # A large text is scanned on its own: joining would only copy it.
        lengths = list(map(len, texts))
        large = [i for i, size in enumerate(lengths) if size >= _SCAN_ALONE] if max(lengths) >= _SCAN_ALONE else []
        for index in large:
            new, counts = self.scrub_text(texts[index], deadline, context=context(index), depth=depth)
            if counts:
                changed[index] = (new, counts)
        if large:
            rest = [i for i in range(len(texts)) if len(texts[i]) < _SCAN_ALONE]
            if rest:
                inner = self.scrub_many(
                    [texts[i] for i in rest], deadline, context_of=lambda i: context(rest[i]), depth=depth
                )
                changed.update({rest[i]: result for i, result in inner.items()})
            return changed
        if len(texts) == 1:
            new, counts = self.scrub_text(texts[0], deadline, context=context(0), depth=depth)
            return {0: (new, counts)} if counts else {}
        # A long text that stands twice (a result echoing its arguments) is scanned once, and so is every
        # other text that repeats then: each text is read as it would be alone, so what the joined pass finds in it is its own wherever
        # it stands; only a rescan takes the context of each place it stands in.
        distinct: Sequence[str] = texts
        longs = list(compress(texts, map(_REPEAT_FROM.__le__, lengths)))  # picked in C: no Python step per text
        if len(longs) > 1 and _repeats(longs):
            distinct = list(dict.fromkeys(texts))
        joined = _SEPARATOR.join(distinct)
        found: list[tuple[Detector, list[Finding]]] = []
        for detector in self.detectors:
            hits = self._run(detector, joined, deadline, True)
            if hits:
                found.append((detector, hits))
        if not found and "\\" not in joined and ESC not in joined and "{" not in joined and "[" not in joined:
            # Nothing found, and no text holds an escape, a terminal code or a document to read again: every text
            # is as it was (most steps). The places of the texts below are only worked out for what is found.
            return changed
        # Each text's start: the lengths before it, and a NUL after each.
        starts = [*accumulate(map(_PLUS_ONE, lengths if distinct is texts else map(len, distinct)), initial=0)]
        direct: dict[int, list[Finding]] = {}
        rescan: set[int] = set()
        for detector, hits in found:
            for finding in hits:
                first = bisect.bisect_right(starts, finding.start) - 1
                last = bisect.bisect_right(starts, max(finding.start, finding.end - 1)) - 1
                # A match that takes the separator after its text (a custom \D) is no finding of that text.
                past_end = finding.end > starts[first] + len(distinct[first])
                if first != last or past_end or not finding.token or not detector.context_free:
                    rescan.update(range(first, last + 1))
                    continue
                base = starts[first]
                direct.setdefault(first, []).append(
                    Finding(finding.start - base, finding.end - base, finding.token, finding.detector)
                )
        # A JSON document with escapes can hide what its raw text does not show.
        position = joined.find("\\")
        while position != -1:
            index = bisect.bisect_right(starts, position) - 1
            if looks_like_document(distinct[index]):
                rescan.add(index)
            position = joined.find("\\", starts[index + 1]) if index + 1 < len(distinct) else -1
        # A text holding terminal codes is read as a terminal shows it too (Scanner.findings): the texts as shown
        # are read joined, and one that holds a finding there is scanned alone.
        position = joined.find(ESC)
        if position != -1:
            coded: list[int] = []
            while position != -1:
                index = bisect.bisect_right(starts, position) - 1
                coded.append(index)
                position = joined.find(ESC, starts[index + 1]) if index + 1 < len(distinct) else -1
            rescan.update(self._found_on_screen(distinct, coded, deadline))
        # So can one holding a number in exponent form, or a credential as a [name, value] pair or a name/value
        # object: read as text, none shows (the walk reads them, held as data). Only documents are searched.
        for index, text in enumerate(distinct) if ("{" in joined or "[" in joined) else ():
            opening = text[:1]
            if (index not in rescan and (opening in "{[" or opening.isspace()) and looks_like_document(text)
                    and (_DOCUMENT_HIDES.search(text)
                         or (self.by_key and (_may_hold_name_value(text) or _may_hold_kube_secret(text)
                                              or _may_hold_sensitive(text)
                                              or _may_hold_sensitive_attributes(text)
                                              or _may_hold_sensitive_values(text))))):
                rescan.add(index)
        if not rescan and not direct:
            return changed  # nothing found and nothing to read again
        spot = None if distinct is texts else {text: at for at, text in enumerate(distinct)}
        for index in sorted(rescan.union(direct)) if spot is None else range(len(texts)):
            at = index if spot is None else spot[texts[index]]
            if at not in rescan and at not in direct:
                continue
            text = texts[index]
            if at in rescan or looks_like_document(text):
                new, counts = self.scrub_text(text, deadline, context=context(index), depth=depth)
            else:
                new, counts = apply_findings(text, direct[at], self.rank)
            if counts:
                changed[index] = (new, counts)
        return changed

    def _found_on_screen(self, texts: Sequence[str], coded: list[int], deadline: Deadline) -> set[int]:
        """The indices among ``coded`` (texts holding ESC) whose text as a terminal shows it holds a finding of the
        joined pass (a superset, as for the texts as written): each detector runs once over them all, so a list of
        coloured lines costs one more pass, not one scan of every line alone."""
        screens = [(index, screen) for index in coded if (screen := shown(texts[index])) != texts[index]]
        if not screens:
            return set()
        joined = _SEPARATOR.join(screen for _, screen in screens)
        starts = [*accumulate((len(screen) + 1 for _, screen in screens), initial=0)]
        found: set[int] = set()
        for detector in self.detectors:
            for finding in self._run(detector, joined, deadline, True):
                first = bisect.bisect_right(starts, finding.start) - 1
                last = bisect.bisect_right(starts, max(finding.start, finding.end - 1)) - 1
                found.update(index for index, _ in screens[first : last + 1])
        return found

    # -- a JSON document inside a string ---------------------------------------

    def scrub_document(self, text: str, deadline: Deadline, *, depth: int = 0) -> tuple[str, Counter[str]] | None:
        """Scan a JSON document held in a string; ``None`` when the text is not one.

        Only tokens that change are rewritten; the rest of the text, its
        layout and escapes included, is kept byte for byte.
        """
        if depth >= MAX_NESTED_DOCUMENTS:
            raise DetectorFailed(f"JSON documents nested more than {MAX_NESTED_DOCUMENTS} deep in strings")
        if not _is_document(text):
            return None
        tokens = [(m.start(), m.end(), m.group()) for m in _JSON_TOKEN.finditer(text)]
        replacements: dict[int, str] = {}  # token index -> new raw text
        skip_to: dict[int, int] = {}  # first token index -> index after a replaced value
        counts: Counter[str] = Counter()
        argv_words: dict[int, str] = {}  # string tokens an argv list's password was replaced in: the new word
        # A list holding a long flag is read whole for one (["deploy", "--region", "eu", "--api-key", "X"]);
        # in a document whose strings never open with "--" (or an escape), only its first few items are.
        flags = '"--' in text or '"\\u' in text
        # A name/value object's members ({"name": "DB_PASSWORD", "value": "X"}): found before the walk, since
        # its name may follow its value. Only a document that may hold a "value" key is searched for one.
        values: Set[int] = _NO_TOKENS
        names: Set[int] = _NO_TOKENS
        if self.by_key:
            objects: list[_Object] | None = None  # read once, by the first rule that needs them
            if _may_hold_name_value(text):
                objects = _objects(tokens)
                values, names = _name_value_keys(tokens, objects)
            if _may_hold_kube_secret(text):  # rules version 8: a Kubernetes Secret's data maps
                objects = objects if objects is not None else _objects(tokens)
                values = values | _secret_data_keys(tokens, objects)
            if _may_hold_sensitive(text):  # rules version 9: Terraform's sensitive values
                objects = objects if objects is not None else _objects(tokens)
                values = values | _sensitive_value_keys(tokens, objects)
            if _may_hold_sensitive_attributes(text):  # rules version 10: a Terraform state's sensitive attributes
                objects = objects if objects is not None else _objects(tokens)
                values = values | _sensitive_attribute_keys(tokens, objects)
            if _may_hold_sensitive_values(text):  # rules version 11: terraform show -json's mirrors
                objects = objects if objects is not None else _objects(tokens)
                values = values | _sensitive_values_keys(tokens, objects)
        items: list[int] = []
        texts: list[str] = []
        contexts: list[str | None] = []
        stack: list[str] = []
        owners: list[str | None] = []
        expect_key = False
        key: str | None = None
        i = 0
        while i < len(tokens):
            raw = tokens[i][2]
            first = raw[0]
            if first in "{[":
                # The key a container is stored under; a list's items are read under it, as the walk reads them.
                owners.append(key if stack and stack[-1] == "{" else (owners[-1] if owners else None))
                stack.append(first)
                expect_key = first == "{"
                pair = self._credential_pair(tokens, i) if first == "[" else None
                if pair is not None:  # ["password", "x"]: a header list's pair, its value replaced whole
                    start, end = pair
                    replacements[start] = json.dumps(CREDENTIAL_TOKEN)
                    skip_to[start] = end
                    counts["credentials"] += 1
                    i = end  # the "]" closing the pair, read next
                    continue
                if first == "[" and self.by_key:
                    for index, word in self._argv_passwords(tokens, i, flags).items():
                        replacements[index] = json.dumps(word, ensure_ascii=False)
                        argv_words[index] = word
                        counts["credentials"] += 1
                i += 1
                continue
            if first in "}]":
                stack.pop()
                owners.pop()
                expect_key = False
                i += 1
                continue
            if first == ",":
                expect_key = bool(stack) and stack[-1] == "{"
                i += 1
                continue
            if first == ":":
                expect_key = False
                i += 1
                continue
            deadline.check()
            if first == '"':
                # A word an argv list's password was replaced in is scanned as written, the rest of it as any text.
                decoded = argv_words[i] if i in argv_words else _string_token(raw)
                if expect_key:
                    key = decoded
                    items.append(i)
                    texts.append(decoded)
                    contexts.append(None)
                    # A name/value object's value is replaced as a credential key's is; its name never is.
                    if self.by_key and (i in values or (i not in names and is_credential_name(decoded))):
                        # A model's output token, a thinking block's signature: left for their siblings.
                        if (i not in values and ascii_lower(decoded) in SIBLING_NAMES
                                and ordinary_document_key(tokens, i, _string_token)):
                            i += 1
                            continue
                        after = self._credential_value(tokens, i)
                        if after is not None and i not in values and _ordinary_value(text, tokens, decoded, after):
                            after = None  # a bare key's path, a parameter's schema (detectors/ordinary.py): read
                        if after is not None:
                            start, end = after
                            replacements[start] = json.dumps(CREDENTIAL_TOKEN)
                            skip_to[start] = end
                            counts["credentials"] += 1
                            i = end
                            expect_key = False
                            continue
                    i += 1
                    continue
                items.append(i)
                texts.append(decoded)
                contexts.append(_context_of(stack, owners, key))
            elif (first == "-" or first.isdigit()) and self.number_needs_scan(raw):
                items.append(i)
                texts.append(_number_as_read(raw))
                contexts.append(_context_of(stack, owners, key))
            i += 1
        changed = self.scrub_many(texts, deadline, context_of=contexts.__getitem__, depth=depth + 1)
        for index, (new, found) in changed.items():
            replacements[items[index]] = json.dumps(new, ensure_ascii=False)
            counts.update(found)
        if not counts:
            return text, counts
        out: list[str] = []
        position = 0
        for index in sorted(replacements):
            start = tokens[index][0]
            end = tokens[skip_to[index] - 1][1] if index in skip_to else tokens[index][1]
            out.append(text[position:start])
            out.append(replacements[index])
            position = end
        out.append(text[position:])
        return "".join(out), counts

    @staticmethod
    def _argv_passwords(tokens: list[tuple[int, int, str]], index: int, flags: bool) -> dict[int, str]:
        """An argv list opening at ``index`` (``["mysql", "-pX"]``, the rule ``argv_secrets`` reads data by):
        each string token holding a password, and the word with it replaced. A list of scalars only; its
        strings are words, its other scalars words that are no flag and no value. Unless the document may
        hold a long flag (``flags``), a list with no command among its first words is read no further."""
        words: list[Any] = []
        at = index + 1
        while at + 1 < len(tokens) and tokens[at][2][0] not in "{}[]:,":
            raw = tokens[at][2]
            words.append(_string_token(raw) if raw[0] == '"' else None)
            if len(words) == ARGV_COMMAND_AT and not flags and not any(names_a_command(word) for word in words):
                return {}  # no command among its first words: read no further
            if tokens[at + 1][2] == "]":
                return {index + 1 + 2 * word: words[word][:start] + CREDENTIAL_TOKEN + words[word][end:]
                        for word, (start, end) in argv_secrets(words).items()}
            if tokens[at + 1][2] != ",":
                break
            at += 2
        return {}  # empty, or not a list of scalars only

    def _credential_pair(self, tokens: list[tuple[int, int, str]], index: int) -> tuple[int, int] | None:
        """The value's token range of a ``[name, value]`` pair opening at ``index`` whose name is in the
        credential table (the same rule as ``walk.credential_pair`` for data), else None."""
        if not self.by_key or index + 3 >= len(tokens):
            return None
        name, comma = tokens[index + 1][2], tokens[index + 2][2]
        if name[0] != '"' or comma != "," or not is_credential_name(json.loads(name)):
            return None
        after = self._credential_value(tokens, index + 1)  # the value follows the name as after a ":"
        if after is None or after[1] >= len(tokens) or tokens[after[1]][2] != "]":
            return None  # not exactly two elements
        return after

    @staticmethod
    def _credential_value(tokens: list[tuple[int, int, str]], key_index: int) -> tuple[int, int] | None:
        """The token range of the value after a credential key, when it holds a credential."""
        start = key_index + 2  # skip the ":"
        if start >= len(tokens):
            return None
        raw = tokens[start][2]
        if raw[0] == '"':
            return (start, start + 1) if holds_credential(json.loads(raw)) else None
        if raw in ("null", "true", "false"):
            return None
        if raw[0] not in "{[":
            return start, start + 1
        depth = 0
        for end in range(start, len(tokens)):
            token = tokens[end][2]
            if token in ("{", "["):
                depth += 1
            elif token in ("}", "]"):
                depth -= 1
                if depth == 0:
                    # {} or [] holds nothing; anything else is replaced whole.
                    return None if end == start + 1 else (start, end + 1)
        return None


_NUMBER_DIGITS: Final[int] = 400
"""A document's number token is written out in full only up to this many digits before or after the point
(a larger exponent, as in ``1e999999``, is scanned as written)."""


def _number_as_read(raw: str) -> str:
    """A number token of a document as its digits read, exactly: a fraction or an exponent written out
    (``4.111111111111111E15`` is ``4111111111111111``, ``4111111111111111110.0`` is
    ``4111111111111111110``). Exactly, not as a float: the string keeps every digit of the token, and a
    float would lose those past the 17th (a 19-digit card number among them)."""
    if not any(mark in raw for mark in ".eE"):
        return raw
    try:
        value = Decimal(raw)
    except InvalidOperation:
        return raw
    exponent = value.as_tuple().exponent  # an int for a finite number
    if not isinstance(exponent, int) or abs(value.adjusted()) > _NUMBER_DIGITS or -exponent > _NUMBER_DIGITS:
        return raw
    text = format(value, "f")
    return text.rstrip("0").rstrip(".") if "." in text else text


def _string_token(raw: str) -> str:
    """A document's string token as the text it holds: what is between its quotes when it holds no escape (a
    document that parses holds no raw control character), else as JSON reads it."""
    return raw[1:-1] if "\\" not in raw else json.loads(raw)


_NO_TOKENS: Final[frozenset[int]] = frozenset()


def _may_hold_name_value(text: str) -> bool:
    """Whether a document may hold a name/value object whose name names a credential: a value member, and a
    name member ending as a credential name can - or an escape, which may spell either."""
    if "\\" in text:
        return True
    return ('"value"' in text or '"Value"' in text) and _NAME_MEMBER.search(text) is not None


@dataclass(slots=True, eq=False)
class _Object:
    """One object of a document, as its tokens show it: its members' key tokens (index, key), every pair even
    where a key repeats (the document's walk reads every pair), and the member of an enclosing object it is the
    value of (its ``parent`` and the key it sits ``under``; None at the top or in a list)."""

    members: list[tuple[int, str]]
    parent: _Object | None
    under: str | None


def _objects(tokens: list[tuple[int, int, str]]) -> list[_Object]:
    """Every object of a document, in the order they open: one read of its tokens, shared by the rules that
    decide members before the walk (name/value objects, a Secret's data maps, Terraform's sensitive values)."""
    objects: list[_Object] = []
    stack: list[_Object | None] = []  # per open container: its object, None for a list
    expect_key = False
    for i, (_, _, raw) in enumerate(tokens):
        first = raw[0]
        if first == "{":
            parent = stack[-1] if stack else None
            under = parent.members[-1][1] if parent is not None and parent.members else None
            objects.append(_Object([], parent, under))
            stack.append(objects[-1])
            expect_key = True
        elif first == "[":
            stack.append(None)
            expect_key = False
        elif first in "}]":
            if stack:
                stack.pop()
            expect_key = False
        elif first == ",":
            expect_key = bool(stack) and stack[-1] is not None
        elif first == '"' and expect_key:
            expect_key = False
            owner = stack[-1]
            assert owner is not None  # expect_key is set only inside an object
            owner.members.append((i, _string_token(raw)))
        else:
            expect_key = False
    return objects


def _string_after(tokens: list[tuple[int, int, str]], key: int) -> str | None:
    """The string a member whose key token is ``key`` holds (its value token, past the colon), or None when its
    value is no string."""
    at = key + 2
    if at < len(tokens) and tokens[at][2][0] == '"':
        return _string_token(tokens[at][2])
    return None


def _name_value_keys(tokens: list[tuple[int, int, str]], objects: list[_Object]) -> tuple[set[int], set[int]]:
    """The key tokens of a document's name/value objects whose name names a credential (the rule
    ``walk.name_value`` reads data by): their value members', and their name members'."""
    values: set[int] = set()
    names: set[int] = set()
    for item in objects:
        value_keys = [i for i, key in item.members if key in VALUE_MEMBERS]
        if not value_keys:
            continue
        name_keys = [i for i, key in item.members
                     if key in NAME_MEMBERS and names_credential(_string_after(tokens, i) or "")]
        if name_keys:
            values.update(value_keys)
            names.update(name_keys)
    return values, names


def _may_hold_kube_secret(text: str) -> bool:
    """Whether a document may be a Kubernetes Secret (rules version 8): a ``"Secret"`` string and a ``"data"`` or
    ``"stringData"`` key, as written (one spelt with escapes is not looked for: each document holding a backslash
    would pay a second read of its tokens)."""
    return QUOTED_SECRET_KIND in text and any(name in text for name in QUOTED_SECRET_MAPS)


def _secret_data_keys(tokens: list[tuple[int, int, str]], objects: list[_Object]) -> set[int]:
    """The key tokens of the members of the ``data`` and ``stringData`` objects of every object whose ``kind`` is
    ``"Secret"`` (a Kubernetes Secret, ``kubectl get secret -o json``), its kind before or after them: each member's
    value is replaced whole, whatever its key (``username``, ``tls.crt``, ``.dockerconfigjson``)."""
    found: set[int] = set()
    for item in objects:
        owner = item.parent
        if owner is not None and item.under in SECRET_MAPS and any(
                key == "kind" and _string_after(tokens, i) == SECRET_KIND for i, key in owner.members):
            found.update(i for i, _ in item.members)
    return found


def _may_hold_sensitive(text: str) -> bool:
    """Whether a document may hold Terraform's ``"sensitive": true`` (rules version 9), its key as written."""
    return QUOTED_SENSITIVE in text


def _sensitive_value_keys(tokens: list[tuple[int, int, str]], objects: list[_Object]) -> set[int]:
    """The ``"value"`` key tokens of every object holding ``"sensitive": true`` before or after it (``terraform
    output -json``, a state file's ``outputs``): the value is replaced whole, whatever its type (the rule
    ``walk.name_value`` reads data by). ``"sensitive": false`` leaves it."""
    found: set[int] = set()
    for item in objects:
        if any(key == SENSITIVE and i + 2 < len(tokens) and tokens[i + 2][2] == "true" for i, key in item.members):
            found.update(i for i, key in item.members if key == "value")
    return found


def _may_hold_sensitive_attributes(text: str) -> bool:
    """Whether a document may hold a Terraform state's ``"sensitive_attributes"`` (rules version 10), as written."""
    return QUOTED_SENSITIVE_ATTRIBUTES in text


def _sensitive_attribute_keys(tokens: list[tuple[int, int, str]], objects: list[_Object]) -> set[int]:
    """The key tokens of the members of every ``attributes`` object whose instance's ``sensitive_attributes`` paths
    name them (``[[{"type": "get_attr", "value": "password"}]]``, the path's first step; the rule
    ``walk.name_value`` reads data by): each value is replaced whole, whatever its type."""
    found: set[int] = set()
    for item in objects:
        owner = item.parent
        if owner is None or item.under != ATTRIBUTES:
            continue
        for i, key in owner.members:
            if key == SENSITIVE_ATTRIBUTES:
                names = _sensitive_paths(tokens, i + 2)
                if names:
                    found.update(j for j, member in item.members if member in names)
    return found


def _may_hold_sensitive_values(text: str) -> bool:
    """Whether a document may hold one of ``terraform show -json``'s mirrors (rules version 11:
    ``"sensitive_values"``, ``"before_sensitive"``, ``"after_sensitive"``), as written."""
    return QUOTED_SENSITIVE_VALUES in text or QUOTED_SENSITIVE_END in text


def _sensitive_values_keys(tokens: list[tuple[int, int, str]], objects: list[_Object]) -> set[int]:
    """The key tokens of the members that ``terraform show -json``'s mirrors mark (the rule
    ``walk.name_value`` reads data by): in an object holding a mirror (``sensitive_values``, ``before_sensitive``,
    ``after_sensitive``) and the member it mirrors (``values``, ``before``, ``after``), before or after it, the
    mirrored object's members whose mirror is ``true`` or a container holding a ``true`` leaf
    (:func:`~bitexact.capture.detectors.credentials.sensitive_value_names`; each container's ``true`` found in one
    read of the tokens), or the mirrored member itself when its mirror is ``true`` (or a list holding one). Each value
    is replaced whole."""
    found: set[int] = set()
    children: dict[tuple[_Object, str], _Object] = {}  # an object's member that is an object, by its key
    for item in objects:
        if item.parent is not None and item.under is not None and (
                item.under in MIRRORS or item.under in MIRRORED_VALUES):
            children[(item.parent, item.under)] = item
    held: set[int] | None = None
    for item in objects:
        for i, key in item.members:
            mirrored = MIRRORED.get(key)
            if mirrored is None or i + 2 >= len(tokens):
                continue
            first = tokens[i + 2][2]
            if first == "{":
                mask, values = children.get((item, key)), children.get((item, mirrored))
                if mask is None or values is None:
                    continue
                if held is None:
                    held = _holding_true(tokens)
                marked = {name for j, name in mask.members
                          if j + 2 < len(tokens) and (tokens[j + 2][2] == "true" or j + 2 in held)}
                found.update(j for j, name in values.members if name in marked)
                continue
            if first == "[" and held is None:
                held = _holding_true(tokens)
            if first == "true" or (first == "[" and held is not None and i + 2 in held):
                found.update(j for j, name in item.members if name == mirrored)
    return found


def _holding_true(tokens: list[tuple[int, int, str]]) -> set[int]:
    """The token indices of the containers (their ``{`` or ``[``) holding a ``true`` leaf at any depth, in one read
    of a document's tokens."""
    held: set[int] = set()
    stack: list[list[Any]] = []  # per open container: its token index, whether it holds a true
    for i, (_, _, raw) in enumerate(tokens):
        first = raw[0]
        if first in "{[":
            stack.append([i, False])
        elif first in "}]":
            if stack:
                opened, holds = stack.pop()
                if holds:
                    held.add(opened)
                    if stack:
                        stack[-1][1] = True
        elif raw == "true" and stack:
            stack[-1][1] = True
    return held


_MAX_PATH_DEPTH: Final[int] = 4
"""How deep a ``sensitive_attributes`` list is read: the list, a path, a step, a step's value (an index step's
``{"value": 0, "type": "number"}``). A list holding deeper containers is no state's: it is not read, so that lists
nested in lists are never read again by each list holding them."""


def _sensitive_paths(tokens: list[tuple[int, int, str]], at: int) -> list[str]:
    """The names a ``sensitive_attributes`` list opening at token ``at`` gives, read as
    :func:`sensitive_attribute_names` reads one given as data: each path's first step (or a step given alone in the
    list) that is ``{"type": "get_attr", "value": NAME}``. One read of the list's tokens, to
    :data:`_MAX_PATH_DEPTH`."""
    names: list[str] = []
    if at >= len(tokens) or tokens[at][2] != "[":
        return names
    stack: list[str] = []
    step_depth = 0  # the depth of the step object being read, 0 when none is
    step: dict[str, str] = {}
    key: str | None = None
    expect_key = False
    path_opened = -1  # the token index a path's "[" stands at: a "{" right after it opens the path's first step
    for i in range(at, len(tokens)):
        raw = tokens[i][2]
        first = raw[0]
        if first in "[{":
            stack.append(first)
            if len(stack) > _MAX_PATH_DEPTH:
                return []
            if first == "[":
                path_opened = i if len(stack) == 2 else -1
            elif len(stack) == 2 or (len(stack) == 3 and path_opened == i - 1):
                step_depth, step = len(stack), {}
            expect_key = first == "{"
        elif first in "]}":
            if first == "}" and len(stack) == step_depth:
                name = step.get("value")
                if step.get("type") == "get_attr" and name is not None and name not in names:
                    names.append(name)
                step_depth = 0
            stack.pop()
            if not stack:
                return names
            expect_key = False
        elif first == ",":
            expect_key = stack[-1] == "{"
        elif first == '"':
            if expect_key:
                key = _string_token(raw)
                expect_key = False
            elif len(stack) == step_depth and key in ("type", "value"):
                step[key] = _string_token(raw)
                key = None
        elif first != ":":
            key = None
    return []  # cut short: no list to read


def _ordinary_value(text: str, tokens: list[tuple[int, int, str]], key: str, value: tuple[int, int]) -> bool:
    """Whether the value (its token range ``value``) of the credential key ``key`` is ordinary evidence by what it
    is (:func:`~bitexact.capture.detectors.ordinary.ordinary_value`: an object that is a JSON Schema, a bare
    ``key``'s plain value, a function's signature), read as any value instead of replaced. Only an object, or a
    string under ``key`` or ``signature``, is parsed."""
    start, end = value
    first = tokens[start][2][0]
    if first != "{" and not (first == '"' and ascii_lower(key) in VALUE_NAMES):
        return False
    try:
        parsed = json.loads(text[tokens[start][0] : tokens[end - 1][1]])
    except (ValueError, RecursionError):
        return False  # replaced whole, as the table says
    return ordinary_value(key, parsed)


def _context_of(stack: list[str], owners: list[str | None], key: str | None) -> str | None:
    """The key a document's value is read under: its own in an object, the list's in a list."""
    if not stack:
        return None
    return key if stack[-1] == "{" else owners[-1]


def _is_document(text: str) -> bool:
    """Whether ``text`` is one JSON document as Python's json module reads it, found without recursing deep
    on the agent's stack (see :data:`bitexact.canon.STACK_SAFE_DEPTH`).

    Raises :class:`DetectorFailed` for one nested too deep to read that way.
    """
    if text.count("[") + text.count("{") > STACK_SAFE_DEPTH:  # perhaps deep: orjson reads without the stack
        try:
            orjson.loads(text)  # what it reads, json reads too
            return True
        except orjson.JSONDecodeError:
            pass
        if nested_deeper_than(text):
            raise DetectorFailed("a JSON document in a string is nested too deep to read")
    try:
        # Numbers are not converted: only whether the text is a document matters here, and Python
        # refuses to convert an integer of more than 4,300 digits, which would hide the document.
        json.loads(text, object_pairs_hook=_ignore_pairs, parse_int=str, parse_float=str)
    except ValueError:
        return False
    except RecursionError as exc:  # a caller already deep in its own stack
        raise DetectorFailed("a JSON document in a string is nested too deep to read") from exc
    return True


def _ignore_pairs(pairs: list[tuple[str, Any]]) -> None:
    """Parse-only hook: every pair is seen and none is merged (repeated keys are legal here)."""
    return None
