"""redis-cli's commands and replies: ``CONFIG GET``, ``HGETALL``, ``ACL GETUSER``, RESP3 maps, bare replies.

docs/capture.md: "Database clients' output", "redis-cli".
"""

from __future__ import annotations

import re
from typing import Final

from bitexact.capture.budget import Deadline
from bitexact.capture.detectors.base import Finding, ascii_lower
from bitexact.capture.detectors.credentials.lines import _line_end, _past_quote_marks, _quote_opening
from bitexact.capture.detectors.credentials.names import ALREADY_TOKENS, NAME, TOKEN, is_credential_name
from bitexact.capture.detectors.credentials.redis import (
    _REDIS_ARG,
    _REDIS_CONFIG_PASSWORDS,
    _REDIS_HASHES,
    _REDIS_ITEM,
    _acl_secrets,
    _after_redis_prompt,
)
from bitexact.capture.detectors.credentials.xml import _past_space


def _redis_fields(text: str, command: re.Match[str], end: int, found: list[Finding]) -> None:
    """``HSET KEY FIELD VALUE...`` / ``HMSET`` typed at redis-cli's prompt (``command``, :data:`_REDIS_COMMAND`, its
    line ending at ``end``): the value of each field named as a credential (:func:`is_credential_name`); ``HGET KEY
    FIELD`` of such a field: its reply on the next line, a quoted string (``"hunter2"``)."""
    words = list(_REDIS_ARG.finditer(text, command.start(3), command.end(3)))
    spans = [next(word.span(g) for g in (1, 2, 3) if word.group(g) is not None) for word in words]
    if ascii_lower(text[command.start() + 2 : command.start() + 6]) == "hget":
        if len(spans) == 2 and is_credential_name(text[spans[1][0] : spans[1][1]]) and end < len(text):
            reply = _REDIS_ITEM_VALUE.match(text, _past_quote_marks(text, end + 1, len(text)))  # v16: "> " too
            if reply is not None and reply.group(1) and reply.group(1) not in ALREADY_TOKENS:
                found.append(Finding(reply.start(1), reply.end(1), TOKEN, NAME))
        return
    for (name_start, name_end), value in zip(spans[1::2], spans[2::2]):
        if is_credential_name(text[name_start:name_end]) and text[value[0] : value[1]] not in ("", *ALREADY_TOKENS):
            found.append(Finding(value[0], value[1], TOKEN, NAME))


# Rules version 13 also: the same commands given to redis-cli on a shell's line (``redis-cli -a X CONFIG GET
# requirepass``), its reply printed below it: to a pipe (an agent's tool) redis-cli prints each string on a line of its
# own, bare (``requirepass`` then the value), and with ``--no-raw`` as at its prompt. The line is found by a search
# from the ``-`` of ``redis-cli`` (``-(?<=s-)cli``: 0.37-0.48 ms/MiB on agent text; ``redis-cli`` as a literal cost
# 1.3, ``str.find`` 0.6), the command's word opening its line or following a prompt, ``sudo``, ``|``, ``&&`` or ``;``.
_REDIS_CLI = re.compile(r"-(?<=s-)cli")
_REDIS_CLI_VALUED: Final[frozenset[str]] = frozenset({
    "-h", "-p", "-s", "-a", "-u", "-n", "-r", "-i", "-d", "-D", "-t", "--user", "--pass", "--cacert", "--cacertdir",
    "--cert", "--key", "--tls-ciphers", "--tls-ciphersuites", "--sni", "--eval", "--pattern", "--count"})
"""redis-cli's options that take the next word as their value (a host, a port, a password...): not a command."""
_REDIS_CLI_COMMANDS: Final[frozenset[str]] = frozenset({"config", "hgetall", "hget", "acl"})
_MAX_REDIS_LINE: Final[int] = 4096
_HEX_HASH = re.compile(r"[0-9a-f]{64}+\r?+\Z")


