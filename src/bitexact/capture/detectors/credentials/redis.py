"""Redis's and Sentinel's configuration: redis.conf, sentinel.conf, ACL files and redis-cli's prompt.

The password names in every case, sentinel's lines, ``CONFIG SET``, ACL rules and the prompt read back from its
``> ``. docs/capture.md: "Redis's and Sentinel's configuration".
"""

from __future__ import annotations

import itertools
import re
from typing import Final

from bitexact.capture.detectors.base import Finding, ascii_lower
from bitexact.capture.detectors.credentials.labels import _NOT_PASSWORDS
from bitexact.capture.detectors.credentials.lines import (
    _NOTE_MARKS,
    _ends_line,
    _first_word,
    _opens_a_line,
    _opens_span,
    _past_blanks,
    _span_close,
    _span_value,
)
from bitexact.capture.detectors.credentials.names import ALREADY_TOKENS, NAME, TOKEN, _unless_reference


# Redis's password words (rules version 8), then the value: quoted or one bare word. Not ``AUTH [USER] X``: its
# literal alone cost 0.6 ms/MiB of every text, every line of ``AUTH a`` was a match to judge (1.4 s/MiB), and SMTP
# logs write ``AUTH`` as often (docs/capture.md).
_REDIS_PASSWORD = re.compile(
    r"""(requirepass|masterauth)[ \t]++"""
    r"""(?:"((?:[^"\\\r\n\x00]|\\.)*+)"|'([^'\r\n\x00]*+)'|([^\s"'\x00]++))""")
_MAX_REDIS_HEAD: Final[int] = 128
# Rules version 13: the other passwords redis.conf and sentinel.conf set (redis 7.0's files, config.c and sentinel.c):
# ``tls-key-file-pass X`` / ``tls-client-key-file-pass X`` (the TLS private keys' passphrases), sentinel.conf's
# ``sentinel auth-pass MASTER X`` (the monitored master's password) and ``sentinel sentinel-pass X`` (the other
# sentinels'). Each found from its ``-pass`` and a blank (a literal the regex engine skips to: ``--password`` fails at
# its ``w``), its name read back before it. ``masteruser`` and ``sentinel auth-user`` / ``sentinel-user`` are users.
_REDIS_PASS = re.compile(r"-pass[ \t]++")
# Rules version 14: redis reads its configuration's names in any case (config.c and sentinel.c compare them with
# strcasecmp; redis-server and redis-sentinel 7.0.15 load ``REQUIREPASS x``, ``SENTINEL AUTH-PASS m x`` and ``Sentinel
# Sentinel-Pass x``): the names written in upper case and capitalized too, the names then compared in ASCII lower case.
# Each search opens with a literal the regex engine skips to (0.34-0.36 ms/MiB of capture_scan's mixed text; `in` of
# ``-PASS`` and ``-Pass`` cost 0.52 and 0.75, an alternation of ``REQUIREPASS|MASTERAUTH`` 6.4); the capitalized
# ``Requirepass`` / ``Masterauth`` asked only of a text that holds ``equirepass`` / ``asterauth`` (the gates of the
# lower case, the same cost as before).
_REDIS_PASS_CASED = re.compile(r"-P(?:ASS|ass)[ \t]++")
_REDIS_VALUE_WORD = r"""[ \t]++(?:"((?:[^"\\\r\n\x00]|\\.)*+)"|'([^'\r\n\x00]*+)'|([^\s"'\x00]++))"""
_REDIS_PASSWORD_UPPER_NAMES: Final[tuple[str, ...]] = ("REQUIREPASS", "MASTERAUTH")
_REDIS_PASSWORD_UPPER = tuple(re.compile(f"({name})" + _REDIS_VALUE_WORD) for name in _REDIS_PASSWORD_UPPER_NAMES)
_REDIS_PASSWORD_CAPITALIZED = re.compile("(Requirepass|Masterauth)" + _REDIS_VALUE_WORD)
_REDIS_PASS_NAMES: Final[tuple[str, ...]] = ("tls-key-file", "tls-client-key-file")
"""The redis.conf names before ``-pass`` (a ``CONFIG SET`` sets them too)."""
_SENTINEL: Final[str] = "sentinel"
_REDIS_PASS_LAST: Final[str] = "eElLhH"
"""The last letters of the names before ``-pass`` (``...file``, ``sentinel``, ``auth``), in either case."""
_SENTINEL_AUTH: Final[str] = "auth"
_REDIS_VALUE = re.compile(r"""(?:"((?:[^"\\\r\n\x00]|\\.)*+)"|'([^'\r\n\x00]*+)'|([^\s"'\x00]++))""")
"""A configuration value as redis reads a word (sdssplitargs): double-quoted with escapes, single-quoted, or bare
(its content: group 1, 2 or 3), as :data:`_REDIS_PASSWORD`'s."""
_SENTINEL_MASTER = re.compile(r"""(?:"(?:[^"\\\r\n\x00]|\\.)*+"|'[^'\r\n\x00]*+'|[^\s"'\x00]++)[ \t]++""")
"""``sentinel auth-pass``'s master name and the blank after it."""
_SENTINEL_WORD = r"""(?:"(?:[^"\\\r\n\x00]|\\.)*+"|'[^'\r\n\x00]*+'|[^\s"'\x00]++)"""
_SENTINEL_SET = re.compile(
    rf"""(?:SENTINEL|sentinel)[ \t]++(?:(?:SET|set)[ \t]++{_SENTINEL_WORD}"""
    rf"""(?:[ \t]++[A-Za-z][A-Za-z-]*+[ \t]++{_SENTINEL_WORD})*+[ \t]++(?:auth|AUTH)"""
    r"""|(?:CONFIG|config)[ \t]++(?:SET|set)[ \t]++(?:sentinel|SENTINEL))\Z""")
