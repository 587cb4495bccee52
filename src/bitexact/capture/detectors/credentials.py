"""Credentials: by key name, key=value text, Bearer and Basic, and tokens known by their form.

A credential name is one in the table, protocol-vectors.json
``credential_keys.keys``, compared ignoring ASCII case only (a look-alike
letter names another key), or a compound name whose last word is a
credential word (``DB_PASSWORD``, ``client_secret``, ``X-Auth-Token``,
``AWS_SECRET_ACCESS_KEY``, ``DB_PASS``, ``MYSQL_PWD``; docs/capture.md says which). In text, a
credential is found as:

* ``NAME=VALUE`` - a query string, a command line, a config line; the name
  may be URL-encoded (``api%5Fkey``), dotted (``db.password``: its last part
  is compared) or flagged (``--password``); the value ends at white space or
  ``& ; , " ' < > # ) ] }``, or is quoted (to the closing quote, past an
  escaped one and across lines; a quote never closed opens the value all
  the same; a quote after a ``b``, Python's repr of bytes, too), or opens an
  object, array or tuple, replaced whole up to its closing bracket; ``PWD=VALUE`` only among a
  connection string's ``;``-separated pairs (``UID=sa;PWD=x``: alone, it is the shell's working directory);
* ``"NAME": VALUE`` / ``'NAME': VALUE`` - a JSON-like or Python-repr mapping
  in text (values read as above), and ``\\"NAME\\": \\"VALUE\\"``, a JSON
  document held in a JSON string in text (the value read to its own escaped
  closing quote);
* ``NAME: VALUE`` at the start of a line (dotted too) - a header or config line; the rest
  of the line is the value, or, in YAML, the lines indented under it (after a
  block scalar's ``|`` or ``>``, or a bare ``NAME:``); inside a line, a password's label and the one
  word after it (``login failed for bob. Password: hunter2``; not a type, ``password: str``, nor code);
* a name/value object written in text (``{'name': 'password', 'value': 'x'}``, ``Field(name='api_key',
  value='x')``) and a ``[name, value]`` pair (``[('password', 'x')]``), as the walk reads them in data;
* ``Bearer TOKEN`` (a token of 8 or more characters holding a digit or one of
  ``-._~+/=``, or of 20 or more) and ``Basic TOKEN`` (valid base64 of text
  holding a colon);
* ``scheme://user:password@`` in a URL, to the last ``@`` before the host;
* ``--NAME VALUE`` (a flag and its value as two words, or two quoted items of a list written in text:
  ``["--password", "X"]``, one item a line or as bytes too; a switch, ``--no-password``, takes none), and a
  command's own password flag on a line that runs the command, its name bare, with Windows's ``.exe``, or ending a
  path where a shell reads a command, a wrapper's options between (``mysql -pSECRET``, ``/usr/bin/sshpass -p
  SECRET``, ``sudo -u root $HOME/bin/mysql -pSECRET``, curl's ``-u user:SECRET``, ``openssl -passin pass:SECRET``:
  :data:`_COMMAND_PASSWORD_FLAGS`); a bare value may hold a backslash-escaped blank (``-pS3cret\\ Pw1``);
* a password a command standing where a shell reads one takes as a positional word (``htpasswd -b FILE USER
  PASSWORD``, ``nmcli device wifi connect SSID password X``, ``nmcli connection modify NAME wifi-sec.psk X``,
  ``rabbitmqctl add_user USER PASSWORD``, Windows's ``net user NAME PASSWORD``: :data:`_POSITIONAL_COMMANDS`), and
  the ``USER:PASSWORD`` lines ``chpasswd`` reads from ``echo``/``printf`` or a here-string;
* a PostgreSQL password file's line, ``HOST:PORT:DATABASE:USER:PASSWORD``, its password;
* ``["NAME"] = "VALUE"``, a credential key assigned a quoted literal by subscript (``os.environ['DB_PASSWORD']``);
* a secret store's set command (``gh secret set --body``, ``az keyvault secret set --value``), a tool's
  ``config set NAME VALUE`` with a credential NAME (``git config github.token X``, ``aws configure set``),
  poetry's tokens, and Oracle's ``USER/PASSWORD`` (``sqlplus scott/tiger@db``, ``userid=``, ``CONNECT``);
* a ``.netrc`` entry's ``password VALUE`` (after ``machine HOST`` or ``default``, at a line's start);
* ``NAME%3DVALUE``, a pair URL-encoded inside another value (to an encoded ``&`` or ``;``);
* ``NAME => VALUE`` (Ruby, PHP, Perl; the name quoted or not), ``{NAME: "VALUE"`` / ``, NAME: 'VALUE'``
  (an unquoted name in a JavaScript object or a YAML flow mapping, its value quoted) and
  ``<NAME>VALUE</NAME>`` (an XML element, with a namespace prefix and attributes or not, its text or its
  CDATA section's); curl's
  ``-H 'NAME: VALUE'``;
* a token of a known shape (:mod:`~bitexact.credential_shapes`), replaced whole, and a PEM
  private key's lines between its armour lines.

An argv list given as data is read as the command line it is by :func:`argv_secrets`, with the same tables (an
object or a list among its items is a word that is no flag and no value), and a credential-named long flag's value
is the next item of any list.

Only the value is replaced, by ``[CREDENTIAL]``; the name stays. A value that
is already a token (``[CREDENTIAL]``, ``[redacted]``) is left alone, so
applying the policy twice declares nothing new. Every search is anchored on
a literal (``=``, ``":``, a newline, ``earer``, ``-``, ``/``...) so the regex engine
skips through text that holds none.
"""

from __future__ import annotations

import base64
import binascii
import bisect
import functools
import heapq
import itertools
import re
import string
from collections.abc import Callable, Container, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from bitexact.capture.budget import Deadline
from bitexact.capture.detectors.base import FLAG_ONLY, Finding, ascii_lower
from bitexact.capture.detectors.documents import (
    ATTRIBUTES,
    MIRRORED,
    MIRRORED_VALUES,
    MIRRORS,
    QUOTED_SECRET_KIND,
    QUOTED_SECRET_MAPS,
    SECRET_KIND,
    SECRET_MAPS,
    SENSITIVE,
    SENSITIVE_ATTRIBUTES,
)
from bitexact.capture.detectors.ordinary import (
    CURSOR_TOKENS,
    ordinary_column,
    ordinary_text_container,
    ordinary_text_member,
)
from bitexact.capture.terminal import ESC, shown
from bitexact.credential_shapes import BOUNDARY, MARKS, PEM_BEGIN, PEM_END, SHAPES, Shape

NAME = "credentials"
TOKEN = "[CREDENTIAL]"

# protocol-vectors.json credential_keys.keys: one table, every SDK's copy is this one.
CREDENTIAL_KEYS: Final[tuple[str, ...]] = (
    "access_token",
    "api-key",
    "api_key",
    "apikey",
    "auth",
    "authorization",
    "key",
    "password",
    "secret",
    "sig",
    "signature",
    "subscription-key",
    "token",
    "x-api-key",
)
TABLE_KEYS: Final[frozenset[str]] = frozenset(CREDENTIAL_KEYS)
HTTP_CREDENTIAL_HEADERS: Final[frozenset[str]] = frozenset({"cookie", "set-cookie", "proxy-authorization"})
"""Headers that hold a credential whatever their value (RFC 6265 cookies, RFC 9110 proxy credentials)."""
CREDENTIAL_NAMES: Final[frozenset[str]] = TABLE_KEYS | HTTP_CREDENTIAL_HEADERS
"""The detector's exact names: the table, and HTTP's credential headers (a wrapped client redacts those
itself; another language's client may not, and its events meet this detector)."""
TOOL_SECRET_NAMES: Final[frozenset[str]] = frozenset({
    "client-key-data", "secret_key_base", "secretstring", "secretbinary",
    "cvv", "cvv2", "cvc", "cvc2", "csc", "pin", "pin_code", "pincode", "otp",
    "requirepass", "masterauth", "authentication_string",
})
"""Names of a secret that no credential word ends: a kubeconfig's ``client-key-data`` (a private key), Rails'
``SECRET_KEY_BASE``, AWS Secrets Manager's ``SecretString`` / ``SecretBinary``, a card's verification code and a
PIN (``cvv``, ``pin``: PCI's sensitive authentication data), a one-time passcode (``otp``) and (rules version 8) Redis's
passwords, ``requirepass`` and ``masterauth`` (``requirepass`` ends in ``pass`` with no word boundary), and (rules version 13)
mysql's and MariaDB's ``authentication_string`` (``mysql.user``'s column, a member of ``mysql.global_priv``'s JSON: always
the password's hash). The detector's, not the table's: a wrapped client's URL and header rule stays the table's, as
every SDK's."""

# Values that are already a replacement token: left as they are.
ALREADY_TOKENS: Final[tuple[str, ...]] = (TOKEN, "[redacted]", "%5Bredacted%5D", "%5bredacted%5d")
_LONGEST_ALREADY: Final[int] = max(map(len, ALREADY_TOKENS))
"""A span longer than this is none of :data:`ALREADY_TOKENS`, unsliced (a container's whole text)."""

_PERCENT = re.compile(r"%([0-9A-Fa-f]{2})")


def percent_decode(text: str) -> str | None:
    """Strictly URL-decode ``text`` as UTF-8; ``None`` when it does not decode."""
    if "%" not in text:
        return text
    if text.count("%") != len(_PERCENT.findall(text)):
        return None
    try:
        return bytes(
            int(piece[1:3], 16) if piece.startswith("%") else ord(piece)
            for piece in re.findall(r"%[0-9A-Fa-f]{2}|.", text, re.DOTALL)
        ).decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None


# Where the table is silent: a compound name whose last word says credential (db_password,
# CLIENT_SECRET, refreshToken, AWS_SECRET_ACCESS_KEY, DB_PASS, MYSQL_PWD). "key" alone is too common
# a last word (sort_key, cache_key): it counts after a word that says which key is secret.
COMPOUND_ENDINGS: Final[tuple[str, ...]] = (
    "password", "passwd", "passphrase", "secret", "token", "key", "pass", "pwd", "signature")
_ANYWHERE: Final[tuple[str, ...]] = ("password", "passwd", "passphrase")
"""Endings that name a credential even with no word boundary before them (PGPASSWORD)."""
_PASSWORD_ENDINGS: Final[tuple[str, ...]] = (*_ANYWHERE, "pass", "pwd")
"""How a password's own name ends (``password``, ``passwd``, ``passphrase``, ``DB_PASS``, ``MYSQL_PWD``)."""
_SECRET_KEYS: Final[frozenset[str]] = frozenset(
    {"api", "access", "secret", "private", "signing", "encryption", "master", "subscription",
     "tls", "ssl", "account", "auth", "functions",  # tls.key, Azure's AccountKey, X-Auth-Key, x-functions-key
     "app"}  # rules version 8: Laravel's APP_KEY (the application's encryption key), Datadog's DD_APP_KEY
)
_SEPARATORS: Final[str] = "_-. "
"""What stands between a name's words: ``db_password``, ``X-Auth-Token``, ``db.password``, and (rules version 7) a
blank, as a form's or a password manager's label writes a name (``"API Key"``, ``"Client Secret"``)."""
_SIGNED_URL_SIGNATURES: Final[frozenset[str]] = frozenset({"amz", "goog"})
"""Words before ``signature`` that make it a presigned URL's signature, a bearer credential until it expires
(S3's ``X-Amz-Signature``, Cloud Storage's ``X-Goog-Signature``): ``email_signature`` or ``type_signature`` is none."""
JOINED_NAMES: Final[frozenset[str]] = frozenset({
    "secretkey", "privatekey", "accesskey", "secretaccesskey", "authkey", "accesstoken", "refreshtoken",
    "identitytoken", "sessiontoken", "authtoken", "apitoken", "clientsecret",
})
"""Compound names written joined in lower case (rules version 7), where no word boundary says the last word is a
credential word (``xtoken`` and ``monkey`` are none): docker's config.json ``identitytoken``, ``secretkey``."""
_NOT_SECRET_TOKENS: Final[frozenset[str]] = frozenset(
    {"bos", "eos", "pad", "unk", "cls", "sep", "mask", "stop", "start", "end"}
)
"""Words before ``_token`` that name a tokenizer's special token (``eos_token``: ``"</s>"``), no secret."""
_NOT_SECRET_PASSES: Final[frozenset[str]] = frozenset({
    # which pass of a process (a compiler's, a renderer's, a scan's)
    "first", "second", "third", "last", "final", "next", "prev", "one", "two", "single", "multi", "each", "every",
    "render", "shadow", "depth", "lint", "compile", "opt", "num", "max", "min", "count", "total",
    # a ticket, or a word the ending only looks like (by_pass, sur_pass)
    "boarding", "bus", "day", "season", "ski", "free", "hall", "by", "sur", "over", "under",
    # whether something passed (its value a flag or a count)
    "test", "tests", "check", "checks", "all", "any", "did", "does", "is", "has", "can", "should", "must", "will",
})
"""Words before ``_pass`` that say which pass, or whether something passed: no secret (``first_pass``)."""
_NOT_SECRET_PWDS: Final[frozenset[str]] = frozenset({"start", "initial", "orig", "saved", "work", "working", "home", "base"})
"""Words before ``_pwd`` that name a working directory kept by a script (``start_pwd=$(pwd)``). ``old`` and ``new``
are not among them: a change of password sends ``old_pwd`` and ``new_pwd``."""
_ENDING_RULES: Final[dict[str, tuple[frozenset[str], bool]]] = {
    "key": (_SECRET_KEYS, True),
    "signature": (_SIGNED_URL_SIGNATURES, True),
    "token": (_NOT_SECRET_TOKENS | CURSOR_TOKENS, False),  # and a pagination cursor (ordinary.py)
    "pass": (_NOT_SECRET_PASSES, False),
    "pwd": (_NOT_SECRET_PWDS, False),
}
"""For the endings a word before must qualify: its words, and whether they are the ones that make a credential
(``api_key``) or the ones that do not (``eos_token``). ``secret`` counts whatever word says whose."""
_BARE_WORDS: Final[frozenset[str]] = frozenset({"key"})
"""Table names too common as a bare word for the forms where the spec is silent: ``<Key>`` is an S3
object's name, ``--key 2`` a sort column (``key=VALUE`` and ``"key":`` stay the table's)."""
_LAST_WORD = re.compile(r"(?:[A-Z]?[a-z0-9]+|[A-Z0-9]+)\Z")
_SWITCH = re.compile(r"(?:no|without|skip|ask|prompt|disable)[-_.]", re.IGNORECASE)
"""How a switch that takes no value opens (``--no-password``, ``--ask-password``, ``--skip-auth-token``): the word
after it is no secret."""


def _compound_credential(name: str, lower: str) -> bool:
    """Whether ``name`` (``lower`` its ASCII lower case, which ends in one of :data:`COMPOUND_ENDINGS`) is
    a compound name ending in a credential word."""
    if lower.endswith(_ANYWHERE):
        return True
    ending = next(ending for ending in COMPOUND_ENDINGS if lower.endswith(ending))
    head, last = name[: -len(ending)], name[-len(ending) :]
    if not head:
        return False  # the bare word: the table decides
    if head[-1] in _SEPARATORS:
        head = head.rstrip(_SEPARATORS)
    elif not ("A" <= last[0] <= "Z" and ("a" <= head[-1] <= "z" or "0" <= head[-1] <= "9")):
        return False  # no word boundary: monkey, xtoken
    if ending not in _ENDING_RULES:
        return True  # secret: whatever word says whose
    words, say_secret = _ENDING_RULES[ending]
    before = _LAST_WORD.search(head)
    said = ascii_lower(before.group()) if before is not None else ""
    return (said in words) is say_secret


@functools.lru_cache(maxsize=4096)
def is_credential_name(name: str) -> bool:
    """Whether ``name`` (an object key, a header, a parameter) names a credential: in the credential
    table, or a compound name whose last word is a credential word (``client_secret``).

    Asked once per object key of every step, and a step's records repeat their keys: the answers
    are kept (names only, never values), which makes the check cheaper than the table lookup was.

    A name holding terminal escape codes (an object key a tool coloured, ``ESC[1mpassword ESC[0m``) is also read
    as a terminal shows it (:func:`bitexact.capture.terminal.shown`), as the scanner reads a text holding ESC: a
    colour around or inside a name hides no credential. Asked only of a name the table did not answer, and kept.
    """
    lower = ascii_lower(name)
    return (lower in CREDENTIAL_NAMES or lower in TOOL_SECRET_NAMES or lower in JOINED_NAMES
            or (lower.endswith(COMPOUND_ENDINGS) and _compound_credential(name, lower))
            or (ESC in name and is_credential_name(shown(name))))


@functools.lru_cache(maxsize=4096)
def is_credential_text_name(name: str) -> bool:
    """Whether a name written in text (``api%5Fkey``, ``--token``, ``db.password``) is a credential."""
    decoded = percent_decode(name)
    if decoded is None:
        decoded = name
    # No credential name holds a ".": the last dotted part decides (db.password).
    return is_credential_name(decoded.lstrip("-").rpartition(".")[2])


@functools.lru_cache(maxsize=4096)
def is_credential_word(name: str) -> bool:
    """Whether a name written where the credential table is silent names a credential: a long flag's
    (``--password``, ``--api-key``, ``--db.password``; its dashes may be left off), so the word after it is its
    value, or an XML element's. A credential text name, but not the bare table word ``key`` (``--key 2`` is a
    sort column, ``<Key>`` an S3 object's name), nor a switch (``--no-password``). One answer for a flag on a line
    and in an argv list. Kept, as :func:`is_credential_name` keeps its answers: asked of names only (a flag's, an
    element's), never values."""
    bare = name.lstrip("-")
    return ascii_lower(bare) not in _BARE_WORDS and _SWITCH.match(bare) is None and is_credential_text_name(name)


NAME_MEMBERS: Final[tuple[str, ...]] = ("name", "Name", "key", "Key", "label", "Label")
"""The members naming a name/value object's variable (Kubernetes' env, AWS SSM, GitLab CI, HAR; a password manager's
field's ``label``, 1Password's ``{"label": "API Key", "value": "x"}``, under rules version 7); the walk reads them in
data, a document's walk in a JSON document, :meth:`CredentialsDetector._quoted` and ``_key_value`` in text."""
VALUE_MEMBERS: Final[tuple[str, ...]] = ("value", "Value")
"""The members holding a name/value object's value."""
_MEMBER_KEYS: Final[frozenset[str]] = frozenset(NAME_MEMBERS + VALUE_MEMBERS)
_NAME_PARTS = re.compile(r"[/.]")


@functools.lru_cache(maxsize=4096)
def names_credential(name: str) -> bool:
    """Whether a name/value object's name names a credential: the whole name, or its last ``/``- or
    ``.``-separated part (an SSM parameter's path ``/prod/db/password``, ``spring.datasource.password``).
    Kept per name, as :func:`is_credential_name` keeps its answers: asked of names only, never values."""
    return is_credential_name(name) or is_credential_name(_NAME_PARTS.split(name)[-1])


def _in_connection_string(text: str, name: int, value_end: int) -> bool:
    """Whether the pair whose name starts at ``name`` and whose value ends at ``value_end`` is one of a
    connection string's ``;``-separated pairs (ODBC's and ADO.NET's ``UID=sa;PWD=x``): a ``;`` just before
    the name or just after the value. ``PWD=/home/bob`` alone is the shell's working directory."""
    before = name
    while before > 0 and text[before - 1] in " \t":
        before -= 1
    return (before > 0 and text[before - 1] == ";") or text.startswith(";", value_end)


_REFERENCE = re.compile(
    r"\$\{\{ *[A-Za-z_][A-Za-z0-9_.-]{0,200}+ *\}\}"  # GitHub Actions: ${{ secrets.X }}
    r"|\$\{[A-Za-z_][A-Za-z0-9_.]{0,200}+\}"  # a shell's, compose's, npm's: ${X} (no default: ${X:-pw} holds one)
    r"|\$[A-Z_][A-Z0-9_]{0,200}+(?![a-z])"  # $X, an environment variable's name in capitals ($ecret1 is a password)
    r"|\{\{-? *\.[A-Za-z_][A-Za-z0-9_.]{0,200}+(?: *\| *[a-z]+)* *-?\}\}"  # Helm / Go templates: {{ .Values.x }}
)
"""A value that is a whole variable or template reference (rules version 7): it names where the secret is, and
is left whole (``TOKEN=${GITHUB_TOKEN}`` lost all but its closing ``}`` to a malformed ``[CREDENTIAL]}``)."""
_AFTER_REFERENCE: Final[str] = " \t\r\n&;,\"'<>#)]}\x00\\"
_LEFT_LINE_VALUES: Final[frozenset[str]] = frozenset(
    {"true", "false", "True", "False", "TRUE", "FALSE", "null", "Null", "NULL", "~", '""', "''"})
"""A ``NAME: VALUE`` line's values that hold no secret: YAML's booleans and nulls
(``automountServiceAccountToken: false``), and (rules version 16) its empty strings (``password: ""``), left as in
data."""


_QUOTED_REFERENCE = re.compile(rf"""(?:{_REFERENCE.pattern})|"(?:{_REFERENCE.pattern})"|'(?:{_REFERENCE.pattern})'""")
"""A line's whole value that is a reference, quoted or not (``password: "{{ .Values.pw }}"``)."""


def _unless_reference(text: str, span: tuple[int, int] | None) -> tuple[int, int] | None:
    """A credential name's value ``span``, or ``None`` when it is a whole reference (``TOKEN=${GITHUB_TOKEN}``):
    where the secret is, left whole. Only after a name: a command's password word (``echo "$PW" | docker login``)
    is replaced whatever it is."""
    if span is None or text[span[0]] not in "${" or not is_reference(text, span[0], span[1]):
        return span
    return None


def is_reference(text: str, start: int, end: int) -> bool:
    """Whether the value read at ``start`` (to ``end``, perhaps short of a closing brace) is a whole variable or
    template reference (:data:`_REFERENCE`), ending where a value ends."""
    reference = _REFERENCE.match(text, start)
    if reference is None or reference.end() < end:
        return False
    return reference.end() == len(text) or text[reference.end()] in _AFTER_REFERENCE


def sensitive_attribute_names(paths: Any) -> list[str]:
    """The attribute names a Terraform state's ``sensitive_attributes`` (``paths``) marks as secrets, in order,
    once each (rules version 10): each path's first step when it is ``{"type": "get_attr", "value": NAME}`` (a
    path is a list of steps; a step given alone is read as a path of one). A deeper path (``password[0]``) marks
    the whole attribute it opens in."""
    names: list[str] = []
    if not isinstance(paths, list):
        return names
    for path in paths:
        step = path[0] if isinstance(path, list) and path else path
        if isinstance(step, dict) and step.get("type") == "get_attr":
            name = step.get("value")
            if isinstance(name, str) and name not in names:
                names.append(name)
    return names


MAX_MASK_DEPTH: Final[int] = 32
"""How deep a ``sensitive_values`` member is read for a ``true`` leaf (rules version 11): a mirror nested deeper
(a Kubernetes manifest's is a dozen levels) is read as marking its attribute, so that a mirror nested in a mirror is
never read to its end again by each one holding it."""


def sensitive_value_names(mask: Any, values: Any) -> list[str]:
    """The members of a ``terraform show -json`` resource's ``values`` (an object) that its ``sensitive_values``
    (``mask``, an object mirroring it) marks, in order (rules version 11): each key of ``mask`` whose member is
    ``true``, or a container holding a ``true`` leaf (a nested block's attribute marks the whole block: a state's
    deeper path marks the attribute it opens in so too), and that ``values`` holds. ``false``, ``{}`` and ``[]``
    (a mirror of what is not sensitive) mark none."""
    names: list[str] = []
    if not isinstance(mask, dict) or not isinstance(values, dict):
        return names
    for name, mirror in mask.items():
        if isinstance(name, str) and name in values and mask_marks(mirror):
            names.append(name)
    return names


def mask_marks(mirror: Any) -> bool:
    """Whether a ``sensitive_values`` member is ``true`` or holds a ``true`` leaf, read to :data:`MAX_MASK_DEPTH`
    without recursion (a container deeper marks)."""
    pending: list[tuple[Any, int]] = [(mirror, 0)]
    while pending:
        item, depth = pending.pop()
        if item is True:
            return True
        if isinstance(item, (dict, list)):
            if depth >= MAX_MASK_DEPTH:
                return True
            children = item.values() if isinstance(item, dict) else item
            pending.extend((child, depth + 1) for child in children)
    return False


def holds_credential(value: Any) -> bool:
    """Whether a value stored under a credential key is something to replace.

    ``None``, booleans, an empty string, a value that is already a token and (rules version 7) a whole variable
    or template reference (``${DB_PASSWORD}``, ``${{ secrets.X }}``, ``{{ .Values.pw }}``) carry no secret.
    """
    if value is None or isinstance(value, bool):
        return False
    if isinstance(value, str):
        return value != "" and value not in ALREADY_TOKENS and not (
            value[0] in "${" and _REFERENCE.fullmatch(value) is not None)
    if isinstance(value, (dict, list, tuple)):
        return len(value) > 0
    return True