_RESP3_RAW_HASHES: Final[str] = "passwords "
"""``ACL GETUSER``'s map under RESP3 printed to a pipe: ``passwords HASH``, then each other hash on a line of its own."""
# Rules version 14: ``ACL GETUSER``'s map under RESP3 at the prompt or with ``--no-raw`` (redis-cli 7.0.15): ``2#
# "passwords" => 1) "HASH"`` for one password, ``2# "passwords" => `` then ``   1) "HASH"`` a line each for more.
_RESP3_HASHES = re.compile(r'# "passwords" => ')
_RESP3_HASH_ITEM = re.compile(r'[ \t]*+[0-9]{1,9}+\) "([0-9a-f]{64}+)"[ \t]*+\r?+(?=\n|\x00|\Z)')


def _resp3_hashes(text: str, deadline: Deadline, found: list[Finding]) -> None:
    """The password hashes of ``ACL GETUSER``'s RESP3 map (:data:`_RESP3_HASHES`): the item on its line, or the
    items on the lines below it (:data:`_RESP3_HASH_ITEM`), to the first line that is none."""
    for match in _RESP3_HASHES.finditer(text):
        deadline.check()
        at = match.end()
        if text.startswith("\n", at) or text.startswith("\r\n", at):
            at = text.index("\n", at) + 1
        while (item := _RESP3_HASH_ITEM.match(text, at)) is not None:
            found.append(Finding(item.start(1), item.end(1), TOKEN, NAME))
            at = item.end()
            if text.startswith("\r", at):
                at += 1
            if not text.startswith("\n", at):
                break
            at += 1


_REDIS_ITEM_VALUE = re.compile(r"""[ \t]*+"((?:[^"\\\r\n\x00]|\\.)*+)"[ \t]*+\r?(?=\n|\x00|\Z)""")
"""redis-cli's reply that is one string, quoted (its content: group 1)."""


def _redis_cli_command(line: str) -> tuple[list[str], bool] | None:
    """The command a shell ``line`` gives redis-cli (its words, from the first past redis-cli's options, in lower case:
    ``["config", "get", "requirepass"]``) when it is one whose reply :func:`_redis_raw_reply` reads, and whether
    redis-cli speaks RESP3 (``-3``, rules version 14: a map's reply printed a pair a line); None for any other line
    (prose, another command, redis-cli opening its prompt)."""
    words = line.split()
    for index, word in enumerate(words):
        if word.rsplit("/", 1)[-1] != "redis-cli":
            continue
        before = words[index - 1] if index else ""
        if before and before[-1] not in "$#>%" and before not in ("sudo", "|", "&&", ";"):
            return None
        at = index + 1
        resp3 = False
        while at < len(words) and words[at][:1] == "-":
            resp3 = resp3 or words[at] == "-3"
            at += 2 if words[at] in _REDIS_CLI_VALUED else 1
        command = [ascii_lower(word.strip("'\"")) for word in words[at:]]
        return (command, resp3) if command and command[0] in _REDIS_CLI_COMMANDS else None
    return None


