"""Command lines: credential flags, a command's own password flag, argv lists written in text or given as data.

The table of commands' password flags, where a shell reads a command (wrappers, paths), and :func:`argv_secrets`.
docs/capture.md: "Command lines" ("Credential flags and argv lists", "A command's own password flag", "Argv lists
read as command lines").
"""

from __future__ import annotations

import functools
import re
import string
from dataclasses import dataclass
from typing import Any, Final

from bitexact.capture.detectors.base import Finding
from bitexact.capture.detectors.credentials.lines import _next_at
from bitexact.capture.detectors.credentials.names import ALREADY_TOKENS, NAME, TOKEN, is_credential_word
from bitexact.capture.detectors.credentials.positional import _BY_OWN_SEARCH, _POSITIONAL_COMMANDS, _word_secret


# A flag and its value as two words (--password hunter2), or as two quoted items of an argv list written as
# text (["--password", "hunter2"], a repr's ['--password', 'hunter2'] or [b'--password', b'hunter2'], pretty-printed
# one item a line); the value may not be the next flag.
_FLAG_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,95}"
_FLAG = re.compile(rf"""--({_FLAG_NAME}+)(?:[ \t]+(?=[^\s-])|["'][ \t]*,[ \t\r\n]*+[bB]?(?=["'][^\s"'-]))""")
_ARGV_FLAG = re.compile(_FLAG_NAME)  # a long flag as an argv list's item: the same names


@dataclass(frozen=True)
class _PasswordFlag:
    """A command's flag that takes a password (``mysql -pSECRET``, ``sshpass -p SECRET``)."""

    spelling: str
    attached: bool = True
    """The value may stand in the flag's own word (``-pSECRET``; a ``--`` flag's after ``=``)."""
    separate: bool = True
    """The value may be the next word (``-p SECRET``), when that word is no flag."""
    secret: str | None = None
    """Where the value holds more than the secret: a pattern whose group 1 is the secret (``user:PASSWORD``)."""