_EQ = re.compile("=")
_NAME_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_%.-")
_MAX_NAME = 96
# A quoted value reads to its closing quote, past an escaped quote and across lines (a .env or shell
# value, as "NAME": "..." reads); a quote never closed (a line cut short) still opens a value. A quote
# may follow a "b": Python's repr of bytes (password=b'x') is the quoted value, not the "b" before it.
_VALUE = re.compile(
    r"""[ \t]*(?:[bB]?"((?:[^"\\\x00]|\\.)*)"|[bB]?'((?:[^'\\\x00]|\\.)*)'|["']?((?:\\[ \t]|[^\s&;,"'<>#)\]}\x00])++))"""
)
# A quoted name, then JSON's white space, then the colon: pretty printers write `"password" : "x"`.
_DQ_COLON = re.compile('"[ \t\r\n]*:')
_SQ_COLON = re.compile("'[ \t\r\n]*:")
# A name may be quoted as \"NAME\": a JSON document held in a JSON string in text (body="{\"password\": ...}").
_QUOTED_NAME = re.compile(r"""(\\?["'])([A-Za-z0-9_%.\-]{1,96})\1\Z""")
# Rules version 7: its words separated by one blank each, "API Key": "x", as a form or a password manager labels one.
# Tried only where _QUOTED_NAME finds none and a blank stands between the quotes before the colon: as the only
# search it cost a third more on every "...": of JSON in text.
_BLANK_QUOTED_NAME = re.compile(r"""(\\?["'])([A-Za-z0-9_%.\-]{1,48}(?: [A-Za-z0-9_%.\-]{1,48}){1,3})\1\Z""")
# What stands between an escaped name's colon and its value: white space, as written or escaped (\n).
_ESCAPED_SPACE = re.compile(r"(?:[ \t\r\n]|\\[nrt])*")
_ESCAPED_UNQUOTED = re.compile(r"""[^\s&;,"'<>#)\]}\x00\\]+""")
# As _VALUE; a value opening an object, array or tuple ("(", Python's other array) is read by _bracketed.
_COLON_VALUE = re.compile(
    r"""[ \t\r\n]*(?:[bB]?"((?:[^"\\\x00]|\\.)*)"|[bB]?'((?:[^'\\\x00]|\\.)*)'|["']?(?!\()([^\s,;}\])"'\x00{\[]+))"""
)
_HEADER_FLAGS = re.ASCII | re.IGNORECASE
# A YAML sequence item ("- password: x") opens with "- ": the name after it is a mapping key all the same;
# so does a header curl -v prints ("> X-Api-Key: x" sent, "< Set-Cookie: x" received), or a quoted line.
# Group 1 is what stands before the name (its column), group 2 the value on the line, if any. The name
# may be dotted, its last part compared, as in NAME=VALUE (db.password: x in .properties, tls.key: in YAML).
# Each dotted part is bounded (a name is at most _MAX_NAME characters, as in NAME=VALUE): unbounded,
# every line start of a long word was read to its end, about 7 us per 1,000 characters, on the hot
# path of every recorded call.
# The name's last dotted part ends as a credential name can (the lookbehinds, one per ending: each
# must be of fixed width); whether it is one (in the table, or a compound name) is checked after.
_ALL_ENDS = CREDENTIAL_NAMES | TOOL_SECRET_NAMES | set(COMPOUND_ENDINGS)
NAME_ENDS = "|".join(f"(?<={re.escape(ending)})" for ending in sorted(  # the shortest: each implies the rest
    e for e in _ALL_ENDS if not any(e != other and e.endswith(other) for other in _ALL_ENDS)))
"""Lookbehinds, one per ending, for "a name read up to here ends as a credential name can" (a pattern piece;
the name is then asked :func:`is_credential_text_name`)."""
_HEADER_REST = (
    # The colon is looked for first: most line starts hold none, and the lookbehinds (one per ending) are the cost.
    rf"([ \t]*(?:[-<>][ \t]+)?)(?:[A-Za-z0-9_-]{{1,96}}+\.){{0,8}}(?P<name>[A-Za-z0-9_-]{{1,96}}+)(?=[ \t]*:)"
    rf"(?:{NAME_ENDS})"
    rf"[ \t]*:[ \t]*(?P<value>[^\r\n\x00]*[^\s\x00])?"
)
# A YAML block scalar's header ("|", ">-", "|2+"), perhaps with a comment: its value is the lines below.
_BLOCK_HEADER = re.compile(r"[|>](?:[1-9][+-]?|[+-][1-9]?)?(?:[ \t]+#[^\r\n\x00]*)?")
_LINE = re.compile(r"([ \t]*)([^\n\x00]*)(\n|(?=\x00)|\Z)")
_HEADER_NL = re.compile(r"\n" + _HEADER_REST, _HEADER_FLAGS)
_HEADER_NUL = re.compile(r"\x00" + _HEADER_REST, _HEADER_FLAGS)
_HEADER_START = re.compile(_HEADER_REST, _HEADER_FLAGS)
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
# A flag and its value as two words (--password hunter2), or as two quoted items of an argv list written as
# text (["--password", "hunter2"], a repr's ['--password', 'hunter2'] or [b'--password', b'hunter2'], pretty-printed
# one item a line); the value may not be the next flag.
_FLAG_NAME = r"[A-Za-z0-9][A-Za-z0-9_.-]{0,95}"
_FLAG = re.compile(rf"""--({_FLAG_NAME}+)(?:[ \t]+(?=[^\s-])|["'][ \t]*,[ \t\r\n]*+[bB]?(?=["'][^\s"'-]))""")
_ARGV_FLAG = re.compile(_FLAG_NAME)  # a long flag as an argv list's item: the same names
# An XML element named as a credential (<wsse:Password Type="...">x</wsse:Password>): its text.
_OPEN_TAG_PART = r"<((?:[A-Za-z_][\w.-]{0,40}:)?([A-Za-z_][\w.-]{0,95}))(?:[ \t\r\n][^<>\x00]{0,1024})?>"
_ELEMENT = re.compile(_OPEN_TAG_PART + r"([^<\x00]{1,4096})</\1>")
# ... or what its CDATA section holds (<password><![CDATA[x]]></password>), found from the section's start:
# the open tag just before it, read back from its ">". Not one pattern with _ELEMENT: a lazy search for
# "]]>" from every element's start read 4 KiB each time (1 MiB of "<password><![CDATA[": 2.2 s).
_CDATA = "<![CDATA["
_OPEN_TAG = re.compile(_OPEN_TAG_PART + r"\Z")
_MAX_OPEN_TAG: Final[int] = 1200
_MAX_CDATA: Final[int] = 4096
_XML_SPACE = " \t\r\n"
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
# A pair written URL-encoded inside another value (next=%2Flogin%3Fpassword%3Dhunter2%26a%3Db): "=" is
# %3D; the value ends where an encoded "&" or ";" does, or where a plain value would.
# Rules version 9: the same search finds a pair encoded twice (password%253Dx, %25 the encoded "%") and a JSON member
# URL-encoded ("password":"x" as %22password%22%3A%22x%22, a JSON body in a query string or a form): one pass from
# each "%", as before.
# Rules version 10: a JSON member encoded twice (%2522password%2522%253A%2522x%2522: a JSON body in a query string
# inside another URL's query), its quotes %2522 and its colon %253A.
_ENCODED_EQ = re.compile(r"%(?:25)?3[Dd]|%22(?:%20|\+)*+%3[Aa]|%2522(?:%2520|%20|\+)*+%253[Aa]")
_ENCODED_VALUE = re.compile(r"""(?:(?!%2[6]|%3[Bb])[^\s&;,"'<>#)\]}\x00])+""")
_TWICE_ENCODED_VALUE = re.compile(r"""(?:(?!%2[6]|%3[Bb]|%252[6]|%253[Bb])[^\s&;,"'<>#)\]}\x00])+""")
_ENCODED_MEMBER_VALUE = re.compile(
    r"""(?:%20|\+)*+(?:%22((?:[^%\s&\x00]|%5[Cc]%[0-9A-Fa-f]{2}|%(?!22)[0-9A-Fa-f]{2})*+)%22"""
    r"""|((?:[^%\s&;"'<>\x00]|%(?!2[Cc]|7[Dd]|5[Dd]|22)[0-9A-Fa-f]{2})++))"""
)
"""An encoded JSON member's value: a string's content between its encoded quotes (an escaped quote, %5C%22, inside
it), or a bare value up to the encoded comma, brace, bracket or quote after it (never past a quote: no value is
read again from each member of a run of them)."""
_ESCAPED_ENCODED_MEMBER_VALUE = re.compile(
    r"""(?:%20|\+)*+(?:%5[Cc]%22((?:[^%\s&\x00]|%5[Cc]%5[Cc]%5[Cc]%22|%5[Cc]%5[Cc]|%5[Cc](?!%22)"""
    r"""|%(?!5[Cc]|22)[0-9A-Fa-f]{2})*+)%5[Cc]%22"""
    r"""|((?:[^%\s&;"'<>\x00]|%(?!2[Cc]|7[Dd]|5[Dd]|22|5[Cc])[0-9A-Fa-f]{2})++))"""
)
"""Rules version 11: the value of a URL-encoded JSON member held in a JSON string (``%5C%22password%5C%22%3A%5C%22
x%5C%22``, ``{\"password\":\"x\"}`` encoded): a string's content between its escaped quotes, an escaped quote
inside it written ``%5C%5C%5C%22``, never past another quote; or a bare value, as :data:`_ENCODED_MEMBER_VALUE`
reads one."""
_TWICE_ENCODED_MEMBER_VALUE = re.compile(
    r"""(?:%2520|%2[Bb]|%20|\+)*+"""
    r"""(?:%2522((?:[^%\s&\x00]|%255[Cc]%25[0-9A-Fa-f]{2}|%25(?!22)[0-9A-Fa-f]{2}|%(?!25)[0-9A-Fa-f]{2})*+)%2522"""
    r"""|((?:[^%\s&;"'<>\x00]|%25(?!2[Cc]|7[Dd]|5[Dd]|22)[0-9A-Fa-f]{2}|%(?!25)[0-9A-Fa-f]{2})++))"""
)
"""A twice-encoded JSON member's value (rules version 10), as :data:`_ENCODED_MEMBER_VALUE` reads one encoded once:
each ``%`` of the once-encoded text written ``%25``."""
_TWICE_ESCAPED_ENCODED_MEMBER_VALUE = re.compile(
    r"""(?:%2520|%2[Bb]|%20|\+)*+(?:%255[Cc]%2522((?:[^%\s&\x00]|%255[Cc]%255[Cc]%255[Cc]%2522|%255[Cc]%255[Cc]"""
    r"""|%255[Cc](?!%2522)|%25(?!5[Cc]|22)[0-9A-Fa-f]{2}|%(?!25)[0-9A-Fa-f]{2})*+)%255[Cc]%2522"""
    r"""|((?:[^%\s&;"'<>\x00]|%25(?!2[Cc]|7[Dd]|5[Dd]|22|5[Cc])[0-9A-Fa-f]{2}|%(?!25)[0-9A-Fa-f]{2})++))"""
)
"""Rules version 12: the value of a JSON member held in a JSON string and URL-encoded twice (``%255C%2522password
%255C%2522%253A%255C%2522x%255C%2522``), as :data:`_ESCAPED_ENCODED_MEMBER_VALUE` reads one encoded once: each ``%``
of the once-encoded text written ``%25``."""
_ENCODED_BACKSLASH: Final[frozenset[str]] = frozenset(("%5C", "%5c"))
_TWICE_ENCODED_BACKSLASH: Final[frozenset[str]] = frozenset(("%255C", "%255c"))
_ENCODED_MEMBER_NAME = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_ENCODED_SEPARATORS = re.compile(r"[?&;/=\s]")
# curl's -H / --header with a credential header (-H 'X-Api-Key: k'): the header's value, to its quote.
_HEADER_FLAG = re.compile(
    r"""-(?:H|-header)[ \t]*=?[ \t]*(?:"([A-Za-z0-9_-]{1,96}+)[ \t]*:[ \t]*([^"\r\n\x00]+)"|"""
    r"""'([A-Za-z0-9_-]{1,96}+)[ \t]*:[ \t]*([^'\r\n\x00]+)'|([A-Za-z0-9_-]{1,96}+):[ \t]*([^\s"'\x00]+))"""
)


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
    r":(\$(?:apr1|2[abxy]|1|5|6)\$[./0-9A-Za-z$]{8,}+|\{SHA\}[A-Za-z0-9+/]{27}=)(?=[ \t]*+(?:\r?\n|\x00|\\n|\Z))")
_HTPASSWD_COLON = re.compile(r":(?:\$|\{SHA\})")
_HTPASSWD_STOPS: Final[str] = " \t\r\n\x00:"
_MAX_HTPASSWD_USER: Final[int] = 256
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
_NOTE_MARKS = r"(?:[ \t]*+(?:>|[-*+](?=[ \t])|[0-9]{1,9}+[.)](?=[ \t]))){0,8}+[ \t]*+"
"""Rules version 17: what a markdown note puts before a configuration line it quotes or lists: a blockquote's ``>``
marks and a list item's marker (``- ``, ``* ``, ``+ ``, ``1. ``, ``1) ``, a blank after it), nested up to eight deep,
with the blanks between them."""
_ACL_FILE_REST = (  # rules version 17: after a markdown note's marks too (_first_word)
    rf"{_NOTE_MARKS}(?:user[ \t]++[^\s\x00]++((?:[ \t]++{_ACL_RULE})++)[ \t]*+(?=\r?\n|\x00|\Z)|{_REDIS_MIXED_NAME})")
_ACL_FILE_LINES = (re.compile(_ACL_FILE_REST), re.compile("\n" + _ACL_FILE_REST), re.compile("\x00" + _ACL_FILE_REST))
"""A Redis ACL file's line at the text's start (matched there), after a newline, after a NUL (each searched); or
(rules version 15, group 1 None) a configuration's password name in a mixed case opening its line."""
_REDIS_PASSWORD_ANY_CASE = re.compile("((?i:requirepass|masterauth))" + _REDIS_VALUE_WORD)
_REDIS_PASS_ANY_CASE = re.compile(r"-(?i:pass)[ \t]++")
_READ_CASES: Final[tuple[str, ...]] = ("pass", "PASS", "Pass")
"""How the other passes spell a ``-pass`` name's last word (:data:`_REDIS_PASS`, :data:`_REDIS_PASS_CASED`)."""
_REDIS_CONFIG_PASSWORDS: Final[frozenset[str]] = frozenset(
    {"requirepass", "masterauth", "tls-key-file-pass", "tls-client-key-file-pass"})
"""redis.conf's password names, as ``CONFIG SET`` takes them (in any case)."""
# A PuTTY key file's private part: its line count, each line of base64 (a real or a written line break after it).
_PPK_PRIVATE = re.compile(r"Private-Lines:[ \t]*+([0-9]{1,6}+)[ \t]*+(?:\r?\n|\\r\\n|\\n)")
_PPK_LINE = re.compile(r"([A-Za-z0-9+/=]{1,128}+)[ \t]*+(?:\r?\n|\\r\\n|\\n|(?=\x00)|\Z)")
_PPK_MAC = re.compile(r"Private-MAC:[ \t]*+([0-9A-Fa-f]{16,128}+)")
_MAX_PPK_LINES: Final[int] = 4096


# A Kubernetes Secret (rules version 8): its kind's line (YAML), its data maps' keys, and a JSON text's parts.
_KIND_SECRET = re.compile(r"kind:[ \t]*+([\"']?)Secret\1[ \t]*+(?:#[^\n]*+)?(?=\r?\n|\Z)")
_SECRET_DATA = re.compile(r"(?:data|stringData):[ \t]*+(?:#.*)?\Z")
_KUBE_VALUE = re.compile(r"""[ \t]*+(?:"(?:[^"\\\r\n]|\\.)*+"|'[^'\r\n]*+'|[^\s:#'"][^\r\n:]*+):[ \t]*+([^\r\n]*)""")
_JSON_PART = re.compile(r'"((?:[^"\\\x00]|\\.)*+)"([ \t\r\n]*+:)?|[{}\[\]]')
_KEY, _STRING, _OPEN, _CLOSE = range(4)
"""What a part of JSON written inside a text is (:func:`_json_parts`)."""


def _json_parts(text: str, deadline: Deadline) -> Iterator[tuple[int, re.Match[str]]]:
    """The strings (a key when a ``:`` follows it), and the brackets, of JSON written inside ``text``, in order,
    the deadline checked at each: what the rules that read JSON in text walk, each with its own stack of open
    containers (a Secret's data maps, Terraform's sensitive values, a state's sensitive attributes). A string's
    content is group 1 of its match."""
    for part in _JSON_PART.finditer(text):
        deadline.check()
        char = part.group()[0]
        if char == '"':
            yield (_STRING if part.group(2) is None else _KEY), part
        else:
            yield (_OPEN if char in "{[" else _CLOSE), part
_SAW_SENSITIVE: Final[int] = 1
_SAW_SENSITIVE_ATTRIBUTES: Final[int] = 2
_SAW_SENSITIVE_VALUES: Final[int] = 4
_PLAIN, _PATHS, _PATH, _STEP = 0, 1, 2, 3
"""A container's part in a Terraform state's instance (rules version 10): none, its ``sensitive_attributes`` list,
one path in it, a path's first step (or a step given alone in the list)."""


@dataclass(slots=True)
class _StateFrame:
    """One open container of a text read for a state's instances (:meth:`CredentialsDetector._state_attributes`)."""

    kind: int
    opened: int
    key: str | None = None  # the last key read, while its value is not
    spans: dict[str, list[tuple[int, int]]] | None = None  # an "attributes" object's members' value spans
    attributes: dict[str, list[tuple[int, int]]] | None = None  # an instance's attributes (its spans)
    names: list[str] | None = None  # an instance's, or its paths list's, sensitive names
    step: dict[str, str] | None = None  # a step's "type" and "value"
    seen: bool = False  # a path: whether its first element was read

    @classmethod
    def opening(cls, owner: _StateFrame | None, char: str, at: int) -> _StateFrame:
        """The frame of a container opening with ``char`` at ``at`` inside ``owner``."""
        kind = _PLAIN
        if owner is not None:
            if char == "[" and owner.key == SENSITIVE_ATTRIBUTES:
                kind = _PATHS
            elif owner.kind == _PATHS:
                kind = _PATH if char == "[" else _STEP
            elif owner.kind == _PATH and not owner.seen and char == "{":
                kind = _STEP
            owner.seen = True
        spans: dict[str, list[tuple[int, int]]] | None = (
            {} if char == "{" and owner is not None and owner.key == ATTRIBUTES else None)
        return cls(kind, at, spans=spans)


@dataclass(slots=True)
class _ShowFrame:
    """One open container of a text read for ``terraform show -json``'s mirrors
    (:meth:`CredentialsDetector._show_values`, rules version 11)."""

    opened: int
    mirror: bool = False  # a mirror (sensitive_values, before_sensitive, after_sensitive) or a container inside one
    key: str | None = None  # the last key read, while its value is not
    spans: dict[str, list[tuple[int, int]]] | None = None  # a mirrored object's members' value spans
    marks: set[str] | None = None  # a mirror object's marked members
    held: bool = False  # a container inside a mirror: it holds a true leaf
    wholes: dict[str, list[tuple[int, int]]] | None = None  # a mirrored member's whole spans, by its key
    objects: dict[str, dict[str, list[tuple[int, int]]]] | None = None  # a mirrored object's spans, by its key
    masks: dict[str, set[str] | None] | None = None  # a mirror's marked members (None: the whole), by its key

    def mark(self) -> None:
        """A ``true`` read in this mirror: the member being read is marked (a mirror object's), or this container
        holds one."""
        if self.marks is not None:
            if self.key is not None:
                self.marks.add(self.key)
        else:
            self.held = True

    def whole(self, key: str, span: tuple[int, int]) -> None:
        """``span``, all of the member ``key`` mirrored: taken when its mirror is ``true``."""
        if self.wholes is None:
            self.wholes = {}
        self.wholes.setdefault(key, []).append(span)

    def mask(self, key: str, marks: set[str] | None) -> None:
        """The mirror ``key`` read: the members it marks, or None when it marks the whole member it mirrors."""
        if self.masks is None:
            self.masks = {}
        self.masks[key] = marks

    def taken(self) -> Iterator[tuple[int, int]]:
        """This object's spans its mirrors mark, once it is read whole."""
        for mirror, marks in (self.masks or {}).items():
            mirrored = MIRRORED[mirror]
            if marks is None:
                yield from (self.wholes or {}).get(mirrored, ())
                continue
            spans = (self.objects or {}).get(mirrored)
            if spans is not None:
                for name in marks:
                    yield from spans.get(name, ())

    def scalar(self, key: str, scalar: re.Match[str]) -> None:
        """The scalar value (:data:`_JSON_SCALAR`) of this object's member ``key``: a mirror's ``true``, or a value to
        take when it is marked."""
        value = scalar.group(1)
        if key in MIRRORS:
            if value == "true":
                self.mask(key, None)
        elif value not in ("true", "false", "null"):
            if self.spans is not None:
                self.spans.setdefault(key, []).append(scalar.span(1))
            if key in MIRRORED_VALUES:
                self.whole(key, scalar.span(1))
        self.key = None

    def closed(self, inner: _ShowFrame, end: int, text: str) -> None:
        """``inner``, the container this one's member :attr:`key` holds, read to its end (``end``)."""
        if self.mirror:
            if inner.held:
                self.mark()  # the member being read, when this is a mirror object
            self.key = None
            return
        key = self.key
        self.key = None
        if key is None:
            return
        if key in MIRRORS:
            if inner.marks is not None:
                self.mask(key, inner.marks)
            elif inner.held:  # a list holding a true: the whole member
                self.mask(key, None)
            return
        if self.spans is None and key not in MIRRORED_VALUES:
            return
        whole = (inner.opened, end)  # a container: taken whole, when taken (sliced only when short)
        if end - inner.opened <= _LONGEST_ALREADY and text[inner.opened : end] in ALREADY_TOKENS:
            return
        if key in MIRRORED_VALUES:
            self.whole(key, whole)
            if inner.spans is not None:
                if self.objects is None:
                    self.objects = {}
                self.objects[key] = inner.spans
        if self.spans is not None:
            self.spans.setdefault(key, []).append(whole)

    @classmethod
    def opening(cls, owner: _ShowFrame | None, char: str, at: int) -> _ShowFrame:
        """The frame of a container opening with ``char`` at ``at`` inside ``owner``."""
        if owner is None:
            return cls(at)
        if owner.mirror:
            return cls(at, True)
        key = owner.key
        if key in MIRRORS:
            return cls(at, True, marks=set() if char == "{" else None)
        return cls(at, spans={} if char == "{" and key in MIRRORED_VALUES else None)


_BARE_LITERALS: Final[frozenset[str]] = frozenset({"true", "false", "null", "True", "False", "None"})
"""JSON's and Python's booleans and null, unquoted: a credential member holding one holds no secret (rules
version 11 leaves them in text, as the walk always left them in data)."""
_JSON_SCALAR = re.compile(r"[ \t\r\n]*+(true|false|null|-?[0-9][0-9.eE+\-]{0,63}+)")
"""A JSON member's value after its key's colon when it is neither a string nor a container (rules version 9)."""
# Rules version 9: a data map written as a YAML flow mapping (``data: {password: cGFzcw==, user: YQ==}``), its
# opening, then each ``KEY: VALUE`` entry, its value quoted or plain (up to a comma, a brace or the line's end),
# the comma or brace after it. No entry holds a nested flow collection (a Secret's values are strings).
_SECRET_FLOW = re.compile(r"(?:data|stringData):[ \t]*+\{")
_FLOW_ENTRY = re.compile(
    r"""[ \t\r\n]*+(?:"(?:[^"\\\r\n\x00]|\\.)*+"|'[^'\r\n\x00]*+'|[^\s:,{}\[\]'"#\x00][^:,{}\[\]\r\n\x00]*+)"""
    r"""[ \t]*+:[ \t\r\n]*+(\[CREDENTIAL\]|"(?:[^"\\\r\n\x00]|\\.)*+"|'[^'\r\n\x00]*+'|[^\s,{}\[\]\x00][^,{}\[\]\r\n\x00]*+)"""
    r"""[ \t\r\n]*+([,}])"""
)
_MAX_FLOW_ENTRIES: Final[int] = 4096


def _kube_values(text: str, at: int, column: int) -> list[tuple[int, int]]:
    """The spans of the values of the YAML map under the key whose line ends at ``at`` (indented past
    ``column``): each ``KEY: VALUE`` line's value, or with none on the line (a block scalar's header or nothing)
    the lines indented under it."""
    block = _indented_block(text, at, column)
    if block is None:
        return []
    spans: list[tuple[int, int]] = []
    child = block[0] - (text.rfind("\n", 0, block[0]) + 1)  # the map's keys' column
    position = text.rfind("\n", 0, block[0]) + 1
    while position < block[1]:
        newline = text.find("\n", position)
        end = block[1] if newline == -1 or newline > block[1] else newline
        line = text[position:end]
        content = line.lstrip(" ")
        if len(line) - len(content) == child and not content.startswith("#"):
            pair = _KUBE_VALUE.match(text, position + child, end)
            if pair is not None:
                value = pair.group(1).rstrip(" \t\r")
                if value and not _BLOCK_HEADER.fullmatch(value):
                    if value not in ALREADY_TOKENS:
                        spans.append((pair.start(1), pair.start(1) + len(value)))
                else:
                    below = _indented_block(text, end, child)
                    if below is not None and text[below[0] : below[1]] not in ALREADY_TOKENS:
                        spans.append(below)
        if newline == -1:
            break
        position = newline + 1
    return spans


# Rules version 9: CSV and TSV. A text is read as a table when its header (rules version 10: the first line of the
# text's first :data:`_CSV_HEAD_LINES` lines that holds a delimiter and reads as a header, so a command's line or a
# log line may stand above it; a text starts at its start or after a NUL: texts are scanned joined by one) is two or
# more names (:data:`_CSV_NAME`, quoted or not) separated by one delimiter, a comma, a tab or a semicolon, the first
# the line holds, and a name is a credential word (:func:`is_credential_word`: ``password``, ``api_key``,
# ``Client Secret``, ``token``; a bare ``key`` is none); the lines after it are its rows while each holds as many
# cells as the header (a quoted cell may hold the delimiter, a doubled quote or a line break). A header naming no
# credential ends the search (its rows are never read as a header). The first cell is looked for within
# :data:`_CSV_FIRST` characters, so a line of prose costs one short match. Rules version 11: the header is looked for
# in a text's first 64 lines, not 16 (a table printed below a longer preamble: a shell session, a log); each line
# read is one slice and three short tests (1 MiB of agent text: 0.06 ms against 0.03, the bound reached; without a
# bound a text of 80-character lines cost 19 ms/MiB).
_CSV_FIRST: Final[int] = 64
_CSV_HEAD_LINES: Final[int] = 64
_CSV_START = re.compile(r"\x00(?=[^\n\x00]{0,4096}+\n)")
_CSV_NAME = re.compile(r"""[ \t]*+(?:"([A-Za-z0-9_.\- ]{1,64}+)"|([A-Za-z_][A-Za-z0-9_.\-]{0,63}+))[ \t]*+\Z""")
_CSV_CELLS: Final[dict[str, re.Pattern[str]]] = {
    delimiter: re.compile(rf"""[ \t]*+(?:"((?:[^"\x00]|""){{0,65536}}+)"[ \t]*+|([^{delimiter}"\r\n\x00]*+))""")
    for delimiter in ",;\t"
}
_CSV_CELLS["|"] = re.compile(r"[ \t]*+(?:(?!)(\x00)|([^|\r\n\x00]*+))")
_LAST_PLAIN_CELL = re.compile(r"[ \t]*+(?:(?!)(\x00)|([^\r\n\x00]*+))")
"""A row's cell, up to its delimiter: quoted (its content, group 1) or plain (group 2). sqlite3's list mode quotes
nothing (group 1 never matches) and writes a value's ``|`` as it is: its last cell is the rest of its line."""