def _redis_raw_reply(
    text: str, at: int, command: list[str], resp3: bool, found: list[Finding], deadline: Deadline, quoted: bool = False
) -> int:
    """The reply redis-cli printed from ``at`` to a pipe for ``command`` (:func:`_redis_cli_command`), a string a line:
    ``CONFIG GET`` and ``HGETALL`` name, value, name, value... (the value after a credential name taken, to the first
    name line that is empty or holds a blank), ``HGET KEY FIELD`` of such a field its one line, ``ACL GETUSER`` the
    64-hex-digit lines after ``passwords``, ``ACL LIST`` the rules' passwords and hashes (:func:`_acl_secrets`) of its
    ``user ...`` lines. With ``resp3`` (``redis-cli -3``, rules version 14), ``CONFIG GET``'s and ``HGETALL``'s map
    printed a pair a line, ``NAME VALUE`` (redis-cli 7.0.15: the name, a blank, the value to the line's end), to the
    first line with no blank, and ``ACL GETUSER``'s ``passwords HASH`` line, its other hashes a line each below it.
    Returns where what was read ends. ``quoted`` (rules version 16): the shell's line opened a markdown blockquote,
    and each line of the reply is read after its quote's marks (:func:`_past_quote_marks`)."""
    verb = command[0] if command[0] in ("hgetall", "hget") else " ".join(command[:2])
    lines = 0
    taking = False
    while at < len(text) and text[at] != "\x00":
        deadline.check()
        end = text.find("\n", at, at + _MAX_REDIS_LINE)
        if end == -1:
            end = len(text) if len(text) - at <= _MAX_REDIS_LINE else at
            if end == at:
                return at
        head = _past_quote_marks(text, at, end) if quoted else at  # where the line's own text opens
        line = text[head:end].rstrip("\r")
        if "\x00" in line:
            return at
        lines += 1
        if resp3 and verb in ("config get", "hgetall"):
            blank = line.find(" ")
            if blank <= 0:
                return at
            value = line[blank + 1 :]
            if is_credential_name(line[:blank]) and value and value not in ALREADY_TOKENS:
                found.append(Finding(head + blank + 1, head + len(line), TOKEN, NAME))
        elif verb in ("config get", "hgetall"):
            if lines % 2 == 1:
                if not line or " " in line or "\t" in line:
                    return at
                taking = is_credential_name(line)
            elif taking and line not in ALREADY_TOKENS and line:
                found.append(Finding(head, head + len(line), TOKEN, NAME))
        elif verb == "hget":
            if len(command) == 3 and is_credential_name(command[2]) and line and line not in ALREADY_TOKENS:
                found.append(Finding(head, head + len(line), TOKEN, NAME))
            return end
        elif verb == "acl getuser" and resp3 and line.startswith(_RESP3_RAW_HASHES):  # rules version 14
            taking = _HEX_HASH.match(line, len(_RESP3_RAW_HASHES)) is not None
            if taking:
                found.append(Finding(head + len(_RESP3_RAW_HASHES), head + len(_RESP3_RAW_HASHES) + 64, TOKEN, NAME))
        elif verb == "acl getuser":
            if taking and _HEX_HASH.match(line) is not None:
                found.append(Finding(head, head + 64, TOKEN, NAME))
            elif taking or lines > 64:
                return at
            else:
                taking = line == _REDIS_HASHES
        elif verb == "acl list" and line.startswith("user "):
            _acl_secrets(text, head, head + len(line), found)
        else:
            return at
        at = end + 1
    return at


def _redis_pairs(text: str, at: int, listing: bool, found: list[Finding], deadline: Deadline,
                 bare: bool = False, names: list[str] | None = None, quoted: bool = False) -> int:
    """redis-cli's reply from ``at`` (:data:`_REDIS_ITEM` lines, to the first that is none: the next prompt; rules
    version 14: or an item numbered 1 again, the next reply's first): with ``listing`` (``ACL LIST``), each item's
    ACL rules' passwords; else its items as name, value, name, value..., the value after a credential name
    (:func:`is_credential_name`) or ``passwords`` taken, and a nested array's strings (its lines indented past the
    item's number) with it. Returns where the reply ends. ``bare``: a reply no command line stands above
    (:func:`_redis_bare_replies`), whose names are one word each (fp26: a prose list's ``1) "Use an API key"`` names no
    configuration parameter). ``names`` (not with ``listing``): each finding's name, in order (rules version 16).
    ``quoted``: a reply in a markdown blockquote (rules version 16, :func:`_quote_opening`), each line read after
    its marks (:data:`_QUOTE_MARKS`: ``> ``, ``>``, ``> > ``, none on a lazy line), as markdown reads them."""
    index, width, taking, name = 0, 0, False, ""
    while at < len(text):
        deadline.check()
        item = _REDIS_ITEM.match(text, _past_quote_marks(text, at, len(text)) if quoted else at)
        if item is None:
            return at
        nested = index > 0 and len(item.group(1)) > width  # a line of the item above's array
        if not nested:
            if index > 0 and item.group(1).lstrip(" \t") == "1) ":  # the next reply (no prompt between)
                return at
            index += 1
            width = len(item.group(1))
        value = item.group(2)
        if value is not None:
            if listing:
                _acl_secrets(text, item.start(2), item.end(2), found)
            elif index % 2 == 1 and not nested:
                taking = is_credential_name(value) or value == _REDIS_HASHES
                taking = taking and not (bare and _holds_blank(value))
                name = value
            elif taking and value and value not in ALREADY_TOKENS:
                found.append(Finding(item.start(2), item.end(2), TOKEN, NAME))
                if names is not None:
                    names.append(name)
        at = item.end() + 1
        if text[item.end() : at] != "\n":
            return item.end()
    return at


