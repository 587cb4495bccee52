"""SQL statements: ``CREATE USER … PASSWORD`` and ``IDENTIFIED BY``.

docs/capture.md: "SQL statements".
"""

from __future__ import annotations

import re
from typing import Final


# A password an SQL statement sets. A quoted literal ('' inside it is a quote), or for IDENTIFIED BY a bare word
# (Oracle's IDENTIFIED BY tiger); each keyword spelt in upper and in lower case, each pattern opening with a
# literal so the search skips through text that holds none.
_SQL_QUOTED = r"""'((?:[^'\r\n\x00]|'')*+)'|"((?:[^"\r\n\x00]|"")*+)\""""
_SQL_PASSWORD: Final = tuple(
    re.compile(rf"{word}(?<![\w-]{word})[ \t]++(?:{_SQL_QUOTED})") for word in ("PASSWORD", "password")
) + tuple(
    re.compile(rf"{set_}[ \t]++{word}(?![\w-])[^=;\r\n\x00]{{0,200}}+=[ \t]*+(?:{word}[ \t]*+\([ \t]*+)?"
               rf"(?:{_SQL_QUOTED})")
    for set_, word in (("SET", "PASSWORD"), ("set", "password"))
)
# Rules version 13: the hash ``SHOW CREATE USER`` and a dump print, MySQL's ``IDENTIFIED WITH 'PLUGIN' AS 'HASH'``
# (the plugin quoted or not; ``AS 0x…`` too) and MariaDB's ``IDENTIFIED VIA PLUGIN USING 'HASH'`` (or ``USING
# PASSWORD('X')``): mysql.user's ``authentication_string`` written as a statement.
_SQL_IDENTIFIED: Final = tuple(
    re.compile(rf"{word}(?<![\w-]{word})[ \t]++(?:(?:{with_}|{via})[ \t]++(?:'[A-Za-z0-9_]{{1,64}}+'|[A-Za-z0-9_]{{1,64}}+)"
               rf"[ \t]++)?(?:{by}[ \t]++(?:(?:{values}|{password})[ \t]++)?|(?:{as_}|{using})[ \t]++"
               rf"(?:{password}[ \t]*+\([ \t]*+)?)(?:{_SQL_QUOTED}|(?!{random}[ \t])([^\s;,'\"()\x00]++))")
    for word, with_, via, by, values, password, random, as_, using in (
        ("IDENTIFIED", "WITH", "VIA", "BY", "VALUES", "PASSWORD", "RANDOM", "AS", "USING"),
        ("identified", "with", "via", "by", "values", "password", "random", "as", "using"))
)
# Lower case "identified by WORD" is prose as often as SQL ("a user identified by their email"): a bare word
# after it counts only in a statement that makes or changes a user or role, opening its line.
_SQL_USER_STATEMENT = re.compile(r"[ \t]*+(?:create|alter)[ \t]++(?:user|role)[ \t]", re.IGNORECASE)
_MAX_STATEMENT_HEAD: Final[int] = 4096
"""How far back a lower-case ``identified by WORD`` looks for its line's ``create user``: a longer line is no
statement that makes a user."""