@functools.lru_cache(maxsize=32)
def _plain_cell(separator: str) -> re.Pattern[str]:
    """Rules version 14: a cell of sqlite3's list mode whose ``.separator`` is ``separator`` (other than ``|``),
    quoting nothing, as :data:`_CSV_CELLS`'s ``|``. Rules version 15: a separator of more characters (``" | "``,
    ``::``): the cell runs to its first whole separator, its blanks kept (the separator's own may open with one)."""
    if len(separator) == 1:
        return re.compile(rf"[ \t]*+(?:(?!)(\x00)|([^{re.escape(separator)}\r\n\x00]*+))")
    return re.compile(rf"(?:(?!)(\x00)|((?:(?!{re.escape(separator)})[^\r\n\x00])*+))")

_MAX_CSV_HEADER: Final[int] = 4096
_CSV_MARKS: Final[tuple[str, ...]] = (",", "\t", ";")


def _csv_header(line: str, delimiter: str | None = None) -> tuple[str, list[str]] | None:
    """The delimiter and the names of ``line`` when it reads as a CSV header (:data:`_CSV_NAME` cells, two or
    more); None for any other line (prose, a command, a row of values). The delimiter is the first ``,``, tab or
    ``;`` the line holds, or ``delimiter`` when given (sqlite3's ``|``)."""
    first = line[: _CSV_FIRST + len(delimiter or ",")]
    marks = [(first.find(mark), mark) for mark in (_CSV_MARKS if delimiter is None else (delimiter,)) if mark in first]
    if not marks:
        return None
    at, delimiter = min(marks)  # the first the line holds
    if _CSV_NAME.match(line, 0, at) is None:  # the first cell: a line of prose is left after one short match
        return None
    names: list[str] = []
    for cell in line.split(delimiter):
        name = _CSV_NAME.match(cell)
        if name is None:
            return None
        names.append(name.group(1) or name.group(2))
    return delimiter, names


# Rules version 12: a CSV or TSV header anywhere in a text (below its 64th line too) when the line right above it
# prints a table: a command printing files named ``*.csv`` / ``*.tsv`` (``$ cat users.csv``, ``head -n 5
# users.tsv``, PowerShell's ``Get-Content users.csv``: the command word, then only options, numbers and such files,
# one ending the line) or psql's ``COPY ... TO STDOUT ... HEADER`` / ``\copy ... to stdout ... header``. Each such
# line is found by a search for a literal (:data:`_PRINTED_TABLE_SEARCHES`): each search opens with one character, a
# scan in C that costs 0.4 ms/MiB on agent text holding none of them (a ``str.find`` of ``.csv`` costs 0.7, and an
# alternation of them 7: the regex engine tests every character); ``\copy``'s only in a text holding a backslash
# (a memchr). Completed (session 21): ``copy`` in any case typed at psql's prompt (``app=# copy users to stdout with
# csv header;``, ``app=> copy ...``), found from the prompt's ``=`` (0.35 ms/MiB on agent text, in a text holding one;
# a search for ``copy`` in lower case anywhere would cost 0.6 to 0.8).
_PRINTED_FILE = re.compile(r"\.[ctCT][sS][vV]")
_PRINTED_TABLE_SEARCHES: Final[tuple[tuple[re.Pattern[str], str], ...]] = (
    (_PRINTED_FILE, ""), (re.compile("COPY"), "COPY"), (re.compile(r"\\copy"), "\\"),
    (re.compile(r"=[#>] [cC][oO][pP][yY]\b"), "="))
"""Each search for a line that may print a table, and a character a text must hold for it to run ("" for none)."""
_PRINTING_COMMANDS: Final[frozenset[str]] = frozenset(
    {"cat", "head", "tail", "more", "less", "bat", "batcat", "type", "Get-Content", "gc"})
_COPY_TO_STDOUT: Final[str] = "to stdout"
_PASSING_COMMANDS: Final[frozenset[str]] = frozenset({"head", "cat", "more", "less", "bat", "batcat"})


def _table_file(word: str) -> bool:
    """Whether a command's ``word`` names a ``*.csv`` or ``*.tsv`` file (a quote around it allowed; the extension
    in any case, ``USERS.CSV``)."""
    bare = word.strip("'\"")
    return len(bare) > 4 and bare[-4] == "." and ascii_lower(bare[-3:]) in ("csv", "tsv")


def _passes_table_on(segment: str) -> bool:
    """Whether a pipeline's ``segment`` after a line printing a table passes its first lines on unchanged: a
    command of :data:`_PASSING_COMMANDS` and only options and numbers (``| head -n 5``, ``| less``)."""
    words = segment.split()
    return bool(words) and words[0] in _PASSING_COMMANDS and all(
        word[:1] == "-" or word.lstrip("+").isdigit() for word in words[1:])


def _prints_table(line: str, file: bool) -> bool:
    """Whether ``line`` prints a CSV or TSV table on the lines below it: with ``file``, a command printing ``*.csv``
    / ``*.tsv`` files (the line's last word one, a quote around it allowed; between the command's word and it only
    options, numbers and such files); else psql's ``COPY`` to standard output with its ``HEADER`` (``COPY`` or
    ``\\copy``, then ``TO STDOUT``, then ``HEADER``, in any case)."""
    if not file:
        lower = ascii_lower(line)
        to = lower.find(_COPY_TO_STDOUT)
        return to != -1 and "copy" in lower[:to] and "header" in lower[to:]
    printing, *piped = line.split("|")  # rules version 12: ``cat users.csv | head -n 5`` prints its header too
    if not all(_passes_table_on(segment) for segment in piped):
        return False
    words = printing.split()
    if not words or not _table_file(words[-1]):
        return False
    for word in reversed(words[:-1]):
        if word[:1] == "-" or word.lstrip("+").isdigit() or _table_file(word):
            continue  # head's -n 5, tail's +2, another file
        return word.rsplit("/", 1)[-1] in _PRINTING_COMMANDS  # /bin/cat too
    return False


# Rules version 12 also: a database client printing CSV or TSV with its header - ``sqlite3 -csv -header DB "select
# ..."`` (``-tabs`` too), a statement at ``sqlite> `` after ``.mode csv`` and ``.headers on`` (or a ``sqlite3 -csv
# -header`` that opened the session), ``mysql -B`` / ``--batch`` / ``-e`` (tab-separated, a header first, unless
# ``-N``), ``psql --csv`` and ``psql -c "copy ... to stdout ... header"`` in any case. Each line is found by one search
# for ``sql`` opening with its ``q`` (0.44 ms/MiB on agent text; a search opening with ``sql``'s three characters
# costs 1.3: ``s`` is frequent), each hit first tested to be inside ``sqlite``, ``mysql`` or ``psql`` (``postgresql``
# is passed by three ``startswith``, not a line's read: a MiB of ``sql`` lines cost 750 ms, 280 with the test); the
# command must open its line (after a prompt ending ``$``, ``#``, ``>`` or ``%``, or
# ``sudo``), so prose naming the flags is left.
_PRINTED_SQL = re.compile(r"q(?<=sq)l")
_SQLITE_PROMPT: Final[str] = "sqlite> "
_SQLITE_MORE: Final[str] = "...> "
_SQL_CLIENTS: Final[frozenset[str]] = frozenset({"sqlite3", "mysql", "psql", "mariadb"})
_SQLITE_MODES: Final[frozenset[str]] = frozenset({
    "ascii", "box", "column", "csv", "html", "insert", "json", "line", "list", "markdown", "quote", "table", "tabs",
    "tcl"})
_SQLITE_DELIMITERS: Final[dict[str, str | None]] = {"csv": None, "tabs": None, "list": "|"}
"""sqlite3's modes that print a delimited table, its header first when ``.headers`` are on, and their delimiter (None:
the header's first ``,``, tab or ``;``). Rules version 13: ``list``, sqlite3's default, cells between ``|``."""
_SQLITE_LINE_MODE: Final[str] = "line"
_SQLITE_LIST_MODE: Final[str] = "list"
_SQLITE_SEPARATOR: Final[str] = "|"
"""List mode's separator, as a session opens and as ``.mode list`` sets it again (3.40.1). Rules version 14: another
set by ``.separator X`` or ``-separator X``, one character (a longer one is left), read as ``|`` is."""
_SQLITE_COLUMN_MODE: Final[str] = "column"
"""sqlite3's ``column`` mode: ``.mode column`` turns the headers on unless the session set them (3.40.1: they stay on
in the modes after it), ``-column`` on the command line does not."""
_HEADER_FLAGS_SQLITE: Final[frozenset[str]] = frozenset({"header", "headers", "noheader"})
"""sqlite3's command-line flags that set its headers (``-header`` / ``-headers`` on, ``-noheader`` off)."""
_CLIENT_TABLE: Final[str] = "client"
"""How a mysql, MariaDB or psql line's output is read (:func:`_printed_below`): a CSV or TSV header, then its rows."""
_SQLITE_SESSION: Final[tuple[str, bool]] = ("list", False)
"""The mode and the headers a sqlite3 session opens with."""
# Rules version 13: MariaDB's client, ``mariadb``, prints as mysql does; its line is found by a second search, from
# the ``b`` it ends with (0.34-0.65 ms/MiB: ``b`` is rare in agent text; an alternation with the ``sql`` search cost 6).
_PRINTED_MARIADB = re.compile(r"b(?<=mariadb)")
_ON: Final[frozenset[str]] = frozenset({"on", "1", "yes", "true"})


# Rules version 13: what a terminal's raw transcript (``script``, a pty's log) holds before sqlite3's prompt and
# before the first line a statement prints: readline's bracketed paste, ``ESC[?2004l`` then a carriage return, then
# ``ESC[?2004h`` before the next ``sqlite> ``. Since ansi23 a text holding ESC is also read as a terminal shows it
# (capture/terminal.py: its escape sequences taken out, its carriage returns kept), so these rules read past only the
# carriage returns that are left there (leaks25: reading past the codes too found nothing more in any raw transcript
# test; without the carriage returns sqlite3's and bash's pty transcripts kept their passwords).
_CARRIAGE_RETURNS = re.compile(r"\r*+")


def _past_carriage_returns(text: str, at: int) -> int:
    """Where the run of carriage returns at ``at`` ends (``at`` when none is there: one character's test)."""
    if not text.startswith("\r", at):
        return at
    returns = _CARRIAGE_RETURNS.match(text, at)
    assert returns is not None  # it matches the empty run too
    return returns.end()


def _indent_past_returns(text: str, at: int) -> int:
    """Where a line starting at ``at`` has its first character past carriage returns (:func:`_past_carriage_returns`)
    and blanks: a continuation prompt's ``...> ``."""
    at = _past_carriage_returns(text, at)
    return at + _blanks(text, at)


def _blanks(text: str, at: int) -> int:
    """How many blanks (spaces, tabs) stand in ``text`` from ``at``: a continuation prompt's indent."""
    count = 0
    while text[at + count : at + count + 1] in (" ", "\t") and at + count < len(text):
        count += 1
    return count


def _sql_client(line: str) -> tuple[str, list[str]] | None:
    """The client (:data:`_SQL_CLIENTS`) a shell line runs and the words after it, when its word opens the line or
    follows a prompt (a word ending ``$``, ``#``, ``>`` or ``%``), ``sudo``, ``|``, ``&&`` or ``;``; None for any
    other line (prose)."""
    words = line.split()
    for index, word in enumerate(words):
        name = ascii_lower(word.rsplit("/", 1)[-1].rsplit("\\", 1)[-1]).removesuffix(".exe")
        if name in _SQL_CLIENTS:
            before = words[index - 1] if index else ""
            if not before or before[-1] in "$#>%" or before in ("sudo", "|", "&&", ";"):  # a prompt, a pipe
                return name, words[index + 1:]
            return None
    return None


def _line_head(text: str, at: int, reach: int = _MAX_CSV_HEADER) -> tuple[int, bool]:
    """Where the line holding ``at`` starts (after its newline or NUL, looked for at most ``reach`` characters back)
    and whether that start was found there or is the text's own: a client's printing line read whole, for the
    searches that find such a line from a word inside it."""
    floor = max(0, at - reach)
    start = max(text.rfind("\n", floor, at), text.rfind("\x00", floor, at)) + 1
    return start, start > 0 or floor == 0


def _sqlite_flags(words: list[str], mode: str, header: bool) -> tuple[str, bool]:
    """sqlite3's output mode after its command line's ``words``: the last mode's flag (``-csv``, ``-tabs``, ``-list``,
    ``-line``, ``-box``...) and whether it prints its header (``-header``, ``-noheader``), from ``mode`` and
    ``header``."""
    for word in words:
        if word[:1] != "-":
            continue
        flag = word.lstrip("-")
        if flag in _SQLITE_MODES:
            mode = flag
        elif flag in _HEADER_FLAGS_SQLITE:
            header = flag != "noheader"
    return mode, header


# Rules version 15: the word after ``-separator`` on sqlite3's command line (as a shell reads it) or after
# ``.separator`` at its prompt (as sqlite3 reads it): quoted (``" | "``, ``' | '``: its blanks kept) or bare.
_SEPARATOR_WORD = re.compile(
    r"""(?<![^ \t])(?:\.|--?)separator[ \t]++(?:"((?:[^"\\\r\n\x00]|\\.)*+)"|'([^'\r\n\x00]*+)'|([^\s"']++))""")


def _sqlite_separator(line: str, separator: str) -> str:
    """Rules version 14: list mode's separator after sqlite3's command line ``line`` (``-separator X``) or a
    ``.separator X`` dot command's: its word unquoted, ``\\t`` a tab; ``separator`` when none is given. Rules
    version 15: a quoted word whole, blanks inside (``-separator ' | '``; 14 split the line at its blanks)."""
    for word in _SEPARATOR_WORD.finditer(line):
        value = next(group for group in word.groups() if group is not None)
        if value:
            separator = value.replace("\\t", "\t")
    return separator


class _SqliteSession:
    """A sqlite3 session's output settings as its lines set them (:meth:`CredentialsDetector._printed_sql_tables`):
    the mode, the headers and whether the session set them (then ``.mode column`` leaves them as they are), list
    mode's separator (rules version 14), and the columns of the tables it showed created (rules version 14; kept
    across sessions, as a table's name stays in its database)."""

    __slots__ = ("mode", "header", "header_set", "separator", "tables")

    def __init__(self) -> None:
        self.tables: dict[str, list[str]] = {}
        self.restart()

    def restart(self) -> None:
        """A new session, as sqlite3 opens one (the tables known kept)."""
        self.mode, self.header = _SQLITE_SESSION
        self.header_set = False
        self.separator = _SQLITE_SEPARATOR

    def opened(self, words: list[str], line: str) -> None:
        """A new session by sqlite3's command ``line`` (its ``words`` after the client's: ``-csv``, ``-header``,
        ``-separator X``...)."""
        self.mode, self.header = _sqlite_flags(words, *_SQLITE_SESSION)
        self.separator = _sqlite_separator(line, _SQLITE_SEPARATOR)
        self.header_set = any(word.lstrip("-") in _HEADER_FLAGS_SQLITE for word in words)

    def dot_command(self, words: list[str], text: str, end: int, statement: str) -> None:
        """The settings after a dot command's ``words`` at ``sqlite> `` (its line, ``statement`` after the prompt,
        ending at ``end`` in ``text``)."""
        command = words[0]
        if command == ".mode":
            self.mode = words[1] if len(words) > 1 else self.mode  # no name: it prints the mode
            self.header = self.header or (self.mode == _SQLITE_COLUMN_MODE and not self.header_set)
            if len(words) > 1 and self.mode == _SQLITE_LIST_MODE:
                self.separator = _SQLITE_SEPARATOR
        elif command == ".separator":
            self.separator = _sqlite_separator(statement, self.separator)
        elif command == ".schema" and end < len(text):
            _schema_lines(text, end + 1, self.tables)
        elif command in (".headers", ".header"):
            self.header = len(words) > 1 and ascii_lower(words[1]) in _ON
            self.header_set = True

    def reads(self, prints: str) -> bool:
        """Whether output printed in ``prints`` (a mode, or :data:`_CLIENT_TABLE`) is read: a header to read it by,
        or a form that names its columns in each row (rules version 15: list mode's separator of any length)."""
        return self.header or prints in (_CLIENT_TABLE, _SQLITE_LINE_MODE) or (
            prints == _SQLITE_INSERT_MODE and bool(self.tables))


def _client_prints_header(client: str, words: list[str]) -> bool:
    """Whether mysql's or psql's command line (``words`` after the client) prints a CSV or TSV table with its header:
    mysql in batch mode (``-B``, ``--batch``, or ``-e`` / ``--execute``: its output when no terminal reads it) without
    ``-N`` / ``--skip-column-names``; psql with ``--csv`` without ``-t`` / ``--tuples-only``, or a ``COPY`` to
    standard output with its ``HEADER`` (any case)."""
    batch = False
    for word in words:
        if word in ("-N", "--skip-column-names", "-t", "--tuples-only"):
            return False
        if client in ("mysql", "mariadb"):
            batch = batch or word in ("-B", "--batch") or word.startswith(("-e", "--execute")) or (
                word[:1] == "-" and word[1:2] != "-" and word[1:].isalpha() and "B" in word and "N" not in word)
        else:
            batch = batch or word == "--csv"
    return batch or (client == "psql" and _prints_table(" ".join(words), False))


# Rules version 13: names whose value is one line, never a YAML block: mysql's vertical ``\G`` output prints each column
# as ``NAME: VALUE``, its names right-aligned, so an empty ``authentication_string: `` (an ``auth_socket`` user's) stands
# above the next column's line, indented deeper. The hash is never written over lines.
_ONE_LINE_NAMES: Final[frozenset[str]] = frozenset({"authentication_string"})


def _one_line_name(name: str) -> bool:
    """Whether a ``NAME: VALUE`` line's ``name`` is one of :data:`_ONE_LINE_NAMES` (its empty value opens no YAML
    block), in any case."""
    return ascii_lower(name) in _ONE_LINE_NAMES


def _credential_column(name: str, names: list[str]) -> bool:
    """Whether a table's column ``name`` (``names``: every column's) holds credentials: a credential word
    (:func:`is_credential_word`; mysql's ``authentication_string`` among them) not made ordinary by the columns beside
    it."""
    return is_credential_word(name) and not ordinary_column(name, names)


def _credential_columns(names: list[str]) -> list[int]:
    """The indexes of ``names`` that are credential columns (:func:`_credential_column`), each distinct name judged
    once: a header of many ``token`` columns read the whole header once per column (``x,token,token,...`` in a 4 KiB
    line: 1,364 ms/MiB at 6ae0a3d; rules version 14's html, quote and insert rows have no line's bound)."""
    judged: dict[str, bool] = {}
    for name in names:
        if name not in judged:
            judged[name] = _credential_column(name, names)
    return [index for index, name in enumerate(names) if judged[name]]


def _csv_table(text: str, start: int, end: int, found: list[Finding], deadline: Deadline,
               delimiter: str | None = None, plain: bool = False) -> int:
    """Where the table whose header is the line ``text[start:end]`` ends (:func:`_csv_rows`; the header's end when
    it names no credential column), or -1 when the line reads as no CSV or TSV header (:func:`_csv_header`, its
    ``delimiter`` when given); the cells of its credential columns are added to ``found``. ``plain``: sqlite3's list
    mode's cells (:func:`_plain_cell`), as its ``|`` always is."""
    header = _csv_header(text[start:end].rstrip("\r"), delimiter)
    if header is None:
        return -1
    delimiter, names = header
    columns = _credential_columns(names)
    if columns:
        return _csv_rows(text, end + 1, delimiter, columns, len(names), found, deadline, plain or delimiter == "|")
    return end


def _csv_rows(text: str, at: int, delimiter: str, columns: list[int], width: int, found: list[Finding],
              deadline: Deadline, plain: bool = False) -> int:
    """The cells of ``columns`` in each row from ``at``, while a row holds ``width`` cells (:data:`_CSV_CELLS`).
    Returns where the rows end: the start of the first line that is none (a text's end or NUL)."""
    cell = _CSV_CELLS[delimiter] if delimiter == "|" or not plain else _plain_cell(delimiter)
    length = len(text)
    while at < length and text[at] not in "\x00":
        deadline.check()
        row = at
        spans: list[tuple[int, int]] = []
        for index in range(width):
            match = (_LAST_PLAIN_CELL if plain and index == width - 1 else cell).match(text, at)
            assert match is not None  # every part is optional
            group = 1 if match.group(1) is not None else 2
            if index in columns and match.start(group) < match.end(group):
                spans.append(match.span(group))
            at = match.end()
            if index < width - 1:
                if not text.startswith(delimiter, at):
                    return row  # fewer cells than the header: no row
                at += len(delimiter)  # rules version 15: sqlite3's separator of more characters
        while at < length and text[at] == "\r":  # a terminal's transcript writes a CSV row's CRLF as CR CR LF
            at += 1
        if at < length and text[at] not in "\n\x00":
            return row  # more cells than the header (or a quote left open): no row
        for start, end in spans:
            value = text[start:end].strip(" \t")
            if holds_credential(value):
                found.append(Finding(start, end, TOKEN, NAME))
        if at >= length or text[at] == "\x00":
            return at
        at += 1
    return at


def _printed_below(text: str, end: int, mode: str, read: set[int], found: list[Finding], deadline: Deadline,
                   separator: str = "|", tables: dict[str, list[str]] | None = None) -> int:
    """The table a client's line ending at ``end`` prints below it, read as its ``mode`` says (sqlite3's ``line``
    records, :func:`_sqlite_records`; a delimited header and its rows, :func:`_csv_table`, for ``csv``, ``tabs`` and
    ``list`` and a client's :data:`_CLIENT_TABLE`); any other mode is left. Returns where what was read ends (``end``
    when nothing was). ``separator``: list mode's (rules version 14: ``.separator ;``, ``-separator ;``); ``tables``:
    the columns of the tables the session showed created (insert mode with its headers off)."""
    below = _past_carriage_returns(text, end + 1)  # a raw transcript's carriage return
    if mode == _SQLITE_LINE_MODE:
        return _sqlite_records(text, below, found, deadline)
    if mode == _SQLITE_COLUMN_MODE:
        return max(end, _sqlite_columns(text, below, found, deadline))
    if mode == _SQLITE_QUOTE_MODE:  # rules version 14
        return max(end, _rows_under_header(text, below, _quoted_line, found, deadline))
    if mode == _SQLITE_INSERT_MODE:
        return max(end, _sqlite_inserts(text, below, found, deadline, tables))
    if mode == _SQLITE_HTML_MODE:
        return max(end, _sqlite_html(text, below, found, deadline))
    if mode == _SQLITE_TCL_MODE:  # rules version 15
        return max(end, _rows_under_header(text, below, _tcl_cells, found, deadline))
    if mode == _SQLITE_ASCII_MODE:
        return max(end, _sqlite_ascii(text, below, found, deadline))
    listed = mode == _SQLITE_LIST_MODE  # read as list mode even when read as a CSV (a ';' in a value, its last cell)
    if (mode not in _SQLITE_DELIMITERS and mode != _CLIENT_TABLE) or (below in read and not listed):
        return end
    head_end = text.find("\n", below, below + _MAX_CSV_HEADER)
    if head_end == -1 or "\x00" in text[below:head_end]:
        return end
    rows = _csv_table(text, below, head_end, found, deadline, separator if listed else _SQLITE_DELIMITERS.get(mode),
                      listed)
    if rows == -1:
        return end
    read.add(below)  # the search goes on past its rows: a client's line among them is a row
    return rows


# Rules version 13: sqlite3's ``column`` mode (``.mode column``, ``sqlite3 -column -header``): its header's names over
# a rule of dashes, a run a column, two blanks between; each column padded to its run's width, so a row's cell is the
# text over its run (the last to the line's end).
_COLUMN_RULE = re.compile(r"-++(?:  -++)++[ \t]*+\r?+\Z")
_DASHES = re.compile(r"-++")


def _sqlite_columns(text: str, at: int, found: list[Finding], deadline: Deadline) -> int:
    """The credential columns' cells (:func:`_credential_column`) of the table sqlite3's ``column`` mode prints from
    ``at`` (:data:`_COLUMN_RULE` under its header), to the first row that is empty or holds no blanks where the rule
    does (the next prompt, another table). Returns where the table ends (``at`` when no table is there)."""
    head_end = text.find("\n", at, at + _MAX_CSV_HEADER)
    rule_end = text.find("\n", head_end + 1, head_end + 1 + _MAX_CSV_HEADER) if head_end != -1 else -1
    if rule_end == -1 or "\x00" in text[at:rule_end] or _COLUMN_RULE.match(text, head_end + 1, rule_end) is None:
        return at
    runs = [(dash.start() - head_end - 1, dash.end() - head_end - 1) for dash in
            _DASHES.finditer(text, head_end + 1, rule_end)]
    starts = [start for start, _ in runs]
    header = text[at:head_end]
    names = [header[start : (starts[index + 1] if index + 1 < len(starts) else len(header))].strip()
             for index, start in enumerate(starts)]
    columns = [index for index in _credential_columns(names) if names[index]]
    if not columns:
        return rule_end
    gaps = [stop for _, stop in runs[:-1]]
    row = rule_end + 1
    while row < len(text):
        deadline.check()
        end = _line_end(text, row)
        line = text[row:end].rstrip("\r")
        if len(line) <= starts[-1] or line.isspace():
            return row
        for stop in gaps:
            if line[stop : stop + 2] != "  ":  # a row holds blanks where the rule does (its cells are padded)
                return row
        for index in columns:
            start = row + starts[index]
            stop = row + (runs[index][1] if index + 1 < len(runs) else len(line))
            while stop > start and text[stop - 1] in " \t":
                stop -= 1
            if start < stop and holds_credential(text[start:stop]):
                found.append(Finding(start, stop, TOKEN, NAME))
        if end >= len(text) or text[end] == "\x00":
            return end
        row = end + 1
    return row


# Rules version 13: sqlite3's ``line`` mode (``.mode line``, ``sqlite3 -line``): a record a column a line, ``NAME =
# VALUE`` (the names right-aligned), an empty line between records; a credential column's value is the rest of its
# line (``password = pw,with|pipe``: the key-value rule's value ends at the ``,``).
_SQLITE_FIELD = re.compile(r"[ \t]*+([A-Za-z_][A-Za-z0-9_.\-]{0,63}+) = ")


def _sqlite_records(text: str, at: int, found: list[Finding], deadline: Deadline) -> int:
    """The credential columns' values (:func:`_credential_column`) of sqlite3's ``line`` records from ``at``, to the
    first line that is neither a field (:data:`_SQLITE_FIELD`, or another ``EXPRESSION = VALUE``) nor the one empty
    line between two records (the next prompt, a second empty line). Returns where the records end."""
    length = len(text)
    empty = True  # a record opens with a field: no empty line before the first
    while at < length and text[at] != "\x00":
        deadline.check()
        end = _line_end(text, at)
        value_end = end - 1 if text[end - 1 : end] == "\r" else end
        if (at < value_end and " = " not in text[at:value_end]) or (at == value_end and empty):
            return at
        empty = at == value_end
        field = _SQLITE_FIELD.match(text, at, value_end)
        if (field is not None and field.end() < value_end and _credential_column(field.group(1), [field.group(1)])
                and holds_credential(text[field.end() : value_end])):
            found.append(Finding(field.end(), value_end, TOKEN, NAME))
        if end >= length or text[end] == "\x00":
            return end
        at = end + 1
    return at


