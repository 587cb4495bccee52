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
_CREDENTIAL_PREFIXES = (
    rb"[gsrAxehynSptlwdf](?:h[pousr]_|ithub_pat_|lpat-|k-|k_|KIA|SIA|Iza|ox|yJ|f_|v[sbr]\.|a29\.|pm_|G\."
    rb"|sk_|lrt-|vly-|8_|plx-|ypi-|csk_|ai-|app-|sv2_|in_api_|hsec_|ebhooks/|o[por]_v1_|hp(?:at|ss|ca|pa)_"
    rb"|ecret_|igd_|TATT3|tn_|ooks\.slack\.com/|A)"
    rb"|(?i:earer)(?:[ \t]|\\t)"
)
"""A literal part every credential match contains, for a fast prefilter.

Factored by first byte (gh..., glpat-, sk-, sk_/rk_, AKIA/ASIA/AIza, xox, eyJ, hf_, hvs., ya29., npm_, SG.;
under rules version 7 gsk_, tvly-, r8_, pplx-, xai-, lsv2_, pcsk_, whsec_, xapp-, pypi-, dop_v1_, shpat_, glrt-,
figd_, ATATT3, lin_api_, ntn_, secret_, hooks.slack.com/, /webhooks/ and a Telegram bot token's AA),
and [B]earer in any case (tests/capture/test_credential_shapes.py checks a token of every shape passes), so the
regex engine scans for one character class; cross-combinations such as
``gk-`` also pass the prefilter, which only ever costs a full-pattern check.
"""
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
        self._prefilter = re.compile(b"|".join(
            [re.escape(m.encode("utf-8")) for m in unique] + [_CREDENTIAL_PREFIXES]))
        # The same prefilter for decoded text (``text``): a needle's literal part is in the text itself.
        self._text_prefilter = re.compile("|".join(
            [re.escape(m) for m in unique] + [_CREDENTIAL_PREFIXES.decode("ascii")]))

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
        if self._prefilter.search(raw_json) is None:
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

        Every match holds a registered mask, a credential's literal prefix or ``PRIVATE KEY``: text with
        none of them is returned as it is, after one scan for a character class instead of the full
        alternation (about a hundred times faster on plain text; a render redacts every message).
        """
        if _PEM_TEXT not in value and self._text_prefilter.search(value) is None:
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
