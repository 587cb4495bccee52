"""The publication boundary: prompt privacy and redaction before clipping (T-UAS-045, T-UAS-049).

User prompts (``user.message``) and split activation prompts
(``prompt.system``/``prompt.user``) are retained in traces but never shown
by default; ``show_prompts`` is the separate, explicit diagnostic view,
still redacted.  Every published string is redacted *before* it is clipped
so a preview can never show the prefix of a registered mask or a
recognized credential; the final text is redacted again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bitexact.sessions.render.budget import preview
from bitexact.sessions.unify.redact import Redactor

PROMPT_TYPES = frozenset({"user.message", "prompt.system", "prompt.user"})


@dataclass
class Publisher:
    """Decides what may be shown and produces redacted, clipped publication copies."""

    show_prompts: bool = False
    masks: Iterable[str] = ()
    redactor: Redactor = field(init=False)

    def __post_init__(self) -> None:
        self.redactor = Redactor(self.masks)

    def private(self, event: Mapping[str, Any]) -> bool:
        """True for prompt records hidden from default publication."""
        kind = event.get("type")
        return isinstance(kind, str) and kind in PROMPT_TYPES and not self.show_prompts

    def text(self, value: str, limit: int) -> str:
        """A redacted, then clipped, copy of ``value``."""
        return preview(self.redactor.text(value), limit)

    def final(self, text: str) -> str:
        """The last redaction pass over a finished publication text."""
        return self.redactor.text(text)