# Rules version 14: sqlite3's ``quote`` and ``insert`` modes (3.40.1), their values written as SQL literals: ``quote``'s
# header is its names quoted (``'id','name','password'``) and each row its values (``1,'alice','pw'``, ``NULL``, a
# number, ``X'..'``); ``insert``'s rows, with the headers on, ``INSERT INTO t(id,name,password) VALUES(1,'alice','pw');``
# (the column list only then: without it no value has a name and the row is left). A string's ``'`` is written ``''``.
_SQL_LITERAL = re.compile(r"'((?:[^'\r\n\x00]|'')*+)'|NULL|-?[0-9][0-9.eE+\-]*+|[Xx]'[0-9A-Fa-f]*+'")
_SQLITE_INSERT = re.compile(
    r"""INSERT INTO ("(?:[^"\r\n\x00]|"")*+"|[A-Za-z_][A-Za-z0-9_$]*+)(?:\(([^()\r\n\x00]*+)\))?+ VALUES\(""")
# With the headers off, ``INSERT INTO t VALUES(...);`` names no column: the columns are those of the table's ``CREATE
# TABLE`` when the session showed it (``.schema``'s lines, or the statement typed at the prompt, one line each).
_CREATE_TABLE = re.compile(
    r"""[ \t]*+CREATE[ \t]++TABLE[ \t]++(?:IF[ \t]++NOT[ \t]++EXISTS[ \t]++)?+"""
    r"""("(?:[^"\r\n\x00]|"")*+"|`[^`\r\n\x00]*+`|\[[^\]\r\n\x00]*+\]|[A-Za-z_][A-Za-z0-9_$]*+)[ \t]*+\(""",
    re.IGNORECASE)
_COLUMN_NAME = re.compile(r"""[ \t]*+("(?:[^"\r\n\x00]|"")*+"|`[^`\r\n\x00]*+`|\[[^\]\r\n\x00]*+\]|[^\s,()]++)""")
_TABLE_CONSTRAINTS: Final[frozenset[str]] = frozenset({"constraint", "primary", "unique", "check", "foreign"})
_MAX_SCHEMA_LINES: Final[int] = 256
_SQLITE_QUOTE_MODE: Final[str] = "quote"
_SQLITE_INSERT_MODE: Final[str] = "insert"
_SQLITE_HTML_MODE: Final[str] = "html"
_HTML_CELL = re.compile(r"(<TR>)?+<T([HD])>([^<\r\n\x00]*+)</T\2>\r?+\Z")
"""A line of sqlite3's ``html`` mode (3.40.1): a cell a line, ``<TH>name</TH>`` in the header's row, ``<TD>value</TD>``
in a row's (its ``<``, ``>``, ``&`` and quotes written as entities), the row's first opening with ``<TR>``; ``</TR>``
on a line of its own closes it."""
_HTML_ROW_END: Final[str] = "</TR>"
_MAX_HTML_COLUMNS: Final[int] = 256
"""The most cells a row of sqlite3's html mode is read with: each header name is judged against the others (a
``token`` beside a ``logprob``), so a header of thousands of cells would cost their square."""


def _table_key(name: str) -> str:
    """A table's name as sqlite3 compares it: its quotes taken off, in ASCII lower case."""
    if name[:1] in "\"`[" and len(name) > 1:
        name = name[1:-1]
    return ascii_lower(name)


def _create_table(line: str) -> tuple[str, list[str]] | None:
    """The table a one-line ``CREATE TABLE NAME (COLUMN TYPE, ...)`` (:data:`_CREATE_TABLE`) creates and its columns'
    names in order (a table constraint, ``PRIMARY KEY (a, b)``, is none; a type's own brackets, ``DECIMAL(10,2)``,
    are read past); None for any other line or a definition its line does not close."""
    create = _CREATE_TABLE.match(line)
    if create is None:
        return None
    columns: list[str] = []
    at, depth, start = create.end(), 0, create.end()
    while at < len(line):
        char = line[at]
        if char in "'\"`[":  # a quoted name or default: read past its closing quote
            close = line.find("]" if char == "[" else char, at + 1)
            if close == -1:
                return None
            at = close
        elif char == "(":
            depth += 1
        elif char in ",)" and depth == 0:
            name = _COLUMN_NAME.match(line, start, at)
            if name is not None and ascii_lower(name.group(1)) not in _TABLE_CONSTRAINTS:
                columns.append(_table_key(name.group(1)) if name.group(1)[:1] in "\"`[" else name.group(1))
            if char == ")":
                return _table_key(create.group(1)), columns
            start = at + 1
        elif char == ")":
            depth -= 1
        at += 1
    return None


def _definition_line(line: str) -> str:
    """A line of a ``CREATE TABLE`` written over many lines, as it is joined to the others: its ``-- note`` taken
    off when no quote stands before it (a note's comma or bracket is no column's)."""
    note = line.find("--")
    return line if note == -1 or any(quote in line[:note] for quote in "'\"`[") else line[:note]


def _schema_lines(text: str, at: int, tables: dict[str, list[str]]) -> None:
    """The tables ``.schema``'s lines from ``at`` create (:func:`_create_table`), to the next prompt (at most
    :data:`_MAX_SCHEMA_LINES` lines), added to ``tables``. Rules version 15: a ``CREATE TABLE`` over many lines (its
    columns each on a line, as typed: ``.schema`` prints a statement as it was written) read to the line ending its
    ``;``, its lines joined."""
    pending: list[str] = []  # the lines of a definition its first line did not close
    for _ in range(_MAX_SCHEMA_LINES):
        at = _past_carriage_returns(text, at)  # a raw transcript's CR (its codes read past as the text is shown)
        end = _line_end(text, at)
        line = text[at:end].rstrip("\r")
        if line.startswith(_SQLITE_PROMPT) or end >= len(text) or text[end] == "\x00":
            return
        if pending:
            pending.append(_definition_line(line))
            if line.rstrip().endswith(";"):
                line, pending = " ".join(pending), []
        table = None if pending else _create_table(line)
        if table is not None:
            tables[table[0]] = table[1]
        elif not pending and _CREATE_TABLE.match(line) is not None and not line.rstrip().endswith(";"):
            pending = [_definition_line(line)]
        at = end + 1


def _sql_literals(text: str, at: int, end: int) -> tuple[list[tuple[int, int] | None], int] | None:
    """The values of a comma-separated list of SQL literals (:data:`_SQL_LITERAL`) from ``at`` (before ``end``): each
    string's content span (None for a number, ``NULL``, a blob), and where the list ends; None when a value is none."""
    cells: list[tuple[int, int] | None] = []
    while True:
        literal = _SQL_LITERAL.match(text, at, end)
        if literal is None:
            return None
        cells.append(literal.span(1) if literal.group(1) is not None else None)
        at = literal.end()
        if text.startswith(",", at) and at < end:
            at += 1
            continue
        return cells, at


def _take_columns(text: str, cells: Sequence[tuple[int, int] | None], columns: list[int],
                  found: list[Finding]) -> None:
    """The credential ``columns``' values among a row's ``cells`` (:func:`_sql_literals`: None for a literal that is
    no string; :func:`_tcl_cells`, ascii mode's cells)."""
    for index in columns:
        span = cells[index]
        if span is not None and holds_credential(text[span[0] : span[1]]):
            found.append(Finding(span[0], span[1], TOKEN, NAME))


def _quoted_line(text: str, at: int, end: int) -> list[tuple[int, int] | None] | None:
    """The line ``text[at:end]`` read as a row of sqlite3's ``quote`` mode: its SQL literals (:func:`_sql_literals`)
    filling the line, a carriage return after them allowed; None when it is none."""
    row = _sql_literals(text, at, end)
    return None if row is None or text[row[1] : end].rstrip("\r") else row[0]


_RowReader = Callable[[str, int, int], Sequence[tuple[int, int] | None] | None]


def _rows_under_header(text: str, at: int, read: _RowReader, found: list[Finding], deadline: Deadline) -> int:
    """A table printed a row a line, its header first (sqlite3's ``quote`` and ``tcl`` modes): ``read`` finds a line's
    cells (None for a value that is no string; None for a line that is no row). The header is the line at ``at``, two
    or more names; then each line of as many cells has the credential columns' values taken, to the first line that
    is none. Returns where the rows end (``at`` when no header is there)."""
    end = _line_end(text, at)
    header = read(text, at, end)
    if header is None or None in header or len(header) < 2:
        return at
    columns = _credential_columns([text[span[0] : span[1]] for span in header if span is not None])
    length = len(text)
    while columns and end < length and text[end] == "\n":
        deadline.check()
        at = end + 1
        end = _line_end(text, at)
        row = read(text, at, end)
        if row is None or len(row) != len(header):
            return at
        _take_columns(text, row, columns, found)
    return end


def _sqlite_html(text: str, at: int, found: list[Finding], deadline: Deadline) -> int:
    """sqlite3's ``html`` mode from ``at``, its headers on: the header's row of ``<TH>`` cells, then each row of as
    many ``<TD>`` cells (:data:`_HTML_CELL`), the credential columns' values taken, to the first line that is neither
    a cell nor a row's ``</TR>``. Returns where what was read ends."""
    names: list[str] | None = None
    columns: list[int] = []
    cells: list[tuple[int, int]] = []
    length = len(text)
    while at < length and text[at] != "\x00":
        deadline.check()
        end = _line_end(text, at)
        if text[at:end].rstrip("\r") == _HTML_ROW_END:
            if names is None:
                names = [text[start:stop] for start, stop in cells]
                columns = _credential_columns(names)
                if not columns:
                    return end
            elif len(cells) == len(names):
                for index in columns:
                    start, stop = cells[index]
                    if holds_credential(text[start:stop]):
                        found.append(Finding(start, stop, TOKEN, NAME))
            cells = []
        else:
            cell = _HTML_CELL.match(text, at, end)
            if (cell is None or (cell.group(1) is None) == (not cells) or (cell.group(2) == "H") != (names is None)
                    or len(cells) == _MAX_HTML_COLUMNS):
                return at  # no cell, a row not opened or opened twice, a header cell in a row, too many cells
            cells.append(cell.span(3))
        if end >= length:
            return end
        at = end + 1
    return at


# Rules version 15: sqlite3's ``tcl`` mode (3.40.1, ``.mode tcl``): each cell a C string in double quotes (``\"``,
# ``\\``, ``\n``, ``\t`` and octal escapes inside), a blank between cells, a row a line, its header (the names so
# quoted) first when the headers are on.
_TCL_CELL = re.compile(r'"((?:[^"\\\r\n\x00]|\\.)*+)"')
_SQLITE_TCL_MODE: Final[str] = "tcl"
# Rules version 15: sqlite3's ``ascii`` mode (3.40.1, ``.mode ascii``, ``sqlite3 -ascii``): its cells as they are,
# the unit separator (US, 0x1F) between them, the record separator (RS, 0x1E) after each row and the header, no line
# break: the whole table and the prompt after it are one line.
_SQLITE_ASCII_MODE: Final[str] = "ascii"
_ASCII_UNIT: Final[str] = "\x1f"
_ASCII_RECORD: Final[str] = "\x1e"


def _tcl_cells(text: str, at: int, end: int) -> list[tuple[int, int]] | None:
    """The content spans of the line ``text[at:end]`` read as a row of sqlite3's ``tcl`` mode (:data:`_TCL_CELL`s
    with one blank between, a carriage return after the last allowed); None when it is none."""
    cells: list[tuple[int, int]] = []
    while True:
        cell = _TCL_CELL.match(text, at, end)
        if cell is None:
            return None
        cells.append(cell.span(1))
        at = cell.end()
        if not text.startswith(" ", at) or at >= end:
            return cells if not text[at:end].rstrip("\r") else None
        at += 1


def _sqlite_ascii(text: str, at: int, found: list[Finding], deadline: Deadline) -> int:
    """sqlite3's ``ascii`` mode from ``at``, its headers on: the header's record (two or more names between unit
    separators, a record separator after it), then each record of as many cells, the credential columns' values
    taken, to the first that is none (the prompt after the last separator). A record is read within its line: one
    holding a line break (a value of many lines) ends the reading. Returns where the records end."""
    end = _line_end(text, at)
    record = text.find(_ASCII_RECORD, at, end)
    if record == -1:
        return at
    names = text[at:record].split(_ASCII_UNIT)
    columns = _credential_columns(names) if len(names) > 1 else []
    at = record + 1
    while columns and (record := text.find(_ASCII_RECORD, at, end)) != -1:
        deadline.check()
        cells: list[tuple[int, int]] = []
        start = at
        while (unit := text.find(_ASCII_UNIT, start, record)) != -1 and len(cells) < len(names):
            cells.append((start, unit))
            start = unit + 1
        cells.append((start, record))
        if len(cells) != len(names):
            return at
        _take_columns(text, cells, columns, found)
        at = record + 1
    return at


def _sqlite_inserts(text: str, at: int, found: list[Finding], deadline: Deadline,
                    tables: dict[str, list[str]] | None = None) -> int:
    """sqlite3's ``insert`` mode from ``at``: each ``INSERT INTO T(COLUMNS) VALUES(...);`` line (its headers on;
    :data:`_SQLITE_INSERT`), or ``INSERT INTO T VALUES(...);`` of a table the session showed created (``tables``,
    its columns by name), the strings of its credential columns taken, to the first line that is none. Returns where
    the lines end."""
    length = len(text)
    while at < length and text[at] != "\x00":
        deadline.check()
        end = _line_end(text, at)
        insert = _SQLITE_INSERT.match(text, at, end)
        if insert is None:
            return at
        if insert.group(2) is not None:
            names = [name.strip().strip('"') for name in insert.group(2).split(",")]
        elif tables and _table_key(insert.group(1)) in tables:
            names = tables[_table_key(insert.group(1))]
        else:
            return at
        row = _sql_literals(text, insert.end(), end)
        if row is None or len(row[0]) != len(names) or text[row[1] : end].rstrip("\r") != ");":
            return at
        _take_columns(text, row[0], _credential_columns(names), found)
        if end >= length:
            return end
        at = end + 1
    return at


# Rules version 10: a table of cells between pipes - markdown's (``| user | password |`` over ``|---|---|``), psql's
# (`` user | password `` over ``------+----------``) and the mysql client's (its header between two
# ``+------+----------+`` borders). A rule line (:data:`_TABLE_RULE` finds one; only ``-``, ``:``, ``|``, ``+`` and
# blanks, three dashes in a row, as many cells as the header) stands right under the header; the header's cells are
# names (:data:`_PIPE_NAME`, blanks inside allowed: ``API Key``), one a credential word, as a CSV header's are; the
# lines under the rule are its rows while each holds as many cells (a border or rule line among them is skipped). A
# markdown table's cell that reads as prose is left (:func:`_prose_cell`).
_TABLE_RULE = re.compile(r"-{3,}+:?[ \t]*+[|+]|[|+][ \t]*+:?-{3}")
_RULE_CHARS: Final[frozenset[str]] = frozenset("-:|+ \t\r")
_PIPE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\- ]{0,63}+")
_MARKED_NAME = re.compile(
    r"(\*{1,3}+|_{1,3}+|`)(.{1,64}?)\1"
    r"|<([A-Za-z][A-Za-z0-9]{0,15}+)(?:[ \t][^<>]{0,256}+)?+>(.{1,64}?)</\3[ \t]*+>"
    r"|\[([^\[\]]{1,64}+)\](?:\([^()\s]{0,256}+(?:[ \t]++\"[^\"]{0,256}+\")?+\)|\[[^\[\]]{0,64}+\])"
)
"""A header cell in markdown's emphasis (``**``, ``*``, ``__``, ``_``, the same marks both sides) or code marks;
under rules version 12 also an HTML element (``<b>Password</b>``, ``<strong>``, ``<code>``, ``<span title=...>``:
the same name opening and closing it) or a link (``[Password](#pw)``, ``[Password](#pw "title")``, a reference's
``[Password][pw]``), its text the name."""
_MARKED_GROUPS: Final[tuple[int, ...]] = (2, 4, 5)
"""The group of :data:`_MARKED_NAME` holding the marked text, in each alternative."""
_MAX_MARKS: Final[int] = 3
"""How many marks are read through: code inside emphasis (``**`password`**``, ``**<code>secret</code>**``), a
link's text in either (``[**Password**](#pw)``)."""
_CELL_ELEMENT = re.compile(r"<([A-Za-z][A-Za-z0-9]{0,15}+)(?:[ \t][^<>]{0,256}+)?+>([^<>]{1,4096}+)</\1[ \t]*+>")
"""A markdown table's cell that is one HTML element (``<code>x</code>``, ``<kbd>``): its text read as the cell is
(rules version 12), the element's tags left."""
_PIPE_NULL: Final[str] = "NULL"
"""The mysql client's empty cell: no password."""
_MAX_TABLE_LINE: Final[int] = 4096


# Rules version 13: a table drawn with box-drawing characters - sqlite3's ``.mode box`` (``│ user │ password │``
# between ``┌──┬──┐`` / ``├──┼──┤`` lines), psql's ``\\pset linestyle unicode`` (`` user │ password `` over
# ``──────┼──────``), double lines too - read as the same table drawn with ``|``, ``-`` and ``+`` is: the text's box
# characters are translated one for one (the spans stay the text's), only in a text holding ``│``, ``┃`` or ``║`` (an
# ASCII or Latin-1 text is never searched: Python answers from its width that it cannot hold one).
_BOX_VERTICALS: Final[tuple[str, ...]] = ("│", "┃", "║")
_BOX_CHARS: Final[dict[int, str]] = str.maketrans(
    {**dict.fromkeys("│┃║", "|"), **dict.fromkeys("─━═", "-"),
     **dict.fromkeys("┼┬┴├┤┌┐└┘╭╮╰╯╋┳┻┣┫┏┓┗┛╬╦╩╠╣╔╗╚╝╪╫╞╡╤╧╥╨╟╢", "+")})


def _boxed(text: str) -> bool:
    """Whether ``text`` holds a box-drawing vertical line (:data:`_BOX_VERTICALS`): a table may be drawn in it."""
    return any(vertical in text for vertical in _BOX_VERTICALS)


def _unboxed(text: str) -> str:
    """``text`` with its box-drawing characters translated to ``|``, ``-`` and ``+`` (:data:`_BOX_CHARS`), one
    character for one; ``text`` itself when it holds no vertical line (:func:`_boxed`)."""
    return text.translate(_BOX_CHARS) if _boxed(text) else text


def _line_at(text: str, at: int) -> tuple[int, int]:
    """The start and end (its newline's position, or the text's end or NUL) of the line holding ``at``, each looked
    for within :data:`_MAX_TABLE_LINE` characters; -1 for either not found there (a line too long for a table's)."""
    floor = max(0, at - _MAX_TABLE_LINE)
    start = max(text.rfind("\n", floor, at), text.rfind("\x00", floor, at))
    if start == -1 and floor > 0:
        return -1, -1
    ceiling = min(len(text), at + _MAX_TABLE_LINE)
    end = text.find("\n", at, ceiling)
    nul = text.find("\x00", at, ceiling if end == -1 else end)
    if nul != -1:
        end = nul
    if end == -1:
        if ceiling < len(text):
            return -1, -1
        end = len(text)
    return start + 1, end


def _line_end(text: str, at: int) -> int:
    """Where the line holding ``at`` ends (a newline, a NUL or the text's end), however far."""
    end = text.find("\n", at)
    nul = text.find("\x00", at, len(text) if end == -1 else end)
    if nul != -1:
        return nul
    return len(text) if end == -1 else end


def _is_rule(text: str, start: int, end: int) -> bool:
    """Whether the line ``text[start:end]`` is a table's rule or border line (``|---|:--:|``, ``-----+-----``,
    ``+----+----+``)."""
    line = text[start:end]
    return "---" in line and _RULE_CHARS.issuperset(line)


def _pipe_cells(text: str, start: int, end: int, rule: bool = False, escaped: bool = False) -> list[tuple[int, int]]:
    """The spans of the cells of the line ``text[start:end]`` split at ``|`` (at ``+`` too for a ``rule``), blanks
    around each and the outer pipes (or a border's ``+``) left out; with ``escaped`` (a markdown table's line, rules
    version 11) never at an escaped ``\\|``, which is part of its cell. Split in C (``str.split``): a text of rule
    lines asks this of every line."""
    line = text[start:end]
    if rule:
        line = line.replace("+", "|")
    elif escaped and "\\|" in line:
        line = line.replace("\\|", "\x01\x01")  # as long as what it stands for: the spans stay the text's
    body = line.rstrip(" \t\r")
    offset = len(body) - len(body.lstrip(" \t"))
    body = body[offset:]
    if body[:1] == "|":
        body = body[1:]
        offset += 1
    if body[-1:] == "|":
        body = body[:-1]
    spans: list[tuple[int, int]] = []
    at = start + offset
    for cell in body.split("|"):
        lead = len(cell) - len(cell.lstrip(" \t"))
        spans.append((at + lead, at + len(cell.rstrip(" \t"))))
        at += len(cell) + 1
    return spans


def _ruled_cells(text: str, start: int, end: int, joints: list[int]) -> list[tuple[int, int]]:
    """The cells of a database client's row ``text[start:end]`` split where its table's rule line has its ``+``
    (``joints``, offsets in the line): mysql, psql and sqlite3 pad each column to one width and write a value's ``|``
    as it is, so a row holding one more ``|`` than the header is split at the rule's joints; none (an empty list)
    when a joint of the row holds no ``|`` (a row of another shape: the table's end)."""
    line = text[start:end].rstrip("\r")
    if not joints or joints[-1] >= len(line) or any(line[joint] != "|" for joint in joints):
        return []
    bounds = [-1, *joints, len(line)]
    spans: list[tuple[int, int]] = []
    for index, (left, right) in enumerate(zip(bounds, bounds[1:])):
        cell = line[left + 1 : right]
        if (index == 0 and left == -1 and right == 0) or (index == len(bounds) - 2 and left == len(line) - 1):
            continue  # the outer border's: mysql's "| a | b |" opens and closes its line with one
        lead = len(cell) - len(cell.lstrip(" \t"))
        spans.append((start + left + 1 + lead, start + left + 1 + len(cell.rstrip(" \t"))))
    return spans


def _header_name(cell: str) -> str | None:
    """A table's header cell as a column's name (:data:`_PIPE_NAME`), read through markdown's emphasis and code
    marks (rules version 11: ``**Password**``, ``_Token_``, `` `api_key` ``, ``**`password`**``), an HTML element
    and a link (rules version 12: ``<b>Password</b>``, ``[Password](#pw)``, ``**<code>secret</code>**``); None for a
    cell that is no name."""
    for _ in range(_MAX_MARKS):  # the marks first: _PIPE_NAME reads `_Token_` as a name
        marked = _MARKED_NAME.fullmatch(cell)
        if marked is None:
            break
        cell = next(text for text in map(marked.group, _MARKED_GROUPS) if text is not None)
    return cell if _PIPE_NAME.fullmatch(cell) is not None else None


def _prose_cell(value: str) -> bool:
    """Whether a markdown table's cell under a credential column is prose, not a secret: words with a blank between
    (``API key in a header``, ``(a: int) -> str``), or a word a password's label is followed by when it names none
    (:func:`_password_word`: ``yes``, ``required``, ``string``, ``<token>``, ``f(x)``). A database client's table
    (psql's, mysql's) holds data: its cells are taken whatever they say."""
    return " " in value or "\t" in value or _password_word(value) != len(value)


def _pipe_table(text: str, rule_start: int, rule_end: int, found: list[Finding], deadline: Deadline) -> int:
    """The rows of the table whose rule line is ``text[rule_start:rule_end]``, when the line above it is a header
    naming a credential column: its cells taken. Returns where the table's rows end (the rule's end when none)."""
    if rule_start < 2 or text[rule_start - 1] != "\n":
        return rule_end
    head_start, head_end = _line_at(text, rule_start - 1)
    if head_start == -1 or _RULE_CHARS.issuperset(text[head_start:head_end]):  # no line, a rule or a border above
        return rule_end
    prose = "+" not in text[rule_start:rule_end]  # markdown's rule: a table written in prose, not a client's output
    cells = _pipe_cells(text, head_start, head_end, escaped=prose)
    if len(cells) < 2 or len(_pipe_cells(text, rule_start, rule_end, rule=True)) != len(cells):
        return rule_end
    names: list[str] = []
    for left, right in cells:
        name = _header_name(text[left:right])
        if name is None:
            return rule_end
        names.append(name)
    columns = _credential_columns(names)
    if not columns:
        return rule_end
    joints = [] if prose else [index for index, char in enumerate(text[rule_start:rule_end]) if char == "+"]
    at = rule_end
    while at < len(text) and text[at] == "\n":
        deadline.check()
        start, end = _line_at(text, at + 1)
        if start != at + 1 or end <= start:  # an empty line, the text's end or a line too long: the table's end
            return at
        if not _is_rule(text, start, end):
            row = _pipe_cells(text, start, end, escaped=prose)
            if len(row) != len(cells) and not prose:  # rules version 13: a value holding "|" (a client's table)
                row = _ruled_cells(text, start, end, joints)
            if len(row) != len(cells):
                return at
            for index in columns:
                left, right = row[index]
                value = text[left:right]
                if prose and _prose_cell(value):
                    element = _CELL_ELEMENT.fullmatch(value)  # rules version 12: <code>x</code>, its text
                    if element is None or _prose_cell(element.group(2)):
                        continue
                    left, right = left + element.start(2), left + element.end(2)
                    value = element.group(2)
                if value != _PIPE_NULL and holds_credential(value):
                    found.append(Finding(left, right, TOKEN, NAME))
        at = end
    return at


# Rules version 10: psql's expanded display (``\\x``): ``-[ RECORD 1 ]---`` then a line a column, ``NAME | VALUE``
# (the names padded to one width), to the next record's line, an empty line or ``(N rows)``; a line with no name
# (``         | more``) goes on the value above it (psql wraps a long or multi-line value so).
_PSQL_RECORD = "-[ RECORD "
_EXPANDED_ROW = re.compile(r"[ \t]*+([A-Za-z_][A-Za-z0-9_.\-]{0,63}+(?: [A-Za-z0-9_.\-]{1,63}+){0,3}+)?+[ \t]*+\| ?+")


