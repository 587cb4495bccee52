"""Tokens and private keys known by their own form, and the HTTP schemes.

``Bearer`` and ``Basic`` tokens, a URL's user info and token user, the token shapes' searches, PEM and PuTTY
private keys. docs/capture.md: "Tokens and private keys known by their own form" and "HTTP schemes and URLs'
user info".
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
from typing import Final

from bitexact.credential_shapes import BOUNDARY, MARKS, PEM_BEGIN, PEM_END, SHAPES, Shape


_B64TOKEN = r"[ \t]+([A-Za-z0-9\-._~+/]+=*)"
_BEARER = (re.compile(r"earer(?<=[Bb]earer)" + _B64TOKEN), re.compile(r"EARER(?<=BEARER)" + _B64TOKEN))
_BASIC = (re.compile(r"asic(?<=[Bb]asic)" + _B64TOKEN), re.compile(r"ASIC(?<=BASIC)" + _B64TOKEN))
# User info ends at the last "@" before the host, as redact_url and URL parsers read it: a password (or a
# user name) holding an unencoded "@" is read whole. An empty user name too (redis://:pw@).
_USERINFO = re.compile(r"://([^\s/?#:\x00]{0,256}:[^\s/?#\x00]{1,256})@")
_BEARER_MARKS = re.compile(r"[\d\-._~+/=]")
# Rules version 8: a token as a URL's user with no password after it (git's ``https://TOKEN@host/o/r.git``, a classic
# 40-hex GitHub OAuth token, an Azure DevOps PAT): see :func:`_user_token`. Possessive: a long run with no "@" after
# it is read once.
_USER_TOKEN = re.compile(r"://([A-Za-z0-9_~-]{20,256}+)@")
_MIN_USER_TOKEN_CHANGES: Final[int] = 3
_MARK_GUARDS: Final[dict[str, str]] = {"-": "(?<=[tkabposryxi]-)", "_": "(?<=[pousrbkfm82ctadn]_)", "/": "(?<=s/)"}
"""What every shape of a frequent mark holds beside it, checked once before its shapes are tried one by one: the
last character of each ``-`` shape's prefix (``glpat-``, ``sk-``, ``xox?-``, ``tvly-``, ``pplx-``, ``xai-``, ``xapp-``,
``pypi-``, ``glrt-``; not a date's ``2026-12``, nor ``e-`` of ``make-``), of each ``_`` shape's (``gh?_``, ``github_``,
``sk_``, ``hf_``, ``npm_``, ``gsk_``, ``r8_``, ``lsv2_``, ``whsec_``, ``do?_``, ``shp??_``, ``figd_``, ``lin_``,
``ntn_``, ``secret_``; not ``e_`` of ``snake_case``), and ``s/`` before a ``/`` shape (``services/``, ``webhooks/``).
A shape added to the table adds its prefix's last character here (tests/capture/test_shape_tables.py derives
these from the shapes and names a guard out of step). Without it a dash (a date's, an id's) was tried against every ``-`` shape's
look-behind: 1 ms/MiB of JSON."""
_SHAPE_SEARCHES: Final[tuple[tuple[str, re.Pattern[str], tuple[Shape, ...]], ...]] = tuple(
    (mark, re.compile(re.escape(mark) + _MARK_GUARDS.get(mark, "") + "(?:"
                      + "|".join(f"({shape.search})" for shape in shapes) + ")"), shapes)
    for mark in MARKS
    for shapes in [tuple(shape for shape in SHAPES if shape.mark == mark)]
)
"""Per mark, one search for its shapes opening with the mark (a literal the regex engine skips to in C), each
shape's own group saying which matched: a text holding no ``_`` (a one-character search, memchr) is searched
for none of ``ghp_``, ``sk_live_``, ``hf_``, ``npm_``... (each its own search from its first letter cost 0.5-1.2
ms/MiB of prose: all nine took 7.6 ms/MiB, these five 3.2)."""
_BEFORE_SHAPE = re.compile(BOUNDARY)


@functools.cache
def _kept_pattern(keep: str) -> re.Pattern[str]:
    """A shape's kept part (:attr:`Shape.keep`), compiled once: where the token inside its form starts."""
    return re.compile(keep)


_PEM_BEGIN = re.compile(PEM_BEGIN)
_PEM_END = re.compile(PEM_END)
_MAX_PEM: Final[int] = 64 * 1024
"""How far a private key's END line is looked for; a key cut short is replaced up to where its lines end."""
# A key's body, line by line: the Proc-Type / DEK-Info headers of an encrypted key (OpenPGP's armour headers,
# Version / Comment / Hash / Charset, and the blank line after them), then lines of base64
# with no space inside a line (indented, as YAML holds one, or not), the line breaks real or written (\n).
# Code or prose between two armour lines (a parser's BEGIN and END constants) is no such body.
_PEM_SPACE = re.compile(r"(?:\s|\\[nr])*")
_PEM_BODY = re.compile(
    r"(?:(?:Proc-Type|DEK-Info|Version|Comment|Hash|Charset):[^\r\n\\\x00]{1,200}(?:[ \t]*(?:\r?\n|(?:\\r)?\\n))+)*"
    r"(?:[A-Za-z0-9+/=]{1,128}(?:[ \t]*(?:\r?\n|(?:\\r)?\\n)[ \t]*)*)+"
)
_PEM_MIN_BASE64: Final[int] = 16

# A PuTTY key file's private part: its line count, each line of base64 (a real or a written line break after it).
_PPK_PRIVATE = re.compile(r"Private-Lines:[ \t]*+([0-9]{1,6}+)[ \t]*+(?:\r?\n|\\r\\n|\\n)")
_PPK_LINE = re.compile(r"([A-Za-z0-9+/=]{1,128}+)[ \t]*+(?:\r?\n|\\r\\n|\\n|(?=\x00)|\Z)")
_PPK_MAC = re.compile(r"Private-MAC:[ \t]*+([0-9A-Fa-f]{16,128}+)")
_MAX_PPK_LINES: Final[int] = 4096


def _user_token(user: str) -> bool:
    """Whether a URL's user part with no password (20 to 256 letters, digits, ``-``, ``_``, ``~``) is a token: it
    holds letters and digits, the one following the other at least :data:`_MIN_USER_TOKEN_CHANGES` times (the marks
    between read past). A name with a number, ``deploy-bot-2024``, changes twice; a random token of 20 characters
    changes about ten times (a 40-hex one about twenty)."""
    changes, last = 0, ""
    for char in user:
        kind = "d" if "0" <= char <= "9" else ("" if char in "_~-" else "a")
        if kind:
            if last and kind != last:
                changes += 1
                if changes >= _MIN_USER_TOKEN_CHANGES:
                    return True
            last = kind
    return False


def _bearer_token(token: str) -> bool:
    return len(token) >= 20 or (len(token) >= 8 and _BEARER_MARKS.search(token) is not None)


def _basic_token(token: str) -> bool:
    padded = "=" not in token and len(token) % 4 != 0
    if padded:
        token += "=" * (-len(token) % 4)  # written without its padding, as some clients send it
    try:
        decoded = base64.b64decode(token, validate=True)
    except (binascii.Error, ValueError):
        return False
    if b":" not in decoded or len(decoded) < 3:
        return False
    if not padded:
        return True
    # Unpadded, many a word decodes (a "basic Operation" starts ":"): only printable text is a user:password.
    try:
        return decoded.decode("utf-8").isprintable()
    except UnicodeDecodeError:
        return False
