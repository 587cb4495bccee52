"""Passwords a command takes as positional words: htpasswd, nmcli, rabbitmqctl, Windows's ``net user``.

docs/capture.md: "Command lines", "Passwords as positional words".
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence
from typing import Final

from bitexact.capture.detectors.base import ascii_lower
from bitexact.capture.detectors.credentials.names import ALREADY_TOKENS, is_credential_name


# Commands that take a password as a positional word, not after a flag of their own: each reads the words after
# its name (on a line, or an argv list's items) and says which is the password.
_HTPASSWD_VALUE_OPTIONS: Final[str] = "Cr"
"""htpasswd's options that take a value (the bcrypt cost, the rounds): the rest of their word, or the next."""


def _htpasswd_secrets(words: Sequence[str | None]) -> list[int]:
    """``htpasswd -b FILE USER PASSWORD`` (``-n``, no FILE: ``htpasswd -nb USER PASSWORD``): the password's index
    among the words after the command, when ``-b`` says it is given there. Options come first, in words of
    their own or combined (``-bc``, ``-nbB``, ``-C 10``), as htpasswd reads them."""
    batch = no_file = False
    index = 0
    while index < len(words):
        word = words[index]
        if word is None or len(word) < 2 or word[0] != "-":
            break
        index += 1
        if word == "--":
            break
        for at in range(1, len(word)):
            if word[at] in _HTPASSWD_VALUE_OPTIONS:
                index += at == len(word) - 1  # its value is the next word
                break
            batch = batch or word[at] == "b"
            no_file = no_file or word[at] == "n"
    target = index + (1 if no_file else 2)
    # The password is the last word: htpasswd takes nothing after it, and prose does ("htpasswd -b is insecure ...").
    return [target] if batch and target == len(words) - 1 else []


_NMCLI_SECRETS: Final[frozenset[str]] = frozenset(
    {"psk", "wep-key0", "wep-key1", "wep-key2", "wep-key3", "pin", "password-raw", "mka-cak", "secrets"}
)
"""NetworkManager's secret properties whose names are no credential names (``wifi-sec.psk``, ``gsm.pin``); the
others are (``802-1x.password``, ``wifi-sec.leap-password``, ``wireguard.private-key``)."""


_NMCLI_VALUE_OPTIONS: Final[frozenset[str]] = frozenset(
    {"-f", "--fields", "-g", "--get-values", "-e", "--escape", "-c", "--colors", "-m", "--mode", "-w", "--wait"}
)
"""nmcli's global options that take a value (``-g wifi-sec.psk`` selects the field to print: no secret follows)."""
_NMCLI_NAMED_BY: Final[frozenset[str]] = frozenset({"id", "uuid", "path", "filename"})
"""Words that may stand before a connection's name (``connection modify id Home``)."""


def _past_options(words: Sequence[str | None], takes_value: frozenset[str]) -> int:
    """The index of the first of ``words`` past a command's leading options (each of ``takes_value`` with its value)."""
    index = 0
    while index < len(words) and (word := words[index]) is not None and word.startswith("-"):
        index += 2 if word in takes_value else 1
    return index


def _abbreviates(word: str | None, full: str) -> bool:
    """Whether ``word`` is ``full`` or an abbreviation of it, as nmcli reads its objects and commands."""
    return word is not None and word != "" and full.startswith(word)


def _nmcli_secrets(words: Sequence[str | None]) -> list[int]:
    """nmcli's secrets given as words, read by its grammar: ``device wifi connect SSID password X`` and
    ``device wifi hotspot ... password X`` (the SSID is a name, whatever it says), and a secret property set by
    ``connection modify NAME wifi-sec.psk X`` (``+802-1x.password X``) or ``connection add ... wifi-sec.psk X``.
    After the command, its arguments are pairs of a name and a value; a global option's value (``-g
    wifi-sec.psk``, a field to print) and prose that names nmcli are no such pairs."""
    index = _past_options(words, _NMCLI_VALUE_OPTIONS)
    what, verb, action = (list(words[index : index + 3]) + [None, None, None])[:3]
    if _abbreviates(what, "device") and verb == "wifi":
        if _abbreviates(action, "connect"):
            pairs = index + 4  # past the SSID
        elif _abbreviates(action, "hotspot"):
            pairs = index + 3
        else:
            return []
        secret: Callable[[str], bool] = "password".__eq__
    elif _abbreviates(what, "connection") and (_abbreviates(verb, "modify") or _abbreviates(verb, "add")):
        pairs = index + 2
        while pairs < len(words) and (word := words[pairs]) is not None and word.startswith("--"):
            pairs += 1  # connection modify --temporary
        if _abbreviates(verb, "modify"):
            pairs += 2 if words[pairs : pairs + 1] and words[pairs] in _NMCLI_NAMED_BY else 1  # the connection's name
        secret = _nmcli_property_secret
    else:
        return []
    return [at + 1 for at in range(pairs, len(words) - 1, 2) if (name := words[at]) is not None and secret(name)]