# Rules version 14: redis-cli's numbered replies with no prompt or command line above them (``redis-cli --no-raw <
# cmds.txt``, a script's output: 7.0.15 prints ``1) "requirepass"`` / ``2) "x"`` for each command, one after another):
# found from a first item's ``1) "`` opening its line (right-aligned by blanks), read as a reply at the prompt is.
_REDIS_FIRST_ITEM: Final[str] = '1) "'
_MAX_ITEM_ALIGN: Final[int] = 64
"""The blanks read back before a first item's ``1) "``: redis-cli's padding (up to 8 for a reply of 10^9 items) and,
under rules version 16, a paste's indent (a code block under a nested list item, ``- a`` / ``  - b`` / 12 blanks;
lists indented by four, a code block under the fourth level: 20; version 15 read 9). Each blank before one first item
is read back once, and none belongs to two (a ``1) "`` holds none): linear whatever the bound, which only caps one
look (64: about 100 ms/MiB of blanks and first items, against 50-70 with 16)."""
_ACL_LISTED = re.compile(r"user [^\s\"\\]++ o(?:n|ff)[ \"]")
"""fp26: ACL LIST's line as redis-cli prints it (``user alice on #HASH ~* +@all``: ``user``, the name, ``on`` or
``off`` first; 7.0.15 writes each rule so), not any string opening ``user `` (``1) "user guide >= v2"``)."""


_MEMBER_VERBS: Final[frozenset[str]] = frozenset({
    "keys", "scan", "smembers", "sscan", "sinter", "sunion", "sdiff", "srandmember", "spop", "hkeys", "hvals",
    "lrange", "lpop", "rpop", "zrange", "zrevrange", "zrangebyscore", "zrevrangebyscore", "zrangebylex",
    "zrevrangebylex", "mget", "sort", "sort_ro"})
"""fp26: the commands whose reply is a list of keys, members or values, never names over their values: such a reply
under its command's line (at redis-cli's prompt or on redis-cli's shell line) is left by :func:`_redis_bare_replies`
(``LRANGE fields 0 -1`` printing ``1) "password"`` / ``2) "email"``)."""


def _verb_above(text: str, line: int) -> str | None:
    """The command (its first word, in lower case) on the line above ``line`` when that line is one redis-cli's prompt
    opens (:func:`_after_redis_prompt`) or a shell's line giving redis-cli a command; None for any other line."""
    if line == 0:
        return None
    start = text.rfind("\n", max(0, line - 1 - _MAX_REDIS_LINE), line - 1) + 1
    if text.find("> ", start, line) == -1 and text.find("redis-cli", start, line) == -1:
        return None  # two scans in C before any slice: most lines above a reply are another reply's
    above = text[start : line - 1].rstrip("\r")
    prompt = above.rfind("> ")
    if prompt != -1 and _after_redis_prompt(text, start + prompt):
        words = above[prompt + 2 :].split()
        return ascii_lower(words[0]) if words else None
    words = above.split()
    for index, word in enumerate(words):
        if word.rsplit("/", 1)[-1] == "redis-cli":
            at = index + 1
            while at < len(words) and words[at][:1] == "-":
                at += 2 if words[at] in _REDIS_CLI_VALUED else 1
            return ascii_lower(words[at].strip("'\"")) if at < len(words) else None
    return None