_USER_COLON = r"[^:]*:(.+)"
_AUTH_VALUE = r"(?:[^:]*:)?(.+)"
"""HTTPie's and xh's ``-a``: ``user:password``, or with ``-A bearer`` the token whole (no colon)."""
_EXE: Final[tuple[str, str]] = (".exe", ".EXE")
"""How Windows names a program's file (``mysql.exe``); a name's other case mixes are not read."""
EXE_SUFFIX: Final[str] = "(?:" + "|".join(map(re.escape, _EXE)) + ")?"
"""Windows's program suffix, optional, as a pattern (``mysql.exe``)."""
# Commands whose password flags are short letters that mean other things to other commands (mkdir -p,
# ssh -p 22, docker run -u 1000:1000): a flag counts only after one of its commands on the same line,
# and within the same shell command (not past "&&", "||", "|" or ";" followed by a space). The value
# is read as a shell word (quoted or not); ``secret`` takes the secret out of it.
_COMMAND_PASSWORD_FLAGS: Final[tuple[tuple[tuple[str, ...], tuple[_PasswordFlag, ...]], ...]] = (
    (("curl", "wget"),  # -u user:password, the part after the first colon
     (_PasswordFlag("-u", secret=_USER_COLON), _PasswordFlag("--user", secret=_USER_COLON))),
    (("http", "https", "xh", "xhs"),  # HTTPie's and xh's -a / --auth user:password (and -u, as curl's)
     (_PasswordFlag("-a", secret=_AUTH_VALUE), _PasswordFlag("--auth", secret=_AUTH_VALUE),
      _PasswordFlag("-u", secret=_USER_COLON), _PasswordFlag("--user", secret=_USER_COLON))),
    (("mysql", "mysqldump", "mysqladmin", "mysqlimport", "mysqlcheck", "mysqlshow", "mysqlpump", "mysqlslap",
      "mariadb", "mariadb-dump", "mariadb-admin", "mariadb-import", "mariadb-check", "mariadb-show"),
     (_PasswordFlag("-p", separate=False),)),  # "-p db" asks for the password and names a database
    (("sshpass",), (_PasswordFlag("-p"),)),
    (("redis-cli",), (_PasswordFlag("-a", attached=False), _PasswordFlag("--pass", attached=False))),
    (("docker login", "podman login", "buildah login", "skopeo login", "nerdctl login", "oras login",
      "helm registry login", "az login", "oc login", "cf login"), (_PasswordFlag("-p"),)),
    (("sqlcmd", "bcp", "osql"), (_PasswordFlag("-P"),)),
    (("zip", "unzip"), (_PasswordFlag("-P", attached=False),)),
    (("7z", "7za", "7zr", "rar", "unrar"), (_PasswordFlag("-p", separate=False),)),
    (("ldapsearch", "ldapadd", "ldapmodify", "ldapdelete", "ldapwhoami", "ldapcompare",
      "ldapmodrdn", "ldapexop"), (_PasswordFlag("-w"),)),
    (("ldappasswd",), (_PasswordFlag("-w"), _PasswordFlag("-a"), _PasswordFlag("-s"))),  # the old and the new one
    (("ssh-keygen",), (_PasswordFlag("-N"), _PasswordFlag("-P"))),  # the new and the old passphrase
    (("useradd", "usermod"), (_PasswordFlag("-p"), _PasswordFlag("--password", attached=False))),  # a crypt(3) hash
    (("psexec", "paexec", "rdesktop", "cqlsh"), (_PasswordFlag("-p"),)),
    (("influx",), (_PasswordFlag("-password", attached=False),)),  # InfluxDB 1's shell
    (("keytool", "jarsigner"), tuple(_PasswordFlag(f"-{name}", attached=False) for name in (
        "storepass", "keypass", "srcstorepass", "deststorepass", "srckeypass", "destkeypass"))),
    (("openssl",), (*(_PasswordFlag(f"-{name}", attached=False, secret=r"pass:(.+)")  # env:, file: name no secret
                      for name in ("passin", "passout", "pass", "password")),
                    _PasswordFlag("-k", attached=False))),
    (("smbclient", "rpcclient", "smbmap", "smbcacls", "smbget"),  # -U user%password
     (_PasswordFlag("-U", secret=r"[^%]*%(.+)"), _PasswordFlag("--user", secret=r"[^%]*%(.+)"))),
    (("lftp",), (_PasswordFlag("-u", secret=r"[^,]*,(.+)"),)),  # -u user,password
    (("mongo", "mongosh", "mongodump", "mongorestore", "mongoexport", "mongoimport", "mongostat", "mongotop",
      "mongofiles"), (_PasswordFlag("-p"),)),
    (("mosquitto_pub", "mosquitto_sub", "mosquitto_rr"), (_PasswordFlag("-P"),)),
    # A secret store's own "set" commands: the value set is the secret.
    (("gh secret set",), (_PasswordFlag("--body", attached=False), _PasswordFlag("-b"))),
    (("az keyvault secret set",), (_PasswordFlag("--value", attached=False),)),
    (("aws secretsmanager create-secret", "aws secretsmanager put-secret-value", "aws secretsmanager update-secret"),
     (_PasswordFlag("--secret-string", attached=False),)),
)
_FLAGS_OF: Final[dict[str, tuple[_PasswordFlag, ...]]] = {
    " ".join(command.split()): tuple(sorted(flags, key=lambda flag: -len(flag.spelling)))  # -passin before -pass
    for commands, flags in _COMMAND_PASSWORD_FLAGS for command in commands
}
_SECRETS: Final[dict[str, re.Pattern[str]]] = {
    flag.secret: re.compile(flag.secret, re.DOTALL)
    for _, flags in _COMMAND_PASSWORD_FLAGS for flag in flags if flag.secret is not None
}
# The command, not a URL's scheme (https://) or a longer word (my-mysql, mysql.sock): a two-word command
# (docker login) with any white space between its words; Windows names its programs with ".exe" (mysql.exe). After a
# "/", only as a path's last part (/usr/bin/mysql: _command_starts).
_COMMAND = re.compile(
    r"(?<![\w.-])(" + "|".join(
        r"[ \t]+".join(map(re.escape, command.split())) for command in sorted(_FLAGS_OF, key=len, reverse=True)
    ) + r")" + EXE_SUFFIX + r"(?=[ \t\"'])"
)
# A flag starts a word, as _word_starts says, tested after the "-" (a literal first is what the regex
# engine searches fast): "well-known" is never read as a flag.
_PASSWORD_FLAG = re.compile(
    r"-(?:(?<![^ \t\r\n\x00\"'=(\[{,]-)|(?<=\\[ntr]-))(?:"
    + "|".join(sorted({re.escape(flag.spelling[1:]) for flags in _FLAGS_OF.values() for flag in flags},
                      key=len, reverse=True))
    + ")"
)
# A shell word: quoted (to its closing quote; in single quotes nothing is escaped) or up to white space
# or a shell metacharacter; a blank escaped with a backslash is part of it (S3cret\ Pw1), and so is a command's
# output, $(...) (useradd -p $(openssl passwd -1 S) bob).
_SHELL_WORD = re.compile(
    r"""[ \t]*(?:"((?:[^"\\\x00]|\\.)*)"|'([^'\x00]*)'|((?:\$\([^()\n\x00]*+\)|\\[ \t]|[^\s"'\x00;|&<>()])++))"""
)
# Between a flag and its value as the next word: white space, or, in an argv list written as text
# (["sshpass", "-p", "x"]; a repr of bytes, [b'sshpass', b'-p', b'x']), a closing quote and a comma. The value is
# no flag.
_SEPARATE = re.compile(r"""(?:[ \t]+|["'][ \t]*,[ \t]*[bB]?(?=["']))(?=[^\s\x00-])""")
# A command's words end with its line: a newline, one written as \n in a string, or a NUL (texts are
# scanned joined by one, and no rule reads across it); or at a shell operator outside quotes.
_LINE_END = re.compile(r"[\n\x00]|\\n")
# A quote never closed runs to the line's end, as in a shell: tried from every quote, a closing quote
# required made a line of unclosed quotes quadratic.
_QUOTED_OR_OPERATOR = re.compile(r"""'[^'\n\x00]*+'?|"(?:[^"\\\n\x00]|\\.)*+"?|[;&|](?=[ \t])""")
# Where a command that runs another stops taking options: at its first word that is no option (sshpass
# -p pw ssh -p 2222 host: the second -p is ssh's port).
# Between two words, on a line or in an argv list as text (a repr of bytes too: b'-p', b'x').
_WORD_GAP = r"""["']?(?:[ \t]*,[ \t]*|[ \t]+)(?:[bB]?["'])?"""
_WRAPPER_OPTIONS: Final[dict[str, frozenset[str]]] = {"sshpass": frozenset({"-f", "-d", "-P", "-p"})}
"""A command that runs another, and its options that take the next word as their value."""
_OPTIONS_END: Final[dict[str, re.Pattern[str]]] = {
    command: re.compile(
        rf"""(?:{_WORD_GAP}(?:(?:{"|".join(map(re.escape, sorted(options)))}){_WORD_GAP}(?!-)[^\s\x00"']++"""
        rf"""|-[^\s\x00"']++))*+"""
    )
    for command, options in _WRAPPER_OPTIONS.items()
}


