"""The credentials detector: :class:`CredentialsDetector`, the passes that read text and data.

Each pass asks the patterns and helpers of its family's module. docs/capture.md: "The credentials detector, rule
by rule".
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import re
from collections.abc import Container
from dataclasses import dataclass, field
from typing import Any

from bitexact.capture.budget import Deadline
from bitexact.capture.detectors.base import FLAG_ONLY, Finding, ascii_lower
from bitexact.capture.detectors.documents import (
    ATTRIBUTES,
    MIRRORED_VALUES,
    MIRRORS,
    QUOTED_SECRET_KIND,
    QUOTED_SECRET_MAPS,
    SECRET_KIND,
    SECRET_MAPS,
    SENSITIVE,
    SENSITIVE_ATTRIBUTES,
)
from bitexact.capture.detectors.ordinary import ordinary_text_container, ordinary_text_member
from bitexact.capture.detectors.credentials.commands import (
    _COMMAND,
    _FLAG,
    _LINE_END,
    _LISTED_LINE,
    _LISTED_NEXT,
    _PASSWORD_FLAG,
    _POSITIONAL,
    _PasswordFlag,
    _SEPARATE,
    _SHELL_WORD,
    _command_scopes,
    _command_starts,
    _flag_secret,
    _in_command_position,
    _in_synopsis,
    _listed_argv,
    _path_start,
    _word_starts,
)
from bitexact.capture.detectors.credentials.config_files import (
    _COLON_DOLLAR,
    _HEX_LINE,
    _HTPASSWD_COLON,
    _HTPASSWD_HASH,
    _HTPASSWD_STOPS,
    _MAX_HTPASSWD_USER,
    _MAX_PGPASS_FIELD,
    _NETRC_HEADS,
    _NETRC_REST,
    _PGPASS_STOPS,
    _SHADOW_LINE,
)
from bitexact.capture.detectors.credentials.db_clients import (
    _PRINTED_MARIADB,
    _PRINTED_SQL,
    _PSQL_RECORD,
    _client_prints_header,
    _expanded_records,
    _line_head,
    _one_line_name,
    _printed_below,
    _sql_client,
)
from bitexact.capture.detectors.credentials.kubernetes import (
    _CLOSE,
    _KEY,
    _KIND_SECRET,
    _OPEN,
    _SECRET_DATA,
    _SECRET_FLOW,
    _STRING,
    _json_parts,
    _kube_flow_values,
    _kube_values,
)
from bitexact.capture.detectors.credentials.labels import _COLON_FORMS, _COMMON_LABELS, _label_value, _label_words
from bitexact.capture.detectors.credentials.lines import (
    _AFTER_SPAN,
    _LINE_STARTS,
    _before_span_marks,
    _first_word,
    _indent_past_returns,
    _inside,
    _line_at,
    _line_end,
    _line_start,
    _opens_span,
    _past_blanks,
    _past_carriage_returns,
    _past_quote_marks,
    _span_close,
    _starts_a_line,
)
from bitexact.capture.detectors.credentials.names import (
    ALREADY_TOKENS,
    NAME,
    NAME_MEMBERS,
    TOKEN,
    VALUE_MEMBERS,
    _LEFT_LINE_VALUES,
    _MEMBER_KEYS,
    _PASSWORD_ENDINGS,
    _QUOTED_REFERENCE,
    _in_connection_string,
    _names_a_secret,
    _unless_reference,
    is_credential_name,
    is_credential_text_name,
    is_credential_word,
    names_credential,
    percent_decode,
)
from bitexact.capture.detectors.credentials.objects import (
    _BARE_KEYS,
    _LITERAL_OPENINGS,
    _MAX_MEMBERS,
    _NEXT_KEYWORD,
    _NEXT_MEMBER,
    _PAIRS,
    _PAIR_VALUE,
    _QUOTED_VALUE,
    _SUBSCRIPT_KEY,
    _SUBSCRIPT_VALUE,
)
from bitexact.capture.detectors.credentials.pairs import (
    _BARE_LITERALS,
    _BLANK_QUOTED_NAME,
    _BLOCK_HEADER,
    _COLON_VALUE,
    _DQ_COLON,
    _EQ,
    _ESCAPED_SPACE,
    _HEADER_NL,
    _HEADER_NUL,
    _HEADER_START,
    _JSON_SCALAR,
    _MAX_NAME,
    _NAME_CHARS,
    _QUOTED_NAME,
    _SQ_COLON,
    _VALUE,
    _bracketed,
    _escaped_value,
    _indented_block,
)
from bitexact.capture.detectors.credentials.positional import _NET_USER, _command_words, _net_user_secrets, _word_secret
from bitexact.capture.detectors.credentials.redis import (
    _ACL_FILE_LINES,
    _ACL_SPAN_LINE,
    _CONFIG_SET_WORDS,
    _LINE_OPENINGS,
    _REDIS_AUTH,
    _REDIS_AUTH_ARGS,
    _REDIS_COMMAND,
    _REDIS_ITEM,
    _REDIS_PASS,
    _REDIS_PASSWORD,
    _REDIS_PASSWORD_CAPITALIZED,
    _REDIS_PASSWORD_UPPER,
    _REDIS_PASSWORD_UPPER_NAMES,
    _SASL_MECHANISMS,
    _SPAN_ACL_USER,
    _SPAN_AUTH,
    _REDIS_PASS_CASED,
    _acl_secrets,
    _after_redis_prompt,
    _config_set_pairs,
    _mixed_case_password,
    _redis_dash_password,
    _redis_password,
)
from bitexact.capture.detectors.credentials.redis_cli import (
    _MAX_REDIS_LINE,
    _REDIS_CLI,
    _REDIS_ITEM_VALUE,
    _redis_bare_replies,
    _redis_cli_command,
    _redis_fields,
    _redis_pairs,
    _redis_raw_reply,
    _resp3_hashes,
)
from bitexact.capture.detectors.credentials.skeleton import held_literals
from bitexact.capture.detectors.credentials.sql import (
    _MAX_STATEMENT_HEAD,
    _SQL_IDENTIFIED,
    _SQL_PASSWORD,
    _SQL_USER_STATEMENT,
)
from bitexact.capture.detectors.credentials.sqlite import (
    _ASCII_RECORD,
    _CLIENT_TABLE,
    _MAX_SCHEMA_LINES,
    _SQLITE_MORE,
    _SQLITE_PROMPT,
    _SqliteSession,
    _create_table,
    _definition_line,
)
from bitexact.capture.detectors.credentials.tables import (
    _CSV_HEAD_LINES,
    _CSV_START,
    _MAX_CSV_HEADER,
    _PRINTED_FILE,
    _PRINTED_TABLE_SEARCHES,
    _TABLE_RULE,
    _boxed,
    _csv_table,
    _is_rule,
    _pipe_table,
    _prints_table,
    _unboxed,
)
from bitexact.capture.detectors.credentials.terraform import (
    _PATHS,
    _SAW_SENSITIVE,
    _SAW_SENSITIVE_ATTRIBUTES,
    _SAW_SENSITIVE_VALUES,
    _STEP,
    _ShowFrame,
    _StateFrame,
)
from bitexact.capture.detectors.credentials.tokens import (
    _BASIC,
    _BEARER,
    _BEFORE_SHAPE,
    _MAX_PEM,
    _MAX_PPK_LINES,
    _PEM_BEGIN,
    _PEM_BODY,
    _PEM_END,
    _PEM_MIN_BASE64,
    _PEM_SPACE,
    _PPK_LINE,
    _PPK_MAC,
    _PPK_PRIVATE,
    _SHAPE_SEARCHES,
    _USERINFO,
    _USER_TOKEN,
    _basic_token,
    _bearer_token,
    _kept_pattern,
    _user_token,
)
from bitexact.capture.detectors.credentials.tools import (
    _CHPASSWD_INPUTS,
    _CHPASSWD_PAIR,
    _CONFIG_SETS,
    _HEADER_FLAG,
    _ORACLE_CONNECTS,
    _ORACLE_LOGINS,
    _ORACLE_REMOTE_LOGINS,
    _PASSWORD_AT,
    _POETRY_CONFIG,
    _STDIN_LOGIN,
)
from bitexact.capture.detectors.credentials.urlencoded import (
    _ENCODED_BACKSLASH,
    _ENCODED_EQ,
    _ENCODED_MEMBER_NAME,
    _ENCODED_MEMBER_VALUE,
    _ENCODED_SEPARATORS,
    _ENCODED_VALUE,
    _ESCAPED_ENCODED_MEMBER_VALUE,
    _TWICE_ENCODED_BACKSLASH,
    _TWICE_ENCODED_MEMBER_VALUE,
    _TWICE_ENCODED_VALUE,
    _TWICE_ESCAPED_ENCODED_MEMBER_VALUE,
)
from bitexact.capture.detectors.credentials.xml import (
    _CDATA,
    _ELEMENT,
    _MAX_CDATA,
    _MAX_OPEN_TAG,
    _OPEN_TAG,
    _XML_SPACE,
    _attribute_pair,
)


def _before_span_closes(text: str, found: list[Finding]) -> list[Finding]:
    """Rules version 17 (leaks32): each finding (``found`` sorted) whose bare value was read into a markdown code
    span's closing backtick (``Set `PASSWORD=x` ok``, ``run `mysql -px`.``) ends before it, so the record keeps the
    span's markdown: a single backtick, no quote or backtick after it, nothing but a sentence's marks
    (:data:`_AFTER_SPAN`) after it in the finding, none before it in the finding, and an odd number of backticks
    before the finding on its line (the span opened there; each span opened and closed before it counts two). One
    that is then empty (``set `PASSWORD=` to``) or a token already (a second pass over ``[CREDENTIAL]``) is dropped.
    A value holding the opening backtick too (a table's cell taken whole) or another one keeps it, as before.

    The backticks are counted once, from one finding's start to the next (a line's start between them starts the
    count again), so findings on one long line cost no rescan."""
    kept: list[Finding] = []
    counted, opened = 0, False  # whether an odd number of backticks stands on the line before ``counted``
    for finding in found:
        if text[finding.end - 1] in _AFTER_SPAN or text[finding.end - 1] == "`":
            end = _before_span_marks(text, finding.start, finding.end) - 1  # the backtick, if it is one
            if (end >= finding.start and text[end] == "`" and text[end - 1 : end] != "`"
                    and text[end + 1 : end + 2] not in ("`", "\"", "'") and text.find("`", finding.start, end) == -1):
                floor = max(0, counted - 1)  # a written "\n" across counted too
                if _LINE_STARTS.search(text, floor, finding.start) is None:  # on the line counted (one search in C)
                    opened ^= text.count("`", counted, finding.start) % 2 == 1
                else:  # a line starts after the last count (the findings are sorted)
                    opened = text.count("`", _line_start(text, floor, finding.start), finding.start) % 2 == 1
                counted = finding.start
                if opened:
                    if end == finding.start or text[finding.start : end] in ALREADY_TOKENS:
                        continue
                    finding = Finding(finding.start, end, finding.token, finding.detector)
        kept.append(finding)
    return kept


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
        if "`" in text:  # a memchr: rules version 17 (leaks32), a value read into a code span's closing backtick
            found.sort()
            found = _before_span_closes(text, found)
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
            if head.start() < covered:
                continue  # inside the entry read last (a login named "default")
            close = len(text)  # rules version 17 (leaks32): or a markdown code span's closing backtick
            if not _first_word(text, head.start()):
                close = _span_close(text, head.start()) if _opens_span(text, head.start()) else -1
                if close < head.end():
                    continue  # prose, or a span closing before the entry's host
            entry = _NETRC_REST.match(text, head.end(), close)
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
        if blank and "`" in text:  # a memchr: rules version 17 (leaks32), AUTH in a markdown code span
            cls._span_auth(text, deadline, found)
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
        ``\\n`` before it; rules version 17, leaks32: or USER opens a markdown code span the hash ends). An
        ``/etc/shadow`` line (a colon after its hash) is :meth:`_shadow_hashes`'."""
        for match in _HTPASSWD_HASH.finditer(text):
            deadline.check()
            user, floor = match.start(), max(0, match.start() - _MAX_HTPASSWD_USER)
            while user > floor and text[user - 1] not in _HTPASSWD_STOPS and text[user - 2 : user] != "\\n":
                user -= 1
            if user == match.start() or (user == floor and floor > 0):
                continue
            if text.startswith("`", match.end()):  # rules version 17 (leaks32): USER opens the code span it ends
                spanned = text[user] == "`" and _opens_span(text, user + 1) and "`" not in text[user + 1 : match.start()]
                if spanned and user + 1 < match.start():
                    found.append(Finding(match.start(1), match.end(1), TOKEN, NAME))
            elif _first_word(text, user):  # v17: "> "
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
        if "`" in text:  # a memchr: rules version 17 (leaks32), a line as a markdown code span's only words
            for match in _SPAN_ACL_USER.finditer(text):
                deadline.check()
                close = _span_close(text, match.end()) if _opens_span(text, match.start() + 1) else -1
                line = _ACL_SPAN_LINE.match(text, match.start() + 1, close) if close != -1 else None
                if line is not None:
                    _acl_secrets(text, line.start(1), line.end(1), found)

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
    def _span_auth(text: str, deadline: Deadline, found: list[Finding]) -> None:
        """Rules version 17 (leaks32): ``AUTH [USER] PASSWORD`` as a markdown code span's only words (``Use `AUTH x`
        at the prompt``, :data:`_SPAN_AUTH`): the last word, as at redis-cli's prompt (:meth:`_redis_auth`), the
        span's closing backtick (:func:`_span_close`) ending the line. A lone SMTP mechanism's name (``AUTH PLAIN``,
        :data:`_SASL_MECHANISMS`) is left; after it, a word is the client's credentials and taken."""
        for match in _SPAN_AUTH.finditer(text):
            deadline.check()
            if not _opens_span(text, match.start() + 1):
                continue
            close = _span_close(text, match.end())
            args = _REDIS_AUTH_ARGS.match(text, match.end(), close) if close != -1 else None
            if args is None:
                continue
            group = next(g for g in (6, 5, 4, 3, 2, 1) if args.group(g) is not None)
            word = args.group(group)
            if word and word not in ALREADY_TOKENS and not (group <= 3 and word.upper() in _SASL_MECHANISMS):
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
