"""The strict JSON reader every door uses (bundle spec §1.1).

Python's C scanner does the parsing; hooks refuse what the spec refuses.
Messages are the spec's, exactly, so a verdict that quotes them matches any
other conforming verifier; the position travels separately on the error.
"""

from __future__ import annotations

import errno
import json
import os
import re
import stat
from itertools import accumulate
from typing import Any

from bitexact.canon.encode import MAX_DEPTH
from bitexact.errors import StrictJSONError

DEFAULT_MAX_BYTES = 256 * 1024 * 1024
"""Largest document ``loads`` reads unless told otherwise (256 MiB)."""

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.S)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
# nested_deeper_than's tables: every byte but a bracket or a quote (deleted), a string left after that
# (dropped), brackets as parentheses, and the step each parenthesis takes.
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'[]{}"')
_QUOTED = re.compile(rb'"[^"]*"')
_TO_PARENS = bytes.maketrans(b"[{]}", b"(())")
_STEP = (0,) * ord("(") + (1, -1)  # indexed by the byte
_PASSES = 8

STACK_SAFE_DEPTH = 400
"""Deepest nesting a long-lived process hands Python's ``json`` parser.

The parser recurses once a level; past the interpreter's recursion limit it
raises ``RecursionError``, but only once the stack stood at that limit, where
whatever runs then (a garbage collection's finalizers, another library's)
fails for want of stack. 400 levels leave half of the default limit free."""

# The tokens of a JSON text, for finding where a refusal sits (only once it is refused).
_TOKEN = re.compile(
    _STRING.pattern + r"|[{}\[\],:]|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?|NaN|-?Infinity|true|false|null",
    re.S,
)


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise StrictJSONError(f"duplicate key {key!r}")
            seen.add(key)
    return obj


def _constant(token: str) -> Any:
    raise StrictJSONError(f"non-finite JSON constant {token!r} is not allowed")


