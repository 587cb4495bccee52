"""Streaming JSONL bundles (bundle spec §10.1, §12.2): constant memory in the number of entries.

Blank lines are skipped (before the header too) and CRLF is accepted. Lines
are numbered from 1 at the header, counting non-blank lines only: a blank
line is not part of the document, so it gets no number.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypeVar

from bitexact.canon import loads
from bitexact.errors import StrictJSONError
from bitexact.evidence.verify.bundle import BundleCheck, check_document_header, check_format, check_header_shape
from bitexact.evidence.verify.failure import CheckFailed
from bitexact.evidence.verify.pins import Pins
from bitexact.evidence.verify.verdict import ClauseProviderFactory, Verdict, failed, finish
from bitexact.evidence.vocabulary import FORMAT_JSONL

_BLANK = " \t\r\n"
JSON_SPACE = b" \t\r\n"
"""JSON's whitespace (RFC 8259), as bytes: what a blank line may hold. Not bytes.strip()'s, which adds \\x0b and \\x0c."""


def is_blank(line: bytes | str) -> bool:
    """Only JSON whitespace (or nothing): the line is skipped."""
    if isinstance(line, str):
        return not line.strip(_BLANK)
    return not line.strip(JSON_SPACE)


_Line = TypeVar("_Line", bound=bytes | str)


def non_blank(lines: Iterable[_Line]) -> Iterator[_Line]:
    """The lines that hold something, with their line endings kept (the parser ignores them)."""
    for line in lines:
        if not is_blank(line):
            yield line


def parse_line(number: int, line: bytes | str) -> Any:
    """Parse one line strictly; ``line {n} is not JSON: ...`` when it does not."""
    try:
        return loads(line)
    except StrictJSONError as exc:
        raise CheckFailed(f"line {number} is not JSON: {exc}") from None


def is_jsonl_header(value: object) -> bool:
    """The dispatch test of §12.3: an object whose format is the JSONL format."""
    return isinstance(value, dict) and value.get("format") == FORMAT_JSONL


def check_header(header: object) -> dict[str, Any]:
    """The header checks of §12.2, then the shared shape checks of §12.1 step 2."""
    if not isinstance(header, dict):
        raise CheckFailed("line 1 is not a JSON object")
    check_format(header, FORMAT_JSONL, "the first line carries no format field")
    check_header_shape(header)
    return header


_REPEATED = ("run_id", "alg", "key_id", "public_key")
"""Checkpoint members that hold the same value in nearly every checkpoint of a run."""


def share_repeated_values(header: dict[str, Any]) -> None:
    """Let the header's checkpoints share one copy of each repeated value (:data:`_REPEATED`).

    The parser makes a new string for every value; a million-entry run's
    header holds thousands of checkpoints, each kept until the signature is
    checked last. The values are replaced by equal strings of the same type,
    so no check, message or signed byte differs.
    """
    checkpoints = header.get("checkpoints")
    if not isinstance(checkpoints, list):
        return  # the shape check names it
    shared: dict[str, str] = {}
    for checkpoint in checkpoints:
        if not isinstance(checkpoint, dict):
            continue
        for key in _REPEATED:
            value = checkpoint.get(key)
            if type(value) is str:
                checkpoint[key] = shared.setdefault(value, value)


def _entries(lines: Iterable[bytes | str]) -> Iterator[Any]:
    """Parse the entry lines; blank ones are skipped here, in the hot loop, not by another generator."""
    number = 1
    for line in lines:
        if is_blank(line):
            continue
        number += 1
        try:
            yield loads(line)
        except StrictJSONError as exc:
            raise CheckFailed(f"line {number} is not JSON: {exc}") from None


def verify_lines(
    lines: Iterable[bytes | str] | bytes | str, pins: Pins, *, clauses: Sequence[ClauseProviderFactory] = ()
) -> Verdict:
    """Verify a JSONL bundle given as lines (bytes or text), streaming; or as one whole text, split here.

    Lines end at ``\n`` only: canonical JSON writes U+2028, U+2029, U+0085 and ``\x1c``-``\x1e`` raw inside
    strings, and ``str.splitlines()`` splits at every one of them, so iterate a file (or pass the whole text)
    rather than splitting with it.
    """
    if isinstance(lines, str):
        lines = lines.split("\n")
    elif isinstance(lines, bytes | bytearray):
        lines = bytes(lines).split(b"\n")
    return verify_stream(iter(lines), pins, clauses=clauses)


def verify_stream(
    lines: Iterator[bytes | str],
    pins: Pins,
    *,
    header: object = None,
    clauses: Sequence[ClauseProviderFactory] = (),
) -> Verdict:
    """Verify JSONL lines; ``header`` is the already-parsed first non-blank line, if the caller has it.

    When ``header`` is given, ``lines`` continues after it.
    """
    if header is None:
        try:
            first = next(non_blank(lines), None)
            if first is None:
                raise CheckFailed("empty bundle")
            header = parse_line(1, first)
            del first  # a header line can be megabytes: not held while the entries stream
        except CheckFailed as failure:
            return failed(failure.message, form="jsonl")
        except Exception as exc:  # a verifier never crashes (§12.1)
            return failed(f"malformed bundle: {exc!r}", form="jsonl")
    return verify_entries(header, _entries(lines), pins, form="jsonl", clauses=clauses)


def verify_entries(
    header: object,
    entries: Iterable[object],
    pins: Pins,
    *,
    form: str = "jsonl",
    clauses: Sequence[ClauseProviderFactory] = (),
    passthrough: tuple[type[BaseException], ...] = (),
) -> Verdict:
    """Verify a bundle given as its container (parsed) and its entries, one at a time: memory flat in their number.

    ``form`` ``"jsonl"``: ``header`` is a JSONL header line (the file path, after its first line).
    ``form`` ``"json"``: ``header`` is a JSON-form bundle without its ``entries`` (``bitexact verify RUN``
    streams a stored run's entries from the store); the verdict is the one the whole document gets.
    The header's ``chain.head_hash`` and ``signature`` are read only once the entries are exhausted
    (:meth:`BundleCheck.run`), so a caller may complete them as the last entry is read. Exceptions of the
    ``passthrough`` types (an entry source's own read errors) propagate; every other one is a verdict.
    """
    check: BundleCheck | None = None
    try:
        checked = check_header(header) if form == "jsonl" else check_document_header(header)
        check = BundleCheck(checked, pins, form, clauses)
        share_repeated_values(check.header)
        summary = check.run(entries)
    except passthrough:
        raise
    except CheckFailed as failure:
        return check.failure(failure.message) if check else failed(failure.message, form=form)
    except Exception as exc:  # a verifier never crashes (§12.1)
        message = f"malformed bundle: {exc!r}"
        return check.failure(message) if check else failed(message, form=form)
    return finish(summary, pins)