def _command_scopes(
    text: str, commands: list[re.Match[str]], line_start: int, line_end: int
) -> list[tuple[int, tuple[_PasswordFlag, ...]]]:
    """For each command found on a line of ``text``: where its options end (the next shell operator outside
    quotes, the line's end, or for a command running another, that one's name), and its password flags."""
    breaks = [cut.start() for cut in _QUOTED_OR_OPERATOR.finditer(text, line_start, line_end)
              if text[cut.start()] in ";&|"]
    scopes = []
    for command in commands:
        name = " ".join(command.group(1).split())
        reach = _next_at(breaks, command.end(), line_end)
        options = _OPTIONS_END.get(name)
        if options is not None:
            reach = min(reach, options.match(text, command.end(), reach).end())  # type: ignore[union-attr]
        scopes.append((reach, _FLAGS_OF[name]))
    return scopes


# A command written as a path (/usr/bin/mysql, ./bin/sshpass, ~/bin/htpasswd, $HOME/bin/mysql): the directories
# before its name, read back from the name over these characters (and any script's letters and digits: /opt/données/),
# and the form they must have (not a URL's https://host/).
_PATH_CHARS: Final[frozenset[str]] = frozenset(string.ascii_letters + string.digits + "_.+-/~${}")
_PATH_HEAD = re.compile(r"(?:~|\.{1,2}|\$[A-Za-z_]\w*|\$\{[A-Za-z_]\w*\})?/(?:[\w.+-]+/)*")
_MAX_PATH: Final[int] = 1024


