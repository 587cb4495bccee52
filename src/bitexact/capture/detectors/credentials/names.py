"""The credential table and the names: which names, words and values name or hold a credential.

The table (protocol-vectors.json ``credential_keys.keys``), compound names, the members of name/value objects,
references (``${DB_PASSWORD}``) and the tokens already written (``[CREDENTIAL]``): the names every other module of
the detector asks about. docs/capture.md: "Names that name a credential" and "The credentials detector, rule by
rule".
"""

from __future__ import annotations

import functools
import re
from typing import Any, Final

from bitexact.capture.detectors.base import ascii_lower
from bitexact.capture.detectors.ordinary import CURSOR_TOKENS
from bitexact.capture.terminal import ESC, shown


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
_AFTER_REFERENCE: Final[str] = " \t\r\n&;,\"'<>#)]}\x00\\`"
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


def _names_a_secret(name: str, value: str) -> bool:
    """Whether an XML element named ``name`` holding ``value`` holds a credential to replace."""
    value = value.strip()
    return bool(value) and value not in ALREADY_TOKENS and is_credential_word(name)
