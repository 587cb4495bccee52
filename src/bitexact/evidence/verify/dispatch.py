"""From a path to a verdict: the inputs and dispatch of bundle spec §12.3."""

from __future__ import annotations

import errno
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

from bitexact.canon import DEFAULT_MAX_BYTES, loads
from bitexact.errors import StrictJSONError
from bitexact.evidence.verify.bag import verify_bag
from bitexact.evidence.verify.bundle import verify_bundle_document
from bitexact.evidence.verify.dsse import verify_envelope
from bitexact.evidence.verify.jsonl import JSON_SPACE, is_blank, is_jsonl_header, non_blank, verify_stream
from bitexact.evidence.verify.pins import InputError, Pins, load_trust_file, read_bounded
from bitexact.evidence.verify.verdict import ClauseProviderFactory, Verdict, failed


_NOTHING_THERE = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EBADF, errno.ELOOP})
"""The errors ``Path.exists`` takes for "nothing there" (any other, a permission refused, is raised)."""


def _mode(path: Path) -> int | None:
    """The mode of what ``path`` names, or None when it names nothing: one ``stat``, where ``is_dir`` and then
    ``exists`` were two."""
    try:
        return path.stat().st_mode
    except ValueError:  # a name the file system cannot hold (a NUL): nothing there, as Path.exists says
        return None
    except OSError as exc:
        if exc.errno in _NOTHING_THERE:
            return None
        raise


def verify_path(
    path: Path | str, pins: Pins, *, clauses: Sequence[ClauseProviderFactory] = ()
) -> Verdict:
    """Verify whatever ``path`` holds: a bag directory, a JSONL stream, a DSSE envelope or a JSON bundle.

    Messages name ``path`` as given (a ``str`` from the command line stays unnormalised).
    """
    shown = path
    path = Path(path)
    mode = _mode(path)
    if mode is not None and stat.S_ISDIR(mode):
        return verify_bag(path, pins, clauses=clauses)
    if mode is None:
        return failed(f"no such file: {shown}", form="input")
    with path.open("rb") as handle:
        # Read as _lines reads: an endless input with no line break (/dev/zero) stops at the limit.
        skipped = _Skipped()
        first = next(non_blank(skipped.counting(_lines(handle))), None)
        size = len(first or b"")
        # A JSONL header carries every checkpoint (megabytes for a long run): the line is held once, as
        # the text the parser reads, and not at all once parsed. Not UTF-8, or over the limit in bytes (the
        # strict reader counts a text's characters): no document, no header.
        text = _utf8(first) if size <= DEFAULT_MAX_BYTES else None
        if text is not None:
            first = None
        header = _try_parse(text)
        if is_jsonl_header(header):
            text = None
            return verify_stream(_lines(handle), pins, header=header, clauses=clauses)
        if text is not None:
            first = text.encode("utf-8")  # the bytes read: strict UTF-8 decodes and encodes back exactly
        # The rest from the same handle (a pipe is read once), never past the largest document read.
        rest = handle.read(max(0, DEFAULT_MAX_BYTES + 1 - size))
    # A one-line document need not be parsed twice; anything else is parsed whole (the blank lines skipped
    # before its first line are JSON whitespace).
    # JSON's whitespace only: bytes.strip() would also drop \x0b and \x0c, which a JSON parser refuses.
    if header is not None and not rest.strip(JSON_SPACE):
        doc = header
    else:
        whole = (first or b"") + rest
        if len(whole) > DEFAULT_MAX_BYTES:  # the read stopped: an endless input (a device, a pipe) or a huge file
            return failed(f"bundle is not valid JSON: document is over the limit of {DEFAULT_MAX_BYTES} bytes",
                          form="json")
        try:
            doc = loads(whole)
        except StrictJSONError as exc:
            return failed(f"bundle is not valid JSON: {skipped.placed(whole) or exc}", form="json")
    if isinstance(doc, dict) and "payloadType" in doc:
        return verify_envelope(doc, pins, clauses=clauses)
    verdict, _ = verify_bundle_document(doc, pins, clauses=clauses)
    return verdict