def _verb_above_quoted(text: str, line: int) -> str | None:
    """Rules version 16: :func:`_verb_above` for a reply quoted in a markdown blockquote, asked of the line above read
    after its quote's marks (a quoted transcript's ``> 127.0.0.1:6379> LRANGE fields 0 -1``)."""
    if line == 0:
        return None
    start = text.rfind("\n", max(0, line - 1 - _MAX_REDIS_LINE), line - 1) + 1
    above = text[_past_quote_marks(text, start, line - 1) : line - 1]
    return _verb_above(above + "\n", len(above) + 1)


def _holds_blank(value: str) -> bool:
    """Whether ``value`` holds a space or a tab (the names redis-cli prints in a reply of CONFIG GET or HGETALL are
    configuration parameters and hash fields, a word each; a numbered list in prose names phrases)."""
    return " " in value or "\t" in value


_REDIS_REPLY_NAMES: Final[frozenset[str]] = _REDIS_CONFIG_PASSWORDS | {_REDIS_HASHES}
"""The names a bare reply's value is taken under whatever its shape (:func:`_printed_by_redis_cli`): redis.conf's
password parameters (no prose list of form fields names one) and ``ACL GETUSER``'s ``passwords``."""


def _printed_by_redis_cli(text: str, start: int, end: int, quoted: bool = False) -> bool:
    """Rules version 15: whether the numbered reply ``text[start:end]`` with no command line above it reads as redis-cli
    printed it (7.0.15: ``CONFIG GET`` and ``HGETALL`` print pairs, their numbers right-aligned to the width of the
    last one's, nothing but replies, prompts and commands after them) or names one of :data:`_REDIS_REPLY_NAMES`.
    A numbered list in prose (``1) "password"`` / ``2) "email"`` / ``3) "name"``; indented; a sentence after it) is
    none: its items are field names, not names over values (rules version 16: such a reply's values are still read,
    :func:`_secrets_of_a_pasted_reply`). A reply quoted in a markdown blockquote (``quoted``) is a paste, never
    redis-cli's own print: only its names decide."""
    items: list[re.Match[str]] = []
    at = start
    while at < end and (item := _REDIS_ITEM.match(text, _past_quote_marks(text, at, end) if quoted else at)):
        if not items or len(item.group(1)) <= len(items[0].group(1)):  # a nested array's lines are the item's
            items.append(item)
        at = item.end() + 1
    names = [ascii_lower(item.group(2) or "") for item in items[0::2]]
    if any(name in _REDIS_REPLY_NAMES for name in names):
        return True
    if quoted:
        return False
    width = len(str(len(items))) + 2  # "N) ": redis-cli pads each number to the last one's digits
    if len(items) % 2 or any(len(item.group(1)) != width for item in items):
        return False
    follower = _past_space(text, end)
    return follower >= len(text) or text[follower] == "\x00" or not _prose_line(text, follower)


_REPLY_WORDS: Final[tuple[str, ...]] = ("OK", "QUEUED")


def _prose_line(text: str, at: int) -> bool:
    """Whether the line at ``at`` opens with a letter and is neither a reply's word (``OK``, ``QUEUED``) nor a line
    holding a prompt's ``> ``: a sentence after a numbered list, not what redis-cli prints after a reply."""
    if not ("A" <= text[at] <= "Z" or "a" <= text[at] <= "z"):
        return False
    line = text[at : _line_end(text, at)].rstrip("\r")
    return line not in _REPLY_WORDS and "> " not in line