def _command_starts(text: str, at: int) -> bool:
    """Whether the command name at ``at`` (found with no letter, digit, ``.`` or ``-`` before it) is a command
    word: it starts its word, or ends a POSIX path (``/usr/bin/mysql``, ``./bin/sshpass``, ``~/bin/htpasswd``)
    that stands where a command does (:func:`_in_command_position`: ``find /var/lib/mysql -perm 600`` names a
    directory). Reads back over the path, then a few words before it at most (:data:`_MAX_WORDS_BACK`)."""
    start = _path_start(text, at)
    return start == at or (start >= 0 and _in_command_position(text, start))


def _path_start(text: str, at: int) -> int:
    """Where the POSIX path ending with the name at ``at`` starts (``at`` itself when no ``/`` stands before the
    name); -1 when what stands before it is no path (a URL's ``https://host/``). A path may open with ``~``, ``.``,
    ``..`` or a variable (``$HOME/bin/``, ``${TOOLS}/``)."""
    if at == 0 or text[at - 1] != "/":
        return at
    start, floor = at - 1, max(0, at - _MAX_PATH)
    while start > floor and ((char := text[start - 1]) in _PATH_CHARS or char.isalnum()):
        start -= 1
    return start if _PATH_HEAD.fullmatch(text, start, at) is not None else -1


_COMMAND_WRAPPERS: Final[frozenset[str]] = frozenset(
    {"sudo", "doas", "env", "exec", "time", "nohup", "nice", "ionice", "timeout", "command", "builtin", "xargs",
     "stdbuf", "then", "do"}
)
"""Words after which a command still stands where a command does (``sudo htpasswd``, ``env A=1 /usr/bin/mysql``),
their options between (``sudo -u root``, ``nice -n 5``, ``timeout 10``)."""
_BEFORE_A_COMMAND: Final[str] = ";|&(`\"'{$#>,["
"""What a command may follow directly: a shell operator, a quote or backtick, a prompt, an argv list written as text."""
_WORD_ENDS: Final[str] = " \t\n\r\x00" + _BEFORE_A_COMMAND
"""What ends the word before a command, read back from it."""
_MAX_WORD_BACK: Final[int] = 256
_MAX_WORDS_BACK: Final[int] = 8
"""How many words before a command are read back, at most: wrappers, their options and assignments."""
_NUMBER = re.compile(r"(?:[0-9]++(?:\.[0-9]++)?[smhd]?)++")  # possessive: a long run of digits is read once
"""A wrapper's numeric argument (``timeout 10``, ``timeout 1m30s``), or an option's (``nice -n 5``)."""
_WRAPPER_VALUE_OPTIONS: Final[frozenset[str]] = frozenset({
    "-u", "-g", "-h", "-p", "-C", "-D", "-r", "-t", "-U", "-T", "-R", "-n", "-c", "-s", "-k", "-S", "-I", "-d", "-P",
    "-a", "-L", "--user", "--group", "--host", "--prompt", "--chdir", "--role", "--type", "--other-user",
    "--close-from", "--command-timeout", "--chroot", "--adjustment", "--signal", "--kill-after", "--unset",
    "--split-string", "--class", "--classdata", "--pid", "--replace", "--delimiter", "--max-args", "--max-procs",
    "--max-lines", "--arg-file", "--eof",
})
"""The wrappers' options that take the next word as their value (``sudo -u root``, ``timeout -s KILL``): a word
after another option (``sudo -E find``) is a command of its own, not an option's value."""


