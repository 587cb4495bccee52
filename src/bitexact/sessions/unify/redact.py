"""The artifact secret/add-mask redaction policy (T-UAS-049, T-UAS-060).

Redaction works on *decoded* values: every string in a JSON value (native
IDs, nested structured payloads, object keys included) is scanned, so a
secret escaped inside a JSON string is found after decoding.  It never
mutates its input; it returns a new value (or the same object when nothing
changed, which is safe because nothing downstream mutates).

Two kinds of needles are replaced with ``***`` (the GitHub Actions mask):

- registered masks: values from ``::add-mask::`` workflow commands in agent
  stdio, plus any masks the caller supplies;
- recognized credential shapes (GitHub, OpenAI/Anthropic, AWS, Slack,
  Google API keys and OAuth access tokens, npm, SendGrid, bearer tokens, PEM private keys, and the
  rules version 7 vendors of :mod:`bitexact.credential_shapes`; a Slack or Discord webhook URL and a
  Telegram bot token keep their host and ids, only the secret masked).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import orjson

from bitexact.credential_shapes import BOUNDARY, PEM_PRIVATE_KEY, SHAPES, TOKEN_SHAPES

MASK = "***"

_CREDENTIALS = tuple(
    # A shape whose token stands inside a longer form keeps that form (a webhook's host and ids, a bot's id):
    # the form is named ``keepN`` for _masked, and stands for the word boundary.
    BOUNDARY + shape.pattern if shape.keep is None
    else f"(?P<keep{index}>{shape.kept}){shape.token}"
    for index, shape in enumerate(SHAPES)
) + (PEM_PRIVATE_KEY,)
# The scheme in any case (HTTP auth schemes are case-insensitive) and any run of spaces or tabs;
# the prefix is kept, only the token masked (see _masked).
_BEARER = r"(?P<bearer>(?i:bearer)[ \t]+)[A-Za-z0-9._~+/=-]{16,}"
_RAW_BEARER = rb"(?i:bearer)(?:[ \t]|\\t)+[A-Za-z0-9._~+/=-]{16,}"
"""``_BEARER`` as it appears in undecoded JSON text, where a tab is written ``\\t``."""
_PEM_MARKER = b"PRIVATE KEY"
_PEM_TEXT = _PEM_MARKER.decode("ascii")


def _mark_searches(kind: type[str] | type[bytes]) -> tuple[re.Pattern[Any], ...]:
    """The prefilter: one search per credential mark (:data:`bitexact.credential_shapes.MARKS`), and two for bearer.

    Every credential match holds its shape's mark with the shape's ``before`` right before it (a look-behind of
    fixed width) or, for a shape with nothing before its mark, the shape's form right after it (a look-ahead);
    a bearer match opens with ``b`` or ``B``.  Each search opens with its one literal character, so the regex
    engine skips to the next such character in C; one search whose first character was a class of common
    letters (``[gsrAxeh...]``, the factored prefixes this replaced) stopped at most letters and cost about five
    times the instructions of all these together.
    """
    alternatives: dict[str, list[str]] = {}
    for shape in SHAPES:
        mark = re.escape(shape.mark)
        check = f"(?<={shape.before}{mark})" if shape.before else f"(?={shape.keep or ''}{shape.rest})"
        alternatives.setdefault(mark, [])
        if check not in alternatives[mark]:
            alternatives[mark].append(check)
    searches = [f"{mark}(?:{'|'.join(checks)})" for mark, checks in alternatives.items()]
    searches += [f"{first}(?i:earer)(?:[ \\t]|\\\\t)" for first in "bB"]  # bearer, any case; \\t as JSON writes a tab
    return tuple(re.compile(search.encode("ascii") if kind is bytes else search) for search in searches)


_RAW_SEARCHES = _mark_searches(bytes)
_TEXT_SEARCHES = _mark_searches(str)

# Characters a JSON writer escapes; a mask containing one cannot be found
# literally in undecoded JSON text.
_JSON_ESCAPED = re.compile(r'["\\\x00-\x1f]')
_ADD_MASK = re.compile(r"::add-mask::(.*?)\r?$", re.M)


def _masked(match: re.Match[str]) -> str:
    """What a match becomes: the mask, after a bearer token's scheme and space or a token's form (a webhook URL's
    host and ids), kept as written."""
    kept = next((part for part in match.groupdict().values() if part), "")
    return f"{kept}{MASK}"


def masks_from_log(text: str) -> list[str]:
    """Values registered with ``::add-mask::`` in a log (blank values ignored)."""
    return [m.strip() for m in _ADD_MASK.findall(text) if m.strip()]


class Redactor:
    """Replaces registered masks and recognized credentials in decoded strings."""

    def __init__(self, masks: Iterable[str] = ()) -> None:
        unique = sorted({m for m in masks if m and m.strip()}, key=lambda m: (-len(m), m))
        self.masks = tuple(unique)
        # Longest masks first so a mask containing another is replaced whole.
        alternatives = [re.escape(m) for m in unique] + list(_CREDENTIALS) + [_BEARER]
        self._pattern = re.compile("|".join(alternatives))
        literal = [re.escape(m).encode("utf-8") for m in unique] + [
            # The shapes with no boundary: an escape written before a token (\n) ends in a letter in undecoded
            # JSON. Only a prefilter: a match there is walked, decoded.
            c.encode("ascii") for c in TOKEN_SHAPES] + [_RAW_BEARER]
        self._raw_pattern = re.compile(b"|".join(literal))
        self._always_walk = any(_JSON_ESCAPED.search(m) for m in unique)
        # The prefilter: a needle's literal part (a mask, or what _mark_searches looks for) is in the text.
        self._raw_masks = tuple(m.encode("utf-8") for m in unique)

    def may_match(self, raw_json: bytes) -> bool:
        """Whether decoding ``raw_json`` could yield a string containing a needle.

        Without ``\\u`` or ``\\/`` escapes, every decoded string (key or value)
        is a literal substring of the UTF-8 JSON text, except for escaped
        quotes, backslashes and control characters - which no literal needle
        contains.  So a miss on the raw text proves the decoded value needs no
        redaction; anything else is walked.
        """
        if self._always_walk or b"\\u" in raw_json or b"\\/" in raw_json or _PEM_MARKER in raw_json:
            return True
        # The literal prefilter scans far faster than the full alternation; the
        # full pattern runs only when some needle's literal part is present.
        if not any(mask in raw_json for mask in self._raw_masks) and not any(
                search.search(raw_json) for search in _RAW_SEARCHES):
            return False
        return self._raw_pattern.search(raw_json) is not None

    def checked(self, value: Any, raw_json: bytes | None = None) -> Any:
        """``value(value)``, skipping the walk when its JSON text proves nothing matches.

        ``raw_json`` is the undecoded source text of ``value`` when known;
        otherwise the value is serialized (orjson escapes no ``/`` and writes
        non-ASCII literally, so the ``may_match`` reasoning holds).
        """
        if raw_json is None:
            try:
                raw_json = orjson.dumps(value)
            except (TypeError, orjson.JSONEncodeError):
                return self.value(value)
        return self.value(value) if self.may_match(raw_json) else value

    def text(self, value: str) -> str:
        """``value`` with every needle replaced by ``***``.

        Every match holds a registered mask, a credential's mark with what stands before it, or ``PRIVATE KEY``:
        text with none of them is returned as it is, after a literal search per mark instead of the full
        alternation (far faster on plain text; a render redacts every message).
        """
        if (_PEM_TEXT not in value and not any(mask in value for mask in self.masks)
                and not any(search.search(value) for search in _TEXT_SEARCHES)):
            return value
        return self._pattern.sub(_masked, value)

    def value(self, value: Any) -> Any:
        """A redacted copy of a decoded JSON value (input never mutated)."""
        if isinstance(value, str):
            return self._pattern.sub(_masked, value)
        if isinstance(value, dict):
            changed = False
            out: dict[str, Any] = {}
            for key, item in value.items():
                new_key = self._pattern.sub(_masked, key) if isinstance(key, str) else key
                new_item = self.value(item)
                if new_key is not key or new_item is not item:
                    changed = True
                if new_key in out:  # two keys redacted to the same text: keep both
                    suffix = 2
                    while f"{new_key}#{suffix}" in out:
                        suffix += 1
                    new_key = f"{new_key}#{suffix}"
                out[new_key] = new_item
            return out if changed else value
        if isinstance(value, list):
            items = [self.value(item) for item in value]
            return items if any(a is not b for a, b in zip(items, value)) else value
        return value
