"""E-mail addresses: a local part, ``@``, and a domain with a dotted top-level label.

The search is anchored on ``@``; the local part is read backwards from it
(up to 64 characters) and the domain forwards. A local part may not start
with a dot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bitexact.capture.budget import Deadline
from bitexact.capture.detectors.base import Finding

NAME = "email"
TOKEN = "[EMAIL]"

_AT = re.compile("@")
_LOCAL = re.compile(r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~.\-]{1,64}\Z")
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9\-]{0,61}[A-Za-z0-9])?"
# The top-level label ends where no ASCII letter or digit follows: not at a \b, which Unicode does not see
# between "com" and a CJK or Hangul letter written against it ("ann@example.com获取", "...com으로").
_DOMAIN = re.compile(rf"(?:{_LABEL}\.)+[A-Za-z]{{2,63}}(?![A-Za-z0-9])")


@dataclass
class EmailDetector:
    """E-mail addresses."""

    name: str = field(default=NAME, init=False)
    context_free: bool = field(default=True, init=False)

    def find(
        self,
        text: str,
        deadline: Deadline,
        *,
        context: str | None = None,
        prefilter: bool = False,
    ) -> list[Finding]:
        """Every e-mail address in ``text``."""
        found: list[Finding] = []
        for at in _AT.finditer(text):
            deadline.check()
            position = at.start()
            local = _LOCAL.search(text, max(0, position - 64), position)
            domain = _DOMAIN.match(text, position + 1)
            if local is None or domain is None:
                continue
            start = local.start()
            while start < position and text[start] == ".":
                start += 1
            if start == position:
                continue
            found.append(Finding(start, domain.end(), TOKEN, NAME))
        return found
