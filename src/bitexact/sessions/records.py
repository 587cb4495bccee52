"""Tolerant record reading (UAS 5.1, T-UAS-016/017).

Engine logs mix JSON records with debug lines, prose, truncated writes and
stray ``null`` entries.  The reader frames the input once into an ordered
list of items, each either a decoded JSON object or a text line, so that JSON
engines and text-framed engines (Copilot debug blocks, Codex legacy text) can
share one pass.  A bad record never stops recovery of the records after it.

Framing whitespace is stripped only to *locate* a JSON value on a line; the
decoded string values are never trimmed (T-UAS-016, T-UAS-020).

Engine logs are not evidence, so the stdlib ``json`` decoder is used for
speed; non-finite constants (``NaN``, ``Infinity``) are refused so every
retained value stays JSON-serializable and deterministic.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_left
from typing import Any, Callable, NamedTuple

from bitexact.canon import STACK_SAFE_DEPTH, nested_deeper_than


class _NonFiniteConstant(ValueError):
    """Raised for NaN/Infinity: JSON has no such numbers."""


def _refuse_constant(name: str) -> Any:
    raise _NonFiniteConstant(name)


_strict_decoder = json.JSONDecoder(parse_constant=_refuse_constant)
_scan_once: Callable[[str, int], tuple[Any, int]] = _strict_decoder.scan_once  # type: ignore[attr-defined]
"""The strict decoder's C scanner, which its ``raw_decode`` calls: :func:`frame` calls it itself for a line's record
(one Python frame less per record). It raises StopIteration where ``raw_decode`` raises JSONDecodeError (never for a
text opening ``{``)."""


class _TooDeep(ValueError):
    """A record nested deeper than the decoder may safely recurse (:data:`bitexact.canon.STACK_SAFE_DEPTH`)."""


def _shallow(text: str) -> str:
    """``text``, checked before the recursive decoder reads it (raises :class:`_TooDeep`)."""
    if nested_deeper_than(text):
        raise _TooDeep("nested too deep to decode")
    return text

KIND_OBJECT = "object"
KIND_TEXT = "text"
KIND_MALFORMED = "malformed"
KIND_NON_OBJECT = "non_object"


class Item(NamedTuple):
    """One framed input item.

    ``kind`` is ``object`` (``value`` is a decoded ``dict``), ``text`` (a
    non-JSON line, ``value`` is the line without its line break),
    ``malformed`` (looked like JSON but did not decode, ``value`` is the line)
    or ``non_object`` (decoded JSON that is not an object, e.g. ``null``).
    ``line`` is the 1-based physical line, or the array index for whole-array
    inputs (``in_array`` true).

    Immutable, as a frozen dataclass would be, but a named tuple: :func:`frame` makes one per line, and a
    frozen dataclass's ``__init__`` (an ``object.__setattr__`` per field) cost about half of decoding the
    line's JSON (7,700 instructions against 16,000 for a 140-character record); a tuple is built in C.
    """

    kind: str
    line: int
    value: Any
    in_array: bool = False

    def where(self) -> str:
        """Human position for diagnostics (never the payload)."""
        return f"element {self.line}" if self.in_array else f"line {self.line}"


_new_item = tuple.__new__
"""``_new_item(Item, (kind, line, value, in_array))``: an :class:`Item` made in C, without ``Item.__new__``'s frame."""


def decode_json(text: str) -> Any:
    """Decode one JSON document with the stdlib decoder, refusing NaN/Infinity.

    Raises ``ValueError`` on malformed input, a document nested too deep to decode included.
    """
    try:
        return _strict_decoder.decode(_shallow(text))
    except RecursionError:  # a caller already deep in its own stack
        raise _TooDeep("nested too deep to decode") from None


def decode_located(located: str) -> Any:
    """:func:`decode_json` of a text with no whitespace around it (a located record line): the same value, or a
    ``ValueError`` where :func:`decode_json` raises one.

    Reads the record with the decoder's C scanner (:data:`_scan_once`) and asks the depth only of a text longer
    than :data:`~bitexact.canon.STACK_SAFE_DEPTH`: three Python frames and two whitespace matches less per
    record than ``JSONDecoder.decode``.
    """
    if len(located) > STACK_SAFE_DEPTH and nested_deeper_than(located):
        raise _TooDeep("nested too deep to decode")
    try:
        value, end = _scan_once(located, 0)
    except StopIteration as err:
        raise json.JSONDecodeError("Expecting value", located, err.value) from None
    except RecursionError:  # a caller already deep in its own stack
        raise _TooDeep("nested too deep to decode") from None
    if end != len(located):
        raise json.JSONDecodeError("Extra data", located, end)
    return value


# The JSON grammar between two brackets, as the stdlib decoder reads it, so that a value opening mid-text is
# followed only as far as the decoder would read it.  Each step pattern starts after a bracket and reads as far
# as the text is JSON: to the next bracket (an open, or the close of the container it is in), which it then
# captures in a group, or, where the value breaks off first, to the end of its longest start that is still
# JSON (no group matched).  It is no stricter than the decoder (escapes are not checked), so a value the decoder reads
# is followed to its end.  Every part after the first is optional, nested in the part before it, which is what
# makes the one pattern stop at the longest start that is still JSON.
_WS = r"[ \t\n\r]*+"
_STRING_HEAD = r'"(?:[^"\\\x00-\x1f]++|\\.)*+'  # up to the closing quote, or where the decoder refuses it
_STRING = _STRING_HEAD + '"'
_NON_FINITE = r"NaN|-?Infinity"  # read as numbers, then refused (:class:`_NonFiniteConstant`)
_SCALAR = rf"(?>{_STRING}|-?(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?+(?:[eE][-+]?[0-9]++)?+|true|false|null|{_NON_FINITE})"
_OPEN = r"([\[{])"
# Every optional part is possessive (?+): nothing after it in a pattern could make it give back what it read,
# and the engine's possessive repeat keeps no backtracking state (the plain one cost a third more per step).
_ARRAY_TAIL = rf"{_WS}(?:,{_WS}{_SCALAR}{_WS})*+(?:,{_WS}{_OPEN}?+|(\]))?+"  # after an element
_OBJECT_TAIL = (  # after a member's value
    rf"{_WS}(?:,{_WS}{_STRING}{_WS}:{_WS}{_SCALAR}{_WS})*+(?:,{_WS}(?:{_STRING}{_WS}(?::{_WS}{_OPEN}?+)?+)?+|(\}}))?+"
)
_ARRAY_OPENED = re.compile(rf"{_WS}(?:([\[{{\]])|{_SCALAR}{_ARRAY_TAIL})?+")
_ARRAY_NEXT = re.compile(_ARRAY_TAIL)
_OBJECT_OPENED = re.compile(rf"{_WS}(?:(\}})|{_STRING}{_WS}(?::{_WS}(?:{_OPEN}|{_SCALAR}{_OBJECT_TAIL})?+)?+)?+")
_OBJECT_NEXT = re.compile(_OBJECT_TAIL)
_TOP_SCALAR = re.compile(_SCALAR)
_REFUSED_STRING = re.compile(_STRING_HEAD)
"""A string up to where the decoder refuses it (a control character, the end of the text), or its end."""
_LOOKAHEAD = 10
"""Characters past a refusal the decoder may read before it refuses (``-Infinity`` is nine)."""
_CONSTANT = re.compile(rf"{_STRING}|({_NON_FINITE})")
"""A string, or a constant JSON has no number for (captured): the first captured one is where the decoder
refused a value that is JSON up to it."""


def _past_refusal(text: str, at: int) -> int:
    """An end past all the decoder reads when it refuses the text at ``at``."""
    string = _REFUSED_STRING.match(text, at)
    return (string.end() if string is not None else at) + _LOOKAHEAD


class ValueReader:
    """Reads the JSON values opening at several starts of one text, following each stretch once.

    :meth:`decode_at` is :func:`raw_decode_at` for starts taken in increasing order (a line at a time).  A
    value that does not decode leaves the values opening inside it to be tried next, and each of those
    would follow the same stretch again, up to :data:`~bitexact.canon.STACK_SAFE_DEPTH` times for the
    brackets of many lines that never close.  So the reader remembers what the last walk found: where each
    bracket it met closed or broke off, the brackets still open where it stopped for depth (a start among
    them goes on from there), and where the decoder refused the value (a start open at that place is refused
    there too, unread).  Any order of starts gives the same results; a start outside the last walk begins
    a new one.
    """

    __slots__ = ("text", "_stops", "_open", "_paused_at", "_paused_step", "_refusal")

    def __init__(self, text: str) -> None:
        self.text = text
        self._stops: dict[int, int] = {}
        """The last walk's brackets: where the value each opens closes, or where it breaks off."""
        self._open: list[int] = []
        """The last walk's open brackets, outermost first, when it stopped for depth (else empty)."""
        self._paused_at = 0
        self._paused_step: re.Pattern[str] = _ARRAY_OPENED
        self._refusal: tuple[int, int, int, ValueError] | None = None
        """(start, stop, place, error) of the last value of the walk the decoder refused."""

    def decode_at(self, start: int) -> tuple[Any, int]:
        """The JSON value opening at ``start`` and its end in the text, or the error :func:`raw_decode_at` raises."""
        text = self.text
        stop = self.stop(start)
        met = start in self._stops  # a bracket of the last walk: what the walk learned applies to it
        refusal = self._refusal
        if met and refusal is not None:
            first, first_stop, place, error = refusal
            # Opened after the refused value, before the place the decoder refused it, and still open there
            # (the same break-off, or a close past it): the decoder reads it to the same place and refuses it so.
            if first < start < place and (stop == first_stop or place < stop):
                raise _refused_again(error, text, start, stop, place)
        try:
            value, end = _strict_decoder.raw_decode(text[start:stop])
        except RecursionError:  # a caller already deep in its own stack
            raise _TooDeep("nested too deep to decode") from None
        except json.JSONDecodeError as error:
            if met:
                self._refusal = (start, stop, start + error.pos, error)
            raise
        except _NonFiniteConstant as error:
            if met:
                self._refusal = (start, stop, _constant_at(text, start, stop), error)
            raise
        return value, start + end

    def stop(self, start: int) -> int:
        """Where to cut the text so that the JSON value opening at ``start`` reads as it does in the whole text.

        Follows the value bracket by bracket (:data:`_ARRAY_OPENED` and kin) to where it closes; when it
        breaks off first, stops a few characters past the first one that cannot continue it, or past the
        string the decoder refuses there.  Either way the decoder, given ``text[start:stop]``, returns the
        same value and end, or refuses it as it would the whole text, having read no more than it would.
        Raises :class:`_TooDeep` where the value opens more than
        :data:`~bitexact.canon.STACK_SAFE_DEPTH` arrays or objects inside one another, before the recursive
        decoder reads it.
        """
        known = self._stops.get(start)
        if known is not None:
            return known
        text = self.text
        first = text[start:start + 1]
        if first != "[" and first != "{":  # a scalar (or no value): it nests nothing
            scalar = _TOP_SCALAR.match(text, start)
            return scalar.end() if scalar is not None else _past_refusal(text, start)
        opened = self._open
        if opened:
            base = bisect_left(opened, start)
            if base < len(opened) and opened[base] == start:  # open where the last walk stopped for depth
                if base > STACK_SAFE_DEPTH:  # the brackets below, walked from already, are let go of
                    del opened[:base]
                    base = 0
                return self._walk(opened, base, self._paused_at, self._paused_step)
        if self._stops:  # what the last walk learned lies elsewhere
            self._stops = {}
        self._refusal = None
        return self._walk([start], 0, start + 1, _ARRAY_OPENED if first == "[" else _OBJECT_OPENED)

    def _walk(self, opened: list[int], base: int, at: int, step: re.Pattern[str]) -> int:
        """Follow the value opened at ``opened[base]`` from ``at`` (``step`` reads on), noting each bracket's stop."""
        text = self.text
        stops = self._stops
        if self._open:
            self._open = []
        deepest = base + STACK_SAFE_DEPTH
        while True:
            read = step.match(text, at)
            assert read is not None  # every part of it is optional: it matches at least nothing
            end = read.end()
            if read.lastindex is None:  # no bracket: the value breaks off, and every bracket still open with it
                stop = _past_refusal(text, end)
                stops.update(dict.fromkeys(opened[base:], stop))
                return stop
            bracket = text[end - 1]
            if bracket == "[" or bracket == "{":
                if len(opened) >= deepest:
                    self._open, self._paused_at, self._paused_step = opened, at, step
                    raise _TooDeep("nested too deep to decode")
                opened.append(end - 1)
                step = _ARRAY_OPENED if bracket == "[" else _OBJECT_OPENED
            else:
                stops[opened.pop()] = end
                if len(opened) == base:
                    return end
                step = _ARRAY_NEXT if text[opened[-1]] == "[" else _OBJECT_NEXT
            at = end


def _constant_at(text: str, start: int, stop: int) -> int:
    """Where the decoder met the NaN or Infinity it refused in ``text[start:stop]`` (JSON up to it)."""
    for token in _CONSTANT.finditer(text, start, stop):
        if token.lastindex is not None:
            return token.start()
    return start  # not found: no value opening after ``start`` is taken to be refused there


def _refused_again(error: ValueError, text: str, start: int, stop: int, place: int) -> ValueError:
    """``error``, as the decoder raises it for ``text[start:stop]``, refused at ``place`` as before."""
    if isinstance(error, json.JSONDecodeError):
        return json.JSONDecodeError(error.msg, text[start:stop], place - start)
    return type(error)(*error.args)


def raw_decode_at(text: str, start: int) -> tuple[Any, int]:
    """Decode the JSON value starting at ``start`` in a longer text; returns (value, end index).

    Raises ``ValueError`` on malformed input, a value nested deeper than
    :data:`~bitexact.canon.STACK_SAFE_DEPTH` included, as :func:`decode_json`
    does.  The decoder reads only the value's own stretch of the text
    (:meth:`ValueReader.stop`, which also counts its depth first): an error
    then costs that stretch, not the text before it (the stdlib counts the
    lines up to an error's position), so a log of many malformed arrays
    frames in linear time.  A ``JSONDecodeError``'s position therefore
    counts from ``start``.  To read several values of one text, a
    :class:`ValueReader` follows each stretch once.
    """
    return ValueReader(text).decode_at(start)


def may_hold_objects(text: str) -> bool:
    """False when :func:`frame` cannot find a JSON object in ``text`` (it has no ``{``).

    Lets console-layout adapters skip framing a plain-text log only to learn
    that it holds no native events: framing is most of their parse time.
    """
    return "{" in text


def frame(text: str) -> list[Item]:
    """Frame ``text`` into ordered items (whole JSON array, or lines).

    A JSON array that spans several lines (a pretty-printed array between
    debug lines) is recovered when a line opens it; its elements become
    items numbered by the opening line. A leading byte order mark is
    framing, not text; a record nested too deep to decode is malformed, as
    any other record that does not parse (its neighbours are kept).
    """
    if text.startswith("\ufeff"):
        text = text[1:]
    head = text.lstrip()
    if head.startswith("["):
        whole = _whole_array(text)
        if whole is not None:
            return whole
    items: list[Item] = []
    append = items.append
    decode = _strict_decoder.decode
    scan_once = _scan_once
    values: ValueReader | None = None  # made once a line opens an array on its own
    lines = text.split("\n")
    offset = 0
    index = 0
    count = len(lines)
    while index < count:
        raw = lines[index]
        number = index + 1
        line_offset = offset
        offset += len(raw) + 1
        index += 1
        line = raw[:-1] if raw.endswith("\r") else raw
        located = line.strip()
        if not located:
            if line:
                append(_new_item(Item, (KIND_TEXT, number, line, False)))
            continue
        first = located[0]
        if first == "{":
            # ``located`` has no surrounding whitespace, so a complete record ends exactly at the end of the
            # string; one too deep to decode is malformed (:func:`_shallow`, asked only of a text long enough).
            if len(located) > STACK_SAFE_DEPTH and nested_deeper_than(located):
                append(_new_item(Item, (KIND_MALFORMED, number, line, False)))
                continue
            try:
                value, end = scan_once(located, 0)
            except (ValueError, RecursionError, StopIteration):
                append(_new_item(Item, (KIND_MALFORMED, number, line, False)))
                continue
            if end != len(located):
                append(_new_item(Item, (KIND_MALFORMED, number, line, False)))
                continue
            if isinstance(value, dict):
                append(_new_item(Item, (KIND_OBJECT, number, value, False)))
            else:
                append(_new_item(Item, (KIND_NON_OBJECT, number, None, False)))
        elif first == "[" and located.endswith("]"):
            try:
                value = decode(_shallow(located))
            except (ValueError, RecursionError):
                append(Item(KIND_TEXT, number, line))
                continue
            _append_array(append, value, number, line)
        elif first == "[" and (located == "[" or located[1:].lstrip().startswith("{")):
            start = line_offset + len(line) - len(line.lstrip())
            if values is None:
                values = ValueReader(text)
            try:
                value, end = values.decode_at(start)
            except ValueError:
                append(Item(KIND_TEXT, number, line))
                continue
            if not isinstance(value, list):
                append(Item(KIND_TEXT, number, line))
                continue
            _append_array(append, value, number, line)
            # Resume after the line holding the array's closing bracket.
            while index < count and offset <= end:
                offset += len(lines[index]) + 1
                index += 1
        elif located == "null" or located in ("true", "false") or _is_number(located):
            append(_new_item(Item, (KIND_NON_OBJECT, number, None, False)))
        else:
            append(_new_item(Item, (KIND_TEXT, number, line, False)))
    return items


def _append_array(append: Any, value: Any, number: int, line: str) -> None:
    if isinstance(value, list):
        for element in value:
            if isinstance(element, dict):
                append(Item(KIND_OBJECT, number, element))
            else:
                append(Item(KIND_NON_OBJECT, number, None))
    else:
        append(Item(KIND_TEXT, number, line))


def _json_string(line: object) -> bool:
    """Whether a text line holds one JSON string and nothing else (``"just a string"``)."""
    if not isinstance(line, str):
        return False
    located = line.strip()
    if len(located) < 2 or located[0] != '"' or located[-1] != '"':
        return False
    try:
        return isinstance(_strict_decoder.decode(located), str)
    except ValueError:
        return False


def _is_number(text: str) -> bool:
    if not text or text[0] not in "-0123456789":
        return False
    try:
        float(text)
    except ValueError:
        return False
    return True


def _whole_array(text: str) -> list[Item] | None:
    try:
        value = _strict_decoder.decode(_shallow(text.strip()))
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, list):
        return None
    items: list[Item] = []
    for index, element in enumerate(value):
        if isinstance(element, dict):
            items.append(Item(KIND_OBJECT, index, element, in_array=True))
        else:
            items.append(Item(KIND_NON_OBJECT, index, None, in_array=True))
    return items