"""The same passwords set by a command (redis-cli's prompt or line): ``SENTINEL SET MASTER auth-pass X``, ``SENTINEL
CONFIG SET sentinel-pass X`` (redis-sentinel 7.0.15 answers OK to both), read back from the ``-pass`` within
:data:`_MAX_REDIS_SET`. Rules version 14: other options set before it on the same line, ``SENTINEL SET mymaster quorum
2 auth-pass X`` (SENTINEL SET takes option-value pairs; 7.0.15 sets each), and the option's name in upper case."""
_MAX_REDIS_SET: Final[int] = 256
_SENTINEL_REST = re.compile(r"(?:[^\r\n\x00\\]|\\(?!n))++")
"""A sentinel.conf value: the rest of its line. Sentinel's CONFIG REWRITE writes a password as it is (7.0.15:
``sentinel auth-pass mymaster my s3cret pw``, ``sentinel sentinel-pass Sent1nel"pw``), unquoted."""
_SENTINEL_NOTE = re.compile("[ \t]++(?:#|--|\u2014|\u2013)(?=[ \t])")
"""Rules version 14: a note after sentinel.conf's value on its line (``sentinel auth-pass m pw # the master's``, ``pw
-- its password``, an em or en dash): a blank, the mark and a blank end the value (sentinel refuses such a line, so it
is a document's or a person's, and CONFIG REWRITE writes none after a value)."""
# Rules version 10: ``AUTH [USER] PASSWORD`` typed at redis-cli's prompt (``127.0.0.1:6379> AUTH x``,
# ``redis.local:6379[2]> auth default x``): found from the prompt's ``> `` (a literal the regex engine skips to; a
# text holding no ``>`` is never searched), the prompt read back on its own line (a host or an address, a port, a
# database's number), then one or two words and the line's end. ``AUTH`` anywhere else (an SMTP log's ``AUTH
# PLAIN``, prose) is left.
_REDIS_AUTH = re.compile(r"> (?:AUTH|auth)[ \t]++")
_SPAN_AUTH = re.compile(r"`AUTH[ \t]++")
"""Rules version 17 (leaks32): ``AUTH`` opening a markdown code span (``Use `AUTH x` at the prompt``): its backtick
a literal the regex engine skips to, asked only of a text holding one. In upper case only, as redis's documents
write it: a span's lower-case ``auth`` is as often prose (``the `auth token` header``) or a PAM line (``auth
required pam_unix.so``)."""
_SASL_MECHANISMS: Final[frozenset[str]] = frozenset({
    "PLAIN", "LOGIN", "CRAM-MD5", "DIGEST-MD5", "SCRAM-SHA-1", "SCRAM-SHA-256", "XOAUTH2", "OAUTHBEARER", "GSSAPI",
    "NTLM", "EXTERNAL", "ANONYMOUS"})
"""SMTP's ``AUTH`` mechanisms (RFC 4954, IANA's SASL names): ``AUTH PLAIN`` in a code span names one, no password."""
# Rules version 11: the prompts redis-cli prints otherwise (redis-cli.c, cliRefreshPrompt and repl): ``redis
# SOCKET> `` on a unix socket (``-s /var/run/redis.sock``), ``not connected> `` before it reaches a server, and a
# transaction's ``(TX)`` after the database's number.
_REDIS_PROMPT = re.compile(
    r"(?:[A-Za-z0-9_.\-]{1,253}+|\[[0-9A-Fa-f:.]{2,45}+\]):[0-9]{1,5}+(?:\[[0-9]{1,2}+\])?+(?:\(TX\))?+\Z")
