"""Reading a session file the commands were given: a regular file, a snapshot of its size, bounded.

`import session`, `sessions parse`, `sessions render` and `sessions validate` read
a whole file before they look at it. Read to end of file, a device (/dev/zero)
never ends, a named pipe waits for a writer, and a log an agent still appends to
grows while it is read: the process grew to gigabytes and ignored Ctrl-C. Here
the file is opened once, refused unless it is a regular file, and exactly the
size ``fstat`` gave is read, in pieces (Ctrl-C is heard between two): what was
read is what its digest is of, even when the file grows on.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from bitexact.errors import BitExactError
from bitexact.private_files import file_kind

SESSION_READ_MAX: Final[int] = 1 << 30
"""The largest session file these commands read (1 GiB). An import holds about ten times the file in
memory at its peak (the text, the parsed events and their canonical entries), a render about five: 1 GiB
is already ~10 GiB of memory on import."""

_PIECE: Final[int] = 16 << 20
"""One read: small enough that a Ctrl-C is acted on within a fraction of a second."""


class SessionFileError(BitExactError, ValueError):
    """The path is not a file these commands read (not a regular file, or too large); nothing was read.

    The message names the path, what it is, and what to do.
    """


def read_session_file(path: Path | str, *, limit: int = SESSION_READ_MAX) -> bytes:
    """The bytes of the regular file ``path``: exactly its size when opened, at most ``limit``.

    Raises :class:`SessionFileError` for a path that is not a regular file
    (opened without blocking, so a FIFO with no writer is refused rather
    than waited on) or is larger than ``limit``, before a byte is read;
    :class:`OSError` when it cannot be opened or read. A file that grows
    while it is read is read up to the size it had (a snapshot); one that
    shrinks, up to where it ends.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        status = os.fstat(fd)
        if not stat.S_ISREG(status.st_mode):
            raise SessionFileError(f"{path} is {file_kind(status.st_mode)}, not a regular file: a session log is"
                                   " read from a file (copy a stream to one first); nothing was read from it")
        size = status.st_size
        if size > limit:
            raise SessionFileError(f"{path} is {size:,} bytes, over the {limit:,} bytes (1 GiB) a session file may"
                                   " be; split the log, or import the part you need")
        pieces: list[bytes] = []
        remaining = size
        while remaining > 0:
            piece = os.read(fd, min(_PIECE, remaining))  # Ctrl-C raises here, between two pieces
            if not piece:
                break  # it shrank: what exists is what was read
            pieces.append(piece)
            remaining -= len(piece)
        return pieces[0] if len(pieces) == 1 else b"".join(pieces)
    finally:
        os.close(fd)


def no_events_message(name: str, diagnostics: Sequence[str], engine: str | None) -> str:
    """Why ``name`` yields no event, and what to do: with ``--engine`` given, whether it is the right one;
    without, to name it (detection may have picked the wrong reader)."""
    causes = "; ".join(diagnostics[:3]) or "no records"
    if len(diagnostics) > 3:
        causes += f"; {len(diagnostics) - 3} more"
    if engine is not None:
        return (f"{name}: no recognizable {engine} events ({causes}); --engine {engine} was given: check that"
                " it is the engine that wrote the log, or omit --engine to detect it")
    return (f"{name}: no recognizable session events ({causes}); if detection picked the wrong engine, name"
            " the one that wrote the log with --engine")


__all__ = ["SESSION_READ_MAX", "SessionFileError", "file_kind", "no_events_message", "read_session_file"]
