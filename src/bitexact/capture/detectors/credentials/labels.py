"""The password label inside a line (``login failed. Password: hunter2``) and the colon forms' search.

The label's word, what is no password (types, code, common words) and the colon search shared with ``.pgpass``
lines. docs/capture.md: "The password label inside a line".
"""

from __future__ import annotations

import re
import string
from typing import Final

from bitexact.capture.detectors.base import Finding, ascii_lower
from bitexact.capture.detectors.credentials.config_files import _PGPASS_FIELD, _PGPASS_LAST, _PGPASS_QUOTED_LAST
from bitexact.capture.detectors.credentials.names import ALREADY_TOKENS, NAME, TOKEN


def _label_value(text: str, colon: int, found: list[Finding]) -> int:
    """The one word after a label's ``colon``, read as a password's (:data:`_LABEL_VALUE`, :func:`_password_word`),
    added to ``found`` when it is one; returns where the word read ends (0 when there is none)."""
    value = _LABEL_VALUE.match(text, colon + 1)
    if value is None:
        return 0
    group = next(g for g in (1, 3, 4) if value.group(g) is not None)
    taken = _password_word(value.group(group))
    if taken:
        found.append(Finding(value.start(group), value.start(group) + taken, TOKEN, NAME))
    return value.end()


def _label_words(text: str, end: int) -> str | None:
    """The label of words ending at ``end`` (rules version 8): two to four words a blank apart, each of letters and
    digits opening with a capital, as a form writes one (``API Key``, ``AWS Secret Access Key``; ``retry with token``
    is prose), the first after a character no word holds (``my_api Key`` is none). Read back a character at a time,
    at most four words of :data:`_MAX_LABEL_WORD` (a search ending at ``end`` would try every start before it)."""
    words: list[str] = []
    at = end
    while len(words) < 4:
        start = at
        while start > 0 and at - start < _MAX_LABEL_WORD and text[start - 1] in _WORD_CHARS:
            start -= 1
        if start == at or not "A" <= text[start] <= "Z" or (start > 0 and text[start - 1] in _WORD_CHARS):
            break
        words.append(text[start:at])
        if start < 2 or text[start - 1] != " " or text[start - 2] not in _WORD_CHARS:
            break
        at = start - 1
    if len(words) < 2:
        return None
    # the longest run is kept: a word before the first that is no label's (a lower-case one) ends it there
    return " ".join(reversed(words))


# Two forms found from a colon, in one search (a colon is a literal the regex engine skips to; each form alone was a
# pass of its own): a password's label inside a line (``login failed for bob. Password: hunter2``), and a
# PostgreSQL password file's line (``HOST:PORT:DATABASE:USER:PASSWORD``), found from the colon before its port.
_LABEL_ENDS: Final[tuple[str, ...]] = ("ssword", "sswd", "phrase", "pass", "pwd")
"""How a password's name ends (``Password``, ``passwd``, ``passphrase``, ``DB_PASS``, ``MYSQL_PWD``): a colon after
one, or after one and a blank, is a label's; the name read back is then asked :func:`is_credential_text_name`."""

