"""Members under a credential table word that hold ordinary evidence, no credential (rules version 8).

The credential table (protocol vectors, ``credential_keys``) names ``token``, ``key`` and ``signature``, and a value
under such a key is replaced whole. Three kinds of ordinary agent traffic use those words for something else:

* a model's output token: OpenAI's, vLLM's, llama.cpp's and Ollama's ``logprobs`` entries
  (``{"token": "Hello", "logprob": -0.01, ...}``), Gemini's ``logprobsResult`` candidates (``logProbability``)
  and Hugging Face TGI's stream (``"token": {"id": 15043, "text": "Hello", "logprob": -0.5}``);
* Anthropic's thinking block's ``signature`` (``{"type": "thinking", ..., "signature": "EqQB..."}``, and the
  stream's ``signature_delta``): an integrity tag over the thinking the API wants back verbatim. It
  authenticates a block; it authorises nothing, and a record without it cannot be replayed;
* the bare ``key`` / ``Key`` holding a path, a dotted id or a word: an S3 object's key (``reports/2026/q3.csv``),
  a DynamoDB item's key (``{"pk": {"S": "user#1"}}``), a keyboard event's ``ArrowDown``, an i18n ``menu.title``,
  a sort column ``created_at``.

Each is left, then scanned as any text, so a secret's own shape inside it (``sk-...``) is still found. These are
the detector's decisions, never the table's: a wrapped client's URL and header rule is every SDK's.
Kept apart from the ``credentials`` package so that each rule is one helper, asked only where a name already names a
credential: no other key pays for it.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Callable
from typing import Any, Final

from bitexact.capture.detectors.base import ascii_lower
from bitexact.capture.terminal import ESC, shown

LOGPROB_MEMBERS: Final[tuple[str, ...]] = ("logprob", "logProbability")
"""A sibling that makes a ``token`` member a model's output token: ``logprob`` (OpenAI, vLLM, llama.cpp, Ollama,
TGI), ``logProbability`` (Gemini's ``logprobsResult``)."""
THINKING_TYPES: Final[frozenset[str]] = frozenset({"thinking", "signature_delta"})
"""The ``type`` of an object whose ``signature`` is a thinking block's integrity tag (Anthropic's Messages API,
and its stream's ``content_block_delta``'s ``delta``)."""
CURSOR_TOKENS: Final[frozenset[str]] = frozenset(
    {"page", "next", "prev", "previous", "continuation", "pagination", "cursor", "sync"})
"""Words before ``token`` that name a pagination or sync cursor (``next_page_token``, ``nextPageToken``,
``pageToken``, AWS's ``NextToken``, ``continuation_token``, ``PaginationToken``, Google's ``syncToken``): an
opaque position in a listing, sent back with the caller's own credential, never instead of it."""

_WORD = r"(?:[A-Z]?[a-z]+(?:[A-Z][a-z]+)*|[A-Z]+)[0-9]{0,4}"
"""An identifier's word: lower case, camel or Pascal case, or capitals, a few digits after it (``ArrowDown``,
``F12``, ``q3``, ``v2``). A random token mixes digits into its letters (``q8Zr2L...``) and is none."""
_PART = rf"(?:{_WORD}|[0-9]{{1,10}})"
_DOTTED = rf"{_WORD}(?:[._:\-]{_PART})*"
_PLAIN_KEY = re.compile(
    rf"{_DOTTED}"  # a word or a dotted id: ArrowDown, menu.title, created_at, a.txt
    rf"|/?{_DOTTED}(?:/{_PART}(?:[._:\-]{_PART})*)+/?"  # a path of such parts: reports/2026/q3.csv
    r"""|/?(?:[^/\x00-\x1f"'\\]+/)+[^/\x00-\x1f"'\\]*\.(?:[a-z][a-z0-9]{0,5}|[A-Z][A-Z0-9]{0,5})"""  # a file, a path
    r"|[^\x00-\x1f]",  # one character: a keyboard event's "a", " ", "+"
)
"""A bare ``key``'s value that is no credential: a word, a dotted id, a path of them, or a path to a file of any
name (``uploads/2f56…-cc98.png``). A path to a file ends in an extension after a dot, which no base64 or base64url
token holds with a ``/`` before it (a secret's ``/`` is base64's, and base64 has no ``.``)."""
_MAX_PLAIN: Final[int] = 1024
_ATTRIBUTE_TYPES: Final[frozenset[str]] = frozenset(
    {"S", "N", "B", "SS", "NS", "BS", "M", "L", "BOOL", "NULL"})
"""DynamoDB's attribute value types: a ``Key`` map's every value is one of them, alone (``{"S": "user#1"}``)."""


def plain_key(value: str) -> bool:
    """Whether ``value``, under a bare ``key`` / ``Key``, is a path, a dotted id, a word or one character."""
    return len(value) <= _MAX_PLAIN and _PLAIN_KEY.fullmatch(value) is not None


def _dynamodb_key(value: dict[Any, Any]) -> bool:
    """Whether ``value`` is a DynamoDB item's key: each member one attribute value (``{"pk": {"S": "user#1"}}``).
    Its members are walked as any object's, so a credential name among them is still replaced."""
    return bool(value) and all(
        type(item) is dict and len(item) == 1 and next(iter(item)) in _ATTRIBUTE_TYPES for item in value.values())


_LOWER: Final[dict[str, str]] = {name: name.lower() for name in ("token", "Token", "signature", "Signature", "key", "Key")}
"""The usual spellings of the three names, lower-cased by one lookup."""


_SCHEMA_TYPES: Final[frozenset[str]] = frozenset(
    {"string", "number", "integer", "boolean", "object", "array", "null"})
_SCHEMA_WORDS: Final[frozenset[str]] = frozenset({
    "type", "description", "title", "default", "enum", "const", "format", "pattern", "minLength", "maxLength",
    "minimum", "maximum", "items", "properties", "required", "examples", "nullable", "deprecated", "readOnly",
    "writeOnly", "additionalProperties", "anyOf", "oneOf", "allOf", "$ref", "$comment", "contentEncoding",
})
"""JSON Schema's keywords, as a tool's parameters (OpenAI's, Anthropic's and MCP's ``input_schema``) write them."""


def _json_schema(value: dict[Any, Any]) -> bool:
    """Whether ``value`` is a JSON Schema, as a tool definition describes a parameter named as a credential
    (``"password": {"type": "string", "description": "..."}``): its every key a schema keyword, its ``type`` one
    of JSON Schema's types (or a list of them), or a ``$ref`` / ``anyOf`` / ``oneOf`` / ``allOf`` instead. A
    credential object's members (``{"type": "bearer", "token": "x"}``) are none. Its strings are still scanned."""
    if not value or not all(type(word) is str and word in _SCHEMA_WORDS for word in value):
        return False
    kind = value.get("type")
    if kind is None:
        return any(word in value for word in ("$ref", "anyOf", "oneOf", "allOf"))
    if type(kind) is list:
        return bool(kind) and all(type(item) is str and item in _SCHEMA_TYPES for item in kind)
    return type(kind) is str and kind in _SCHEMA_TYPES


def ordinary_value(name: str, value: Any) -> bool:
    """Whether ``value`` under the credential name ``name`` is ordinary evidence by what it is, whatever stands
    beside it: a JSON Schema describing a parameter so named (any credential name), a bare ``key``'s plain value
    (:func:`plain_key`) or DynamoDB key, a ``signature`` that is a function's (it holds brackets: ``def f(x) -> str``;
    no HMAC, base64, hex or JWS does). Rules version 14: ``name`` as a terminal shows it (:func:`_shown_lower`)."""
    if type(value) is dict and _json_schema(value):
        return True
    lower = _shown_lower(name)
    if lower == "key":
        if type(value) is str:  # plain_key(), inline: an S3 listing asks this of every object
            return len(value) <= _MAX_PLAIN and _PLAIN_KEY.fullmatch(value) is not None
        if isinstance(value, str):
            return plain_key(str.__str__(value))  # a subclass, as its text
        return type(value) is dict and _dynamodb_key(value)
    if lower == "signature" and isinstance(value, str):
        return "(" in value and ")" in value
    return False


def ordinary_member(owner: dict[Any, Any], key: str, value: Any) -> bool:
    """Whether ``value``, under ``key`` (a name the credential rule would replace) in the object ``owner``, is
    ordinary evidence left to the text detectors: a model's output token, a thinking block's signature, or what
    :func:`ordinary_value` leaves. Asked only of credential-named keys. Rules version 14: a key a tool coloured
    (``ESC[1mtoken ESC[0m``, read as a credential name as a terminal shows it since leaks24) is read so here too, and
    a coloured ``logprob`` beside it (:func:`_coloured_member`)."""
    lower = _shown_lower(key)
    if lower == "token" and (  # the members spelled out, no loop: a logprobs response asks this of every token
            "logprob" in owner or "logProbability" in owner
            or (type(value) is dict and ("logprob" in value or "logProbability" in value))
            or _coloured_member(owner, LOGPROB_MEMBERS)
            or (type(value) is dict and _coloured_member(value, LOGPROB_MEMBERS))):
        return True
    if lower == "signature":
        kind = owner.get("type")
        if type(kind) is str and kind in THINKING_TYPES:
            return True
    return ordinary_value(key, value)


def _shown_lower(name: str) -> str:
    """``name`` in ASCII lower case, as a terminal shows it when it holds ESC (a coloured key: leaks24 read it as a
    credential name so, and what it names is judged as its plain spelling is)."""
    lower = _LOWER.get(name) or ascii_lower(name)
    return ascii_lower(shown(name)) if ESC in lower else lower


_MAX_COLOURED_MEMBERS: Final[int] = 16
"""The most keys an object may hold for :func:`_coloured_member` to read them: a logprobs entry holds four or five
(``token``, ``logprob``, ``bytes``, ``top_logprobs``); an object of many coloured ``token`` keys would otherwise read
its every key once per such key (quadratic). A larger object's member is replaced (the safe side)."""


def _coloured_member(owner: dict[Any, Any], names: tuple[str, ...]) -> bool:
    """Whether ``owner`` (at most :data:`_MAX_COLOURED_MEMBERS` keys) has a key holding ESC that a terminal shows as
    one of ``names`` (``ESC[1mlogprob ESC[0m``). Asked only of a credential-named member whose plain siblings answered
    no: a loop over its object's few keys."""
    return len(owner) <= _MAX_COLOURED_MEMBERS and any(
        type(key) is str and ESC in key and shown(key) in names for key in owner)


def ordinary_column(name: str, header: list[str]) -> bool:
    """Whether a CSV column named ``name`` (a credential word) holds ordinary evidence by the columns beside it
    (``header``, every column's name): a model's output token beside a ``logprob`` column, as :func:`ordinary_member`
    reads an object (rules version 9); the columns' names in any case (rules version 11: a markdown table's header
    is often capitalized, ``| Token | Logprob |``)."""
    return ascii_lower(name) == "token" and any(ascii_lower(column) in _LOGPROB_COLUMNS for column in header)


_LOGPROB_COLUMNS: Final[frozenset[str]] = frozenset(map(ascii_lower, LOGPROB_MEMBERS))


SIBLING_NAMES: Final[frozenset[str]] = frozenset({"token", "signature"})
"""The credential names (lower case) whose member its siblings may show is ordinary evidence
(:func:`ordinary_member`, :func:`ordinary_document_key`)."""
VALUE_NAMES: Final[frozenset[str]] = frozenset({"key", "signature"})
"""The credential names (lower case) whose string value may be ordinary evidence by what it is
(:func:`ordinary_value`; any credential name's object may be a JSON Schema)."""

_SIBLING_TOKENS: Final[int] = 128
"""How many tokens on each side of a ``token`` or ``signature`` key its object's siblings are looked for in a JSON
document: an output token's members (its ``bytes`` list too) and a thinking block's ``type`` (its thinking is one
string token) stand well within it. Past it, the member is replaced as the table says (the safe side)."""


def ordinary_document_key(tokens: list[tuple[int, int, str]], at: int, decode: Callable[[str], str]) -> bool:
    """Whether the member whose key token is at ``at`` in a JSON document (``tokens``, as the document's walk reads
    it; ``decode`` a string token's text) is left for its siblings, as :func:`ordinary_member` reads an object: a
    ``token`` beside a ``logprob`` or holding an object with one, a ``signature`` in a thinking block. Reads only
    the tokens around it, so a document pays for this per such key, never per token."""
    lower = ascii_lower(decode(tokens[at][2]))
    if lower not in SIBLING_NAMES:
        return False
    wanted = LOGPROB_MEMBERS if lower == "token" else ("type",)
    last = len(tokens) - 1
    # Forward: the value (an object under "token" may hold the logprob itself), then the members after it.
    depth = 0
    j = at + 2
    in_value = lower == "token" and j <= last and tokens[j][2] == "{"  # TGI's "token": {..., "logprob": -0.5}
    while j <= min(last, at + _SIBLING_TOKENS):
        raw = tokens[j][2]
        if raw in ("{", "["):
            depth += 1
        elif raw in ("}", "]"):
            if depth == 0:
                break  # the object closed
            depth -= 1
            in_value = in_value and depth > 0
        elif (raw[0] == '"' and j < last and tokens[j + 1][2] == ":" and (depth == 0 or (in_value and depth == 1))
              and _sibling(tokens, j, decode, wanted)):
            return True
        j += 1
    # Backward: the members before it.
    depth = 0
    j = at - 1
    while j >= max(0, at - _SIBLING_TOKENS):
        raw = tokens[j][2]
        if raw in ("}", "]"):
            depth += 1
        elif raw in ("{", "["):
            if depth == 0:
                break  # the object's opening
            depth -= 1
        elif depth == 0 and raw[0] == '"' and tokens[j + 1][2] == ":" and _sibling(tokens, j, decode, wanted):
            return True
        j -= 1
    return False


def _sibling(tokens: list[tuple[int, int, str]], key: int, decode: Callable[[str], str],
             wanted: tuple[str, ...]) -> bool:
    """Whether the key token at ``key`` is one of ``wanted``: a ``logprob`` member, or a ``type`` naming a thinking
    block (its value the string token after the colon)."""
    name = decode(tokens[key][2])
    if name not in wanted:
        return False
    if name != "type":
        return True
    value = tokens[key + 2][2] if key + 2 < len(tokens) else ""
    return value[:1] == '"' and decode(value) in THINKING_TYPES


# -- in text: a name and its value written in a line (a log's dict, a repr, a query) ---------------------------

_LOGPROB_WORD = re.compile(r"(?<![A-Za-z0-9_])(?:logprob|logProbability)(?![A-Za-z0-9_])")
_MEMBER_WINDOW: Final[int] = 256
"""How far around a ``token`` its object's siblings are looked for: an output token's members are short."""
_NEXT_THINKING = re.compile(r"""[ \t]*+,[ \t]*+(?:thinking[ \t]*+=|(["'])thinking\1[ \t]*+:)""")
_THINKING_NAMES: Final[tuple[str, ...]] = ('"thinking":', "'thinking':", "thinking=")
_TYPE_NAMES: Final[tuple[str, ...]] = ('"type":', "'type':", "type=")
_MAX_PREVIOUS: Final[int] = 256 * 1024
"""How far back a thinking block's text is read to the member before a ``signature`` (the thinking itself)."""


def ordinary_text_member(text: str, name: str, name_start: int, value_start: int, value_end: int) -> bool:
    """Whether the value at ``value_start:value_end`` of ``name`` (a credential name written at ``name_start`` in
    ``text``) is ordinary evidence, as :func:`ordinary_member` reads an object: a ``token`` with a ``logprob``
    beside it in its object (``{'token': 'Hello', 'logprob': -0.01}``, ``ChatCompletionTokenLogprob(token='Hello',
    bytes=[72], logprob=-0.01)``), a ``signature`` beside a ``thinking`` member or after a thinking type
    (``ThinkingBlock(signature='…', thinking='…', type='thinking')``, ``"thinking": "…", "signature": "…"``), or a
    bare ``key``'s path, dotted id or word (``Key='reports/2026/q3.csv'``, ``key=created_at``)."""
    lower = ascii_lower(name)
    if text.startswith("{", value_start):
        return ordinary_text_container(name, text[value_start:value_end])  # Key={'pk': {'S': 'user#1'}}
    if lower == "key":
        return plain_key(text[value_start:value_end])
    if lower == "token":
        return _beside_logprob(text, name_start, value_end)
    if lower == "signature":
        return (_NEXT_THINKING.match(text, _closing(text, value_end)) is not None or _after_thinking(text, name_start)
                or ordinary_value(name, text[value_start:value_end]))
    return False


def _closing(text: str, at: int) -> int:
    """``at``, past a quote closing the value there."""
    return at + 1 if at < len(text) and text[at] in "\"'" else at


def _beside_logprob(text: str, name_start: int, value_end: int) -> bool:
    """Whether a ``logprob`` member stands in the object (``{…}`` or ``(…)``) around a name and its value, at its
    own level: before the name back to the object's opening (past any object closed before it), or after the
    value up to the object's close or the next object's opening."""
    floor = max(0, name_start - _MEMBER_WINDOW)
    ceiling = min(len(text), value_end + _MEMBER_WINDOW)
    if text.find("logprob", floor, ceiling) < 0 and text.find("logProb", floor, ceiling) < 0:
        return False  # the common case, one search: no logprob near (a session's token, an OAuth answer)
    opening = max(text.rfind("{", floor, name_start), text.rfind("(", floor, name_start), floor)
    closed = max(text.rfind("}", opening, name_start), text.rfind(")", opening, name_start))
    if closed >= 0:
        opening = closed + 1  # an object closed before the name is no sibling's: read from past it
    # Forward to where the object closes or a nested one opens: a logprob inside another object is no sibling's.
    ends = [end for end in (text.find(mark, value_end, ceiling) for mark in "})({") if end >= 0]
    end = min(ends) if ends else ceiling
    return (_LOGPROB_WORD.search(text, opening, name_start) is not None
            or _LOGPROB_WORD.search(text, value_end, end) is not None)


def _after_thinking(text: str, name_start: int) -> bool:
    """Whether the member before the name at ``name_start`` is a thinking block's ``thinking`` or its ``type``
    (``thinking`` or ``signature_delta``), its value a quoted string read back to its opening quote."""
    at = name_start
    while at > 0 and text[at - 1] in " \t":
        at -= 1
    if at < 2 or text[at - 1] != ",":
        return False
    at -= 1
    while at > 0 and text[at - 1] in " \t":
        at -= 1
    if at < 2 or text[at - 1] not in "\"'":
        return False
    quote, close = text[at - 1], at - 1
    floor = max(0, close - _MAX_PREVIOUS)
    opening = text.rfind(quote, floor, close)
    while opening > floor and _escaped(text, opening):
        opening = text.rfind(quote, floor, opening)
    if opening <= floor:
        return False
    head = text[max(0, opening - 24) : opening].replace(" ", "").replace("\t", "")  # what names the member
    if head.endswith(_THINKING_NAMES):
        return True
    return head.endswith(_TYPE_NAMES) and text[opening + 1 : close] in THINKING_TYPES


def _escaped(text: str, at: int) -> bool:
    """Whether the character at ``at`` follows an odd run of backslashes."""
    run = 0
    while at - run > 0 and text[at - run - 1] == "\\":
        run += 1
    return run % 2 == 1


_MAX_CONTAINER: Final[int] = 4096
"""The longest object written in text that is read to decide whether it is a DynamoDB key or an output token."""


def ordinary_text_container(name: str, raw: str) -> bool:
    """Whether ``raw``, an object written in text as the value of ``name`` (a credential name), is ordinary
    evidence: a ``token`` object holding a ``logprob`` (TGI's stream, ``"token": {"id": 1, "logprob": -0.5}``), or
    what :func:`ordinary_value` leaves (a bare ``key``'s DynamoDB key, ``Key={'pk': {'S': 'user#1'}}``, a JSON
    Schema), read as JSON or as a Python literal."""
    if not raw.startswith("{") or len(raw) > _MAX_CONTAINER:
        return False
    if ascii_lower(name) == "token" and _LOGPROB_WORD.search(raw) is not None:
        return True
    try:
        value = json.loads(raw)
    except ValueError:
        try:
            value = ast.literal_eval(raw)
        except (ValueError, SyntaxError, MemoryError, RecursionError, TypeError):
            return False
    return ordinary_value(name, value)