class _Skipped:
    """The blank lines read before a file's first line, counted (never kept: there may be any number).

    The whole-file parse starts at the first non-blank line; a parser message
    must still place its error where a parser of the whole file would (line
    and character counted from the file's top), as the spec's ``{diag}`` is
    the parser's message.
    """

    def __init__(self) -> None:
        self.chars = 0
        self.newlines = 0

    def counting(self, lines: Iterator[bytes]) -> Iterator[bytes]:
        """``lines``, counting the blank ones (only those before the first line are read through it)."""
        for line in lines:
            if is_blank(line):
                self.chars += len(line)
                self.newlines += line.count(b"\n")
            yield line

    def placed(self, whole: bytes) -> StrictJSONError | None:
        """The parser's error for ``whole`` read after the skipped lines (JSON whitespace ending in a newline,
        so any such lines of the same counts place it alike); None when none were skipped."""
        if not self.chars or self.chars > DEFAULT_MAX_BYTES:
            return None
        prefix = b" " * (self.chars - self.newlines) + b"\n" * self.newlines
        try:
            loads(prefix + whole, max_bytes=len(prefix) + DEFAULT_MAX_BYTES)
        except StrictJSONError as exc:
            return exc
        return None


def _lines(handle: BinaryIO) -> Iterator[bytes]:
    """The handle's lines, none read past the largest document (a longer one is refused as over the limit)."""
    while line := handle.readline(DEFAULT_MAX_BYTES + 1):
        yield line


def _utf8(line: bytes | None) -> str | None:
    """``line`` as text, or None when there is none or it is not UTF-8 (then it does not parse either)."""
    if line is None:
        return None
    try:
        return line.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _try_parse(line: bytes | str | None) -> object:
    if line is None:
        return None
    try:
        return loads(line)
    except StrictJSONError:
        return None


def read_pins(
    *,
    expect_key: str | None = None,
    expect_recorder_key: str | None = None,
    trust_file: Path | str | None = None,
    expect_tsa: Path | str | None = None,
    require_sealed: bool = False,
) -> Pins:
    """The verifier's inputs besides the bundle, read in the order of §12.3 step 1 (the TSA pin, then the
    trust file); :class:`InputError` with the spec's message, quoting paths as given."""
    tsa_cert = None
    if expect_tsa is not None:
        tsa_cert = read_bounded(expect_tsa)  # no certificate is over the limit: an endless device or pipe
    trust = load_trust_file(trust_file) if trust_file is not None else None
    return Pins.from_options(
        expect_key=expect_key,
        expect_recorder_key=expect_recorder_key,
        trust=trust,
        tsa_cert=tsa_cert,
        require_sealed=require_sealed,
    )


def verify_cli(
    bundle: Path | str,
    *,
    expect_key: str | None = None,
    expect_recorder_key: str | None = None,
    trust_file: Path | str | None = None,
    expect_tsa: Path | str | None = None,
    require_sealed: bool = False,
    clauses: Sequence[ClauseProviderFactory] = (),
) -> Verdict:
    """Everything ``bitexact-verifier`` does after argument parsing (§12.3): inputs, dispatch, verdict.

    Input problems (``--expect-tsa`` unreadable, a bad trust file, a missing
    bundle) come back as ``FAIL:`` verdicts with the spec's messages, exit 1.
    Pass paths as the user typed them: messages quote them verbatim.
    """
    try:
        pins = read_pins(expect_key=expect_key, expect_recorder_key=expect_recorder_key, trust_file=trust_file,
                         expect_tsa=expect_tsa, require_sealed=require_sealed)
        return verify_path(bundle, pins, clauses=clauses)
    except InputError as exc:
        return failed(str(exc), form="input")
    except Exception as exc:  # the last resort of §12.3
        return failed(f"{type(exc).__name__}: {exc}", form="input")