def _expanded_records(text: str, deadline: Deadline, found: list[Finding]) -> None:
    """psql's expanded display's credential fields (:data:`_EXPANDED_ROW`): the value after ``|`` on each line whose
    name is a credential word, and the lines that go on it. Each record's line is found once, and each line under it
    read once."""
    at = text.find(_PSQL_RECORD)
    while at != -1:
        deadline.check()
        position = _line_end(text, at)
        taking = False
        while position < len(text) and text[position] == "\n":
            deadline.check()
            row = _EXPANDED_ROW.match(text, position + 1)
            end = _line_end(text, position + 1)
            if row is None or row.end() > end:
                break
            name = row.group(1)
            if name is not None:
                taking = _credential_column(name, [name])
            value_end = end
            while value_end > row.end() and text[value_end - 1] in " \t\r+":  # psql's "+": the value goes on below
                value_end -= 1
            value = text[row.end() : value_end]
            if taking and value and value != _PIPE_NULL and holds_credential(value):
                found.append(Finding(row.end(), value_end, TOKEN, NAME))
            position = end
        at = text.find(_PSQL_RECORD, max(position, at + 1))


def _kube_flow_values(text: str, at: int) -> list[tuple[int, int]]:
    """The spans of the values of a YAML flow mapping whose ``{`` is at ``at - 1`` (:data:`_FLOW_ENTRY`): read up
    to its closing brace, or to the first entry not read as one (what was read before it is still taken)."""
    spans: list[tuple[int, int]] = []
    position = at
    for _ in range(_MAX_FLOW_ENTRIES):
        entry = _FLOW_ENTRY.match(text, position)
        if entry is None:
            break
        start, end = entry.span(1)
        while text[end - 1] in " \t":  # a plain value's trailing blanks are none of it
            end -= 1
        if text[start:end] not in ALREADY_TOKENS:
            spans.append((start, end))
        if entry.group(2) == "}":
            break
        position = entry.end()
    return spans


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


def _ends_line(text: str, at: int) -> bool:
    """Whether only spaces and tabs stand between ``at`` and its line's end (a newline, a NUL, a written ``\\n``, or
    the text's end)."""
    at = _past_blanks(text, at)
    return at == len(text) or text[at] in "\r\n\x00" or text.startswith("\\n", at)


def _past_blanks(text: str, at: int) -> int:
    """The position after the spaces and tabs at ``at``."""
    while at < len(text) and text[at] in " \t":
        at += 1
    return at


# Two forms found from a colon, in one search (a colon is a literal the regex engine skips to; each form alone was a
# pass of its own): a password's label inside a line (``login failed for bob. Password: hunter2``), and a
# PostgreSQL password file's line (``HOST:PORT:DATABASE:USER:PASSWORD``), found from the colon before its port.
_LABEL_ENDS: Final[tuple[str, ...]] = ("ssword", "sswd", "phrase", "pass", "pwd")
"""How a password's name ends (``Password``, ``passwd``, ``passphrase``, ``DB_PASS``, ``MYSQL_PWD``): a colon after
one, or after one and a blank, is a label's; the name read back is then asked :func:`is_credential_text_name`."""
_PGPASS_FIELD = r"(?:[^\s:\\\x00]|\\.)++"  # a field of a .pgpass line: "\:" and "\\" are its escapes; no blank
_PGPASS_LAST = r"(?:[^\s:\\\x00]|\\[^nr\s])++"  # its password: to the line's end (a written "\n" ends it too)
_PGPASS_QUOTED_LAST = r"""(?:[^\s:\\'"\x00]|\\[^nr\s'"])++"""  # ... or to the quote closing an echoed word
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
_PGPASS_STOPS: Final[str] = " \t\r\n\x00:'\""
_MAX_PGPASS_FIELD: Final[int] = 256
_HEX_LINE = re.compile(r"[0-9A-Fa-f:]++")


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
# Each opens with its literal name; a longer word (myhtpasswd, htpasswd.py) is none.
_POSITIONAL: Final = tuple(
    (name, re.compile(rf"""{name}(?<![\w.-]{name}){EXE_SUFFIX}(?=[ \t"'])"""), picker)
    for name, picker in _POSITIONAL_COMMANDS.items() if name not in _BY_OWN_SEARCH
)
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


def _line_start(text: str, floor: int, at: int) -> int:
    """Where the line holding ``at`` starts, searched back no further than ``floor`` (each end of
    :data:`_LINE_END`, by a search in C: the stretches between the lines a flag stands on are read once)."""
    escaped = text.rfind("\\n", floor, at)
    return max(floor, text.rfind("\n", floor, at) + 1, text.rfind("\x00", floor, at) + 1,
               escaped + 2 if escaped != -1 else floor)


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


def _inside(starts: list[int], spans: list[tuple[int, int]], at: int) -> bool:
    """Whether ``at`` is inside one of ``spans`` (sorted, ``starts`` their starts)."""
    index = bisect.bisect_right(starts, at) - 1
    return index >= 0 and at < spans[index][1]


def _next_at(positions: list[int], start: int, default: int) -> int:
    """The first of ``positions`` (sorted) at or after ``start``, if before ``default``; else ``default``."""
    index = bisect.bisect_left(positions, start)
    return min(positions[index], default) if index < len(positions) else default


_MAX_BRACKETED: Final[int] = 4096
"""How far a credential's object or array value is followed to its closing bracket, at most; one still
open there is replaced up to that point."""


def _bracketed(text: str, start: int) -> tuple[int, int] | None:
    """The span of the ``[...]``, ``{...}`` or ``(...)`` value at ``start`` (after white space), quotes skipped."""
    at = start
    while at < len(text) and text[at] in " \t\r\n":
        at += 1
    if at >= len(text) or text[at] not in "[{(":
        return None
    depth, quote, escaped = 0, "", False
    limit = min(len(text), at + _MAX_BRACKETED)
    for index in range(at, limit):
        char = text[index]
        if quote:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in "[{(":
            depth += 1
        elif char in "]})":
            depth -= 1
            if depth == 0:
                return at, index + 1
    return at, limit


def _indented_block(text: str, at: int, column: int) -> tuple[int, int] | None:
    """The span of the lines after the line ending at ``at`` that are indented past ``column`` (blank lines
    among them included, and sequence items at ``column``), from the first one's first character to the last
    one's last; None when there is none."""
    newline = text.find("\n", at)
    if newline == -1 or "\x00" in text[at:newline]:
        return None
    start = end = -1
    position = newline + 1
    while position < len(text):
        line = _LINE.match(text, position)
        assert line is not None  # the pattern matches at every position
        content = line.group(2).rstrip("\r \t")
        if content:
            depth = len(line.group(1))
            # A line no deeper than the name ends the value, but a sequence item at the name's own column
            # (YAML writes "key:\n- a") is one of its entries.
            if depth < column or (depth == column and not (content == "-" or content.startswith(("- ", "-\t")))):
                break
            if start < 0:
                start = line.start(2)
            end = line.start(2) + len(content)
        if line.group(3) != "\n":
            break  # the end of the text, or of one text joined with others (NUL)
        position = line.end()
    return None if start < 0 else (start, end)


def _escaped_value(text: str, at: int, quote: str) -> tuple[int, int] | None:
    """The span of the value opening with an escaped quote (``\\"``) at ``at``, in a JSON document held in a
    JSON string: to the escaped quote that closes it, read as the document reads it (``\\\\`` is its
    backslash, ``\\\\\\"`` its escaped quote); one never closed up to where an unquoted value ends. None
    when it is empty."""
    start = position = at + 2
    inner_escape = False  # the document's own backslash came last: its next character is escaped
    while position < len(text) and text[position] != "\x00":
        char = text[position]
        if char == "\\" and position + 1 < len(text):
            following = text[position + 1]
            if following == quote and not inner_escape:
                return (start, position) if position > start else None
            position += 2
            char = following if following == "\\" else ""
        else:
            position += 1
        inner_escape = not inner_escape and char == "\\"
    unquoted = _ESCAPED_UNQUOTED.match(text, start)
    return (start, unquoted.end()) if unquoted else None


def _word_starts(text: str, at: int) -> bool:
    """Whether a flag at ``at`` starts a word: at the start, after white space, a quote, an opening bracket,
    ``=`` or ``,`` (an argv list), or after a written escape (``\\n``, as a log line writes a newline)."""
    return at == 0 or text[at - 1] in " \t\r\n\x00\"'=([{," or text[at - 2 : at] in ("\\n", "\\t", "\\r")


def _in_synopsis(text: str, at: int) -> bool:
    """Whether the flag at ``at`` opens a usage synopsis's bracket (``[-N new_passphrase]``, ``[--password PW]``):
    a placeholder, no value."""
    return text[at - 1 : at] == "["


# Rules version 8: an XML element's attributes read as a name/value object (.NET's appSettings ``<add key="Password"
# value="x"/>``, Spring's and Ant's ``<property name="password" value="x"/>``, Java's properties XML ``<entry
# key="api_key">x</entry>``): the tag's name, then each attribute, its value quoted.
_TAG_NAME = re.compile(r"<([A-Za-z_][\w.:-]{0,95}+)[ \t\r\n]")
_ATTRIBUTE = re.compile(r"""[ \t\r\n]++([A-Za-z_][\w.:-]{0,95}+)[ \t\r\n]*+=[ \t\r\n]*+(?:"([^"<>\x00]*+)"|'([^'<>\x00]*+)')""")
_ELEMENT_TEXT = re.compile(r"[^<\x00]{1,4096}+")
_ATTRIBUTE_NAMES: Final[frozenset[str]] = frozenset({"name", "Name", "key", "Key"})
"""The attributes naming an element's variable (.NET's ``key``, Spring's and Ant's ``name``)."""


def _attribute_pair(text: str, start: int, at: int) -> tuple[int, tuple[int, int] | None] | None:
    """The attribute named at ``start`` (its ``=`` at ``at``) as a member of a name/value element: when its tag
    has a name attribute (:data:`_ATTRIBUTE_NAMES`) naming a credential (:func:`names_credential`), where the tag
    opens and the span of its value (the ``value`` attribute's, or, with none, the element's text up to its
    closing tag; ``None`` when that holds nothing to replace). ``None`` when the attribute is no part of such an
    element (``key="x"`` is then read as the table word it is). The tag is looked for back and forth within
    :data:`_MAX_OPEN_TAG` characters (two searches in C)."""
    if start == 0 or text[start - 1] not in _XML_SPACE:
        return None
    opened = text.rfind("<", max(0, start - _MAX_OPEN_TAG), start)
    if opened == -1 or text.find(">", opened, start) != -1:
        return None
    closed = text.find(">", at, opened + _MAX_OPEN_TAG)
    tag = _TAG_NAME.match(text, opened, closed) if closed != -1 else None
    if tag is None:
        return None
    named, value = False, None
    for attribute in _ATTRIBUTE.finditer(text, tag.end() - 1, closed):
        group = 2 if attribute.group(2) is not None else 3
        if attribute.group(1) in VALUE_MEMBERS:
            value = attribute.span(group)
        elif attribute.group(1) in _ATTRIBUTE_NAMES and names_credential(attribute.group(group)):
            named = True
    if not named:
        return None
    if value is None and text[closed - 1] != "/":  # <entry key="api_key">x</entry>: the element's text
        inner = _ELEMENT_TEXT.match(text, closed + 1)
        if inner is not None and text.startswith(f"</{tag.group(1)}>", inner.end()):
            value = inner.span()
        else:  # rules version 9: .NET's <setting name="Password" serializeAs="String"><value>x</value></setting>
            value = _value_element(text, closed + 1 if inner is None else inner.end())
    if value is None or value[0] == value[1] or text[value[0] : value[1]].strip() in ALREADY_TOKENS:
        return opened, None
    return opened, _unless_reference(text, value)


_VALUE_OPEN = re.compile(r"<([Vv]alue)(?:[ \t\r\n][^<>\x00]{0,1024}+)?(?<!/)>")
"""A setting's value element's open tag: ``<value>`` (applicationSettings) or, rules version 10, ``<Value
Profile="(Default)">`` (a Visual Studio ``.settings`` file)."""


def _value_element(text: str, at: int) -> tuple[int, int] | None:
    """The text's span of a ``<value>`` element opening at ``at`` (white space only before it), as .NET's
    applicationSettings write a setting's value (rules version 9), or a ``.settings`` file's ``<Value
    Profile="(Default)">`` (rules version 10); None when none opens there, or it holds another element. An empty
    one (``<value />``, ``<value></value>``) holds nothing to replace."""
    if text[at : at + 1] in _XML_SPACE:
        at = _past_space(text, at)
    opened = _VALUE_OPEN.match(text, at)
    if opened is None:
        return None
    inner = _ELEMENT_TEXT.match(text, opened.end())
    if inner is None or not text.startswith(f"</{opened.group(1)}>", inner.end()):
        return None
    return inner.span()


def _past_space(text: str, at: int) -> int:
    """The position after the XML white space at ``at`` (at most :data:`_MAX_OPEN_TAG` characters read)."""
    end = min(len(text), at + _MAX_OPEN_TAG)
    while at < end and text[at] in _XML_SPACE:
        at += 1
    return at


