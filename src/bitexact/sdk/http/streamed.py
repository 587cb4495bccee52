"""A response body hashed as it streams, so an exchange can let go of one certain to be withheld (mem18).

Past ``BITEXACT_MAX_BODY_BYTES`` (as stored) a body is withheld as too large
under a capture policy, and its ``scrub_failed`` gap carries a keyed digest
of the canonical JSON ``{"response.text": TEXT}`` (or ``{"response.b64":
B64}`` for bytes). :class:`BodyDigest` computes the SHA-256 of each form the
body could take, as the chunks pass: the text in each charset the exchange
would read it by (:func:`bitexact.sdk.http.exchange.body_fields`), and its
base64. Once every form is past the bound, the exchange holds none of the
body; at its end :meth:`BodyDigest.result` gives the form ``body_fields``
would have chosen, and the digest and length of its canonical JSON.
"""

from __future__ import annotations

import base64
import codecs
import hashlib
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

ESCAPED_AS_CANONICAL: Final[frozenset[str]] = frozenset({
    "utf-8", "utf-8-sig", "utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-le", "utf-32-be",
    "ascii", "latin-1", "iso8859-1", "cp1252",
})
"""Charsets whose incremental decoder reads a body as its whole decode does (strict errors, nothing held back
but an unfinished character): a body in any other is held whole, as before."""


def _prefix(side: str, name: str) -> bytes:
    """The canonical JSON of ``{"SIDE.NAME": "`` up to the value's first character (SIDE and NAME are ASCII)."""
    return b'{"' + f"{side}.{name}".encode("ascii") + b'":"'


@dataclass
class _Text:
    """One charset's reading: its decoder, the hash of the canonical JSON so far, and the stored size."""

    charset: str
    decoder: codecs.IncrementalDecoder
    sha: Any
    size: int = 0
    alive: bool = True
    canonical: bool = True


@dataclass
class BodyDigest:
    """The forms a response body may be recorded in, hashed as canonical ``{path: value}`` while it passes."""

    side: str
    texts: list[_Text]
    b64_sha: Any = field(default_factory=hashlib.sha256)
    b64_size: int = 0
    raw: int = 0
    _carry: bytes = b""

    @classmethod
    def start(cls, side: str, charsets: list[str]) -> BodyDigest | None:
        """A digest over the charsets in turn (then bytes), or None when one of them is not one it reads."""
        texts = []
        for charset in charsets:
            try:
                name = codecs.lookup(charset).name
            except LookupError:
                continue  # body_fields skips it too
            if name not in ESCAPED_AS_CANONICAL:
                return None
            sha = hashlib.sha256(_prefix(side, "text"))
            texts.append(_Text(charset, codecs.getincrementaldecoder(charset)("strict"), sha))
        digest = cls(side, texts)
        digest.b64_sha.update(_prefix(side, "b64"))
        return digest

    def feed(self, chunk: bytes) -> None:
        """The next bytes of the body."""
        self.raw += len(chunk)
        for text in self.texts:
            if text.alive:
                try:
                    self._add(text, text.decoder.decode(chunk))
                except UnicodeError:
                    text.alive = False  # it does not read in this charset: a later one, or bytes
        data = self._carry + chunk
        whole = len(data) - len(data) % 3
        self._carry = data[whole:]
        encoded = base64.b64encode(data[:whole])
        self.b64_sha.update(encoded)
        self.b64_size += len(encoded)

    @staticmethod
    def _add(text: _Text, piece: str) -> None:
        if not piece or not text.canonical:
            return
        try:
            escaped = orjson.dumps(piece)[1:-1]  # canonical JSON's string escapes
        except orjson.JSONEncodeError:
            text.canonical = False  # a lone surrogate: the whole would not canonicalize either
            return
        text.sha.update(escaped)
        text.size += len(escaped)

    def past(self, limit: int) -> bool:
        """Whether every form the body can still take is larger than ``limit`` as the bound counts it (a
        text's bytes as stored, the bytes base64 encodes), so it is certain to be withheld whatever comes."""
        return self.raw > limit and all(text.size > limit for text in self.texts if text.alive and text.canonical)

    def result(self) -> tuple[dict[str, Any], bytes | None, int]:
        """The body's fields as the entry stores them (its value the placeholder), the SHA-256 of the
        canonical ``{path: value}`` (None when it has no canonical form) and that JSON's length."""
        from bitexact.capture.block import WITHHELD_PLACEHOLDER

        for text in self.texts:
            if not text.alive:
                continue
            tail = b""
            try:
                self._add(text, text.decoder.decode(b"", final=True))
            except UnicodeDecodeError as exc:
                if exc.reason != "unexpected end of data":
                    continue
                tail = text.decoder.getstate()[0]  # the unfinished character's bytes, as body_fields keeps them
            except UnicodeError:
                continue
            fields: dict[str, Any] = {"text": WITHHELD_PLACEHOLDER}
            if tail:
                fields["tail_b64"] = base64.b64encode(tail).decode("ascii")
            if not text.canonical:
                return fields, None, 0
            text.sha.update(b'"}')
            # The length of {"SIDE.text":"...."}: the prefix, the escaped text, the closing quote and brace.
            return fields, text.sha.digest(), len(_prefix(self.side, "text")) + text.size + 2
        encoded = base64.b64encode(self._carry)
        self.b64_sha.update(encoded + b'"}')
        size = len(_prefix(self.side, "b64")) + self.b64_size + len(encoded) + 2
        return {"b64": WITHHELD_PLACEHOLDER}, self.b64_sha.digest(), size
