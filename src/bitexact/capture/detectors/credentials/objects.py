"""Object keys written in text: bare keys, subscripts, name/value objects and ``[name, value]`` pairs.

docs/capture.md: "Object keys and JSON" and "`NAME=VALUE` and `NAME: VALUE` in text".
"""

from __future__ import annotations

import re
from typing import Final


# An unquoted name opening a value after "{" or "," (a JavaScript object literal, a YAML flow mapping).
# Possessive: a name is never given back a character at a time when no colon follows it.
_BARE_KEYS = tuple(re.compile(opening + r"[ \t\r\n]*+([A-Za-z_$][A-Za-z0-9_$-]{0,95}+)[ \t]*+:") for opening in (r"\{", ","))
# A bare key's value counts only when quoted (JavaScript's three quotes): a bare word after it is code
# (password: str, a type; {token: authToken}, a destructuring; apiKey: process.env.KEY, a reference).
_QUOTED_LITERAL = r"""(?:"((?:[^"\\\x00]|\\.)*)"|'((?:[^'\\\x00]|\\.)*)'|`((?:[^`\\\x00]|\\.)*)`)"""
_QUOTED_VALUE = re.compile(r"[ \t\r\n]*" + _QUOTED_LITERAL)
# A subscript's quoted key, read back from its "]" (os.environ['DB_PASSWORD'] = ...).
_SUBSCRIPT_KEY = re.compile(r"""\[[ \t]*(["'])([A-Za-z0-9_%.\-]{1,96}+)\1[ \t]*\]\Z""")
# ... and its value: a quoted literal, with Python's string prefixes (b'x', r'x', f'x', u'x', rb'x').
_SUBSCRIPT_VALUE = re.compile(r"[ \t]*[bBrRuUfF]{0,2}" + _QUOTED_LITERAL)


# A name/value object written in text (docs/capture.md): a Python repr's or a log line's object, ``{'name': 'password',
# 'value': 'x'}``, or a call's keywords, ``Field(name='api_key', value='x')``; its other members read past, one at a
# time, to its value member (or, the value first, its name member just after it).
_NEXT_MEMBER: Final = {
    quote: re.compile(rf"[ \t\r\n]*+,[ \t\r\n]*+{quote}([A-Za-z_][A-Za-z0-9_-]{{0,63}}+){quote}[ \t\r\n]*+:[ \t\r\n]*+")
    for quote in ("'", '"')
}
_NEXT_KEYWORD = re.compile(r"[ \t\r\n]*+,[ \t\r\n]*+([A-Za-z_][A-Za-z0-9_]{0,63}+)[ \t]*+=(?![=>])[ \t]*+")
_MAX_MEMBERS: Final[int] = 16
"""How many members after a name member its value member is looked for among, at most."""
# A [name, value] pair written in text, as the walk reads one in data: a repr's tuple ([('password', 'x')], a header
# list's ('Authorization', 'Bearer x')) or a list (["password", "x"]), its name quoted, its value quoted or bare,
# the pair closed after it. Each opens with its bracket, a literal; a text holding none is not searched.
_PAIR_NAME = r"""[ \t]*+[bB]?(["'])([A-Za-z0-9_.\-]{1,96}+)\1[ \t]*+,[ \t]*+"""
_PAIRS: Final = (("(", ")", re.compile(r"\(" + _PAIR_NAME)), ("[", "]", re.compile(r"\[" + _PAIR_NAME)))
_PAIR_VALUE = re.compile(r"""[bB]?(?:"((?:[^"\\\x00]|\\.)*+)"|'((?:[^'\\\x00]|\\.)*+)'|([^\s,)\]"'\x00]++))[ \t]*+""")
_LITERAL_OPENINGS: Final[str] = "[{(-0123456789"
"""How a bare value in a repr opens when it is a literal: a number, an object, a list or a tuple (a bare word is a
name in code, ``('password', pw)``, or ``None`` / ``True``, which hold no secret)."""