def _in_command_position(text: str, at: int) -> bool:
    """Whether the word at ``at`` stands where a shell reads a command: first on its line (after white space), after
    a shell operator, a quote, a backtick, a prompt (``$``, ``#``, ``>``), or after an assignment (``A=1``) or a
    wrapper (``sudo``, ``env``, ``nohup``...) that does. Between a wrapper and the command stand its options and
    their values (``sudo -E -u root``, ``sudo -u $USER``, ``env -i PATH=/bin``, ``nice -n 5``, ``timeout -s KILL
    10``): a word that is no option must be a number, a variable, or the value of the option just before it that
    takes one (:data:`_WRAPPER_VALUE_OPTIONS`). Reads back a few short words at most."""
    options = False  # options, or their values, read back since the last wrapper or assignment
    value = ""  # a word read back that must be the value of the option before it
    for _ in range(_MAX_WORDS_BACK):
        while at > 0 and text[at - 1] in " \t":
            at -= 1
        if at == 0 or text[at - 1] in "\n\r\x00" or text[at - 2 : at] in ("\\n", "\\r", "\\t") or (
                text[at - 1] in _BEFORE_A_COMMAND):
            return not options  # a wrapper's options, with no wrapper: not a command line
        start = _word_back(text, at)
        word = text[start:at]
        if word in _COMMAND_WRAPPERS:
            if value:
                return False  # "echo hello /usr/bin/mysql": a word that no option takes
            options = False
        elif word[:1] == "-" and len(word) > 1:
            if value and word not in _WRAPPER_VALUE_OPTIONS:
                return False  # sudo -E find /var/lib/mysql: find is a command, the path its argument
            options, value = True, ""
        elif "=" in word and not value:
            pass  # an assignment (A=1 cmd, env PATH=/bin cmd)
        elif word[:1] == "$" or _NUMBER.fullmatch(word) is not None:
            options = True  # a wrapper's number (timeout 10) or a variable (sudo -u $USER), whichever takes it
        elif value or names_a_command(word):
            return False  # two words no option takes, or another command's name: this word is its argument
        else:
            options, value = True, word  # an option's value (sudo -u root)
        at = start
    return False


def _word_back(text: str, at: int) -> int:
    """Where the word ending at ``at`` starts, read back at most :data:`_MAX_WORD_BACK` characters; a ``$`` or ``{``
    followed by more of the word is part of it (``$USER``, ``${DB_USER}``, ``HOME=$HOME``), not a prompt."""
    start, floor = at, max(0, at - _MAX_WORD_BACK)
    while start > floor and (text[start - 1] not in _WORD_ENDS or (text[start - 1] in "${" and start < at)):
        start -= 1
    return start


# Each opens with its literal name; a longer word (myhtpasswd, htpasswd.py) is none.
_POSITIONAL: Final = tuple(
    (name, re.compile(rf"""{name}(?<![\w.-]{name}){EXE_SUFFIX}(?=[ \t"'])"""), picker)
    for name, picker in _POSITIONAL_COMMANDS.items() if name not in _BY_OWN_SEARCH
)