_REDIS_SOCKET_PROMPT = re.compile(r"/[A-Za-z0-9_.\-/]{0,252}+(?:\[[0-9]{1,2}+\])?+(?:\(TX\))?+\Z")
_REDIS_SOCKET_HEAD: Final[str] = "redis "
_REDIS_NOT_CONNECTED: Final[str] = "not connected"
_REDIS_PROMPT_CHARS: Final[frozenset[str]] = frozenset(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-:[]/()")
_REDIS_WORD = r"""(?:"((?:[^"\\\r\n\x00]|\\.)*+)"|'([^'\r\n\x00]*+)'|((?:[^\s"'\\\x00]|\\(?!n))++))"""
_REDIS_AUTH_ARGS = re.compile(rf"""{_REDIS_WORD}(?:[ \t]++{_REDIS_WORD})?+[ \t]*+(?=\r?\n|\x00|\\n|\Z)""")
"""One or two words (a bare one, or quoted as redis-cli reads one) and the line's end: the last is the password."""
_CONFIG_SET = re.compile(r"(?:config|CONFIG)[ \t]++(?:set|SET)[ \t]++\Z")
# Rules version 13: what redis-cli prints at its prompt (checked against redis-cli 7.0.15 on a terminal): the reply
# to ``CONFIG GET`` and ``HGETALL`` (name, value, name, value... numbered ``1) "requirepass"`` / ``2) "x"``) and to
# ``ACL GETUSER`` (its ``passwords`` item's nested array of SHA-256 hashes, ``4) 1) "bbae..."`` then ``   2) "..."``);
# the rules ``ACL LIST`` prints (``1) "user alice on #HASH ~* +@all"``) and ``ACL SETUSER`` takes (``>PASSWORD``,
# ``<PASSWORD``, ``#HASH``, ``!HASH``); ``HSET`` / ``HMSET``'s field values and the reply to ``HGET`` of a field so
# named. Each command found from the prompt's ``> `` (a literal the regex engine
# skips to, in a text holding ``>``), the prompt read back as for ``AUTH``.
_REDIS_COMMAND = re.compile(
    r"> (?:(?:CONFIG|config)[ \t]++(?:GET|get)|HGETALL|hgetall|(?:ACL|acl)[ \t]++(GETUSER|getuser|LIST|list)"
    r"|(?:ACL|acl)[ \t]++(?:SETUSER|setuser)([^\r\n\x00]*+)|(?:HM?SET|hm?set|HGET|hget)([ \t][^\r\n\x00]*+)"
    r"|(?:CONFIG|config)[ \t]++(?:SET|set)([ \t][^\r\n\x00]*+))"
    r"(?=[ \t]|\r?\n|\x00|\Z)")
_CONFIG_SET_WORDS = re.compile(r"(?:CONFIG|config)[ \t]++(?:SET|set)(?=[ \t])")
"""Rules version 15: ``CONFIG SET`` (group 4 of :data:`_REDIS_COMMAND` at the prompt; on redis-cli's line this)
before its name-value pairs (:func:`_config_set_pairs`)."""
_REDIS_ARG = re.compile(rf"[ \t]++{_REDIS_WORD}")
"""A word of a command typed at redis-cli's prompt, bare or quoted (its content: group 1, 2 or 3)."""
_REDIS_ITEM = re.compile(
    r"""([ \t]*+[0-9]{1,9}+\) )(?:[0-9]{1,9}+\) )*+"""
    r"""(?:"((?:[^"\\\r\n\x00]|\\.)*+)"|\([a-z ]{1,16}+\)[^\r\n\x00]*+)[ \t]*+\r?(?=\n|\x00|\Z)""")
"""One line of redis-cli's reply: its item's number (group 1, with the blanks that right-align it), a nested array's
numbers after it, and a quoted string (its content, group 2) or a word in brackets (``(integer) 3``, ``(nil)``,
``(empty array)``)."""
_REDIS_HASHES: Final[str] = "passwords"
"""The item of ``ACL GETUSER``'s reply before the user's password hashes."""
_ACL_SECRET = re.compile(
    r"""(?:(?<=[ \t])[<>]([^\s"'\x00]++)|(?<=["'])[<>]([^"'\r\n\x00]++)|(?<=[ \t"'])[#!]([0-9a-fA-F]{64}+))"""
    r"""(?=[\s"'\x00]|\Z)""")
"""A Redis ACL rule's password: ``>PASSWORD`` / ``<PASSWORD`` (added, removed; quoted as redis-cli reads a word,
``">my pass"``, to its closing quote) or its SHA-256 hash ``#HASH`` / ``!HASH``: the part after the mark."""
# Rules version 13: a Redis ACL file's line (``users.acl``, or ``redis.conf``'s own ``user`` lines; ``ACL LIST`` prints
# the same to a pipe): ``user NAME RULE...``, opening its line, every word after the name an ACL rule (redis acl.c,
# ACLSetUser's grammar). A line holding any other word (``user alice on the team``) is prose and left. Found from the
# newline before it (a search for the literal ``user`` cost 1.2 ms/MiB of agent text, one for ``\n`` 0.4), the text's
# start and a NUL each on their own, as :data:`_HEADER_NL` is; each line start is read once.
_ACL_RULE = (
    r"""(?>(?:on|off|nopass|resetpass|reset|allkeys|allchannels|allcommands|nocommands|resetkeys|resetchannels"""
    r"""|(?:skip-)?sanitize-payload|%R?W?~[^\s\x00]*+|[~&][^\s\x00]*+|[+\-][^\s\x00]++|[<>][^\s"'\x00]++"""
    r"""|"[<>](?:[^"\\\r\n\x00]|\\.)*+"|'[<>][^'\r\n\x00]*+'|[#!][0-9a-fA-F]{64}+|\([^()\r\n\x00]*+\))"""
    r"""(?=[ \t\r\n\x00]|\Z))""")
# Rules version 15: the same search finds redis.conf's and sentinel.conf's password names opening their line in a
# mixed case (``rEquirepass X``, ``MasterAuth X``, ``Tls-Key-File-PaSS X``, ``Sentinel AUTH-pAss m X``: redis compares
# them with strcasecmp, 7.0.15 loads each), as a second branch that opens with one character's test (the branch is
# passed over at a newline whose line opens with no such letter); read then as the lower case is
# (:meth:`CredentialsDetector._redis_passwords`, :meth:`CredentialsDetector._redis_dash_passwords`). Lower, upper
# and capitalized names are the other passes'.
_REDIS_MIXED_NAME = (
    r"[RrMmTtSs](?i:(?<=r)equirepass|(?<=m)asterauth|(?<=t)ls-(?:client-)?key-file-pass"
    r"|(?<=s)entinel[ \t]++(?:auth|sentinel)-pass)(?=[ \t])")

_ACL_FILE_REST = (  # rules version 17: after a markdown note's marks too (_first_word)
    rf"{_NOTE_MARKS}(?:user[ \t]++[^\s\x00]++((?:[ \t]++{_ACL_RULE})++)[ \t]*+(?=\r?\n|\x00|\Z)|{_REDIS_MIXED_NAME})")
_ACL_FILE_LINES = (re.compile(_ACL_FILE_REST), re.compile("\n" + _ACL_FILE_REST), re.compile("\x00" + _ACL_FILE_REST))
"""A Redis ACL file's line at the text's start (matched there), after a newline, after a NUL (each searched); or
(rules version 15, group 1 None) a configuration's password name in a mixed case opening its line."""
_SPAN_ACL_USER = re.compile(r"`user[ \t]")
_ACL_SPAN_LINE = re.compile(rf"user[ \t]++[^\s\x00`]++((?:[ \t]++{_ACL_RULE})++)[ \t]*+\Z")
"""Rules version 17 (leaks32): a Redis ACL file's line as a markdown code span's only words (``Add `user alice on
>x ~* +@all` to users.acl``), matched from :data:`_SPAN_ACL_USER`'s backtick to the span's closing one (its end)."""
_REDIS_PASSWORD_ANY_CASE = re.compile("((?i:requirepass|masterauth))" + _REDIS_VALUE_WORD)
_REDIS_PASS_ANY_CASE = re.compile(r"-(?i:pass)[ \t]++")
_READ_CASES: Final[tuple[str, ...]] = ("pass", "PASS", "Pass")
"""How the other passes spell a ``-pass`` name's last word (:data:`_REDIS_PASS`, :data:`_REDIS_PASS_CASED`)."""
_REDIS_CONFIG_PASSWORDS: Final[frozenset[str]] = frozenset(
    {"requirepass", "masterauth", "tls-key-file-pass", "tls-client-key-file-pass"})
"""redis.conf's password names, as ``CONFIG SET`` takes them (in any case)."""


def _after_redis_prompt(text: str, end: int) -> bool:
    """Whether redis-cli's prompt (:func:`_redis_prompt`) opens the line up to ``end`` (a command's ``> ``), read
    back over :data:`_REDIS_PROMPT_CHARS` at most :data:`_MAX_REDIS_HEAD` characters."""
    at, floor = end, max(0, end - _MAX_REDIS_HEAD)
    while at > floor and text[at - 1] in _REDIS_PROMPT_CHARS:
        at -= 1
    return _redis_prompt(text, at, end)


def _redis_pass_name(text: str, at: int) -> tuple[int, bool, bool] | None:
    """The configuration name ending at ``at`` (its ``-pass`` follows): where it starts, whether it is sentinel.conf's
    (``sentinel sentinel`` / ``sentinel auth``, the blanks between read back once) and whether it is ``auth-pass`` (a
    master's name before the value); None for any other name (``--pass``, ``x-pass``). Rules version 14: the names
    in any ASCII case, as redis reads them (``TLS-KEY-FILE-PASS``, ``SENTINEL AUTH-PASS``)."""
    if at == 0 or text[at - 1] not in _REDIS_PASS_LAST:  # one character's test before any slice
        return None
    for name in _REDIS_PASS_NAMES:
        if _ends_with_name(text, at, name):
            return at - len(name), False, False
    for name in (_SENTINEL, _SENTINEL_AUTH):
        if _ends_with_name(text, at, name):
            word = blank = at - len(name)
            while blank > 0 and text[blank - 1] in " \t":
                blank -= 1
            if blank < word and _ends_with_name(text, blank, _SENTINEL):
                return blank - len(_SENTINEL), True, name == _SENTINEL_AUTH
    return None


def _sentinel_set(text: str, at: int) -> bool:
    """Whether a ``SENTINEL SET MASTER ... auth`` or ``SENTINEL CONFIG SET sentinel`` (:data:`_SENTINEL_SET`) ends at
    ``at`` (its ``-pass`` follows), within :data:`_MAX_REDIS_SET` characters back. Its last word is asked first (one
    slice), then each ``SENTINEL`` / ``sentinel`` before it found by ``rfind`` (a scan in C) and matched from there:
    a regex search of the window for every ``-pass`` cost 1.7 s/MiB of ``-pass -pass ...`` (0.86 with 128 back)."""
    if not (_ends_with_name(text, at, _SENTINEL_AUTH) or _ends_with_name(text, at, _SENTINEL)):
        return False
    floor = max(0, at - _MAX_REDIS_SET)
    for word in ("SENTINEL", "sentinel"):
        end = at
        while (start := text.rfind(word, floor, end)) != -1:
            if _SENTINEL_SET.match(text, start, at) is not None:
                return True
            end = start
    return False


def _ends_with_name(text: str, at: int, name: str) -> bool:
    """Whether ``text`` holds ``name`` (lower case) just before ``at``, in any ASCII case."""
    return at >= len(name) and ascii_lower(text[at - len(name) : at]) == name


def _redis_word(text: str, at: int) -> tuple[int, int] | None:
    """The span of the word at ``at`` as redis reads one (:data:`_REDIS_VALUE`'s content), or None."""
    value = _REDIS_VALUE.match(text, at)
    if value is None:
        return None
    group = next(g for g in (1, 2, 3) if value.group(g) is not None)
    return value.span(group)


def _redis_value(text: str, start: int, at: int) -> tuple[int, int] | None:
    """The span of redis.conf's value at ``at`` (:data:`_REDIS_VALUE`'s content) when its name at ``start`` opens
    its line and the value ends it, or a ``CONFIG SET`` precedes the name, or (rules version 17, leaks32) the name
    opens a markdown code span and the value ends it (:func:`_span_value`); else None."""
    value = _REDIS_VALUE.match(text, at)
    if value is None:
        return None
    group = next(g for g in (1, 2, 3) if value.group(g) is not None)
    head = text[max(0, start - _MAX_REDIS_HEAD) : start]
    if not ((_first_word(text, start) and _ends_line(text, value.end())) or _CONFIG_SET.search(head) is not None):
        return _span_value(text, start, value.span(group), value.end())
    return value.span(group)


def _redis_password(text: str, match: re.Match[str], found: list[Finding]) -> None:
    """The value of one ``requirepass X`` / ``masterauth X`` match (its name group 1, its value group 2, 3 or 4):
    taken when the name and value are their line's only words (not a heading's, :func:`_heading`) or a ``CONFIG
    SET`` stands before the name; rules version 17 (leaks32): or they are a markdown code span's only words
    (:func:`_span_value`: ``Set `requirepass x` in redis.conf``)."""
    group = next(g for g in (2, 3, 4) if match.group(g) is not None)
    span: tuple[int, int] | None = match.span(group)
    head = text[max(0, match.start() - _MAX_REDIS_HEAD) : match.start()]
    if _CONFIG_SET.search(head) is None and not (
            _first_word(text, match.start()) and _ends_line(text, match.end())):
        span = _span_value(text, match.start(), match.span(group), match.end())
    if span is None or _heading(text, match.start(1), match.end(1), span) or _prose_after_name(text, span):
        return
    if text[span[0] : span[1]] not in ALREADY_TOKENS and _unless_reference(text, span):
        found.append(Finding(span[0], span[1], TOKEN, NAME))


_PROSE_WORDS: Final[frozenset[str]] = frozenset({
    "with", "to", "and", "or", "the", "a", "an", "in", "on", "at", "for", "from", "by", "via", "as", "if", "then",
    "when", "but", "is", "was", "will", "can", "must", "should", "this", "that", "it"})
"""English words a sentence puts after a redis password's name (``run CONFIG SET requirepass with the new value``),
never a password a command gives there with more words after it (:func:`_prose_after_name`)."""


def _prose_after_name(text: str, span: tuple[int, int]) -> bool:
    """Rules version 16: whether the value ``span`` after redis's password name (``CONFIG SET requirepass VALUE``)
    is a sentence's word: bare, one of :data:`_PROSE_WORDS`, and another word after it on its line. A command's
    value is a word the user chose, and a command setting one pair ends after it (``CONFIG SET requirepass to``, a
    quoted ``"with"``, and ``CONFIG SET requirepass with 3`` are still taken; redis-cli's prompt and shell line are
    read as commands by :func:`_config_set_pairs` whatever they hold)."""
    if text[span[0] : span[1]] not in _PROSE_WORDS or text[span[0] - 1 : span[0]] in ("\"", "'"):
        return False
    at = _past_blanks(text, span[1])
    return span[1] < at < len(text) and ("a" <= text[at] <= "z" or "A" <= text[at] <= "Z")


def _redis_dash_password(text: str, match: re.Match[str], found: list[Finding]) -> None:
    """The value after one ``-pass`` match (:data:`_REDIS_PASS`): redis.conf's ``tls-key-file-pass X`` (its line's
    only words, or after ``CONFIG SET``), sentinel.conf's ``sentinel auth-pass MASTER X`` / ``sentinel sentinel-pass
    X`` (the rest of the line), or one word after ``SENTINEL SET MASTER auth-pass`` / ``SENTINEL CONFIG SET``."""
    named = _redis_pass_name(text, match.start())
    if named is None:
        span = _redis_word(text, match.end()) if _sentinel_set(text, match.start()) else None
    else:
        start, sentinel, auth = named
        close = len(text)  # the line's end bounds sentinel.conf's value; rules version 17: a code span's backtick
        if sentinel and not _first_word(text, start):  # the rest of the line read once per line
            close = _span_close(text, start) if _opens_span(text, start) else -1
            if close == -1:
                return
        at = match.end()
        if auth:
            master = _SENTINEL_MASTER.match(text, at, close)
            if master is None:
                return
            at = master.end()
        span = _sentinel_value(text, at, close) if sentinel else _redis_value(text, start, at)
        if span is not None and (_heading(text, start, match.end(), span) or _prose_after_name(text, span) or (
                sentinel and _hand_written_words(text, start, match.end(), span, close != len(text)))):
            return
    if span is not None and text[span[0] : span[1]] not in ALREADY_TOKENS and _unless_reference(text, span):
        found.append(Finding(span[0], span[1], TOKEN, NAME))


_LINE_OPENINGS: Final[frozenset[str]] = frozenset("u \tRrMmTtSs>-*+0123456789")
"""The characters a text may open with for :data:`_ACL_FILE_LINES`' first pattern to be matched at its start."""


def _mixed_case_password(text: str, end: int, found: list[Finding]) -> None:
    """Rules version 15: the value after a redis.conf or sentinel.conf password name ending at ``end`` and opening its
    line (:data:`_REDIS_MIXED_NAME`), read as in lower case (:func:`_redis_password`, :func:`_redis_dash_password`),
    unless the name is spelled as another pass reads it (lower, upper or capitalized; any ``-pass`` name whose last
    word is one of :data:`_READ_CASES`)."""
    if text[end - 5] == "-":  # tls-key-file-pass, sentinel auth-pass...
        dash = _REDIS_PASS_ANY_CASE.match(text, end - 5)
        if text[end - 4 : end] not in _READ_CASES and dash is not None:
            _redis_dash_password(text, dash, found)
        return
    start = end - (len("requirepass") if text[end - 1] in "sS" else len("masterauth"))
    name = text[start:end]
    if name.islower() or name.isupper() or name == name.capitalize():
        return
    match = _REDIS_PASSWORD_ANY_CASE.match(text, start)
    if match is not None:
        _redis_password(text, match, found)


_CONFIG_SET_NAME_PARTS: Final[tuple[str, ...]] = ("requirepass", "masterauth", "-pass")
_MAX_CONFIG_SET_WORDS: Final[int] = 64
"""The words of a ``CONFIG SET`` read for its pairs (32 pairs: redis.conf has about 200 parameters, a command sets a
few; a line of thousands of words each read cost 1.1 s/MiB, a pair after the 32nd is left)."""


def _config_set_pairs(text: str, at: int, end: int, found: list[Finding]) -> None:
    """Rules version 15: the values of ``CONFIG SET NAME VALUE [NAME VALUE ...]``'s words in ``text[at:end]`` whose
    name is redis.conf's password (:data:`_REDIS_CONFIG_PASSWORDS`) in any case (``CONFIG SET rEquirePass X``: redis
    7.0.15 sets it), each pair's among the first :data:`_MAX_CONFIG_SET_WORDS` words (version 14 read the first
    pair's name in lower, upper or capitalized case only)."""
    lower = ascii_lower(text[at:end])  # the words read only when a name may stand among them (a few finds in C)
    if not any(name in lower for name in _CONFIG_SET_NAME_PARTS):
        return
    words = itertools.islice(_REDIS_ARG.finditer(text, at, end), _MAX_CONFIG_SET_WORDS)
    spans = [next(word.span(g) for g in (1, 2, 3) if word.group(g) is not None) for word in words]
    for (name_start, name_end), value in zip(spans[0::2], spans[1::2]):
        if (ascii_lower(text[name_start:name_end]) in _REDIS_CONFIG_PASSWORDS
                and text[value[0] : value[1]] not in ("", *ALREADY_TOKENS) and _unless_reference(text, value)):
            found.append(Finding(value[0], value[1], TOKEN, NAME))


_HEADING_WORD = re.compile(r"[A-Z][a-z]++")
_STATES: Final[frozenset[str]] = _NOT_PASSWORDS | {"enabled", "disabled", "configured"}
# fp27: a field's type after the name in a declaration (a Go struct's ``RequirePass *string``, ``MasterAuth []byte``,
# ``MasterAuth corev1.SecretKeySelector``; Kotlin's or Swift's ``string?``, Python's ``Optional[str]``): a pointer's,
# slice's or array's marks, a package's exported type, a nullable's "?" or Optional[...] around a type's word.
_TYPE_MARKS = re.compile(r"(?:\*|\[[0-9]{0,6}+\])++")
_EXPORTED_TYPE = re.compile(r"[A-Z][A-Za-z]{0,63}+")
_QUALIFIED_TYPE = re.compile(r"[a-z][a-z0-9]{0,31}+\.[A-Z][A-Za-z0-9]{0,63}+")
_OPTIONAL_TYPE = re.compile(r"Optional\[([A-Za-z_][A-Za-z0-9_.]{0,63}+)\]")
_TYPE_WORDS: Final[frozenset[str]] = frozenset({
    "str", "string", "bytes", "bytearray", "secretstr", "secretbytes", "secretstring", "securestring", "any", "object",
    "text", "char", "int", "number", "bool", "boolean", "byte", "rune", "int32", "int64", "uint", "uint32", "uint64",
    "float64", "error",
})
"""The type words :func:`_declared_type` reads after a mark (the types of :data:`_NOT_PASSWORDS`, Go's own)."""


def _declared_type(word: str) -> bool:
    """fp27: whether ``word`` (a value after redis's password name, not in lower case, opening its line) is a field's
    type in code: a package's exported type (``corev1.SecretKeySelector``), or a type's word (:data:`_TYPE_WORDS`) or
    an exported type's name behind Go's pointer, slice or array marks (``*string``, ``[]byte``, ``*SecretRef``), or a
    type's word made nullable (``string?``, ``Optional[str]``); any of them, or a type's word alone, before a comma (a
    Go parameter's on its own line, ``requirePass string,``). A password opening with ``*`` or ``[]`` whose rest is
    no such word (``*hunter2``) is still taken."""
    if word.endswith(","):  # gofmt writes a parameter list's last parameter with a comma too
        word = word[:-1]
        if ascii_lower(word) in _TYPE_WORDS:
            return True
    if _QUALIFIED_TYPE.fullmatch(word) is not None:
        return True
    marks = _TYPE_MARKS.match(word)
    if marks is not None:
        core = word[marks.end():]
        return (ascii_lower(core) in _TYPE_WORDS or _EXPORTED_TYPE.fullmatch(core) is not None
                or _QUALIFIED_TYPE.fullmatch(core) is not None)
    optional = _OPTIONAL_TYPE.fullmatch(word)
    core = optional.group(1) if optional is not None else word[:-1] if word.endswith("?") else ""
    return ascii_lower(core) in _TYPE_WORDS or _QUALIFIED_TYPE.fullmatch(core) is not None


def _heading(text: str, start: int, end: int, span: tuple[int, int]) -> bool:
    """fp26: whether the configuration name ``text[start:end]``, opening its line and not in lower case, is a
    document's heading or checklist line, not one redis reads: its value ``span`` one bare capitalized word of letters
    (``Requirepass Basics``, ``Masterauth Setup``, ``TLS-KEY-FILE-PASS Explained``) or a word saying what the password
    is (:data:`_NOT_PASSWORDS`, ``enabled``, ``disabled``, ``configured``: ``REQUIREPASS yes``, ``Masterauth
    configured``). The names in any case are read since rules version 14; a password so written (``Requirepass
    Hunter``) is left with them, as at rules version 13. Lower case is read as before. fp27: or a field's declaration
    in code, its value a type (:func:`_declared_type`: a Go struct's ``RequirePass *string``)."""
    if text[start:end].islower() or text[span[0] - 1] in "\"'" or not (
            _first_word(text, start) or _opens_span(text, start)):  # v17: a code span's line too
        return False  # CONFIG SET REQUIREPASS Hunter is a command
    word = text[span[0] : span[1]]
    return _HEADING_WORD.fullmatch(word) is not None or ascii_lower(word) in _STATES or _declared_type(word)


def _hand_written_words(text: str, start: int, end: int, span: tuple[int, int], spanned: bool = False) -> bool:
    """fp26: whether sentinel.conf's name ``text[start:end]`` (``Sentinel auth-pass``) is not in lower case and its
    value ``span`` holds a blank: a sentence (``Sentinel auth-pass must match the master's requirepass.``), not a
    line redis reads. CONFIG REWRITE writes the names in lower case (its value unquoted, blanks and all); a line
    written by hand is read by words (sdssplitargs), and sentinel refuses one with more words than the value. Rules
    version 17 (leaks32): a line in a markdown code span (``spanned``) is written by hand whatever its case (``the
    `sentinel auth-pass must match the master's requirepass` line``)."""
    if (text[start:end].islower() and not spanned) or text[span[0] - 1] in "\"'":  # a quoted word: one word
        return False
    return " " in text[span[0] : span[1]] or "\t" in text[span[0] : span[1]]


def _sentinel_value(text: str, at: int, close: int) -> tuple[int, int] | None:
    """The span of sentinel.conf's value at ``at``: the rest of its line (:data:`_SENTINEL_REST`, blanks after it
    left; rules version 14: to a note after it, :data:`_SENTINEL_NOTE`), a quoted word's content when the quoted word
    is the whole of it (as redis reads a hand-written line). Read no further than ``close`` (rules version 17,
    leaks32: a markdown code span's closing backtick, :func:`_span_close`; else the text's length)."""
    rest = _SENTINEL_REST.match(text, at, close)
    if rest is None:
        return None
    end = rest.end()
    note = _SENTINEL_NOTE.search(text, at, end)
    if note is not None:
        end = note.start()
    while end > at and text[end - 1] in " \t":
        end -= 1
    if end == at:
        return None
    quoted = _REDIS_VALUE.match(text, at, end)
    if quoted is not None and quoted.end() == end and quoted.group(3) is None:
        group = 1 if quoted.group(1) is not None else 2
        return quoted.span(group)
    return at, end


def _redis_prompt(text: str, at: int, end: int) -> bool:
    """Whether ``text[at:end]`` (read back from a ``> AUTH`` over :data:`_REDIS_PROMPT_CHARS`) is redis-cli's
    prompt opening its line: ``HOST:PORT[DB]``, and under rules version 11 ``redis SOCKET[DB]`` (the words before
    ``at``) and ``not connected``. Rules version 16: or opening its line after a markdown blockquote's marks (a
    transcript quoted, ``> 127.0.0.1:6379> AUTH x``: :func:`_opens_a_line`)."""
    if _REDIS_PROMPT.match(text, at, end) is not None:
        return _opens_a_line(text, at)
    head = at - len(_REDIS_SOCKET_HEAD)
    if text.startswith(_REDIS_SOCKET_HEAD, head) and _REDIS_SOCKET_PROMPT.match(text, at, end) is not None:
        return _opens_a_line(text, head)
    head = end - len(_REDIS_NOT_CONNECTED)
    return head >= 0 and text.startswith(_REDIS_NOT_CONNECTED, head) and _opens_a_line(text, head)


def _acl_secrets(text: str, start: int, end: int, found: list[Finding]) -> None:
    """The passwords and hashes (:data:`_ACL_SECRET`) among the Redis ACL rules ``text[start:end]``."""
    for secret in _ACL_SECRET.finditer(text, start, end):
        group = next(group for group in (1, 2, 3) if secret.group(group) is not None)
        if secret.group(group) not in ALREADY_TOKENS:
            found.append(Finding(secret.start(group), secret.end(group), TOKEN, NAME))