# Rules version 16: a bare reply not in redis-cli's shape (:func:`_printed_by_redis_cli`: pasted indented in a markdown
# code block or under a list item, a sentence after it) is still a reply when a value under a credential name reads as
# a value: v15 stored ``    3) "password"`` / ``    4) "hunter2"`` in the clear. What a prose list of quoted field names
# puts after ``"password"`` is another field's name (``email``, ``username``), a word of :data:`_FIELD_NAME_WORDS`.
_FIELD_NAME_WORDS: Final[frozenset[str]] = frozenset({
    "email", "mail", "address", "username", "user", "login", "name", "first", "last", "full", "middle", "given",
    "family", "display", "nickname", "phone", "mobile", "number", "telephone", "id", "uid", "account", "role", "roles",
    "group", "groups", "scope", "scopes", "refresh", "access", "token", "tokens", "type", "key", "keys", "api",
    "client", "code", "otp", "pin", "confirm", "confirmation", "repeat", "verify", "verification", "new", "old",
    "current", "hint", "question", "answer", "remember", "street", "city", "state", "country", "zip", "postcode",
    "postal", "region", "date", "birth", "birthday", "dob", "age", "gender", "title", "company", "organization",
    "url", "uri", "website", "redirect", "callback", "avatar", "photo", "bio", "description", "status", "created",
    "updated", "expires", "expiry", "time", "timestamp", "session", "grant", "nonce", "host", "hostname", "port",
    "database", "salt", "hash", "algorithm", "locale", "language", "timezone", "terms", "consent", "captcha",
    "signature", "certificate", "fingerprint", "domain", "tenant", "endpoint", "mfa", "totp", "ssn", "profile",
    "picture", "image", "homepage", "job", "department", "team", "plan", "tier", "notes", "comment", "message",
    "subject", "label", "field", "value", "card", "cvv", "ip", "device", "version", "enabled", "active", "verified"})
"""Words a prose list's field names are made of (``email``, ``first_name``, ``Refresh Token``), none a password people
use: a word this list lacks (``foobared``, redis's own example password; ``secret``, ``changeme``, ``letmein``,
``admin``, ``guest``) after a credential name is taken (a leaked password is worse than a redacted word)."""
_FIELD_NAME_INNER_WORDS: Final[frozenset[str]] = frozenset({
    "password", "passwd", "pass", "passphrase", "secret", "auth", "credential", "credentials",
    "e", "me", "at", "in", "on", "by", "to", "of", "for", "and", "or"})
"""Words a field's name of two or more words may hold besides :data:`_FIELD_NAME_WORDS` (``password_confirmation``,
``client_secret``, ``e-mail``, ``remember_me``, ``created_at``, ``expires_in``): alone, each is a password people
use or no field's name."""
_FIELD_NAME_PARTS = re.compile(r"[_\- ]")
_FIELD_NAME_SPLIT = re.compile(r"([_\- ])")
_FIELD_NAME = re.compile(r"[A-Za-z]{1,24}+(?:[_\- ][A-Za-z]{1,24}+){0,3}+")
"""A prose list's field name, as :func:`_names_another_field` reads it: one to four words of letters."""