_MAX_COMMAND_WORDS: Final[int] = max(len(command.split()) for command in _FLAGS_OF)
COMMAND_WORDS: Final[frozenset[str]] = frozenset(command.split()[0] for command in (*_FLAGS_OF, *_POSITIONAL_COMMANDS))
"""The first word of every command whose passwords the rules know (an argv list holds one)."""
ARGV_COMMAND_AT: Final[int] = 8
"""How far into a list its command is looked for: after a wrapper's words (sudo, env A=1, docker exec -i db,
kubectl exec pod --), as a command line's is found anywhere on its line. Bounded, so a long list of
strings costs the walk no second loop."""


def names_a_command(word: Any) -> bool:
    """Whether ``word`` is the first word of a command of the table, by its file name (``/usr/bin/mysql``,
    ``mysql.exe``)."""
    if type(word) is not str:  # asked of the first items of every list a step holds: the plain case first
        if not isinstance(word, str):
            return False
        word = str.__str__(word)
    return word in COMMAND_WORDS or (("/" in word or "\\" in word or word.endswith(_EXE))
                                     and _file_name(word) in COMMAND_WORDS)


def _file_name(word: str) -> str:
    """A command's name as a path gives it: its last part (``/usr/bin/mysql``, ``C:\\bin\\mysql.exe``), without
    Windows's ``.exe``."""
    name = word.rpartition("/")[2].rpartition("\\")[2]
    return name[:-4] if name.endswith(_EXE) else name


def argv_secrets(items: list[Any]) -> dict[int, tuple[int, int]]:
    """An argv list's passwords (``["mysql", "-pX"]``, ``["sudo", "/usr/bin/sshpass", "-p", "x", "ssh"]``,
    ``["myapp", "--password", "X"]``, ``["htpasswd", "-b", "FILE", "USER", "X"]``): for each item holding one, the
    span of the secret in it; empty for any other list. An object or a list among the items is a word that is no
    flag and no value (the walk reads it as it reads any list's items).

    The words of a command given as data, read as :meth:`CredentialsDetector._command_flags` reads a command
    line (the same table): the command is among the first items (by its file name), a flag's value is in its
    own item or the next, other scalars are words that are neither, and a command that runs another
    (sshpass) takes options only up to that one's name. A command of :data:`_POSITIONAL_COMMANDS` says which
    of its words is the password. In any list, whatever its command, a credential-named long flag's value is
    the next item (:func:`_flag_values`). The walk replaces what this finds, as it does a ``[name, value]``
    pair's value: no rule reads across texts, so a list's words are read where the list is.
    """
    if not items:
        return {}
    head = items[:ARGV_COMMAND_AT]
    named = any(map(names_a_command, head))
    if not named and not _may_hold_flags(items):
        return {}  # the test every list takes: its first few items, and one search in C
    words = _argv_words(items)
    flagged = _flag_values(words)
    if flagged:  # a flag's value is a value, never a command's name: read as the next pass reads it, replaced
        words = [None if index in flagged else word for index, word in enumerate(words)]
    secrets = _command_secrets(words) if named else {}
    secrets.update(flagged)  # the whole item: it covers any part a command's flag took
    return secrets


def _may_hold_flags(items: list[Any]) -> bool:
    """Whether a list may hold a long flag, an item starting with ``--``: asked of every list, so in C where it can
    be (a list of strings searched once, joined; another list's kinds of item, a set of a few)."""
    if type(items[0]) is str:
        try:
            joined = "\x00".join(items)
        except TypeError:
            pass  # not strings only
        else:
            return joined.startswith("--") or "\x00--" in joined
    if not any(issubclass(kind, str) for kind in set(map(type, items))):
        return False
    return any(isinstance(item, str) and item.startswith("--") for item in items)


def _argv_words(items: list[Any]) -> list[str | None]:
    """An argv list's words: its strings as their text (a subclass too), any other item None (a word that is no
    flag and no value)."""
    if set(map(type, items)) == {str}:
        return list(items)  # the plain case, in C
    return [str.__str__(item) if isinstance(item, str) else None for item in items]