def _names_a_secret(name: str, value: str) -> bool:
    """Whether an XML element named ``name`` holding ``value`` holds a credential to replace."""
    value = value.strip()
    return bool(value) and value not in ALREADY_TOKENS and is_credential_word(name)


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
    its line and the value ends it, or a ``CONFIG SET`` precedes the name; else None."""
    value = _REDIS_VALUE.match(text, at)
    if value is None:
        return None
    head = text[max(0, start - _MAX_REDIS_HEAD) : start]
    if not ((_first_word(text, start) and _ends_line(text, value.end())) or _CONFIG_SET.search(head) is not None):
        return None
    group = next(g for g in (1, 2, 3) if value.group(g) is not None)
    return value.span(group)


def _redis_password(text: str, match: re.Match[str], found: list[Finding]) -> None:
    """The value of one ``requirepass X`` / ``masterauth X`` match (its name group 1, its value group 2, 3 or 4):
    taken when the name and value are their line's only words (not a heading's, :func:`_heading`) or a ``CONFIG
    SET`` stands before the name."""
    group = next(g for g in (2, 3, 4) if match.group(g) is not None)
    head = text[max(0, match.start() - _MAX_REDIS_HEAD) : match.start()]
    if _CONFIG_SET.search(head) is None and not (
            _first_word(text, match.start()) and _ends_line(text, match.end())):
        return
    if _heading(text, match.start(1), match.end(1), match.span(group)) or _prose_after_name(text, match.span(group)):
        return
    if match.group(group) not in ALREADY_TOKENS and _unless_reference(text, match.span(group)):
        found.append(Finding(match.start(group), match.end(group), TOKEN, NAME))


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
        if sentinel and not _first_word(text, start):  # the rest of the line read once per line
            return
        at = match.end()
        if auth:
            master = _SENTINEL_MASTER.match(text, at)
            if master is None:
                return
            at = master.end()
        span = _sentinel_value(text, at) if sentinel else _redis_value(text, start, at)
        if span is not None and (_heading(text, start, match.end(), span) or _prose_after_name(text, span) or (
                sentinel and _hand_written_words(text, start, match.end(), span))):
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
    if text[start:end].islower() or text[span[0] - 1] in "\"'" or not _first_word(text, start):
        return False  # CONFIG SET REQUIREPASS Hunter is a command
    word = text[span[0] : span[1]]
    return _HEADING_WORD.fullmatch(word) is not None or ascii_lower(word) in _STATES or _declared_type(word)


def _hand_written_words(text: str, start: int, end: int, span: tuple[int, int]) -> bool:
    """fp26: whether sentinel.conf's name ``text[start:end]`` (``Sentinel auth-pass``) is not in lower case and its
    value ``span`` holds a blank: a sentence (``Sentinel auth-pass must match the master's requirepass.``), not a
    line redis reads. CONFIG REWRITE writes the names in lower case (its value unquoted, blanks and all); a line
    written by hand is read by words (sdssplitargs), and sentinel refuses one with more words than the value."""
    if text[start:end].islower() or text[span[0] - 1] in "\"'":  # a quoted word's content is one word
        return False
    return " " in text[span[0] : span[1]] or "\t" in text[span[0] : span[1]]


def _sentinel_value(text: str, at: int) -> tuple[int, int] | None:
    """The span of sentinel.conf's value at ``at``: the rest of its line (:data:`_SENTINEL_REST`, blanks after it
    left; rules version 14: to a note after it, :data:`_SENTINEL_NOTE`), a quoted word's content when the quoted word
    is the whole of it (as redis reads a hand-written line)."""
    rest = _SENTINEL_REST.match(text, at)
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


def _opens_a_line(text: str, at: int) -> bool:
    """Whether ``at`` starts its line (:func:`_starts_a_line`) or, rules version 16, follows a markdown blockquote's
    marks that open it (:func:`_quote_opening`: ``>`` and blanks only, so a prompt's own ``> `` before it is none)."""
    return _starts_a_line(text, at) or _quote_opening(text, at) != -1


_NOTE_OPENING = re.compile(_NOTE_MARKS)
_NOTE_MARK_CHARS: Final[str] = " \t>-*+.)0123456789"
_MAX_NOTE_MARKS: Final[int] = 32
"""The characters read back over a note's marks (:data:`_NOTE_MARKS`) before a configuration line's first word."""


def _first_word(text: str, at: int) -> bool:
    """Rules version 17: whether ``at`` is its line's first word as a configuration file reads it: the line's start
    (:func:`_starts_a_line`), or after the marks a markdown note puts before a line it quotes or lists
    (:data:`_NOTE_MARKS`: ``> requirepass x``, ``> > user alice on >x``, ``- masterauth x``, ``1. machine h password
    x``). The marks are read back at most :data:`_MAX_NOTE_MARKS` characters and must be the only thing before ``at``
    on its line: a word (``set requirepass x``), a number that is no list marker (``6.0 masterauth x``), a ``"``
    (redis-cli's ``1) "requirepass"``) or a prompt (``sqlite> ``) before it is none."""
    if _starts_a_line(text, at):
        return True
    line, floor = at, max(0, at - _MAX_NOTE_MARKS)
    while line > floor and text[line - 1] in _NOTE_MARK_CHARS:
        line -= 1
    if not (line == 0 or text[line - 1] in "\n\x00" or text[line - 2 : line] == "\\n"):
        return False
    marks = _NOTE_OPENING.match(text, line, at)
    return marks is not None and marks.end() == at


def _acl_secrets(text: str, start: int, end: int, found: list[Finding]) -> None:
    """The passwords and hashes (:data:`_ACL_SECRET`) among the Redis ACL rules ``text[start:end]``."""
    for secret in _ACL_SECRET.finditer(text, start, end):
        group = next(group for group in (1, 2, 3) if secret.group(group) is not None)
        if secret.group(group) not in ALREADY_TOKENS:
            found.append(Finding(secret.start(group), secret.end(group), TOKEN, NAME))


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


_MAX_QUOTE_MARKS: Final[int] = 16
"""The characters read back over a markdown blockquote's marks before a first item's blanks or a prompt (``> > > ``:
six; blanks before the first ``>``, a quote under a list item, count too)."""


_QUOTE_MARKS = re.compile(r"(?:[ \t]*+>[ \t]?+){0,16}+")
"""A markdown blockquote's marks opening a line, as markdown reads them: each ``>`` after blanks, and one blank after
it (``>     1) "f1"``: the quote's blank, then a code block's four)."""


def _past_quote_marks(text: str, at: int, end: int) -> int:
    """Where the line at ``at`` goes on past its blockquote's marks (:data:`_QUOTE_MARKS`, read up to ``end``)."""
    marks = _QUOTE_MARKS.match(text, at, end)
    return at if marks is None else marks.end()


def _quote_opening(text: str, end: int) -> int:
    """Rules version 16: where the line opens whose markdown blockquote marks (``>``, blanks between and after them)
    end at ``end``, read back at most :data:`_MAX_QUOTE_MARKS` characters; -1 when something else stands before them
    on the line: redis-cli's prompt ends in ``> `` too, after its ``HOST:PORT`` (``127.0.0.1:6379> ``)."""
    at, floor = end, max(0, end - _MAX_QUOTE_MARKS)
    while at > floor and text[at - 1] in " \t>":
        at -= 1
    return at if at == 0 or text[at - 1] in "\n\x00" else -1


def _starts_a_line(text: str, at: int) -> bool:
    """Whether only spaces and tabs stand between ``at`` and the start of its line: the text's start, a
    newline, a NUL (texts are scanned joined by one), or a newline written as ``\\n`` in a string. Reads back
    over the spaces only, so many candidates on one line cost no rescan."""
    while at > 0 and text[at - 1] in " \t":
        at -= 1
    return at == 0 or text[at - 1] in "\n\x00" or text[at - 2 : at] == "\\n"


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


class _EveryLiteral:
    """What :meth:`CredentialsDetector._find` asks its gates of when every pass must run: it holds every literal."""

    def __contains__(self, literal: object) -> bool:
        return True


EVERY_LITERAL: Final[Container[str]] = _EveryLiteral()
"""A ``held`` for :meth:`CredentialsDetector._find` that opens every gate: the passes as they ran before perf23's
gates, the reference their findings are compared with (tests/capture/test_detector_gates23.py)."""

_SKELETON_FROM: Final[int] = 16 * 1024
"""Characters an ASCII text needs for :func:`held_literals` to read its skeleton: a shorter one asks each gate of
the text itself (a recorded call's joined fields are short: the skeleton would cost more than it saves)."""
_COMMON: Final[bytes] = b"abcdefghijklmnopqrstuvwxyz0123456789 "
"""What a text's skeleton leaves out: the characters prose is mostly made of."""


@functools.cache
def _skeleton_key(literal: str) -> bytes:
    """``literal`` as a skeleton holds it: without the :data:`_COMMON` characters (empty: the skeleton cannot tell)."""
    return literal.encode("ascii").translate(None, _COMMON) if literal.isascii() and len(literal) > 1 else b""


class _Skeleton:
    """The literals a long ASCII text holds, asked first of its skeleton: the text without lower-case letters,
    digits and spaces (one ``bytes.translate``, about 0.6 ms/MiB), a few KiB of prose's punctuation and capitals.

    Every occurrence of a literal in the text is, without those characters, an occurrence of the literal's own
    skeleton (:func:`_skeleton_key`) in the text's: a literal whose skeleton the text's lacks is absent, found so
    in a search of a few KiB where the text's own search reads every character (0.4-0.8 ms/MiB each: ``BEARER``,
    ``REQUIREPASS``, ``-P``, ``COPY``...). Any other answer is the text's own ``in``: the answers are exactly
    ``literal in text``'s."""

    __slots__ = ("_text", "_skeleton")

    def __init__(self, text: str) -> None:
        self._text = text
        self._skeleton = text.encode("ascii").translate(None, _COMMON)

    def __contains__(self, literal: object) -> bool:
        if not isinstance(literal, str):
            return False
        key = _skeleton_key(literal)
        if key and key not in self._skeleton:
            return False
        return literal in self._text


def held_literals(text: str) -> Container[str]:
    """What :meth:`CredentialsDetector._find`'s gates ask of ``text``: the text itself, or, for a long ASCII one, its
    :class:`_Skeleton` (the same answers, most of them found in a few KiB)."""
    return _Skeleton(text) if len(text) >= _SKELETON_FROM and text.isascii() else text


@dataclass
class CredentialsDetector:
    """Credentials in text (the key-name rule on objects is applied by the scanner)."""

    name: str = field(default=NAME, init=False)
    context_free: bool = field(default=True, init=False)

    def find(
        self,
        text: str,
        deadline: Deadline,
        *,
        context: str | None = None,
        prefilter: bool = False,
    ) -> list[Finding]:
        """Every credential value in ``text``."""
        return self._find(text, held_literals(text), deadline, prefilter)

    def _find(self, text: str, held: Container[str], deadline: Deadline, prefilter: bool) -> list[Finding]:
        """The passes of :meth:`find` over ``text``, each asked of ``held`` first whether the text holds a literal
        every match of its patterns holds (``held`` is the text; :data:`EVERY_LITERAL` runs every pass, the
        reference tests/capture/test_detector_gates23.py compares with).

        A pass's regex search for a literal reads each character in the engine's loop (about 1 us per 1,000
        characters, and valgrind counts each); ``in`` on a str is a memchr for one character: a text of few
        literals, as a recorded call's joined fields often are (``tool``, ``args``, words), skips the passes whose
        characters it lacks (perf23: 242,000 instructions per such call's find before these gates). A gate only
        skips a pass that could find nothing; the rules' own gates below (``"\\n" in text``, ``password``) stay
        as they were, part of the rules."""
        found: list[Finding] = []
        colon = ":" in held
        # A blank separates a keyword from its value in most passes (Bearer TOKEN, PASSWORD 'x', net user, AUTH x).
        blank = " " in held or "\t" in held
        if "=" in held:
            self._key_value(text, deadline, found)
        terraform = self._quoted(text, _DQ_COLON, deadline, prefilter, found) if colon and '"' in held else 0
        if terraform & _SAW_SENSITIVE:
            self._terraform_values(text, deadline, found)
        if terraform & _SAW_SENSITIVE_ATTRIBUTES:
            self._state_attributes(text, deadline, found)
        if terraform & _SAW_SENSITIVE_VALUES:
            self._show_values(text, deadline, found)
        if colon and "'" in held:
            self._quoted(text, _SQ_COLON, deadline, prefilter, found)
        if colon:  # NAME: VALUE
            self._headers(text, held, deadline, found)
        if blank:  # [ \t]+ between the scheme's word and its token
            # The regex engine's search for "earer" stops at every "e" of prose (2.3 ms/MiB of capture_scan's mixed
            # text, "asic" 1.4); `in` asks it in 1.0 and 0.9. The upper-case spellings' searches cost what `in` does.
            if "earer" in held:
                self._scheme(text, _BEARER[0], _bearer_token, deadline, found)
            if "BEARER" in held:  # twenty-sixth session: the upper case asked of the skeleton (0.5 ms/MiB of prose)
                self._scheme(text, _BEARER[1], _bearer_token, deadline, found)
            if "asic" in held:
                self._scheme(text, _BASIC[0], _basic_token, deadline, found)
            if "BASIC" in held:
                self._scheme(text, _BASIC[1], _basic_token, deadline, found)
        if colon and "://" in held:
            for match in _USERINFO.finditer(text):
                deadline.check()
                found.append(Finding(match.start(1), match.end(1), TOKEN, NAME))
            self._user_tokens(text, deadline, found)
        self._shapes(text, deadline, found)
        dash = "-" in held
        if dash:
            if "PRIVATE KEY-----" in held or "PRIVATE KEY BLOCK-----" in held:  # -----BEGIN ... (the skeleton's)
                self._private_keys(text, deadline, found)
            self._flags(text, deadline, found)
        if blank or '"' in held or "'" in held:  # the command's name followed by [ \t"']
            self._positional(text, deadline, found)
        if " " in held:  # "net user", "NET USER"
            self._net_user(text, held, deadline, found)
        self._elements(text, deadline, found)
        # One search for "password" serves the three rules that need it (a 1 MiB search is 0.3-0.5 ms); each of them
        # needs white space beside the word (a .netrc's pairs, echo's word, an SQL keyword's value).
        password = (blank or "\n" in held or "\r" in held) and "password" in text
        if password:
            self._netrc(text, deadline, found)
            self._stdin_passwords(text, deadline, found)
        if "|" in held or "<" in held:  # a pipe or <<<
            self._chpasswd(text, deadline, found)
        if colon:
            self._colon_forms(text, deadline, found)
        self._shadow_hashes(text, deadline, found)
        self._tool_files(text, held, blank, deadline, found)
        if "\n" in text:  # a memchr: a table has a header line and a row
            self._csv_tables(text, held, deadline, found)
            if "|" in text or _boxed(text):  # rules version 10: a markdown, psql or mysql table (13: boxed too)
                self._pipe_tables(_unboxed(text), deadline, found)
        if colon and SECRET_KIND in text:  # one search (a Kubernetes Secret's kind) before either form's (data:)
            self._kube_secrets(text, deadline, found)
        if blank:  # [ \t]+ after each keyword
            self._sql_passwords(text, held, deadline, found, password=password)
        if blank or "=" in held:  # a tool's words, Oracle's userid=USER/PASSWORD
            self._config_sets(text, held, deadline, found)
        if colon and ("{" in held or "," in held):
            self._bare_keys(text, deadline, found)
        self._pairs(text, deadline, found)
        self._encoded_pairs(text, deadline, found)
        # Rules version 16: an empty value is no credential (``requirepass ""``, ``CONFIG SET masterauth ''``: redis
        # reads no password); its span would have put a token where nothing was, as data's "" never is.
        found = [finding for finding in found if finding.end > finding.start]
        found.sort()
        return found

    @staticmethod
    def _user_tokens(text: str, deadline: Deadline, found: list[Finding]) -> None:
        """Rules version 8: a token as a URL's whole user part (``https://0123…cdef@github.com/o/r.git``, git's
        form for a token with no password), when :func:`_user_token` reads it as one; ``git@``, ``bob@`` and an
        e-mail address's user (a dot) are left. A user with a password is the ``user:password@`` rule's."""
        if "://" not in text:
            return
        for match in _USER_TOKEN.finditer(text):
            deadline.check()
            if _user_token(match.group(1)):
                found.append(Finding(match.start(1), match.end(1), TOKEN, NAME))

    @staticmethod
    def _shapes(text: str, deadline: Deadline, found: list[Finding]) -> None:
        """Tokens known by their own form (:mod:`~bitexact.credential_shapes`), each replaced whole: each mark's
        shapes searched from the mark, in a text that holds it (:data:`_SHAPE_SEARCHES`)."""
        for mark, pattern, shapes in _SHAPE_SEARCHES:
            if mark not in text:
                continue
            for match in pattern.finditer(text):
                deadline.check()
                shape = shapes[(match.lastindex or 1) - 1]
                if shape.keep == "":  # the form's part before the mark stays; the token opens at the mark
                    found.append(Finding(match.start(), match.end(), TOKEN, NAME))
                    continue
                if shape.keep is not None:  # the form's part after the mark stays; the token follows it
                    kept = _kept_pattern(shape.keep).match(text, match.start() + len(mark))
                    found.append(Finding(kept.end(), match.end(), TOKEN, NAME))  # type: ignore[union-attr]
                    continue
                start = match.start() - shape.width  # the token's first character
                if _BEFORE_SHAPE.match(text, start) is not None:
                    found.append(Finding(start, match.end(), TOKEN, NAME))

    @staticmethod
    def _private_keys(text: str, deadline: Deadline, found: list[Finding]) -> None:
        """A PEM private key's body between its armour lines (which stay, saying what was there): only a
        body that reads as one (:data:`_PEM_BODY`), up to the END line, or, with none before the next
        BEGIN, as far as such lines go."""
        if "PRIVATE KEY-----" not in text and "PRIVATE KEY BLOCK-----" not in text:
            return
        begins = list(_PEM_BEGIN.finditer(text))
        for index, begin in enumerate(begins):
            deadline.check()
            start = _PEM_SPACE.match(text, begin.end()).end()  # type: ignore[union-attr]
            # Never past the next key's BEGIN: each would otherwise search the same 64 KiB again.
            limit = min(start + _MAX_PEM, begins[index + 1].start() if index + 1 < len(begins) else len(text))
            body = _PEM_BODY.match(text, start, limit)
            if body is None or body.end() - start < _PEM_MIN_BASE64:
                continue
            end_line = _PEM_END.match(text, body.end(), limit)
            if end_line is None and text[body.end() : body.end() + 5] == "-----":
                continue  # another armour line (a certificate's END): no key body
            end = body.end()
            while end > start and (text[end - 1].isspace() or text[end - 2 : end] in ("\\n", "\\r")):
                end -= 1 if text[end - 1].isspace() else 2
            if end - start >= _PEM_MIN_BASE64:
                found.append(Finding(start, end, TOKEN, NAME))

    @staticmethod
    def _elements(text: str, deadline: Deadline, found: list[Finding]) -> None:
        """``<NAME ...>VALUE</NAME>``: an XML element named as a credential (a SOAP header's password), its
        text or its CDATA section's."""
        if "<" not in text:
            return
        for element in _ELEMENT.finditer(text):
            deadline.check()
            if _names_a_secret(element.group(2), element.group(3)):
                found.append(Finding(element.start(3), element.end(3), TOKEN, NAME))
        if _CDATA in text:
            CredentialsDetector._cdata_elements(text, deadline, found)

    @staticmethod
    def _cdata_elements(text: str, deadline: Deadline, found: list[Finding]) -> None:
        """``<NAME ...><![CDATA[VALUE]]></NAME>``: what the section of an element named as a credential holds
        (white space around the section allowed)."""
        close = -1  # the next "]]>", found once for all the sections before it (many opens, one close)
        at = text.find(_CDATA)
        while at != -1:
            deadline.check()
            start = at + len(_CDATA)
            if close < start:
                close = text.find("]]>", start)
                if close == -1:
                    return  # no section closes from here on
            floor = max(0, at - _MAX_OPEN_TAG)
            tag_end = floor + len(text[floor:at].rstrip(_XML_SPACE))
            opened = text.rfind("<", floor, tag_end) if text[tag_end - 1 : tag_end] == ">" else -1
            tag = _OPEN_TAG.match(text, opened, tag_end) if opened != -1 else None
            after = close + 3
            while after < len(text) and text[after] in _XML_SPACE:
                after += 1
            if (tag is not None and close - start <= _MAX_CDATA and text.startswith(f"</{tag.group(1)}>", after)
                    and _names_a_secret(tag.group(2), text[start:close])):
                found.append(Finding(start, close, TOKEN, NAME))
            at = text.find(_CDATA, start)

    @staticmethod
    def _netrc(text: str, deadline: Deadline, found: list[Finding]) -> None:
        """A ``.netrc`` entry's password (``machine HOST login USER password VALUE``), at a line's start; asked only
        of a text holding ``password``."""
        if "machine" not in text and "default" not in text:
            return
        heads = heapq.merge(*(pattern.finditer(text) for pattern in _NETRC_HEADS), key=lambda head: head.start())
        covered = 0
        for head in heads:
            deadline.check()
            if head.start() < covered or not _first_word(text, head.start()):
                continue  # inside the entry read last (a login named "default"), or prose
            entry = _NETRC_REST.match(text, head.end())
            assert entry is not None  # every part is optional
            covered = entry.end()
            group = 1 if entry.group(1) is not None else 2
            if entry.group(group) and entry.group(group) not in ALREADY_TOKENS:
                found.append(Finding(entry.start(group), entry.end(group), TOKEN, NAME))

    @classmethod
    def _chpasswd(cls, text: str, deadline: Deadline, found: list[Finding]) -> None:
        """The passwords ``chpasswd`` reads as ``USER:PASSWORD`` lines: from ``echo``/``printf`` piped to it, or
        from a here-string (``chpasswd <<< 'bob:x'``); each pair of a ``printf 'a:x\\nb:y'`` too."""
        # Its input comes through a pipe or a here-string: a one-character search (memchr) first, then the word's.
        if "|" not in text and "<<<" not in text or "chpasswd" not in text:
            return
        for pattern in _CHPASSWD_INPUTS:
            for match in pattern.finditer(text):
                deadline.check()
                word = cls._value_span(match)
                for pair in _CHPASSWD_PAIR.finditer(text, *word) if word else ():
                    if pair.group(1) not in ALREADY_TOKENS:
                        found.append(Finding(pair.start(1), pair.end(1), TOKEN, NAME))

    @classmethod
    def _colon_forms(cls, text: str, deadline: Deadline, found: list[Finding]) -> None:
        """What a colon opens (:data:`_COLON_FORMS`): a password's label inside a line, one word its value
        (:meth:`_label_value`), and a ``.pgpass`` line's password (:meth:`_pgpass_password`)."""
        if ":" not in text:
            return
        covered = 0  # the end of the last label's value: a colon inside it is part of it (password:a:b:c read once)
        for match in _COLON_FORMS.finditer(text):
            deadline.check()
            if match.start() < covered:
                continue
            if match.group("label") is not None:
                covered = cls._label_value(text, match.start(), found)
            elif match.group("words") is not None:
                covered = cls._words_label(text, match.start(), found)
            else:
                cls._pgpass_password(text, match, found)

    @classmethod
    def _label_value(cls, text: str, colon: int, found: list[Finding]) -> int:
        """``NAME: VALUE`` inside a line (``login failed for bob. Password: hunter2``, ``user=bob Password: x``,
        ``**Password:** x``), NAME a credential name ending as a password's does (``password``, ``passwd``,
        ``passphrase``, ``DB_PASS``, ``MYSQL_PWD``): one word, :data:`_LABEL_VALUE` (a word of
        :data:`_NOT_PASSWORDS` is left). At a line's start the header rule reads the rest of the line. Returns where
        the word read ends (0 when none was read)."""
        end = colon
        while end > 0 and text[end - 1] in " \t":
            end -= 1
        start, floor = end, max(0, end - _MAX_NAME - 1)
        while start > floor and text[start - 1] in _NAME_CHARS:
            start -= 1
        name = text[start:end]
        if not name or _starts_a_line(text, start) or not is_credential_text_name(name):
            return 0
        if not ascii_lower(name).endswith(_PASSWORD_ENDINGS):
            return 0  # token: 5, auth: ok, Signature: valid - a label whose word is as often prose
        return _label_value(text, colon, found)

    @staticmethod
    def _words_label(text: str, colon: int, found: list[Finding]) -> int:
        """Rules version 8: ``NAME: VALUE``, NAME two to four words a blank apart whose last is ``key``, ``token`` or
        ``secret`` (``API Key: x``, ``Access Token: x``, ``Client Secret: x``), a credential name as a form writes one
        (:func:`is_credential_name` reads the blank as a separator; ``Sort Key`` and ``EOS Token`` are none): one word
        after it, read as a password's label's is (:data:`_LABEL_VALUE`, :func:`_password_word`), inside a line or
        opening it (the header rule reads no name with a blank). Returns where the word read ends (0 when none)."""
        end = colon
        while end > 0 and text[end - 1] in " \t":
            end -= 1
        name = _label_words(text, end)
        if name is None or not is_credential_name(name) or ascii_lower(name) in _COMMON_LABELS:
            return 0
        return _label_value(text, colon, found)

    @staticmethod
    def _pgpass_password(text: str, match: re.Match[str], found: list[Finding]) -> None:
        """A PostgreSQL password file's line, ``HOST:PORT:DATABASE:USER:PASSWORD`` (``*`` in any of the first four;
        ``\\:`` and ``\\\\`` its escapes), its PORT a number or ``*``: its password, when the line is one of the
        file's (the host opening its line, the password ending it, no blank in any field) or a word ``echo``
        writes into a ``.pgpass`` file (``echo 'h:5432:d:u:pw' >> ~/.pgpass``). Five fields exactly: a time
        (``12:30:45``), an IPv6 address (eight fields, or an empty one) and a log line's ``a:b:c:d:e`` prefix (its
        second field no number) are none; nor is a line of hex digits alone (``00:1a:2b:3c:4d``)."""
        colon = match.start()
        start, floor = colon, max(0, colon - _MAX_PGPASS_FIELD)
        while start > floor:
            char = text[start - 1]
            if char == ":" or char == "'" or char == '"':
                slashes = start - 1
                while slashes > floor and text[slashes - 1] == "\\":
                    slashes -= 1
                if (start - 1 - slashes) % 2 == 0:
                    break  # not escaped: the host's first character is after it
                start -= 1
            elif char in _PGPASS_STOPS:
                break
            else:
                start -= 1
        if start == colon or (start == floor and floor > 0):
            return  # no host, or one longer than any host name
        group = "pgpass" if match.group("pgpass") is not None else "echoed"
        end = match.end(group)
        if group == "pgpass":
            if not _first_word(text, start):  # rules version 17: after a markdown note's marks too
                return
        else:  # the file's name within the rest of the command (a bounded look: many words on one line read once)
            named = text.find(".pgpass", end, end + _MAX_PGPASS_FIELD)
            if text[start - 1 : start] != text[end] or named == -1 or _LINE_END.search(text, end, named) is not None:
                return
        if _HEX_LINE.fullmatch(text, start, end) is not None:
            return
        if not text.startswith(ALREADY_TOKENS, match.start(group)):
            found.append(Finding(match.start(group), end, TOKEN, NAME))

    @classmethod
    def _stdin_passwords(cls, text: str, deadline: Deadline, found: list[Finding]) -> None:
        """A word ``echo`` or ``printf`` pipes into a registry login that reads its password from standard input
        (``echo "$PW" | docker login -u bob --password-stdin``, podman's, helm's, oras'...): the word whole; asked
        only of a text holding ``password``."""
        if "--password-stdin" not in text:
            return
        for match in _STDIN_LOGIN.finditer(text):
            deadline.check()
            cls._add(found, cls._value_span(match))

    @staticmethod
    def _shadow_hashes(text: str, deadline: Deadline, found: list[Finding]) -> None:
        """A password hash of an ``/etc/shadow`` line (``bob:$6$SALT$HASH:19000:0:99999:7:::``), the
        ``$id$...`` field after the user name at a line's start (a real or a written ``\\n`` before it)."""
        # "$" alone is a one-character search (memchr); then a regex finds ":$" three times faster than `in`.
        if "$" not in text or _COLON_DOLLAR.search(text) is None:
            return
        for match in _SHADOW_LINE.finditer(text):
            deadline.check()
            if text[match.start() - 1 : match.start()] in (" ", "\t", ">") and not _first_word(text, match.start()):
                continue  # a word before it on its line (rules version 17 reads the note's marks only)
            found.append(Finding(match.start(1), match.end(1), TOKEN, NAME))

    @classmethod
    def _tool_files(
        cls, text: str, held: Container[str], blank: bool, deadline: Deadline, found: list[Finding]
    ) -> None:
        """Rules version 8: the secrets of a few tools' files and commands, each asked only of a text holding its
        literal: an htpasswd line's hash (:meth:`_htpasswd_hashes`), Redis's ``requirepass`` / ``masterauth``
        (:meth:`_redis_passwords`; rules version 13 also ``tls-key-file-pass``, ``sentinel auth-pass``...:
        :meth:`_redis_dash_passwords`), a PuTTY key file's private lines and MAC (:meth:`_putty_keys`). ``held`` and
        ``blank`` as :meth:`_find` asks them (perf23's gates: a pass its text's characters cannot match is skipped)."""
        # Each literal search costs 0.4-1 ms/MiB of text: the htpasswd forms are asked of "$" and "{" first (memchr,
        # 0.01), then of one regex for both (":$" searched with `in` alone cost 1 ms/MiB).
        if ("$" in text or "{" in text) and ":" in held and _HTPASSWD_COLON.search(text) is not None:
            cls._htpasswd_hashes(text, deadline, found)
        if blank and ("equirepass" in text or "asterauth" in text):  # [ \t]++ before the value
            if "requirepass" in text or "masterauth" in text:
                cls._redis_passwords(text, _REDIS_PASSWORD, deadline, found)
            if "Requirepass" in text or "Masterauth" in text:  # rules version 14: capitalized
                cls._redis_passwords(text, _REDIS_PASSWORD_CAPITALIZED, deadline, found)
        if blank:  # rules version 14: in upper case, each search from its literal
            for literal, upper in zip(_REDIS_PASSWORD_UPPER_NAMES, _REDIS_PASSWORD_UPPER):
                if literal in held:  # twenty-sixth session: asked of the skeleton (0.5 ms/MiB of prose each)
                    cls._redis_passwords(text, upper, deadline, found)
        # Rules version 13: tls-key-file-pass, sentinel auth-pass... The regex's own search for "-pass" (0.63 ms/MiB
        # of capture_scan's mixed text) is cheaper than `in` before it (0.85: `in` skips on the common "s").
        if blank and "-" in held:
            cls._redis_dash_passwords(text, _REDIS_PASS, deadline, found)
            # v14: TLS-KEY-FILE-PASS, -Pass. "-P" (the skeleton's, or on a shorter text a search that skips on the
            # rare "P" where "-Pass" stops at every "s")
            if "-P" in held:
                cls._redis_dash_passwords(text, _REDIS_PASS_CASED, deadline, found)
        if ">" in text and " " in held:  # a memchr: rules version 10, redis-cli's prompt ("> ")
            cls._redis_auth(text, deadline, found)
            cls._redis_replies(text, deadline, found)
        if "-" in held and "\n" in held:  # redis-cli's line, a newline ending it
            cls._redis_cli_lines(text, deadline, found)
        if "\n" in held and ")" in held and '"' in held:  # rules version 14: 1) "name" then 2) "value"
            _redis_bare_replies(text, deadline, found)
        if ")" in held and '"' in held and ">" in held:  # rules version 14: RESP3's "passwords" => 1) "HASH"
            _resp3_hashes(text, deadline, found)
        if blank:  # "user" and [ \t]++
            cls._acl_file_lines(text, held, deadline, found)
        if ":" in held and "Private-Lines:" in held:
            cls._putty_keys(text, deadline, found)

    @staticmethod
    def _htpasswd_hashes(text: str, deadline: Deadline, found: list[Finding]) -> None:
        """An htpasswd line's hash, ``USER:HASH`` ending its line (Apache's MD5 ``$apr1$``, bcrypt ``$2y$``, crypt's
        ``$1$`` / ``$5$`` / ``$6$``, SHA-1 ``{SHA}``): the hash, when USER opens the line (a real or a written
        ``\\n`` before it). An ``/etc/shadow`` line (a colon after its hash) is :meth:`_shadow_hashes`'."""
        for match in _HTPASSWD_HASH.finditer(text):
            deadline.check()
            user, floor = match.start(), max(0, match.start() - _MAX_HTPASSWD_USER)
            while user > floor and text[user - 1] not in _HTPASSWD_STOPS and text[user - 2 : user] != "\\n":
                user -= 1
            if user < match.start() and not (user == floor and floor > 0) and _first_word(text, user):  # v17: "> "
                found.append(Finding(match.start(1), match.end(1), TOKEN, NAME))

    @staticmethod
    def _redis_passwords(text: str, pattern: re.Pattern[str], deadline: Deadline, found: list[Finding]) -> None:
        """Redis's passwords: a configuration line ``requirepass X`` / ``masterauth X`` (its line's only words;
        a ``#`` comment's example is left) and ``CONFIG SET requirepass X``. ``--requirepass X`` and
        ``requirepass: X`` are the flag and name rules' (a credential name). ``pattern`` is :data:`_REDIS_PASSWORD`
        or, rules version 14, :data:`_REDIS_PASSWORD_UPPER`'s or :data:`_REDIS_PASSWORD_CAPITALIZED` (``REQUIREPASS X``:
        redis reads names in any case)."""
        for match in pattern.finditer(text):
            deadline.check()
            _redis_password(text, match, found)

    @staticmethod
    def _redis_dash_passwords(text: str, pattern: re.Pattern[str], deadline: Deadline, found: list[Finding]) -> None:
        """Rules version 13: redis.conf's ``tls-key-file-pass X`` / ``tls-client-key-file-pass X`` (and their
        ``CONFIG SET``), sentinel.conf's ``sentinel auth-pass MASTER X`` / ``sentinel sentinel-pass X``
        (:data:`_REDIS_PASS`): the value, when the name opens its line (a ``#`` comment's example is left) and, in
        redis.conf, the value ends it, as :meth:`_redis_passwords` reads ``requirepass``; in sentinel.conf the rest of
        the line (:func:`_sentinel_value`); after ``SENTINEL SET MASTER`` / ``SENTINEL CONFIG SET``
        (:data:`_SENTINEL_SET`) one word, as after ``CONFIG SET``. ``pattern`` is :data:`_REDIS_PASS` or, rules
        version 14, :data:`_REDIS_PASS_CASED` (the names in upper case or capitalized)."""
        for match in pattern.finditer(text):
            deadline.check()
            _redis_dash_password(text, match, found)

    @staticmethod
    def _acl_file_lines(text: str, held: Container[str], deadline: Deadline, found: list[Finding]) -> None:
        """Rules version 13: a Redis ACL file's line (:data:`_ACL_FILE_LINES`, ``user alice on >PASSWORD ~* +@all``
        in ``users.acl`` or ``redis.conf``) opening its line (rules version 17: after a markdown note's marks too,
        :data:`_NOTE_MARKS`): its rules' passwords and hashes (:func:`_acl_secrets`)."""
        first, after_newline, after_nul = _ACL_FILE_LINES
        matches = [first.match(text)] if text[:1] in _LINE_OPENINGS else []
        for match in itertools.chain(matches, after_newline.finditer(text) if "\n" in held else (),
                                     after_nul.finditer(text) if "\x00" in text else ()):
            deadline.check()
            if match is not None and match.group(1) is not None:
                _acl_secrets(text, match.start(1), match.end(1), found)
            elif match is not None:  # rules version 15: a password's name in a mixed case
                _mixed_case_password(text, match.end(), found)

    @staticmethod
    def _redis_auth(text: str, deadline: Deadline, found: list[Finding]) -> None:
        """Rules version 10: ``AUTH [USER] PASSWORD`` at redis-cli's prompt (:data:`_REDIS_AUTH`): the last word,
        when the prompt (:func:`_redis_prompt`) opens its line and one or two words end it."""
        for match in _REDIS_AUTH.finditer(text):
            deadline.check()
            if not _after_redis_prompt(text, match.start()):
                continue
            args = _REDIS_AUTH_ARGS.match(text, match.end())
            if args is None:
                continue
            group = next(g for g in (6, 5, 4, 3, 2, 1) if args.group(g) is not None)
            if args.group(group) and args.group(group) not in ALREADY_TOKENS:
                found.append(Finding(args.start(group), args.end(group), TOKEN, NAME))

    @staticmethod
    def _redis_replies(text: str, deadline: Deadline, found: list[Finding]) -> None:
        """Rules version 13: what redis-cli prints and takes at its prompt (:data:`_REDIS_COMMAND`, the prompt as
        :func:`_redis_prompt` reads it): the values of ``CONFIG GET``'s and ``HGETALL``'s reply whose name is a
        credential name (``requirepass``, ``masterauth``, ``password``, ``api_token``) or ``passwords``
        (:func:`_redis_pairs`), ``ACL GETUSER``'s password hashes, and the passwords of the ACL rules ``ACL LIST``
        prints and ``ACL SETUSER`` takes (:data:`_ACL_SECRET`)."""
        for match in _REDIS_COMMAND.finditer(text):
            deadline.check()
            if not _after_redis_prompt(text, match.start()):
                continue
            if match.group(2) is not None:  # ACL SETUSER NAME RULES...: the rules' passwords
                _acl_secrets(text, match.start(2), match.end(2), found)
                continue
            if match.group(4) is not None:  # rules version 15: CONFIG SET's pairs, their names in any case
                _config_set_pairs(text, match.start(4), match.end(4), found)
                continue
            end = _line_end(text, match.end())
            if match.group(3) is not None:
                _redis_fields(text, match, end, found)
                continue
            if end < len(text) and text[end] == "\n":
                listing = match.group(1) is not None and ascii_lower(match.group(1)) == "list"
                _redis_pairs(text, end + 1, listing, found, deadline)

    @staticmethod
    def _redis_cli_lines(text: str, deadline: Deadline, found: list[Finding]) -> None:
        """Rules version 13: a shell's line giving redis-cli one of the commands whose reply :meth:`_redis_replies`
        reads at its prompt (:func:`_redis_cli_command`), and that reply below it: as printed to a pipe
        (:func:`_redis_raw_reply`) or, with ``--no-raw``, numbered and quoted as at the prompt."""
        found_at = _REDIS_CLI.search(text)
        while found_at is not None:
            deadline.check()
            at = found_at.start()
            end = text.find("\n", at, at + _MAX_REDIS_LINE)
            if end == -1 or not text.startswith("redis", at - 5):
                found_at = _REDIS_CLI.search(text, at + 1)
                continue
            start, whole = _line_head(text, at, _MAX_REDIS_LINE)
            said = _redis_cli_command(text[start:end]) if whole else None
            if said is not None and "\x00" not in text[at:end]:
                command, resp3 = said
                if command[:2] == ["config", "set"]:  # rules version 15: its pairs' names in any case
                    words = _CONFIG_SET_WORDS.search(text, at, end)
                    if words is not None:
                        _config_set_pairs(text, words.end(), end, found)
                elif _REDIS_ITEM.match(text, end + 1) is not None:  # --no-raw: as at the prompt
                    _redis_pairs(text, end + 1, command[:2] == ["acl", "list"], found, deadline)
                elif command[0] == "hget" and _REDIS_ITEM_VALUE.match(text, end + 1) is not None:
                    if len(command) == 3 and is_credential_name(command[2]):
                        reply = _REDIS_ITEM_VALUE.match(text, end + 1)
                        assert reply is not None
                        if reply.group(1) and reply.group(1) not in ALREADY_TOKENS:
                            found.append(Finding(reply.start(1), reply.end(1), TOKEN, NAME))
                else:  # rules version 16: a line quoted in a markdown blockquote, its reply's lines read past marks
                    quoted = _past_quote_marks(text, start, at) > start
                    end = max(end, _redis_raw_reply(text, end + 1, command, resp3, found, deadline, quoted))
            found_at = _REDIS_CLI.search(text, end)

    @classmethod
    def _kube_secrets(cls, text: str, deadline: Deadline, found: list[Finding]) -> None:
        """Rules version 8: a Kubernetes Secret's values, whatever their keys (``username``, ``tls.crt``,
        ``.dockerconfigjson``): every value of its ``data`` and ``stringData`` maps, in YAML (:meth:`_kube_yaml`) or
        JSON (:meth:`_kube_json`), only in a manifest whose ``kind`` is ``Secret`` (a ConfigMap's ``data`` stays)."""
        if "kind" not in text:
            return
        if "data:" in text or "Data:" in text:
            cls._kube_yaml(text, deadline, found)
        if QUOTED_SECRET_KIND in text and any(name in text for name in QUOTED_SECRET_MAPS):
            cls._kube_json(text, deadline, found)

    @staticmethod
    def _kube_yaml(text: str, deadline: Deadline, found: list[Finding]) -> None:
        """A YAML Secret: from each ``kind: Secret`` line, the mapping it is a key of (the lines around it indented
        as far or further, up to a ``---`` line, a line indented less, or the ``- `` opening its list item, as
        ``kubectl get -o yaml`` lists them), and in it the ``data:`` / ``stringData:`` keys at the same column: the
        value of each line under them (one key a line; a block scalar's or a value's lines below it whole)."""
        covered = 0
        # Texts are scanned joined by NUL: a manifest never reads across one (found once, bisected per kind line).
        joins = [join.start() for join in re.finditer("\x00", text)] if "\x00" in text else []
        for kind in _KIND_SECRET.finditer(text):
            deadline.check()
            index = bisect.bisect_left(joins, kind.start())
            low = joins[index - 1] + 1 if index else 0
            high = joins[index] if index < len(joins) else len(text)
            line_start = max(text.rfind("\n", 0, kind.start()) + 1, low)
            lead = text[line_start : kind.start()]
            if kind.start() < covered or lead.strip(" ") not in ("", "-"):
                continue
            column = len(lead)
            top = line_start
            if lead.strip(" ") != "-":  # not the item's first line: the mapping's lines above it
                while top > max(low, covered):
                    above = text.rfind("\n", 0, top - 1) + 1
                    line = text[above : top - 1].rstrip("\r")
                    content = line.lstrip(" ")
                    if content and not content.startswith("#"):
                        depth = len(line) - len(content)
                        if content.startswith(("---", "...")) and depth == 0:
                            break
                        if depth < column and not (depth == column - 2 and content.startswith("- ")):
                            break
                        top = above
                        if depth < column:
                            break  # the item's "- " line opens the mapping
                        continue
                    top = above
            position = top
            while position < high:
                deadline.check()
                newline = text.find("\n", position, high)
                end = high if newline == -1 else newline
                line = text[position:end].rstrip("\r")
                content = line.lstrip(" -") if position == top else line.lstrip(" ")
                depth = len(line) - len(content)
                if content and not content.startswith("#") and position > kind.start() and (
                        depth < column or content.startswith("---")):
                    break
                if depth == column and content.startswith(("data:", "stringData:")):
                    block = _SECRET_DATA.match(content)
                    if block is not None:
                        for child in _kube_values(text, end, column):
                            found.append(Finding(child[0], child[1], TOKEN, NAME))
                    else:  # rules version 9: a flow mapping, data: {password: cGFzcw==}
                        flow = _SECRET_FLOW.match(text, position + len(line) - len(content))
                        if flow is not None:
                            for child in _kube_flow_values(text, flow.end()):
                                found.append(Finding(child[0], child[1], TOKEN, NAME))
                if newline == -1:
                    break
                position = newline + 1
            covered = position

    @staticmethod
    def _kube_json(text: str, deadline: Deadline, found: list[Finding]) -> None:
        """A JSON Secret (``kubectl get secret -o json``): every string value of the ``data`` and ``stringData``
        objects of an object whose ``kind`` member is ``"Secret"``, before or after them. Read once, its strings
        and brackets only (a text holding ``"Secret"`` and a ``"data"`` key)."""
        frames: list[list[Any]] = []  # per open container: [kind is Secret, values to replace, is a data map, key]
        for what, part in _json_parts(text, deadline):
            if what == _KEY or what == _STRING:
                if not frames:
                    continue
                frame = frames[-1]
                if what == _KEY:
                    frame[3] = part.group(1)
                    continue
                if frame[2] and frame[3] is not None and len(frames) > 1:
                    if part.group(1) and part.group(1) not in ALREADY_TOKENS:
                        frames[-2][1].append(part.span(1))
                elif frame[3] == "kind" and part.group(1) == SECRET_KIND:
                    frame[0] = True
                frame[3] = None
            elif what == _OPEN:
                data = bool(frames) and part.group() == "{" and frames[-1][3] in SECRET_MAPS
                frames.append([False, [], data, None])
            elif frames:
                frame = frames.pop()
                if frame[0]:
                    found.extend(Finding(start, end, TOKEN, NAME) for start, end in frame[1])
                if frames:
                    frames[-1][3] = None

    @staticmethod
    def _csv_tables(text: str, held: Container[str], deadline: Deadline, found: list[Finding]) -> None:
        """Rules version 9: a CSV or TSV table's credential columns (``id,user,password``): every cell of such a
        column, the other columns left; a ``token`` column beside a ``logprob`` one is a model's output tokens
        (:func:`ordinary_column`). Rules version 10: its header is the first line among a text's first
        :data:`_CSV_HEAD_LINES` that holds a delimiter and reads as one (``$ cat users.csv`` above it)."""
        starts = [0]
        if "\x00" in text:
            starts.extend(match.start() + 1 for match in _CSV_START.finditer(text))
        read: set[int] = set()  # the headers read: a printed table among a text's first lines is read once
        for start in starts:
            deadline.check()
            at = start
            for _ in range(_CSV_HEAD_LINES):
                end = text.find("\n", at, at + _MAX_CSV_HEADER)
                if end == -1:
                    break
                line = text[at:end]
                if "\x00" in line:  # the next text's
                    break
                if _csv_table(text, at, end, found, deadline) != -1:
                    read.add(at)
                    break
                at = end + 1
        CredentialsDetector._printed_tables(text, held, read, deadline, found)
        CredentialsDetector._printed_sql_tables(text, read, deadline, found)

    @staticmethod
    def _printed_tables(
        text: str, held: Container[str], read: set[int], deadline: Deadline, found: list[Finding]
    ) -> None:
        """Rules version 12: a CSV or TSV header right under a line that prints a table (:func:`_prints_table`),
        wherever it stands in the text, read as a header among a text's first lines is."""
        for search, gate in _PRINTED_TABLE_SEARCHES:
            file = search is _PRINTED_FILE
            found_at = search.search(text) if gate in held else None
            while found_at is not None:
                deadline.check()
                at = found_at.start()
                end = text.find("\n", at, at + _MAX_CSV_HEADER)  # the printing line's end: its table below it
                if end == -1:  # a line too long to print a table: the search goes on past what was read
                    found_at = search.search(text, at + _MAX_CSV_HEADER)
                    continue
                start, whole = _line_head(text, at)
                below = _past_carriage_returns(text, end + 1)  # a raw transcript's carriage return
                if (below not in read and whole
                        and "\x00" not in text[at:end] and _prints_table(text[start:end], file)):
                    head_end = text.find("\n", below, below + _MAX_CSV_HEADER)
                    if head_end != -1 and "\x00" not in text[below:head_end]:
                        rows = _csv_table(text, below, head_end, found, deadline)
                        if rows != -1:  # the search goes on past its rows: a printing line among them is a row
                            read.add(below)
                            end = max(end, rows)
                found_at = search.search(text, end)

    @staticmethod
    def _printed_sql_tables(text: str, read: set[int], deadline: Deadline, found: list[Finding]) -> None:
        """Rules version 12: a CSV or TSV header right under a database client's line that prints one (sqlite3's,
        mysql's, psql's: :func:`_sql_client`), or under a statement at ``sqlite> `` in a session whose ``.mode`` is
        ``csv`` or ``tabs`` and whose ``.headers`` are on (the lines found in order; a NUL, the next text, ends a
        session). Rules version 13: sqlite3's ``list`` mode too (its default: cells between ``|``), its ``line``
        mode's records (:func:`_sqlite_records`), and MariaDB's ``mariadb`` client as mysql's."""
        session = _SqliteSession()
        since = 0  # where the session's settings were last known to hold: no NUL since
        found_at = _PRINTED_SQL.search(text)
        while found_at is not None:
            deadline.check()
            at = found_at.start()
            if not (text.startswith("sqlite", at - 1) or text.startswith("mysql", at - 3)
                    or text.startswith("psql", at - 2)):  # postgresql, sql_table: no client's word, a cheap test
                found_at = _PRINTED_SQL.search(text, at + 1)
                continue
            end = text.find("\n", at, at + _MAX_CSV_HEADER)
            if end == -1:  # a line too long to print a table: the search goes on past what was read
                found_at = _PRINTED_SQL.search(text, at + _MAX_CSV_HEADER)
                continue
            start, whole = _line_head(text, at)
            if text.find("\x00", since, at) != -1:
                session.restart()
            since = at
            prints: str | None = None  # how the line's output is read: a mode of sqlite3's, or "csv"
            if whole and "\x00" not in text[at:end]:
                prints, end = CredentialsDetector._sql_line(text, text[start:end], end, session)
            if prints is not None and session.reads(prints):
                end = max(end, _printed_below(text, end, prints, read, found, deadline, session.separator,
                                              session.tables))
            found_at = _PRINTED_SQL.search(text, end)
        if "b" in text:  # a memchr: rules version 13, MariaDB's client
            CredentialsDetector._printed_mariadb(text, read, deadline, found)

    @staticmethod
    def _sql_line(text: str, line: str, end: int, session: _SqliteSession) -> tuple[str | None, int]:
        """How the output under a database client's ``line`` (ending at ``end``) is read, and where its statement
        ends: a statement at ``sqlite> `` prints in the session's mode (a dot command changes the session, a
        ``...> `` continuation extends the statement), a sqlite3 line opens a session, mysql's, MariaDB's or psql's
        prints a table when its flags say so (:func:`_client_prints_header`)."""
        statement = line.lstrip()
        statement = statement[_past_carriage_returns(statement, 0):]  # a raw transcript's CR
        if _ASCII_RECORD in line:  # rules version 15: the prompt right after ascii mode's last record
            statement = statement[statement.rfind(_ASCII_RECORD) + 1:]
        if not statement.startswith(_SQLITE_PROMPT):
            client = _sql_client(line)
            if client is not None and client[0] == "sqlite3":
                session.opened(client[1], line)
                return session.mode, end
            if client is not None and _client_prints_header(*client):
                return _CLIENT_TABLE, end
            return None, end
        words = statement[len(_SQLITE_PROMPT):].split()
        if not words:
            return None, end
        if words[0][:1] == ".":
            session.dot_command(words, text, end, statement[len(_SQLITE_PROMPT):])
            return None, end
        typed = [statement[len(_SQLITE_PROMPT):].rstrip("\r")]
        while text.startswith(_SQLITE_MORE, continued := _indent_past_returns(text, end + 1)):
            more = text.find("\n", end + 1, end + 1 + _MAX_CSV_HEADER)  # a statement's next line
            if more == -1 or "\x00" in text[end:more]:
                return None, end
            if len(typed) < _MAX_SCHEMA_LINES:  # rules version 15: a CREATE TABLE over many lines
                typed.append(_definition_line(text[continued + len(_SQLITE_MORE) : more].rstrip("\r")))
            end = more
        created = _create_table(" ".join(typed) if len(typed) > 1 else typed[0])
        if created is not None:
            session.tables[created[0]] = created[1]
        return session.mode, end

    @staticmethod
    def _printed_mariadb(text: str, read: set[int], deadline: Deadline, found: list[Finding]) -> None:
        """Rules version 13: a CSV or TSV header right under MariaDB's ``mariadb`` client's line that prints one,
        read as mysql's is (:func:`_client_prints_header`)."""
        found_at = _PRINTED_MARIADB.search(text)
        while found_at is not None:
            deadline.check()
            at = found_at.start()
            end = text.find("\n", at, at + _MAX_CSV_HEADER)
            if end == -1:  # a line too long to print a table: the search goes on past what was read
                found_at = _PRINTED_MARIADB.search(text, at + _MAX_CSV_HEADER)
                continue
            start, whole = _line_head(text, at)
            if whole and "\x00" not in text[at:end]:
                client = _sql_client(text[start:end])
                if client is not None and client[0] == "mariadb" and _client_prints_header(*client):
                    end = max(end, _printed_below(text, end, _CLIENT_TABLE, read, found, deadline))
            found_at = _PRINTED_MARIADB.search(text, end)

    @staticmethod
    def _pipe_tables(text: str, deadline: Deadline, found: list[Finding]) -> None:
        """Rules version 10: a markdown, psql or mysql table's credential columns (:func:`_pipe_table`), from each
        rule line; the search goes on after the table's rows (each line is read once)."""
        at = 0
        while (rule := _TABLE_RULE.search(text, at)) is not None:
            deadline.check()
            start, end = _line_at(text, rule.start())
            if start == -1:  # a line too long for a table's: skipped whole, once
                at = _line_end(text, rule.end())
                continue
            at = _pipe_table(text, start, end, found, deadline) if _is_rule(text, start, end) else end
            at = max(at, rule.end())
        if _PSQL_RECORD in text:
            _expanded_records(text, deadline, found)

    @staticmethod
    def _putty_keys(text: str, deadline: Deadline, found: list[Finding]) -> None:
        """A PuTTY key file's (``.ppk``) private part: the ``Private-Lines: N`` lines of base64 after its header, and
        its ``Private-MAC`` (which lets a passphrase be tried offline); the public lines and the header stay."""
        for header in _PPK_PRIVATE.finditer(text):
            deadline.check()
            position, end = header.end(), -1
            for _ in range(min(int(header.group(1)), _MAX_PPK_LINES)):
                line = _PPK_LINE.match(text, position)
                if line is None:
                    break
                end, position = line.end(1), line.end()
            if end != -1:
                found.append(Finding(header.end(), end, TOKEN, NAME))
            mac = _PPK_MAC.match(text, position)
            if mac is not None:
                found.append(Finding(mac.start(1), mac.end(1), TOKEN, NAME))

    @classmethod
    def _sql_passwords(
        cls, text: str, held: Container[str], deadline: Deadline, found: list[Finding], *, password: bool
    ) -> None:
        """A password an SQL statement sets: PostgreSQL's ``[ENCRYPTED] PASSWORD 'X'`` (``CREATE USER … WITH
        PASSWORD 'X'``), MySQL's and Oracle's ``IDENTIFIED [WITH PLUGIN] BY 'X'`` (bare too: ``IDENTIFIED BY
        tiger``), and MySQL's ``SET PASSWORD [FOR U] = 'X'``; the keywords in upper or lower case. ``password``:
        whether the text holds the word in lower case (searched once for several rules)."""
        patterns = (_SQL_PASSWORD if password or "PASSWORD" in held else ()) + (
            _SQL_IDENTIFIED if "IDENTIFIED" in held or "identified" in text else ())
        for pattern in patterns:
            for match in pattern.finditer(text):
                deadline.check()
                if match.lastindex == 3 and match.group().startswith("identified"):  # a bare word
                    # The line's start, looked for within a statement's length (rules version 13: back to the text's
                    # start, a text of "identified by a " with no newline took quadratic time, 4.7 s/MiB at 4 MiB).
                    floor = max(0, match.start() - _MAX_STATEMENT_HEAD)
                    line = text.rfind("\n", floor, match.start()) + 1
                    if (line == 0 and floor > 0) or _SQL_USER_STATEMENT.match(text, line, match.start()) is None:
                        continue
                cls._add(found, cls._value_span(match))

    @classmethod
    def _config_sets(cls, text: str, held: Container[str], deadline: Deadline, found: list[Finding]) -> None:
        """A tool's ``config set NAME VALUE`` with a credential NAME, poetry's tokens, Oracle's USER/PASSWORD.
        ``held`` as :meth:`_find` asks it (perf23's gates)."""
        if "config" in text:
            for pattern in _CONFIG_SETS:
                for setting in pattern.finditer(text):
                    deadline.check()
                    if is_credential_text_name(setting.group(1).rsplit("/", 1)[-1].lstrip(":")):
                        cls._add(found, cls._read_value(_SHELL_WORD, text, setting.end()))
            for setting in _POETRY_CONFIG.finditer(text):
                deadline.check()
                cls._add(found, cls._read_value(_SHELL_WORD, text, setting.end()))
        if "/" not in text:
            return
        for literal, pattern in _ORACLE_LOGINS:
            if literal not in held:
                continue
            for login in pattern.finditer(text):
                deadline.check()
                cls._secret_group(text, login, found)
        if "@" not in held or _PASSWORD_AT.search(text) is None:  # a memchr first (prose's "/" each tried)
            return
        for pattern in _ORACLE_REMOTE_LOGINS:
            for login in pattern.finditer(text):
                deadline.check()
                cls._secret_group(text, login, found)
        for pattern in _ORACLE_CONNECTS:
            for login in pattern.finditer(text):
                deadline.check()
                if _first_word(text, login.start()):  # rules version 17: a script's line in a markdown note too
                    cls._secret_group(text, login, found)

    @staticmethod
    def _secret_group(text: str, match: re.Match[str], found: list[Finding]) -> None:
        """The secret a match holds in group 1 (quoted) or group 2 (bare), unless already a token."""
        group = 1 if match.group(1) is not None else 2
        if not text.startswith(ALREADY_TOKENS, match.start(group)):
            found.append(Finding(match.start(group), match.end(group), TOKEN, NAME))

    def _bare_keys(self, text: str, deadline: Deadline, found: list[Finding]) -> None:
        """``{NAME: "VALUE"`` and ``, NAME: 'VALUE'``: an unquoted name in a JavaScript object or a YAML
        flow mapping, its value quoted (:data:`_QUOTED_VALUE`)."""
        if ":" not in text:
            return
        for pattern in _BARE_KEYS:
            for key in pattern.finditer(text):
                deadline.check()
                if not is_credential_text_name(key.group(1)):
                    continue
                self._add(found, self._read_value(_QUOTED_VALUE, text, key.end()))

    @staticmethod
    def _encoded_pairs(text: str, deadline: Deadline, found: list[Finding]) -> None:
        """``NAME%3DVALUE``: a pair URL-encoded inside another value (a login redirect's ``next``)."""
        if "%" not in text:  # one character: a memchr, where a two-character test costs 1 ms/MiB
            return
        previous = 0
        covered = 0  # the end of the last value found: a pair inside it is part of it (password%3Da%3Dpassword%3D...
        # read each value again to the text's end from every "%3D" after it: quadratic time)
        for eq in _ENCODED_EQ.finditer(text):
            deadline.check()
            start = eq.start()
            if start < covered:
                previous = eq.end()
                continue
            twice = text[start + 2] == "5"  # %253D, %2522: encoded twice, its name and value as well
            if text[start + 2 + 2 * twice] == "2":
                # %22...%3A: a URL-encoded JSON member; %2522...%253A: one encoded twice (rules version 10)
                covered = CredentialsDetector._encoded_member(text, eq, max(previous, start - _MAX_NAME), found,
                                                              twice=twice)
                previous = eq.end()
                continue
            # Never back past the previous pair's "=": the name is what follows it, and a run of pairs
            # (%3D%3D%3D...) read back each time would cost quadratic time.
            floor = max(previous, start - 3 * _MAX_NAME)
            previous = eq.end()
            while start > floor and text[start - 1] in _NAME_CHARS:
                start -= 1
            decoded = percent_decode(text[start : eq.start()])
            if decoded and twice:
                decoded = percent_decode(decoded)
            if not decoded:
                continue
            name = _ENCODED_SEPARATORS.split(decoded)[-1]  # after the encoded "?", "&", "/" before it
            if not name or not is_credential_text_name(name) or text.startswith(ALREADY_TOKENS, eq.end()):
                continue
            value = (_TWICE_ENCODED_VALUE if twice else _ENCODED_VALUE).match(text, eq.end())
            if value is not None:
                found.append(Finding(value.start(), value.end(), TOKEN, NAME))
                covered = value.end()

    @staticmethod
    def _encoded_member(text: str, match: re.Match[str], floor: int, found: list[Finding], *,
                        twice: bool = False) -> int:
        """Rules version 9: ``%22NAME%22%3A%22VALUE%22``, a JSON member URL-encoded (``data=%7B%22password%22%3A
        %22x%22%7D``): when NAME (read back to its encoded opening quote, no further than ``floor``) is a credential
        text name, the value's content; a bare value (a number) up to the encoded comma or brace after it. Returns
        the end of the value taken, else 0. ``twice``: the member encoded twice (``%2522NAME%2522%253A``)."""
        end = match.start()
        quote = "%2522" if twice else "%22"
        # rules version 11: %5C%22NAME%5C%22%3A, a member of a JSON document held in a JSON string; rules version 12:
        # the same encoded twice, %255C%2522NAME%255C%2522%253A
        backslash, width = (_TWICE_ENCODED_BACKSLASH, 5) if twice else (_ENCODED_BACKSLASH, 3)
        escaped = text[end - width : end] in backslash
        opening = text.rfind(quote, floor, end)  # the name's encoded opening quote
        if opening == -1 or (escaped and text[opening - width : opening] not in backslash):
            return 0
        name = text[opening + len(quote) : end - width * escaped]
        if not name or not _ENCODED_MEMBER_NAME.issuperset(name) or not is_credential_text_name(name):
            return 0
        pattern = ((_TWICE_ESCAPED_ENCODED_MEMBER_VALUE if escaped else _TWICE_ENCODED_MEMBER_VALUE) if twice
                   else _ESCAPED_ENCODED_MEMBER_VALUE if escaped else _ENCODED_MEMBER_VALUE)
        value = pattern.match(text, match.end())
        if value is None:
            return 0
        group = 1 if value.group(1) is not None else 2
        span = value.span(group)
        if span[0] < span[1] and text[span[0] : span[1]] not in ALREADY_TOKENS and (
                group == 1 or text[span[0] : span[1]] not in ("true", "false", "null")):
            found.append(Finding(span[0], span[1], TOKEN, NAME))
            return span[1]
        return 0

    def _flags(self, text: str, deadline: Deadline, found: list[Finding]) -> None:
        """``--NAME VALUE`` (a credential flag and its value as two words), a command's password flag
        (``mysql -pSECRET``, curl's ``-u user:password``) and curl's ``-H 'NAME: VALUE'``."""
        if "-" not in text:
            return
        values: list[tuple[int, int]] = []  # the values found, in text order
        for flag in _FLAG.finditer(text):
            deadline.check()
            if not _word_starts(text, flag.start()) or _in_synopsis(text, flag.start()):
                continue  # inside a word (a-b--c), or a synopsis's placeholder ([--password PASSWORD])
            if not is_credential_word(flag.group(1)) or text.startswith(ALREADY_TOKENS, flag.end()):
                continue
            span = self._read_value(_VALUE, text, flag.end())
            if span:
                found.append(Finding(span[0], span[1], TOKEN, NAME))
                values.append(span)
        self._command_flags(text, deadline, found, values)
        for header in _HEADER_FLAG.finditer(text):
            deadline.check()
            group = next(g for g in (1, 3, 5) if header.group(g))  # the double-quoted, single-quoted or bare form
            start, end = header.span(group + 1)
            if (_word_starts(text, header.start()) and is_credential_text_name(header.group(group))
                    and not text.startswith(ALREADY_TOKENS, start)):
                found.append(Finding(start, end, TOKEN, NAME))

    @classmethod
    def _command_flags(
        cls, text: str, deadline: Deadline, found: list[Finding], values: list[tuple[int, int]]
    ) -> None:
        """A command's password flag (:data:`_COMMAND_PASSWORD_FLAGS`), after that command in the same shell
        command: ``mysql -pSECRET``, ``sshpass -p SECRET``, curl's ``-u user:SECRET``.

        Only the lines a flag stands on are searched for commands (the command pattern, an alternation, costs
        35 ms/MiB where the flag's literal "-" costs 1). An argv list given as data (``["sshpass", "-p", "x"]``)
        is read by the walk (:func:`argv_secrets`): its words are texts of their own, and no rule here reads
        across texts. A command's name inside ``values`` (a credential flag's value: ``--password ssh-keygen``) is
        no command, as the next pass, the value replaced, reads it. A flag on a line with no command, the line an
        item of an argv list written one item a line (``['mysql',\\n '-pX']``), is read with that list's items."""
        value_starts = [start for start, _ in values]
        listed_floor = 0  # where the last search for a list written across lines ended
        line_end = -1  # the end of the line the last flag stood on
        ends: list[int] = []  # where each command on that line ends
        scopes: list[tuple[int, tuple[_PasswordFlag, ...]]] = []  # each one's reach and its flags
        candidate = _PASSWORD_FLAG.search(text)
        while candidate is not None:
            deadline.check()
            at = candidate.start()
            if at >= line_end:  # the first flag on its line: the line's commands, found once
                line_start = _line_start(text, max(line_end, 0), at)
                cut = _LINE_END.search(text, at)
                line_end = cut.start() if cut is not None else len(text)
                commands = [command for command in _COMMAND.finditer(text, line_start, line_end)
                            if _command_starts(text, command.start())]
                if values:
                    commands = [command for command in commands
                                if not _inside(value_starts, values, command.start())]
                if not commands:  # no flag on this line has a command to take it, unless the line is a list's item
                    if _LISTED_LINE.fullmatch(text, line_start, at):
                        listed = _listed_argv(text, at, listed_floor, found)
                        listed_floor = at if listed is None else listed
                        line_end = max(line_end, listed_floor)
                    candidate = _PASSWORD_FLAG.search(text, line_end)
                    continue
                ends = [command.end() for command in commands]
                scopes = _command_scopes(text, commands, line_start, line_end)
            index = bisect.bisect_right(ends, at) - 1  # the nearest command before the flag
            after = candidate.end()
            if index >= 0 and at < scopes[index][0]:
                span = cls._password_flag_value(text, at, scopes[index][1])
                if span is not None:
                    found.append(Finding(span[0], span[1], TOKEN, NAME))
                    after = max(after, span[1])  # a flag inside the value is part of it (-pa\ -pa\ ...: read once)
            candidate = _PASSWORD_FLAG.search(text, after)

    @staticmethod
    def _positional(text: str, deadline: Deadline, found: list[Finding]) -> None:
        """A password given as a command's positional word (:data:`_POSITIONAL_COMMANDS`): ``htpasswd -b FILE USER
        PASSWORD``, ``nmcli device wifi connect SSID password X``; the command's words are read on its line, up to
        a shell operator, each word once (a name among the words read last is one of them), or, the command an item
        of an argv list written one item a line, as that list's items."""
        for name, pattern, picker in _POSITIONAL:
            if name not in text:  # one search in C (about 0.5 ms/MiB): most text holds neither name
                continue
            covered = 0  # where the words of the command read last end
            line_end = -1
            for command in pattern.finditer(text):
                deadline.check()
                at = command.start()
                if at < covered:
                    continue
                start = _path_start(text, at)  # a command's name, or the path it ends
                if start < 0 or not _in_command_position(text, start):
                    continue  # a path's middle, or prose naming the command ("use htpasswd -b to ...")
                if _LISTED_NEXT.match(text, command.end()) is not None:  # ['htpasswd',\n '-b', ...]
                    listed = _listed_argv(text, at, covered, found)
                    if listed is not None:
                        covered = listed
                        continue
                    covered = at  # no list reaches here from before: the next search back stops here
                if at >= line_end:
                    cut = _LINE_END.search(text, at)
                    line_end = cut.start() if cut is not None else len(text)
                matches = _command_words(text, command.end(), line_end)
                if not matches:
                    continue
                covered = matches[-1].end()
                words = [word.group(word.lastindex or 0) for word in matches]
                for index in picker(words):
                    if _word_secret(words[index]):
                        start, end = matches[index].span(matches[index].lastindex or 0)
                        found.append(Finding(start, end, TOKEN, NAME))

    @staticmethod
    def _net_user(text: str, held: Container[str], deadline: Deadline, found: list[Finding]) -> None:
        """Windows's ``net user NAME PASSWORD [/add]`` (:func:`_net_user_secrets`) where a shell reads a command:
        first on its line, after ``;``, ``&&``, ``|``, a prompt (``C:\\>``, ``PS C:\\>``) or a wrapper; its words on
        its line, up to a shell operator. ``held`` as :meth:`_find` asks it (the upper case's gate its skeleton's)."""
        for gate, pattern in _NET_USER:
            if gate not in held:  # one search in C, 0.8 ms/MiB of prose (the regex's "n" stops 1.1)
                continue
            line_end = -1
            for command in pattern.finditer(text):
                deadline.check()
                net = command.end() - len("net user")
                if not _in_command_position(text, net):
                    continue  # prose ("use net user bob to see his groups")
                if net >= line_end:  # searched once a line: a line of many "net user" is not read to its end each time
                    cut = _LINE_END.search(text, net)
                    line_end = cut.start() if cut is not None else len(text)
                matches = _command_words(text, net + len("net"), line_end)
                words = [word.group(word.lastindex or 0) for word in matches]
                for index in _net_user_secrets(words):
                    if _word_secret(words[index]):
                        found.append(Finding(*matches[index].span(matches[index].lastindex or 0), TOKEN, NAME))

    @classmethod
    def _password_flag_value(cls, text: str, at: int, flags: tuple[_PasswordFlag, ...]) -> tuple[int, int] | None:
        """The span of the secret a flag of ``flags`` standing at ``at`` takes, if one does. A flag right after ``[``
        is a synopsis's (``[-N new_passphrase]``), no command line's."""
        if _in_synopsis(text, at):
            return None
        for flag in flags:
            if not text.startswith(flag.spelling, at):
                continue
            after = at + len(flag.spelling)
            following = text[after : after + 1]
            gap = _SEPARATE.match(text, after)
            if gap is not None or following in ("", " ", "\t"):
                if gap is None or not flag.separate:
                    continue  # no value, the next word is a flag, or this flag's value is never a word apart
                after = gap.end()
            elif following in "\"'" and text[at - 1 : at] == following:
                continue  # "-p": the quote closes the flag's own word
            elif flag.spelling.startswith("--"):
                if following != "=":
                    continue  # --username: another flag
                after += 1  # --user=bob%x: a long flag's value after "=", in its own word
            elif not flag.attached or following.isspace():
                continue
            span = cls._read_value(_SHELL_WORD, text, after)
            return _flag_secret(text, span[0], span[1], flag) if span is not None else None
        return None

    @classmethod
    def _whole_value(cls, text: str, after: int, pattern: re.Pattern[str], at: int) -> tuple[int, int] | None:
        """The span of a credential's value: an object, array or tuple opening at ``after`` (``password=['x']``
        in a repr) whole, up to its closing bracket, not up to its first quote; else what ``pattern`` reads
        from ``at``."""
        bracketed = _bracketed(text, after) if after < len(text) and text[after] in "[{(" else None
        if bracketed is not None:
            return bracketed
        return _unless_reference(text, cls._read_value(pattern, text, at))

    @classmethod
    def _read_value(cls, pattern: re.Pattern[str], text: str, at: int) -> tuple[int, int] | None:
        """The span of the value ``pattern`` (groups 1-3: its quoted and bare forms) reads at ``at``, if any."""
        value = pattern.match(text, at)
        return cls._value_span(value) if value else None

    @staticmethod
    def _add(found: list[Finding], span: tuple[int, int] | None) -> None:
        if span:
            found.append(Finding(span[0], span[1], TOKEN, NAME))

    @staticmethod
    def _value_span(match: re.Match[str]) -> tuple[int, int] | None:
        for group in (1, 2, 3):
            if match.group(group) is not None:
                value = match.group(group)
                # A token this scan wrote is left, even when a quote never closed around it ("'[CREDENTIAL]").
                if value == "" or value in ALREADY_TOKENS or match.string.startswith(ALREADY_TOKENS, match.start(group)):
                    return None
                if group == 3 and value.startswith("${") and match.string.startswith("}", match.end(group)):
                    return match.start(group), match.end(group) + 1  # ${PW:-x}: whole, its brace too
                return match.start(group), match.end(group)
        return None

    def _key_value(self, text: str, deadline: Deadline, found: list[Finding]) -> None:
        covered = 0  # the end of the last value found: an "=" inside it is part of that value
        tags = "<" in text
        read_tag = -1  # the "<" of the last tag read as a name/value element: its other members are read past
        for eq in _EQ.finditer(text):
            deadline.check()
            at = eq.start()
            if at < covered:
                continue  # (password=[password=[... read again from each "=" took quadratic time)
            end = at
            while end > 0 and text[end - 1] in " \t":
                end -= 1
            arrow = text.startswith("=>", at)  # Ruby's, PHP's and Perl's 'password' => 'x'
            if end > 4 and text[end - 1] == "]" and not arrow:
                self._subscript(text, at, end, found)
                continue
            if arrow and end > 1 and text[end - 1] in "'\"":
                end -= 1  # a quoted name: read inside its quotes
                start = text.rfind(text[end], max(0, end - _MAX_NAME - 1), end)
                if start == -1 or not _NAME_CHARS.issuperset(text[start + 1 : end]):
                    continue
                start += 1
            else:
                start = end
                floor = max(0, end - _MAX_NAME - 1)
                while start > floor and text[start - 1] in _NAME_CHARS:
                    start -= 1
            if start == end or end - start > _MAX_NAME:
                continue  # no name, or a longer one than any in the table
            name = text[start:end]
            if tags and name in _MEMBER_KEYS and not arrow:
                element = _attribute_pair(text, start, at)
                if element is not None:  # <add key="Password" value="x"/>: the value, never the name
                    opened, span = element
                    if opened != read_tag:
                        read_tag = opened
                        self._add(found, span)
                    continue
            if name in _MEMBER_KEYS and not arrow:
                member = self._name_value_member(text, "", name, at + 1)
                if member is not None:  # Field(name='api_key', value='x'): the value, never the name
                    if member:
                        found.append(Finding(member[0], member[1], TOKEN, NAME))
                        covered = member[1]
                    continue
            odbc = False
            if not is_credential_text_name(name):
                odbc = ascii_lower(name) == "pwd" and not arrow
                if not odbc:
                    continue
            if arrow:
                at += 1
            after = _past_blanks(text, at + 1)
            if text.startswith(ALREADY_TOKENS, after):
                continue  # already a token (after the white space "NAME = VALUE" puts before it)
            span = self._whole_value(text, after, _VALUE, at + 1)
            if span and odbc and not _in_connection_string(text, start, span[1]):
                continue
            if span and ordinary_text_member(text, name, start, span[0], span[1]):
                continue  # an output token, a thinking block's signature, a bare key's path (ordinary.py)
            if span:
                found.append(Finding(span[0], span[1], TOKEN, NAME))
                covered = span[1]

    @classmethod
    def _name_value_member(cls, text: str, quote: str, key: str, after: int) -> tuple[int, int] | tuple[()] | None:
        """A member of a name/value object written in text, ``key`` its key (``'name'`` in ``{'name': 'password',
        'value': 'x'}``, or ``name`` in ``Field(name='api_key', value='x')``, ``quote`` then empty), its value at
        ``after``. When the object's name member names a credential (:func:`names_credential`, as the walk reads
        one in data) and it has a value member: the value member's span, or ``()`` when it holds nothing to
        replace. None when the member is no part of such an object (a ``key`` member is then read as the table
        word it is)."""
        name_first = key in NAME_MEMBERS
        # A value first is a string or a number: no bracket is read again from each value member that names nothing.
        own = cls._member_value(text, after, quote, whole=False)
        if own is None:
            return None
        if name_first and not (own[2] and names_credential(text[own[0] : own[1]])):
            return None
        wanted = VALUE_MEMBERS if name_first else NAME_MEMBERS
        members = _NEXT_MEMBER[quote] if quote else _NEXT_KEYWORD
        position = own[1] + own[2]  # past the closing quote
        # The value first: its name member is the next one (a search from every value member past the ones after it
        # cost 3 s/MiB of "value='a', "). The name first: its value member among the next few, up to another name.
        for _ in range(_MAX_MEMBERS if name_first else 1):
            member = members.match(text, position)
            if member is None or (name_first and member.group(1) in _MEMBER_KEYS and member.group(1) not in wanted):
                return None
            wanted_here = member.group(1) in wanted
            other = cls._member_value(text, member.end(), quote, whole=wanted_here and name_first)
            if other is None:
                return None
            if wanted_here:
                if name_first:
                    value = other
                elif other[2] and names_credential(text[other[0] : other[1]]):
                    value = own
                else:
                    return None
                written = text[value[0] : value[1]]
                # A bare word is a literal only as a number (value=8042); value=token, a variable, is code.
                if not written or written in ALREADY_TOKENS or not (value[2] or written[0] in _LITERAL_OPENINGS):
                    return ()
                return value[0], value[1]
            position = other[1] + other[2]
        return None

    @classmethod
    def _member_value(cls, text: str, at: int, quote: str, *, whole: bool) -> tuple[int, int, int] | None:
        """The span of the member's value at ``at`` and the width of its closing quote (0 for a bare value or an
        object, array or tuple, read whole to its closing bracket). ``whole``: whether an object, array or tuple is
        read (the value to replace); elsewhere it ends the search, so no bracket is read again from each member
        before it (1 MiB of ``{'name': 'password', 'a': [``: each up to 4 KiB)."""
        if at < len(text) and text[at] in "[{(":
            if not whole:
                return None
            bracketed = _bracketed(text, at)
            return (bracketed[0], bracketed[1], 0) if bracketed is not None else None
        value = (_COLON_VALUE if quote else _VALUE).match(text, at)
        if value is None:
            return None
        group = next((group for group in (1, 2, 3) if value.group(group) is not None), 0)
        if not group:
            return None
        return value.start(group), value.end(group), 1 if group < 3 else 0

    @staticmethod
    def _pairs(text: str, deadline: Deadline, found: list[Finding]) -> None:
        """``('password', 'x')`` and ``["password", "x"]``: a ``[name, value]`` pair written in text, its name
        a credential name (:func:`is_credential_name`, as the walk reads a pair in data), its value quoted or bare
        and the last item (a repr's header list, ``[('Authorization', 'Bearer x')]``)."""
        for opening, closing, pattern in _PAIRS:
            if opening not in text:  # one character: a memchr
                continue
            for pair in pattern.finditer(text):
                deadline.check()
                if not is_credential_name(pair.group(2)):
                    continue
                value = _PAIR_VALUE.match(text, pair.end())
                if value is None or not text.startswith(closing, value.end()):
                    continue
                group = next(group for group in (1, 2, 3) if value.group(group) is not None)
                word = value.group(group)
                if word and word not in ALREADY_TOKENS and (group < 3 or word[0] in _LITERAL_OPENINGS):
                    found.append(Finding(value.start(group), value.end(group), TOKEN, NAME))

    @classmethod
    def _subscript(cls, text: str, at: int, end: int, found: list[Finding]) -> None:
        """A credential key assigned a quoted value by subscript (``os.environ['DB_PASSWORD'] = 'x'``,
        ``ENV["API_KEY"] = "x"``, ``$_ENV['SECRET'] = 'x'``), the ``=`` at ``at``, the ``]`` before ``end``: the value.
        Only a quoted one: ``config['password'] = read_password()`` is code. Not ``==``, a comparison."""
        if text.startswith("==", at):
            return
        key = _SUBSCRIPT_KEY.search(text, max(0, end - _MAX_NAME - 8), end)
        if key is None or not is_credential_text_name(key.group(2)):
            return
        value = _SUBSCRIPT_VALUE.match(text, at + 1)
        if value is not None:
            cls._add(found, cls._value_span(value))

    def _quoted(
        self,
        text: str,
        anchor: re.Pattern[str],
        deadline: Deadline,
        prefilter: bool,
        found: list[Finding],
    ) -> int:
        """``"NAME": VALUE`` and ``'NAME': VALUE``; whether a ``"sensitive":`` key was seen (Terraform's flag, rules
        version 9: read by :meth:`_terraform_values`, so that no text pays a search of its own for it;
        :data:`_SAW_SENSITIVE`) and a ``"sensitive_attributes":`` key (a state's instance, rules version 10:
        :meth:`_state_attributes`; :data:`_SAW_SENSITIVE_ATTRIBUTES`) and a ``"sensitive_values":``,
        ``"before_sensitive":`` or ``"after_sensitive":`` key (``terraform show -json``'s mirrors, rules version 11:
        :meth:`_show_values`; :data:`_SAW_SENSITIVE_VALUES`), as bits."""
        covered = 0  # as in _key_value: a colon inside a value already found is part of it
        sensitive = 0
        for colon in anchor.finditer(text):
            deadline.check()
            if colon.start() < covered:
                continue
            at = colon.start() + 1
            name = _QUOTED_NAME.search(text, max(0, at - 100), at)
            if name is None:
                opening = text.rfind(text[at - 1], max(0, at - 100), at - 1)  # the name's opening quote
                if opening < 0 or " " not in text[opening:at]:
                    continue
                # Matched from that quote (or the backslash escaping it), not searched for across the window.
                name = (_BLANK_QUOTED_NAME.match(text, opening - 1, at) if opening and text[opening - 1] == "\\"
                        else None) or _BLANK_QUOTED_NAME.match(text, opening, at)
                if name is None:
                    continue
            if name.group(2) == SENSITIVE:
                sensitive |= _SAW_SENSITIVE
                continue
            if name.group(2) == SENSITIVE_ATTRIBUTES:
                sensitive |= _SAW_SENSITIVE_ATTRIBUTES
                continue
            if name.group(2) in MIRRORS:
                sensitive |= _SAW_SENSITIVE_VALUES
                continue
            if name.group(2) in _MEMBER_KEYS and name.group(1) in _NEXT_MEMBER:
                member = self._name_value_member(text, name.group(1), name.group(2), colon.end())
                if member is not None:  # {'name': 'password', 'value': 'x'}: the value, never the name
                    if member:
                        self._add(found, member)
                        covered = member[1]
                    continue
            if not is_credential_text_name(name.group(2)):
                continue
            after = _ESCAPED_SPACE.match(text, colon.end()).end()  # type: ignore[union-attr]
            if name.group(1)[0] == "\\" and text.startswith(name.group(1), after):
                # \"NAME\": \"VALUE\" - the value is read to its own escaped closing quote.
                escaped = _escaped_value(text, after, name.group(1)[1])
                if escaped is not None and text[escaped[0] : escaped[1]] not in ALREADY_TOKENS:
                    found.append(Finding(escaped[0], escaped[1], TOKEN, NAME))
                continue
            span = self._read_value(_COLON_VALUE, text, colon.end())
            if span and _unless_reference(text, span) is None:
                continue  # "token": "${X}": where the secret is, left whole
            if span and ordinary_text_member(text, name.group(2), name.start(), span[0], span[1]):
                continue  # an output token, a thinking block's signature, a bare key's path (ordinary.py)
            if span and text[span[0] - 1] not in "\"'" and text[span[0] : span[1]] in _BARE_LITERALS:
                continue  # "password": true, 'token': None: no secret, as a boolean or null in data is left (v11)
            if span:
                self._add(found, span)
            elif prefilter:
                # The value is an object or array: the scanner rescans this
                # text as a JSON document and replaces the value whole.
                found.append(Finding(name.start(), at, FLAG_ONLY, NAME))
            else:
                # Rescanned, and no JSON document (a Python repr, a log line): the object or array is
                # replaced whole here, up to its closing bracket.
                bracketed = _bracketed(text, colon.end())
                # "[CREDENTIAL]" is itself bracketed: a value this scan already wrote is left as it is.
                if bracketed is not None and text[bracketed[0] : bracketed[1]] not in ALREADY_TOKENS:
                    if ordinary_text_container(name.group(2), text[bracketed[0] : bracketed[1]]):
                        continue  # TGI's "token": {..., "logprob": -0.5}, a DynamoDB key (ordinary.py)
                    found.append(Finding(bracketed[0], bracketed[1], TOKEN, NAME))
                    covered = bracketed[1]
        return sensitive

    @staticmethod
    def _terraform_values(text: str, deadline: Deadline, found: list[Finding]) -> None:
        """Rules version 9: Terraform's sensitive values in text (``terraform output -json``, a state file's
        ``outputs``, when the text is no JSON document as a whole: a log line, a command and its output): in every
        object holding ``"sensitive": true``, before or after it, its ``"value"`` member, whatever its type (a
        string's content, a number, an object or a list whole). Read once, its strings and brackets only (as
        :meth:`_kube_json` reads a Secret), in a text where :meth:`_quoted` saw a ``"sensitive":`` key."""
        # Per open container: [holds "sensitive": true, value spans, the last key read, where it opened when it is
        # a "value" member's object or list].
        frames: list[list[Any]] = []
        for what, part in _json_parts(text, deadline):
            if what == _KEY or what == _STRING:
                if not frames:
                    continue
                frame = frames[-1]
                if what == _KEY:  # the value after it, when no string or bracket opens it
                    frame[2] = part.group(1)
                    if frame[2] in ("value", SENSITIVE):
                        scalar = _JSON_SCALAR.match(text, part.end())
                        if scalar is not None:
                            if frame[2] == SENSITIVE:
                                frame[0] = frame[0] or scalar.group(1) == "true"
                            elif scalar.group(1) not in ("true", "false", "null"):
                                frame[1].append(scalar.span(1))
                            frame[2] = None
                    continue
                if frame[2] == "value" and part.group(1) and part.group(1) not in ALREADY_TOKENS:
                    frame[1].append(part.span(1))
                frame[2] = None
            elif what == _OPEN:
                opened = part.start() if frames and frames[-1][2] == "value" else -1
                frames.append([False, [], None, opened])
            elif frames:
                frame = frames.pop()
                if frame[0]:
                    found.extend(Finding(start, end, TOKEN, NAME) for start, end in frame[1])
                if frames:
                    if frame[3] != -1 and text[frame[3] : part.end()] not in ALREADY_TOKENS:  # [CREDENTIAL]: a list
                        frames[-1][1].append((frame[3], part.end()))
                    frames[-1][2] = None
        for frame in frames:  # a text cut short: what its open objects hold so far
            if frame[0]:
                found.extend(Finding(start, end, TOKEN, NAME) for start, end in frame[1])

    @staticmethod
    def _state_attributes(text: str, deadline: Deadline, found: list[Finding]) -> None:
        """Rules version 10: a Terraform state's resource instance in text that is no JSON document as a whole
        (``$ cat terraform.tfstate`` and the file, a log line): the members of its ``"attributes"`` object that its
        ``"sensitive_attributes"`` paths name (as :func:`sensitive_attribute_names` reads them), each value whole (a
        string's content, a number, an object or a list). Read once, its strings and brackets only, as
        :meth:`_terraform_values` reads an output, in a text where :meth:`_quoted` saw a ``"sensitive_attributes":``
        key; the paths are read as they pass (no list is parsed again). An instance cut short is left."""
        frames: list[_StateFrame] = []
        for what, part in _json_parts(text, deadline):
            if what == _KEY or what == _STRING:
                if not frames:
                    continue
                frame = frames[-1]
                if what == _KEY:  # a scalar after it is its value
                    frame.key = part.group(1)
                    if frame.spans is not None:
                        scalar = _JSON_SCALAR.match(text, part.end())
                        if scalar is not None:
                            if scalar.group(1) not in ("true", "false", "null"):
                                frame.spans.setdefault(frame.key, []).append(scalar.span(1))
                            frame.key = None
                    continue
                if frame.spans is not None and frame.key is not None and part.group(1) not in ALREADY_TOKENS:
                    frame.spans.setdefault(frame.key, []).append(part.span(1))
                elif frame.kind == _STEP and frame.key in ("type", "value"):
                    if frame.step is None:
                        frame.step = {}
                    frame.step[frame.key] = part.group(1)
                frame.seen = True
                frame.key = None
            elif what == _OPEN:
                owner = frames[-1] if frames else None
                frames.append(_StateFrame.opening(owner, part.group(), part.start()))
            elif frames:
                frame = frames.pop()
                owner = frames[-1] if frames else None
                if frame.attributes is not None and frame.names:  # an instance: its named attributes
                    for name in frame.names:
                        found.extend(Finding(start, end, TOKEN, NAME) for start, end in frame.attributes.get(name, ()))
                if owner is None:
                    continue
                step = frame.step
                if step is not None and step.get("type") == "get_attr" and "value" in step:
                    paths = owner if owner.kind == _PATHS else frames[-2] if len(frames) > 1 else None
                    if paths is not None and paths.kind == _PATHS:
                        if paths.names is None:
                            paths.names = []
                        if step["value"] not in paths.names:
                            paths.names.append(step["value"])
                elif frame.kind == _PATHS:
                    owner.names = frame.names
                elif owner.key == ATTRIBUTES and frame.spans is not None:
                    owner.attributes = frame.spans
                whole = (frame.opened, part.end())  # a container inside an attributes object: taken whole
                if owner.spans is not None and owner.key is not None and text[slice(*whole)] not in ALREADY_TOKENS:
                    owner.spans.setdefault(owner.key, []).append(whole)
                owner.key = None

    @staticmethod
    def _show_values(text: str, deadline: Deadline, found: list[Finding]) -> None:
        """Rules version 11: ``terraform show -json``'s mirrors in text that is no JSON document as a whole (the
        command and its output, a log line): in an object holding a mirror (``sensitive_values``, a change's
        ``before_sensitive`` / ``after_sensitive``) and the member it mirrors (``values``, ``before``, ``after``), the
        mirrored object's members that it marks (as :func:`sensitive_value_names` reads one: its member ``true``, or
        a container holding a ``true`` leaf), each value whole, or the whole mirrored member when the mirror is
        ``true`` (or a list holding one). Read once, its strings and brackets, as :meth:`_state_attributes` reads a
        state; a ``true`` inside a mirror is found in the text between two of its parts (each such stretch read
        once). An object cut short is left."""
        frames: list[_ShowFrame] = []
        frame: _ShowFrame | None = None  # the innermost open container
        last = 0  # where the previous part ended: the text after it, to this part, holds a mirror's scalars
        for what, part in _json_parts(text, deadline):
            if frame is not None:
                if frame.mirror:  # only its true leaves matter
                    if "true" in text[last : part.start()]:
                        frame.mark()
                    if what == _KEY:
                        frame.key = part.group(1)
                    elif what == _STRING:
                        frame.key = None
                elif what == _KEY:
                    key = frame.key = part.group(1)
                    if frame.spans is not None or key in MIRRORS or key in MIRRORED_VALUES:
                        scalar = _JSON_SCALAR.match(text, part.end())  # a scalar after it is its value
                        if scalar is not None:
                            frame.scalar(key, scalar)
                elif what == _STRING:
                    key = frame.key
                    if key is not None:
                        if part.group(1) not in ALREADY_TOKENS:
                            if frame.spans is not None:
                                frame.spans.setdefault(key, []).append(part.span(1))
                            if key in MIRRORED_VALUES:
                                frame.whole(key, part.span(1))
                        frame.key = None
            last = part.end()
            if what == _OPEN:
                frame = _ShowFrame.opening(frame, part.group(), part.start())
                frames.append(frame)
            elif what == _CLOSE and frame is not None:
                closed = frames.pop()
                if closed.masks:  # an object holding mirrors: the members they mark
                    found.extend(Finding(start, end, TOKEN, NAME) for start, end in closed.taken())
                frame = frames[-1] if frames else None
                if frame is not None:
                    frame.closed(closed, part.end(), text)

    def _headers(self, text: str, held: Container[str], deadline: Deadline, found: list[Finding]) -> None:
        """``NAME: VALUE`` at a line's or a text's start (a NUL: the next joined text's). ``held`` as :meth:`_find`
        asks it: a text of no NUL (any text scanned alone) is not searched for one (0.4 ms/MiB of prose)."""
        spans = []
        first = _HEADER_START.match(text)
        if first:
            spans.append(first)
        spans.extend(_HEADER_NL.finditer(text))
        if "\x00" in held:
            spans.extend(_HEADER_NUL.finditer(text))
        for match in spans:
            deadline.check()
            value = match.group("value")
            if not is_credential_text_name(match.group("name")):
                continue
            if value is None and _one_line_name(match.group("name")):
                continue  # a column's empty value (mysql's \G) opens no YAML block: the next line is a column
            if value is None or _BLOCK_HEADER.fullmatch(value):
                # YAML: the value is on the lines indented under the name (a block scalar, or a plain
                # scalar or mapping on the next lines), replaced whole.
                span = _indented_block(text, match.end(), len(match.group(1)))
                if span is not None and text[span[0] : span[1]] not in ALREADY_TOKENS:
                    found.append(Finding(span[0], span[1], TOKEN, NAME))
                continue
            start = match.start("value")
            if value[0] == ":" and text[start - 1] == ":":  # rules version 16: NAME::X, the value after both colons
                start = _past_blanks(text, start + 1)  # (key::value, a cell sqlite3's list mode prints, is a word)
                value = text[start : match.end("value")]
                if not value:
                    continue
            if value in ALREADY_TOKENS or value in _LEFT_LINE_VALUES or _QUOTED_REFERENCE.fullmatch(value):
                continue
            if ordinary_text_member(text, match.group("name"), match.start("name"), start, match.end("value")):
                continue  # key: menu.title (ordinary.py)
            found.append(Finding(start, match.end("value"), TOKEN, NAME))

    def _scheme(
        self,
        text: str,
        pattern: re.Pattern[str],
        accept: Any,
        deadline: Deadline,
        found: list[Finding],
    ) -> None:
        for match in pattern.finditer(text):
            deadline.check()
            if accept(match.group(1)):
                found.append(Finding(match.start(1), match.end(1), TOKEN, NAME))