class Diagnostics:
    """Collects record-level notes: positions and causes, never payloads.

    Non-JSON text lines are summarised (count and first position) because
    debug-heavy logs would otherwise produce one note per line.
    """

    def __init__(self) -> None:
        self.notes: list[str] = []
        self._text_lines = 0
        self._first_text: str | None = None
        self._non_objects: tuple[str, int] | None = None
        """The position of the last note, when it is a non-object note, and how many entries it counts."""

    def add(self, note: str) -> None:
        self.notes.append(note)

    def skipped(self, item: Item) -> None:
        """Record that ``item`` was not used, with a cause derived from its kind."""
        if item.kind == KIND_MALFORMED:
            self.notes.append(f"{item.where()}: malformed or truncated JSON record skipped")
        elif item.kind == KIND_NON_OBJECT or (item.kind == KIND_TEXT and _json_string(item.value)):
            # A JSON string line is framed as text (the console layouts read their lines), but it is JSON.
            self._non_object(item.where())
        elif item.kind == KIND_TEXT:
            self._text_lines += 1
            if self._first_text is None:
                self._first_text = item.where()
        else:
            record_type = item.value.get("type") if isinstance(item.value, dict) else None
            label = record_type if isinstance(record_type, str) and len(record_type) <= 64 else "?"
            self.notes.append(f"{item.where()}: unrecognized record (type {label!r}) skipped")

    def _non_object(self, where: str) -> None:
        """One note per line for its non-object entries: ``[1,2]`` on line 3 said "line 3" twice."""
        last = self._non_objects
        if last is not None and last[0] == where and self.notes and self.notes[-1].startswith(f"{where}: "):
            count = last[1] + 1
            self.notes[-1] = f"{where}: {count} non-object JSON entries skipped"
        else:
            count = 1
            self.notes.append(f"{where}: non-object JSON entry skipped")
        self._non_objects = (where, count)

    def unexpected_shape(self, item: Item, exc: Exception) -> None:
        """Record that ``item`` is valid JSON of a shape its engine's mapper could not read."""
        record_type = item.value.get("type") if isinstance(item.value, dict) else None
        label = record_type if isinstance(record_type, str) and len(record_type) <= 64 else "?"
        # The exception's type only: its message can quote the record (a KeyError names a key), and
        # diagnostics never quote payload.
        self.notes.append(f"{item.where()}: record (type {label!r}) of an unexpected shape skipped"
                          f" ({type(exc).__name__})")

    def finish(self) -> list[str]:
        """All notes, with the non-JSON text summary last."""
        notes = list(self.notes)
        if self._text_lines:
            notes.append(
                f"{self._text_lines} non-JSON text line(s) skipped (first at {self._first_text})"
            )
        return notes
