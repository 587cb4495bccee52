"""Configuration commands and logins: a tool's ``config set``, poetry, Oracle's ``USER/PASSWORD``, curl's ``-H``,
chpasswd's input and a password piped into a registry login.

docs/capture.md: "Command lines", "Configuration commands and logins".
"""

from __future__ import annotations

import re
from typing import Final


# Every rule below opens with a literal and checks what stands before it after it: a pattern that opens
# with a look-behind or an alternation is tried at every position (7-70 ms/MiB where a literal first
# costs 0.3-0.7, one pass each).
#
# A tool's own "set NAME VALUE" (git config github.token X, npm config set //host/:_authToken X, aws
# configure set aws_secret_access_key X): the value, when NAME names a credential; and poetry's
# "config pypi-token.REPO TOKEN" / "config http-basic.REPO USER PASSWORD", whose names say nothing.
_SETTING_OPTIONS = (  # --global, --file=F, and the options that take a value as the next word (-f F)
    r"(?:[ \t]+(?:(?:-f|--file|--blob)[ \t]+[^\s\x00]{1,400}+|--?[A-Za-z][\w-]{0,40}+(?:=[^\s\x00]{0,400}+)?))*+[ \t]+"
)
_CONFIG_SETS: Final = tuple(
    re.compile(rf"{tool}(?<![\w./-]{tool})[ \t]+{verb}{_SETTING_OPTIONS}([^\s\x00\"'=]{{1,200}}+)[ \t]+(?=[^\s-])")
    for tool, verb in (("git", "config"), ("npm", r"config[ \t]+set"), ("yarn", r"config[ \t]+set"),
                       ("pnpm", r"config[ \t]+set"), ("pip", r"config[ \t]+set"), ("aws", r"configure[ \t]+set"),
                       ("conda", r"config[ \t]+--set"))
)
_POETRY_CONFIG = re.compile(
    rf"poetry(?<![\w./-]poetry)[ \t]+config{_SETTING_OPTIONS}"
    r"(?:pypi-token\.[\w-]{1,100}+|http-basic\.[\w-]{1,100}+[ \t]+[^\s\x00]{1,200}+)[ \t]+(?=[^\s-])"
)
# Oracle's USER/PASSWORD@DATABASE, the part after the slash (in double quotes, as Oracle wants a password
# with special characters, or bare). After sqlplus (its flags, -s, -L, before it) and userid=, with or
# without "@DATABASE"; after sqlldr, expdp, impdp, DGMGRL, rman's target and CONNECT at a line's start in a
# script, only with it, and only searched for in a text that holds a "/PASSWORD@" at all (one pass).
_SLASH_PASSWORD = r"/(?:\"([^\"\x00\n]{1,256}+)\"|([^\s@/\"'\x00;]{1,256}+))"
_USER_SLASH = r"[\"']?[A-Za-z0-9_$#.]{1,128}+" + _SLASH_PASSWORD
_PASSWORD_AT = re.compile(_SLASH_PASSWORD + "@")
_TOOL_FLAGS = r"(?:[ \t]+-[A-Za-z]{1,20}+)*+[ \t]+"
_ORACLE_LOGINS: Final = (
    ("sqlplus", re.compile(rf"sqlplus(?<![\w./-]sqlplus){_TOOL_FLAGS}{_USER_SLASH}")),
    *((name, re.compile(rf"{name}(?<![\w-]{name})={_USER_SLASH}")) for name in ("userid", "USERID")),
)
"""Each login's literal (asked with ``in`` first: 0.8 ms/MiB of prose where the regex engine's search read 1.2-1.3,
stopping at each ``s`` or ``u``) and its pattern."""
_ORACLE_REMOTE_LOGINS: Final = (
    *(re.compile(rf"{tool}(?<![\w./-]{tool}){_TOOL_FLAGS}{_USER_SLASH}(?=@)")
      for tool in ("sqlldr", "expdp", "impdp", "dgmgrl")),
    re.compile(rf"rman(?<![\w./-]rman)[ \t]+target[ \t]+{_USER_SLASH}(?=@)"),
)
_ORACLE_CONNECTS: Final = tuple(re.compile(rf"{word}(?:ECT|ect)?[ \t]+{_USER_SLASH}(?=@)") for word in ("CONN", "conn"))

# curl's -H / --header with a credential header (-H 'X-Api-Key: k'): the header's value, to its quote.
_HEADER_FLAG = re.compile(
    r"""-(?:H|-header)[ \t]*=?[ \t]*(?:"([A-Za-z0-9_-]{1,96}+)[ \t]*:[ \t]*([^"\r\n\x00]+)"|"""
    r"""'([A-Za-z0-9_-]{1,96}+)[ \t]*:[ \t]*([^'\r\n\x00]+)'|([A-Za-z0-9_-]{1,96}+):[ \t]*([^\s"'\x00]+))"""
)


# A word echoed or printed into a command through a pipe, quoted or bare (``echo 'x' | sudo /usr/sbin/CMD``): the
# head and the pipe up to the command's name (sudo and a path allowed), shared by the rules whose command reads a
# secret from its standard input.
_ECHOED_WORD = r"""(?:"([^"\r\n\x00]*+)"|'([^'\r\n\x00]*+)'|([^\s|;&"'\x00]++))"""
_ECHO = r"(?:echo|printf)(?:[ \t]+-[A-Za-z]{1,3}+)*+"
_PRINTF_FORMAT = r"(?:[ \t]+(?:'%s(?:\\n)?'|\"%s(?:\\n)?\"|%s))?"
_PIPED_INTO = r"[ \t]*+\|[ \t]*+(?:sudo(?:[ \t]+-[A-Za-z]{1,3}+)*+[ \t]+)?(?:[^\s|;&'\"]*/)?"
# chpasswd's input, USER:PASSWORD a line: a word piped into it, or its here-string. Within the word, each pair's
# password: to the line's end, a written "\n" (printf's) or the word's end.
_CHPASSWD_INPUTS: Final = (
    re.compile(_ECHO + r"[ \t]+" + _ECHOED_WORD + _PIPED_INTO + r"chpasswd(?![\w.-])"),
    re.compile(r"chpasswd(?<![\w.-]chpasswd)(?:[ \t]+-[A-Za-z-]{1,20}+)*+[ \t]*+<<<[ \t]*+" + _ECHOED_WORD),
)
_CHPASSWD_PAIR = re.compile(r"[^:\\]*+:((?:[^\\]|\\(?!n))++)")
# A registry login reading its password from standard input, the word piped into it (printf's '%s' format
# before it allowed): the same shell command (no other pipe or operator between), the flag within 200
# characters of the command.
_STDIN_LOGIN = re.compile(
    _ECHO + _PRINTF_FORMAT + r"[ \t]+" + _ECHOED_WORD + _PIPED_INTO
    + r"(?:docker|podman|nerdctl|buildah|skopeo|oras|crane|regctl|helm[ \t]+registry)[ \t]+login(?![\w-])"
    r"[^|;&\r\n\x00]{0,200}?--password-stdin"
)