def _names_another_field(name: str, value: str) -> bool:
    """Whether ``value``, after the credential name ``name`` in a numbered list no command stands above, reads as
    another field's name in prose, not the value of ``name``: a word of :data:`_FIELD_NAME_WORDS`, or two to four
    joined by ``_``, ``-`` or a blank that may include :data:`_FIELD_NAME_INNER_WORDS`, all in lower case or each
    capitalized (``email``, ``password_confirmation``, ``Email Address``), and not ``name`` again (a password that is
    its own field's name is a password)."""
    if value in _FIELD_NAME_WORDS:  # a prose list's usual word (email), one set lookup
        return value != ascii_lower(name)
    if _FIELD_NAME.fullmatch(value) is None:  # a digit, a symbol, five words: a value (most secrets stop here)
        return False
    lower = ascii_lower(value)
    if lower == ascii_lower(name):
        return False
    words = _FIELD_NAME_PARTS.split(lower)
    if value != lower and value != "".join(part[:1].upper() + part[1:] for part in _FIELD_NAME_SPLIT.split(lower)):
        return False  # mixed case (hUnter, HUNTER) is no field's name in prose
    if len(words) == 1:
        return lower in _FIELD_NAME_WORDS
    return all(word in _FIELD_NAME_WORDS or word in _FIELD_NAME_INNER_WORDS for word in words)


def _secrets_of_a_pasted_reply(taken: list[Finding], names: list[str], text: str) -> list[Finding]:
    """Rules version 16: of what :func:`_redis_pairs` took from a bare reply (``names``: the name each value was taken
    under), the values that are no other field's name (:func:`_names_another_field`): what is taken whatever the
    reply's shape (indented, a sentence after it); the rest only in redis-cli's (:func:`_printed_by_redis_cli`)."""
    return [finding for finding, name in zip(taken, names)
            if not _names_another_field(name, text[finding.start : finding.end])]


def _redis_bare_replies(text: str, deadline: Deadline, found: list[Finding]) -> None:
    """Each reply of redis-cli's numbered lines (:func:`_redis_pairs`) whose first item ``1) "`` opens its line,
    whatever stands above it; ``ACL LIST``'s when its first string reads as ACL LIST's line (:data:`_ACL_LISTED`,
    :func:`_acl_secrets`). With nothing above to name the command, a name holding a blank is none, and under a
    command whose reply lists members (:data:`_MEMBER_VERBS`) nothing is read (fp26). A reply not in redis-cli's
    shape (:func:`_printed_by_redis_cli`: indented, a sentence after it) keeps what it took but another field's name
    (rules version 16, :func:`_secrets_of_a_pasted_reply`; version 15 kept nothing of it). Rules version 16: a reply
    quoted in a markdown blockquote (every line opening ``> ``, ``>``, ``> > ``: :func:`_quote_opening`) is read
    after its marks as it would be without them, and is never in redis-cli's shape (a paste)."""
    at = text.find(_REDIS_FIRST_ITEM)
    while at != -1:
        deadline.check()
        line, floor = at, max(0, at - _MAX_ITEM_ALIGN)
        while line > floor and text[line - 1] in " \t":
            line -= 1
        after = at + len(_REDIS_FIRST_ITEM)
        quoted = False
        if line > 0 and text[line - 1] == ">":  # a blockquote's mark, or a prompt's (it opens no line)
            opening = _quote_opening(text, line)
            if opening != -1:
                line, quoted = opening, True
        if line == 0 or text[line - 1] in "\n\x00":
            listing = _ACL_LISTED.match(text, after) is not None
            taken: list[Finding] = []
            names: list[str] = []
            end = _redis_pairs(text, line, listing, taken, deadline, bare=True, names=names, quoted=quoted)
            after = max(after, end)
            if taken:  # asked only of a reply that took a value
                verb = _verb_above_quoted(text, line) if quoted else _verb_above(text, line)
                if listing or verb is not None:  # a command line above it (or ACL LIST's own line) says what it is
                    if verb not in _MEMBER_VERBS:  # a list of members (LRANGE, KEYS...) names no value
                        found.extend(taken)
                else:  # rules version 16: in any shape its secrets; a field's name only in redis-cli's shape
                    kept = _secrets_of_a_pasted_reply(taken, names, text)
                    found.extend(taken if len(kept) < len(taken) and _printed_by_redis_cli(text, line, end, quoted)
                                 else kept)
        at = text.find(_REDIS_FIRST_ITEM, after)