def _flag_values(words: list[str | None]) -> dict[int, tuple[int, int]]:
    """``["--password", "X"]``: each item after a credential-named long flag (:func:`_credential_flag`), whole, when
    it is a string and no flag itself (``-`` reads it from stdin). ``--password=X`` in one item is a text's
    ``NAME=VALUE``, found when the item is scanned."""
    found: dict[int, tuple[int, int]] = {}
    for index, word in enumerate(words[:-1]):
        if word is not None and word[:2] == "--" and "=" not in word and _credential_flag(word):
            value = words[index + 1]
            if value is not None and value[:1] != "-" and _word_secret(value):
                found[index + 1] = (0, len(value))
    return found


@functools.lru_cache(maxsize=4096)
def _credential_flag(word: str) -> bool:
    """Whether an argv list's item is a long flag named as a credential, as a line's ``--NAME VALUE`` reads one
    (:data:`_FLAG`, :func:`is_credential_word`). Kept in memory (never written), as names are: asked only of an
    item opening with ``--`` and holding no ``=``, which is a flag's name unless a value was written so."""
    return _ARGV_FLAG.fullmatch(word, 2) is not None and is_credential_word(word[2:])


def _command_secrets(words: list[str | None]) -> dict[int, tuple[int, int]]:
    """The passwords a command of the table among an argv list's first words takes (see :func:`argv_secrets`)."""
    starts = [index for index, word in enumerate(words[:ARGV_COMMAND_AT]) if names_a_command(word)]
    found = next(((start, command) for start in starts if (command := _argv_command(words, start)) is not None), None)
    if found is None:
        return {}  # docker exec: the first word of a command of the table, but not the command
    start, command = found
    picker = _POSITIONAL_COMMANDS.get(command)
    if picker is not None:
        rest = words[start + 1 :]
        return {start + 1 + index: (0, len(rest[index] or "")) for index in picker(rest) if _word_secret(rest[index])}
    flags = _FLAGS_OF[command]
    takes_value = _WRAPPER_OPTIONS.get(command)
    secrets: dict[int, tuple[int, int]] = {}
    index = start + len(command.split())
    while index < len(words):
        word = words[index]
        taken = _argv_flag(words, index, flags) if word is not None else None
        if taken is not None:
            where, span = taken
            if span is not None:
                secrets[where] = span
            index = where + 1
        elif takes_value is not None and (word is None or not word.startswith("-")):
            break  # the command a wrapper runs: its flags are its own
        else:
            index += 2 if takes_value is not None and word in takes_value else 1  # sshpass -P PROMPT
    return secrets


def _argv_command(words: list[str | None], start: int) -> str | None:
    """The command of the table whose words stand at ``words[start:]`` (the first by its file name), if any."""
    first = words[start]
    assert first is not None
    head = [_file_name(first), *(word or "" for word in words[start + 1 : start + _MAX_COMMAND_WORDS])]
    if head[0] in _POSITIONAL_COMMANDS:
        return head[0]
    return next((" ".join(head[:count]) for count in range(len(head), 0, -1) if " ".join(head[:count]) in _FLAGS_OF),
                None)


def _argv_flag(
    words: list[str | None], index: int, flags: tuple[_PasswordFlag, ...]
) -> tuple[int, tuple[int, int] | None] | None:
    """A password flag at ``words[index]``: the item its value stands in and the secret's span there (None
    when it holds none); None when the word is no password flag."""
    word = words[index]
    assert word is not None
    for flag in flags:
        spelling = flag.spelling
        if word == spelling:
            if not flag.separate:
                return None
            value = words[index + 1] if index + 1 < len(words) else None
            if value is None or value.startswith("-"):
                return index, None  # no value: the password is asked for
            return index + 1, _flag_secret(value, 0, len(value), flag)
        if spelling.startswith("--"):
            if word.startswith(spelling + "="):
                return index, _flag_secret(word, len(spelling) + 1, len(word), flag)
        elif flag.attached and word.startswith(spelling):
            return index, _flag_secret(word, len(spelling), len(word), flag)
    return None


