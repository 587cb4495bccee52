"""Byte budgets, UTF-8-safe clipping and explicit truncation notices (T-UAS-050, 8.4).

Both publication views default to a 1000 KiB budget, below the 1024 KiB
GitHub Actions step-summary limit.  The ``Document`` writer reserves the
bytes of every still-open container (code fences, ``</details>``) and of
the truncation notice, so a clipped view always closes its markup and says
that it is partial.  Display limits never touch the canonical trace.
"""

from __future__ import annotations

from dataclasses import dataclass, field

DEFAULT_BUDGET_BYTES = 1000 * 1024
MESSAGE_BYTES = 8 * 1024
"""Per-message display limit (assistant text, reasoning)."""
OUTPUT_BYTES = 2 * 1024
"""Per-tool input/output/error preview limit."""
FIELD_BYTES = 256
"""Limit for one scalar field in an information line."""


def clip_utf8(text: str, max_bytes: int) -> tuple[str, int]:
    """``text`` cut to at most ``max_bytes`` UTF-8 bytes on a character boundary.

    Returns the clipped text and the number of bytes removed.
    """
    data = text.encode("utf-8", errors="surrogatepass")
    if len(data) <= max_bytes:
        return text, 0
    cut = max(0, max_bytes)
    while cut > 0 and (data[cut] & 0xC0) == 0x80:
        cut -= 1  # step back to the first byte of a character
    return data[:cut].decode("utf-8", errors="surrogatepass"), len(data) - cut


def preview(text: str, max_bytes: int) -> str:
    """``text`` limited to ``max_bytes`` with an explicit ``[+N bytes not shown]`` notice."""
    clipped, removed = clip_utf8(text, max_bytes)
    return clipped if not removed else f"{clipped}… [+{removed} bytes not shown]"


def size(text: str) -> int:
    """UTF-8 size of ``text``."""
    return len(text.encode("utf-8", errors="surrogatepass"))


@dataclass
class Document:
    """An output buffer that never exceeds its budget and always closes its containers."""

    budget: int
    notice_template: str = (
        "\n[display truncated: {shown} of {total} bytes shown within the {budget}-byte budget; "
        "the session record itself is complete and unchanged]\n"
    )
    total: int = 0
    parts: list[str] = field(default_factory=list)
    used: int = 0
    closers: list[str] = field(default_factory=list)
    truncated: bool = False

    def _notice(self) -> str:
        return self.notice_template.format(shown="{shown}", total=self.total, budget=self.budget)

    def _reserved(self) -> int:
        # Room for every pending closer and the notice (with generous digits).
        return sum(size(c) for c in self.closers) + size(self._notice()) + 24

    def write(self, text: str, *, clip: bool = False) -> bool:
        """Append ``text`` if it fits; ``clip`` allows a UTF-8-safe partial line."""
        if self.truncated:
            return False
        room = self.budget - self.used - self._reserved()
        needed = size(text)
        if needed <= room:
            self.parts.append(text)
            self.used += needed
            return True
        if clip and room > 0:
            part, _ = clip_utf8(text, room)
            self.parts.append(part)
            self.used += size(part)
        self.truncated = True
        return False

    def open(self, opener: str, closer: str) -> bool:
        """Write ``opener`` and reserve ``closer`` until ``close``: both must fit, or neither is written.

        The closer is reserved first, so the opener is written only with room
        left for it (a code fence's closer is as long as the content's longest
        backtick run, plus one).
        """
        self.closers.append(closer)
        if not self.write(opener):
            self.closers.pop()
            return False
        return True

    def close(self) -> None:
        """Write the innermost pending closer (its bytes were reserved)."""
        closer = self.closers.pop()
        self.parts.append(closer)
        self.used += size(closer)

    def finish(self) -> str:
        """The document: on truncation, a notice inside the open containers, then closers."""
        if self.truncated:
            shown = self.used
            notice = self.notice_template.format(shown=shown, total=self.total, budget=self.budget)
            self.parts.append(notice)
            self.used += size(notice)
        while self.closers:
            self.close()
        return "".join(self.parts)