def _float(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise StrictJSONError("non-finite number is not allowed")
    return value


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError as exc:  # past Python's int-string digit limit
        raise StrictJSONError(f"integer literal of {len(text)} digits is too long") from exc


_decoder = json.JSONDecoder(
    object_pairs_hook=_pairs, parse_constant=_constant, parse_float=_float, parse_int=_int
)


def _locate(text: str, *, depth_only: bool = False) -> int | None:
    """The character offset of the first thing the reader refuses in ``text``, or ``None``.

    Mirrors the scanner's order: a constant or number is refused where it is read, a
    duplicate key when its object closes (so an inner object's duplicate comes first).
    With ``depth_only``, the bracket that opens level ``MAX_DEPTH + 1``.
    """
    # Per open container: None for an array; for an object, its keys and where its duplicates are.
    open_: list[tuple[set[str], list[int]] | None] = []
    expect_key = False
    for match in _TOKEN.finditer(text):
        token, start = match[0], match.start()
        lead = token[0]
        if lead in "[{":
            open_.append((set(), []) if lead == "{" else None)
            if len(open_) > MAX_DEPTH:
                return start
            expect_key = lead == "{"
        elif lead in "]}":
            closed = open_.pop() if open_ else None
            if closed is not None and closed[1] and not depth_only:
                return closed[1][0]
            expect_key = False
        elif lead == ",":
            expect_key = bool(open_) and open_[-1] is not None
        elif lead == ":" or depth_only:
            expect_key = False
        elif expect_key:
            keys, duplicates = open_[-1]  # type: ignore[misc]  # expect_key holds only inside an object
            key = json.loads(token)
            if key in keys:
                duplicates.append(start)
            keys.add(key)
        elif token in ("NaN", "Infinity", "-Infinity"):
            return start
        elif lead == "-" or lead.isdigit():
            try:
                if any(ch in token for ch in ".eE"):
                    _float(token)
                else:
                    _int(token)
            except StrictJSONError:
                return start
    return None


def nested_deeper_than(text: str, limit: int = STACK_SAFE_DEPTH) -> bool:
    """Whether JSON ``text`` opens more than ``limit`` arrays or objects inside one another.

    Brackets inside strings do not count. Exact for a balanced text; an
    unbalanced one (truncated, stray brackets) may be judged deeper than any
    parser would go, never shallower. Nothing to do for a text of ``limit``
    characters or fewer, two counts for one of ``limit`` brackets or fewer;
    otherwise a few passes at C speed, no recursion.
    """
    if len(text) <= limit or text.count("[") + text.count("{") <= limit:
        return False
    # All at C speed, no object made per token: drop escaped backslashes then escaped quotes (escapes pair
    # from the left), keep only brackets and quotes, then the strings. Two quotes side by side are an empty
    # string or a close and an open with no bracket between: dropping either pair keeps every bracket out
    # of strings where it was.
    data = text.encode("utf-8", "surrogatepass").replace(b"\\\\", b"").replace(b'\\"', b"")
    kept = data.translate(None, _NOT_STRUCTURE).replace(b'""', b"")
    parens = _QUOTED.sub(b"", kept).translate(_TO_PARENS)
    # Each pass drops every innermost pair, lowering the deepest point by one (by exactly one in a balanced
    # text): a shallow text, however long, empties in a few passes. A deep one is counted out after them.
    for passes in range(_PASSES):
        shorter = parens.replace(b"()", b"")
        if len(shorter) == len(parens):  # no pair left: closes, then brackets still open at the end
            return passes + parens.count(b"(") > limit
        parens = shorter
    return _PASSES + max(accumulate(map(_STEP.__getitem__, parens), initial=0)) > limit


def _max_depth(text: str) -> int:
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", text))
    if not brackets:
        return 0
    return max(accumulate(1 if ch in "[{" else -1 for ch in brackets))


def read_limited(path: str | os.PathLike[str], max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """At most ``max_bytes + 1`` bytes of the file at ``path``: enough for :func:`loads` (or a caller's own
    check) to refuse a document over the limit, never an endless one (``/dev/zero``, a stuck pipe) read into
    memory without bound. Raises :class:`OSError` as opening and reading do.

    A named pipe is opened without waiting for a writer (a plain ``open`` waited for one for good: a policy
    file that was a FIFO hung every recording, ``verify`` and ``health``). Its read then waits only while a
    writer holds it open (``--candidate-file /dev/stdin`` fed by a pipe), and reads as empty when none does.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with open(fd, "rb") as handle:
        if stat.S_ISFIFO(os.fstat(fd).st_mode):
            os.set_blocking(fd, True)
        return handle.read(max_bytes + 1)


def read_within(path: str | os.PathLike[str], max_bytes: int = DEFAULT_MAX_BYTES) -> bytes:
    """The whole file at ``path`` when it holds at most ``max_bytes``; else :class:`OSError` ``EFBIG``.

    Read as :func:`read_limited` reads, never past ``max_bytes + 1``: a
    device or a stuck pipe fails as a file too large, its ``strerror``
    ("File too large") what a caller's message quotes for any other
    failure to read.
    """
    data = read_limited(path, max_bytes)
    if len(data) > max_bytes:
        raise OSError(errno.EFBIG, os.strerror(errno.EFBIG), os.fspath(path))
    return data


def loads(data: bytes | bytearray | memoryview | str, *, max_bytes: int = DEFAULT_MAX_BYTES) -> Any:
    """Parse one JSON document strictly.

    Refuses, with :class:`StrictJSONError`: invalid UTF-8, input over
    ``max_bytes``, duplicate keys, NaN/Infinity, literals that overflow to
    infinity, nesting deeper than 128 levels, and any syntax error.
    """
    size = len(data)
    if size > max_bytes:
        raise StrictJSONError(f"document is {size} bytes, over the limit of {max_bytes} bytes")
    if isinstance(data, str):
        text = data
    else:
        raw = bytes(data)
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            # The message names the byte; the position, like every other, counts characters.
            character = len(raw[: exc.start].decode("utf-8"))
            raise StrictJSONError(
                f"invalid UTF-8 at byte {exc.start}: {exc.reason}", character
            ) from None
    too_deep = f"nesting deeper than {MAX_DEPTH} levels is refused"
    if nested_deeper_than(text, MAX_DEPTH) and _max_depth(text) > MAX_DEPTH:  # the first a fast bound
        raise StrictJSONError(too_deep, _locate(text, depth_only=True))
    try:
        return _decoder.decode(text)
    except json.JSONDecodeError as exc:
        # The scanner would only say "Expecting value" at a BOM: at character 0, or after blank lines (a
        # file saved with one below blank lines, or a verifier's parse placed after the lines it skipped).
        if text[exc.pos : exc.pos + 1] == "\ufeff" and not text[: exc.pos].strip(" \t\r\n"):
            raise StrictJSONError(
                "the document starts with a byte order mark (U+FEFF), which JSON does not allow: "
                "save it as UTF-8 without a BOM", exc.pos
            ) from None
        raise StrictJSONError(str(exc), exc.pos) from None
    except StrictJSONError as exc:
        # Refused inside a hook, which is not told where: find the spot, keeping the spec's message.
        raise StrictJSONError(exc.message, _locate(text)) from None
    except RecursionError:
        raise StrictJSONError(too_deep, _locate(text, depth_only=True)) from None