def _flag_secret(text: str, start: int, end: int, flag: _PasswordFlag) -> tuple[int, int] | None:
    """The span of the secret in ``text[start:end]``, the value ``flag`` takes (on a command line or in an
    argv list's word): none in an empty value, in ``-`` (7z's and rar's ``-p-`` ask for no password) or in a
    token already written; only the part ``flag.secret`` names (``user:PASSWORD``)."""
    if start >= end or text[start:end] == "-" or text.startswith(ALREADY_TOKENS, start):
        return None
    if flag.secret is None:
        return start, end
    secret = _SECRETS[flag.secret].match(text, start, end)
    if secret is None or text.startswith(ALREADY_TOKENS, secret.start(1)):
        return None
    return secret.span(1)


# An argv list written in text one item a line (pprint's and json.dumps(indent=...)'s way with a long list): each
# quoted item, across lines, and what follows it (a comma, the closing bracket, or neither: the list ends there).
_LISTED_ITEM = re.compile(
    r"""[ \t\r\n]*+[bB]?(?:"((?:[^"\\\n\x00]|\\.)*+)"|'((?:[^'\\\n\x00]|\\.)*+)')[ \t\r\n]*+([,\]]?)"""
)
# A line that is an item of such a list: white space, then a quote.
_LISTED_LINE = re.compile(r"""[ \t]*+[bB]?["']""")
# After a command's name, its list's next item on the next line.
_LISTED_NEXT = re.compile(r"""["'][ \t]*,[ \t]*\r?\n""")
_MAX_LISTED: Final[int] = 256
"""How many items of an argv list written across lines are read, at most."""
_MAX_LISTED_BACK: Final[int] = 4096
"""How far back from an item its list's ``[`` is looked for."""


def _listed_argv(text: str, at: int, floor: int, found: list[Finding]) -> int | None:
    """The argv list written in text across lines that holds the item at ``at``: the passwords :func:`argv_secrets`
    finds in its items added to ``found`` (each item as written: an escape in it is not read), and where it ends.
    None when no list of quoted items opens after ``floor`` (where the caller's last search ended: a ``[`` before
    it is known to open no list reaching this far) and runs past ``at``."""
    floor = max(floor, at - _MAX_LISTED_BACK)
    opening = text.rfind("[", floor, at)
    for _ in range(3):  # a "[" inside an item ('[x]') is tried and passed over
        if opening == -1:
            return None
        words: list[str | None] = []
        spans: list[tuple[int, int]] = []
        position = opening + 1
        for _ in range(_MAX_LISTED):
            item = _LISTED_ITEM.match(text, position)
            if item is None:
                break
            group = 1 if item.group(1) is not None else 2
            words.append(item.group(group))
            spans.append(item.span(group))
            position = item.end()
            if item.group(3) != ",":
                break
        if words and position > at:
            found.extend(Finding(spans[index][0] + start, spans[index][0] + end, TOKEN, NAME)
                         for index, (start, end) in argv_secrets(words).items())
            return position
        opening = text.rfind("[", floor, opening)
    return None


def _word_starts(text: str, at: int) -> bool:
    """Whether a flag at ``at`` starts a word: at the start, after white space, a quote, an opening bracket,
    ``=`` or ``,`` (an argv list), or after a written escape (``\\n``, as a log line writes a newline)."""
    return at == 0 or text[at - 1] in " \t\r\n\x00\"'=([{," or text[at - 2 : at] in ("\\n", "\\t", "\\r")


def _in_synopsis(text: str, at: int) -> bool:
    """Whether the flag at ``at`` opens a usage synopsis's bracket (``[-N new_passphrase]``, ``[--password PW]``):
    a placeholder, no value."""
    return text[at - 1 : at] == "["