def _nmcli_property_secret(word: str) -> bool:
    """Whether ``word`` names a secret property (``wifi-sec.psk``, ``+802-1x.password``, ``gsm.pin``)."""
    setting, _, name = word.lstrip("+-").rpartition(".")
    return bool(setting) and (ascii_lower(name) in _NMCLI_SECRETS or is_credential_name(name))


_RABBITMQCTL_VALUE_OPTIONS: Final[frozenset[str]] = frozenset({"-n", "--node", "-t", "--timeout"})


def _rabbitmqctl_secrets(words: Sequence[str | None]) -> list[int]:
    """``rabbitmqctl [options] add_user USER PASSWORD``, ``change_password USER PASSWORD`` and ``authenticate_user USER
    PASSWORD`` (``add_user --pre-hashed-password USER HASH`` too): the password's index (it may be left out, and is
    then read from the terminal)."""
    index = _past_options(words, _RABBITMQCTL_VALUE_OPTIONS)
    if index < len(words) and words[index] in ("add_user", "change_password", "authenticate_user"):
        index += 1
        while index < len(words) and (word := words[index]) is not None and word.startswith("--"):
            index += 1  # add_user --pre-hashed-password USER HASH
        if index + 1 < len(words):
            return [index + 1]
    return []


def _net_user_secrets(words: Sequence[str | None]) -> list[int]:
    """Windows's ``net user NAME PASSWORD`` (``/add``, ``/domain`` and its other options anywhere after ``user``):
    the password's index, when ``user`` is followed by exactly two words that are no option, the second no ``*``
    (``net user NAME *`` prompts for it). ``net user`` alone lists the users and ``net user NAME`` shows one; a
    third word that is no option is prose (``net user bob shows his groups``)."""
    if not words or words[0] not in ("user", "USER"):
        return []
    plain = [index for index, word in enumerate(words[1:], 1) if word is None or not word.startswith("/")]
    return [plain[1]] if len(plain) == 2 and words[plain[1]] != "*" else []


_POSITIONAL_COMMANDS: Final[dict[str, Callable[[Sequence[str | None]], list[int]]]] = {
    "htpasswd": _htpasswd_secrets,
    "nmcli": _nmcli_secrets,
    "rabbitmqctl": _rabbitmqctl_secrets,
    "net": _net_user_secrets,
}
_BY_OWN_SEARCH: Final[frozenset[str]] = frozenset({"net"})
"""Positional commands a text is not searched for by name (``net`` is a common word): ``net user`` has its own
search (:data:`_NET_USER`); an argv list naming ``net`` is read by the table all the same."""

_NET_USER: Final = (
    # Only these two spellings (cmd.exe reads any case; agents write these): a one-search gate for the lower case,
    # "USER" first for the upper case (an upper-case letter is rare in text, where a search for "n" stops often).
    ("net user", re.compile(r"net user(?<![\w.-]net user)(?=[ \t])")),
    ("NET USER", re.compile(r"USER(?<=NET USER)(?<![\w.-]NET USER)(?=[ \t])")),
)
_MAX_POSITIONAL_WORDS: Final[int] = 64
"""How many words after a positional command's name are read, at most (nmcli's password may follow a few)."""
# A command's next word on its line: after white space (a quoted name's closing quote first), or, in an argv list
# written as text, a closing quote and a comma; quoted (to its closing quote, or, never closed, the line's end) or
# bare, up to a shell operator.
_NEXT_WORD = re.compile(
    r"""(?:["']?[ \t]*,[ \t]*|["']?[ \t]+)"""
    r"""(?:[bB]?"((?:[^"\\\n\x00]|\\.)*+)"?|[bB]?'([^'\n\x00]*+)'?|((?:\\[ \t]|[^\s"'\x00;|&<>()])++))"""
)


def _command_words(text: str, at: int, end: int) -> list[re.Match[str]]:
    """The words after a command's name ending at ``at``, up to ``end`` (its line's end) or a shell operator, at
    most :data:`_MAX_POSITIONAL_WORDS`: each a match of :data:`_NEXT_WORD`, its last group the word (a quoted
    word's inside)."""
    # A scanner's match() takes each word where the last one ended, in C (a loop of match() calls cost twice as
    # much); CPython's sre has had Pattern.scanner since 2.x, which typeshed leaves out.
    scanner = _NEXT_WORD.scanner(text, at, end)  # type: ignore[attr-defined]
    return list(itertools.islice(iter(scanner.match, None), _MAX_POSITIONAL_WORDS))


def _word_secret(word: str | None) -> bool:
    """Whether a word given as a password holds one: not empty, not ``-`` (asks for it), not a token written."""
    return word is not None and word not in ("", "-") and not word.startswith(ALREADY_TOKENS)
