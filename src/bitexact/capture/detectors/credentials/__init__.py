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

from bitexact.capture.detectors.credentials.names import (
    ALREADY_TOKENS,
    COMPOUND_ENDINGS,
    CREDENTIAL_KEYS,
    CREDENTIAL_NAMES,
    HTTP_CREDENTIAL_HEADERS,
    JOINED_NAMES,
    MAX_MASK_DEPTH,
    NAME,
    NAME_MEMBERS,
    TABLE_KEYS,
    TOKEN,
    TOOL_SECRET_NAMES,
    VALUE_MEMBERS,
    holds_credential,
    is_credential_name,
    is_credential_text_name,
    is_credential_word,
    is_reference,
    mask_marks,
    names_credential,
    percent_decode,
    sensitive_attribute_names,
    sensitive_value_names,
)
from bitexact.capture.detectors.credentials.pairs import NAME_ENDS
from bitexact.capture.detectors.credentials.tokens import _MARK_GUARDS
from bitexact.capture.detectors.credentials.commands import (
    ARGV_COMMAND_AT,
    COMMAND_WORDS,
    EXE_SUFFIX,
    argv_secrets,
    names_a_command,
)
from bitexact.capture.detectors.credentials.skeleton import EVERY_LITERAL, held_literals
from bitexact.capture.detectors.credentials.detector import CredentialsDetector

__all__ = [
    "ALREADY_TOKENS",
    "ARGV_COMMAND_AT",
    "COMMAND_WORDS",
    "COMPOUND_ENDINGS",
    "CREDENTIAL_KEYS",
    "CREDENTIAL_NAMES",
    "CredentialsDetector",
    "EVERY_LITERAL",
    "EXE_SUFFIX",
    "HTTP_CREDENTIAL_HEADERS",
    "JOINED_NAMES",
    "MAX_MASK_DEPTH",
    "NAME",
    "NAME_ENDS",
    "NAME_MEMBERS",
    "TABLE_KEYS",
    "TOKEN",
    "TOOL_SECRET_NAMES",
    "VALUE_MEMBERS",
    "_MARK_GUARDS",
    "argv_secrets",
    "held_literals",
    "holds_credential",
    "is_credential_name",
    "is_credential_text_name",
    "is_credential_word",
    "is_reference",
    "mask_marks",
    "names_a_command",
    "names_credential",
    "percent_decode",
    "sensitive_attribute_names",
    "sensitive_value_names",
]
