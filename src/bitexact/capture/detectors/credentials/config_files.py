"""Configuration and credential files: ``.netrc``, ``.pgpass``, ``/etc/shadow`` and htpasswd lines.

docs/capture.md: "Configuration and credential files".
"""

from __future__ import annotations

import re
from typing import Final


# A .netrc entry (curl, git, ftp and Python's netrc read it): "machine HOST", or "default", then its
# login, account and port pairs in any order, on one line or several, and "password VALUE". An entry
# starts a line (_first_word; rules version 17: after a markdown note's marks too), as .netrc files write
# them: prose about "the default password" or "the machine root password" is no entry. The pairs are read
# possessively and the rest of the entry is optional, so one match tells how far an entry's pairs run (a head
# inside them, a login named "default", reads no further). Each head opens with its literal word (see
# _CONFIG_SETS).
_NETRC_HEADS: Final = (re.compile(r"machine(?![^ \t\r\n])[ \t\r\n]+[^\s\x00]+"), re.compile(r"default(?![^\s\x00])"))
_NETRC_SPACE = r"(?:[ \t\r]|\n(?:[ \t]*+>)*+)+"
"""The blanks between a .netrc entry's words; rules version 17: a line break and the blockquote's ``>`` marks opening
the next line (an entry over several lines quoted in a markdown note, ``> machine h`` / ``> password x``)."""
_NETRC_REST = re.compile(
    rf"(?:{_NETRC_SPACE}(?:login|account|port){_NETRC_SPACE}[^\s\x00]+)*+(?:{_NETRC_SPACE}password{_NETRC_SPACE}"
    r'(?:"((?:[^"\\\x00]|\\.)*)"|([^\s\x00]+))'  # curl reads a quoted value, "\" escaping in it
    # ... and ends its line, or another keyword follows it: "machine learning password reset flow" is prose.
    r"(?=[ \t]*+(?:\r?\n|\x00|\\n|\Z)|[ \t\r\n]+(?:login|account|port|machine|default|macdef)(?![^\s\x00])))?"
)

_COLON_DOLLAR = re.compile(r":\$")
# An /etc/shadow line's crypt(3) hash (MD5 $1$, bcrypt $2b$, SHA-256/512 $5$ / $6$, yescrypt $y$, scrypt $7$,
# gost-yescrypt $gy$): after a user name opening the line, before the next colon. Rules version 17: or after blanks
# or a markdown note's marks (a blank or ">" before the name, then _first_word asked: "> root:$6$...", "- root:...").
_SHADOW_LINE = re.compile(
    r"(?:(?<![^\n\x00])|(?<=\\n)|(?<=[ \t>]))"
    r"[a-z_][a-z0-9_.-]{0,31}+:(\$(?:1|2[abxy]|5|6|y|gy|7)\$[./0-9A-Za-z$]{8,}+)(?=:)"
)

# Rules version 8: an htpasswd line's hash, found from the colon before it, ending its line.
_HTPASSWD_HASH = re.compile(
    r":(\$(?:apr1|2[abxy]|1|5|6)\$[./0-9A-Za-z$]{8,}+|\{SHA\}[A-Za-z0-9+/]{27}=)(?=[ \t]*+(?:\r?\n|\x00|\\n|\Z)|`)")
"""An htpasswd line's hash ending its line; rules version 17 (leaks32): or a markdown code span's closing backtick
(``Add `alice:$apr1$...` to .htpasswd``; the USER then opens the span, :meth:`CredentialsDetector._htpasswd_hashes`)."""
_HTPASSWD_COLON = re.compile(r":(?:\$|\{SHA\})")
_HTPASSWD_STOPS: Final[str] = " \t\r\n\x00:"
_MAX_HTPASSWD_USER: Final[int] = 256

_PGPASS_FIELD = r"(?:[^\s:\\\x00]|\\.)++"  # a field of a .pgpass line: "\:" and "\\" are its escapes; no blank
_PGPASS_LAST = r"(?:[^\s:\\\x00]|\\[^nr\s])++"  # its password: to the line's end (a written "\n" ends it too)
_PGPASS_QUOTED_LAST = r"""(?:[^\s:\\'"\x00]|\\[^nr\s'"])++"""  # ... or to the quote closing an echoed word

_PGPASS_STOPS: Final[str] = " \t\r\n\x00:'\""
_MAX_PGPASS_FIELD: Final[int] = 256
_HEX_LINE = re.compile(r"[0-9A-Fa-f:]++")