_COLON_FORMS = re.compile(
    # The .pgpass line first (a digit or "*" after the colon fails most colons at once: a time's, a URL's), then the
    # label, each colon's last letter tested before the look-behinds (ten of them at every colon of a document's
    # timestamps cost 5 ms/MiB where these cost 1).
    rf":(?:(?:[0-9]{{1,5}}+|\*):{_PGPASS_FIELD}:{_PGPASS_FIELD}:"
    rf"(?:(?P<pgpass>{_PGPASS_LAST})[ \t]*+(?=\r?\n|\x00|\\n|\Z)"
    rf"""|(?P<echoed>{_PGPASS_QUOTED_LAST})(?=["'][ \t]*+[>|]))"""
    "|(?P<label>(?<=[des]:)(?:" + "|".join(f"(?<={end}:)" for end in _LABEL_ENDS) + ")"
    "|(?<=[des][ \t]:)(?:" + "|".join(f"(?<={end}[ \t]:)" for end in _LABEL_ENDS) + "))"
    # Rules version 8: a name of two to four words ending in key, token or secret (API Key: x, Access Token: x).
    "|(?P<words>(?<=[ynt]:)(?:(?<= key:)|(?<= token:)|(?<= secret:))|(?<=[ynt][ \t]:)(?:(?<= key[ \t]:)"
    "|(?<= token[ \t]:)|(?<= secret[ \t]:))))",
    re.IGNORECASE,
)
# A label's value: one word, read once whole (a label inside it is not read again: :meth:`_colon_forms` skips to its
# end), after markdown's bold or italic marks, in backticks, or in quotes followed by a blank, punctuation or the
# text's end ('hunter2'); a word stops at a blank, a quote, a backtick, a JSON escape (\n, \") and a closing tag
# (</td>), so a label in a JSON string or an HTML cell takes its word alone; symbols are part of it (Xy*9zQ!k,
# ab=cd, Tr0ub4dor&3). Not a quoted string code writes the label with ("Password: " + pw) and not a variable ($PW,
# ${PW}); what else code writes there is told apart once the word is read (:func:`_password_word`).
_LABEL_WORD_CHAR = r"""(?:[^\s"'`\\<\x00]|\\(?![nrtbfu"'\\/])|<(?!/))"""
_LABEL_VALUE = re.compile(
    r"[ \t]*+(?:\*{1,2}|_{1,2})?[ \t]*+(?:`([^`\s\x00]++)`"
    r"""|(["'])([^\s"'`\\\x00]{1,256}+)\2(?![^\s.,;:!?)\]}])"""
    r"""|(?!["'`]|\$[A-Za-z_{(])(""" + _LABEL_WORD_CHAR + r"++))"
)
_WORD_CHARS: Final[frozenset[str]] = frozenset(string.ascii_letters + string.digits)
_MAX_LABEL_WORD: Final[int] = 24
_COMMON_LABELS: Final[frozenset[str]] = frozenset({"next token", "page token", "continuation token"})
"""Labels of words ending as a credential's that name a list's page, no secret (AWS's and Google's pagination)."""
_TRAILING_PUNCTUATION: Final[str] = ".,;:"
"""What ends a sentence or a list after a label's word (``Password: hunter2.``): never taken as part of it."""
_CLOSERS: Final[dict[str, str]] = {")": "(", "]": "[", "}": "{", ">": "<"}
_CODE_WORD = re.compile(
    # a call, a subscript or a type's parameters (z.string(), Optional[str], Option<String>), whole
    r"[A-Za-z_][\w.]*+[(\[<].*[)\]>]"
    # a format's placeholder (%s, %(pw)s, %-8s) or Ruby's interpolation (#{pw})
    r"|%(?:\(\w+\))?[-#0 +]*\d*(?:\.\d+)?[a-zA-Z]|#\{.*\}",
    re.DOTALL,
)


def _password_word(word: str) -> int:
    """How much of ``word``, read after a password's label, is the password: 0 when it is none.

    Sentence punctuation after it is left (``hunter2.``), and so is a bracket closing one opened before the label
    (``{user: bob, password: hunter2}``); a word wrapped whole in brackets is a placeholder or a mask
    (``(hidden)``, ``<password>``, ``[redacted]``, ``{pw}``), and a call, a subscript, a type or a format's
    placeholder is code (``z.string()``, ``Optional[str]``, ``%s``); so are the words of :data:`_NOT_PASSWORDS`.
    """
    end = len(word)
    while True:
        while end and word[end - 1] in _TRAILING_PUNCTUATION:
            end -= 1
        closer = word[end - 1] if end else ""
        if closer in _CLOSERS and word.count(closer, 0, end) > word.count(_CLOSERS[closer], 0, end):
            end -= 1
            continue
        break
    core = word[:end]
    if not core or ascii_lower(core) in _NOT_PASSWORDS or core.startswith(ALREADY_TOKENS):
        return 0
    if core[0] in "([{<" and _CLOSERS.get(core[-1]) == core[0]:
        return 0
    if _CODE_WORD.fullmatch(core):
        return 0
    return end


_NOT_PASSWORDS: Final[frozenset[str]] = frozenset({
    # a type written after a parameter's or a field's name (Python, TypeScript, Kotlin, Scala, Swift, Go's docs)
    "str", "string", "bytes", "bytearray", "secretstr", "secretbytes", "secretstring", "securestring", "any",
    "unknown", "none", "null", "undefined", "object", "text", "char", "int", "number", "bool", "boolean", "optional",
    # a word saying what a password is, not one
    "incorrect", "invalid", "wrong", "required", "expired", "changed", "updated", "reset", "missing", "empty",
    "hidden", "redacted", "masked", "set", "unset", "true", "false", "yes", "no", "ok", "n/a",
})
"""Words after a label inside a line that are no password (compared in ASCII lower case)."""
