"""URL credential redaction: what a wrapped client records of a URL and its headers.

A query parameter named in the credential table (``credential_keys`` in the
protocol vectors) is recorded with its value replaced by ``[redacted]``,
URL-encoded (``%5Bredacted%5D``); a parameter with no value gets one
(``token`` becomes ``token=%5Bredacted%5D``). A parameter's name is matched
once URL-decoded, ignoring ASCII case only: ``api%5Fkey`` is a credential, a
name that does not decode is compared as sent, and a look-alike letter
(``%E2%84%AA``, a Kelvin sign) names another parameter. Every other byte -
each other parameter as encoded, an empty parameter, the fragment - is kept
exactly as sent. A user name or password in the URL is recorded as
``[redacted]`` too. Parameters are separated by ``&`` and by ``;`` (which some
servers read as one): ``?a=1;token=T`` is recorded with the token redacted, and
a credential's value still runs to the next ``&``. Any other parameter's value
that is itself a URL, as the server reads it once decoded, is read by the same
rule (an OAuth ``redirect_uri``, a login's ``next=``): its user info and its
credential parameters are redacted where they stand in the value as sent,
plain (``next=https://h2/cb?token=%5Bredacted%5D``) or percent-encoded
(``next=https%3A%2F%2Fh2%2Fcb%3Ftoken%3D%5Bredacted%5D``, as httpx and requests
send ``params={"next": ...}``); a value encoded twice is decoded again. A value
holding a ``?`` is read so too, so ``?a=1?token=T`` (or ``next=/cb?token=T``)
is recorded ``?a=1?token=%5Bredacted%5D``. A value is followed 8 levels deep
(each nested URL or decoding a level); deeper, one that would be read further
is recorded ``%5Bredacted%5D`` whole. A URL written in the path (``/web/2020/https://u:p@h2/``, plain or
percent-encoded) is read so too, from its scheme to the query.

Headers named in the table are recorded as ``[redacted]``, and so are
HTTP's own credential headers, which the table (a list of key names) does
not hold: ``Cookie``, ``Set-Cookie`` and ``Proxy-Authorization``. A header
whose value is a URL (``Location``, ``Content-Location``, ``Referer``) is
recorded by the URL rule, so a redirect to ``...?token=...`` does not carry
the token into the record; so is each URL of a ``Link`` header (RFC 8288,
``<https://api/x?page=2&access_token=T>; rel="next"``), the pagination links
an API hands back with the token it was called with, and each value of its parameters
(``anchor="https://api/y?access_token=T"``, a relation type that is a URL), quoted or not; and so is the
URL of a ``Refresh`` header (``0; url=https://a/y?token=T``), found as browsers find it (HTML's shared
declarative refresh steps: any case, blanks, ``;`` or ``,``, a quote). In any other header each absolute URL
in the value (``scheme://``, JSON's escaped ``:\\/\\/`` too) and each network-path reference (``//host/...``)
where a URL is expected is recorded by the URL rule, ending where the header's grammar ends it (a credential's
value at the first ``&``, ``,``, ``;`` or ``#``; a URL after a list member's name or inside another read too, a
percent-encoded one in a parameter's value, and one percent-encoded in a URL's path, read by :func:`_path_spans` to
the first ``?``, ``#``, ``,`` or ``;`` or the next URL: ``X-Original-URL: https://proxy/r/https%3A%2F%2Fu%3Ap%40h2``),
and so is a URL percent-encoded outside any absolute one (a relative ``/r/https%3A%2F%2Fu%3Ap%40h2``), to its word's end,
closing punctuation left to the text: a CSP's ``report-uri``, ``Report-To``, ``SourceMap``, ``Origin``, an
agent's own header. A header whose name says it holds a URL - it ends in ``-url`` or ``-uri`` (``X-Original-URL``,
``X-Rewrite-URL``, ``X-Forwarded-Uri``) or is one of :data:`URL_NAMED_HEADERS` (``X-Envoy-Original-Path``,
``X-Forwarded-Prefix``...) - and whose value is one URL (no blank, quote, angle bracket or ``,``) is read so and
by :func:`redact_url` too, so a relative request target's query (``X-Original-URL: /cb?token=T``) is recorded as a
``Location``'s is. All are this project's choice where the protocol is silent (docs/capture.md, "URLs,
headers, logs").
"""

from __future__ import annotations

import re
import string
from bisect import bisect_left
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final
from urllib.parse import unquote_to_bytes

from bitexact.capture.detectors.base import ascii_lower
from bitexact.capture.detectors.credentials import CREDENTIAL_NAMES, TABLE_KEYS, percent_decode

REDACTED: Final[str] = "[redacted]"
REDACTED_ENCODED: Final[str] = "%5Bredacted%5D"
_KEYS: Final[frozenset[str]] = TABLE_KEYS
URL_HEADERS: Final[frozenset[str]] = frozenset({"location", "content-location", "referer"})
"""Headers whose value is a URL (absolute or relative), recorded by :func:`redact_url`."""
LINK_HEADER: Final[str] = "link"
"""A header whose value holds URLs, each between ``<`` and ``>`` and in its parameters' values: each is
recorded by :func:`redact_url`."""
URL_NAMED_HEADERS: Final[frozenset[str]] = frozenset({
    "x-envoy-original-path", "x-forwarded-prefix", "x-forwarded-path", "x-original-path", "x-accel-redirect",
    "destination"})
"""Headers whose value is a request target or a URL though their names do not end in ``-url`` or ``-uri`` (Envoy's
original path, the prefix a proxy stripped, nginx's internal redirect, WebDAV's ``Destination``): with those, read
as one URL when the value is one (:func:`_redact_url_named`)."""
REFRESH_HEADER: Final[str] = "refresh"
"""A header whose value is a delay and a URL (``0; url=https://...``): the URL is recorded by :func:`redact_url`."""
# A Link header's parts that may hold a URL: a target, a quoted parameter value (its escapes kept as sent:
# the URL rule changes no byte but a credential's value), or an unquoted one after its "=". In a malformed
# header a target that never closes is read as an unquoted value is, and a quote that never closes to the end.
_LINK_PART: Final = re.compile(r'<([^<>]*)>|<([^<>\s";,]*)|"((?:[^"\\]|\\.)*)("?)|=([^\s";,<]+)')
# What precedes a Refresh header's URL as HTML's "shared declarative refresh steps" read it: blanks, the
# delay (digits and dots), a blank or a ";" or "," between, "url" in any case and "=" with blanks around
# (when they are not there the rest is the URL), and an opening quote.
_REFRESH_PREFIX: Final = re.compile(r"[\t\n\f\r ]*[0-9.]*[\t\n\f\r ]*[;,]?[\t\n\f\r ]*"
                                    r"(?:[Uu][Rr][Ll][\t\n\f\r ]*=[\t\n\f\r ]*)?([\"']?)")
_HEADER_KEYS: Final[frozenset[str]] = CREDENTIAL_NAMES
# Where a URL starts in any other header's value (a CSP's report-uri and sources, Report-To's JSON, SourceMap,
# Origin, a URL an agent sends in a header of its own): a scheme and "://" (or JSON's escaped ":\/\/"), or a
# network-path reference's "//" (or "\/\/") where a URL reference is expected - at the value's start, after a
# blank, "=", a quote, "<", "(", "," or ";" - so a path's "a//b" is none. The text from a URL's start to a blank,
# a quote or an angle bracket is read by _in_text_spans.
_URL_MARK: Final = re.compile(r":?(?://|\\/\\/)")
_SCHEME_LETTERS: Final[frozenset[str]] = frozenset(string.ascii_letters)
_SCHEME_CHARACTERS: Final[frozenset[str]] = _SCHEME_LETTERS | frozenset(string.digits + "+.-")
_BEFORE_NETWORK_PATH: Final[str] = "=\"'<(,;"  # or a blank, or the value's start
_URL_STOP: Final = re.compile(r"[\s\"<>]")
_BLANKS: Final[str] = " \t"  # the optional whitespace around a header's value (RFC 9110, section 5.5)
# What a URL-named header's value that is one URL holds none of: a blank, a quote or an angle bracket (which end a
# URL in free text), or a "," (which separates a list's members, RFC 9110 section 5.6.1).
_NOT_ONE_URL: Final = re.compile(r"[\s\"<>,]")
_AUTHORITY_END: Final = re.compile(r"[/?#]")
# Where a query's parameter ends in a header's value, and an "@" as sent or percent-encoded once or more.
_PARAMETER_END: Final = re.compile(r"[&,;]")
_AT_SIGN: Final = re.compile(r"@|%(?:25)*40")
# What a URL's text in a header's value is read by: a URL's "//" (or "\/\/"), and the marks of its query and
# fragment. A query's parameters are separated by "&" and by the header's own "," and ";".
_EVENT: Final = re.compile(r":?(?://|\\/\\/)|[?#&,;]")
_NAME_END: Final = re.compile(r"[=?#&,;]")
_VALUE_END: Final = re.compile(r"[#&,;]")
_ENCODED_VALUE_END: Final = re.compile(r"[#&,;?]")
_URL_TRAILER: Final[str] = ".,;:!?')]}\\"
# Where a header's URL's path ends (and a URL percent-encoded in it, read by _text_path_spans): its query or
# fragment, the header's own "," and ";" (in a query, a "&" too: the next parameter's), or a "//" starting the
# next URL (a path's "a//b" starts none).
_PATH_ENDS: Final = re.compile(r"[?#,;]|:?(?://|\\/\\/)")
_PATH_ENDS_IN_QUERY: Final = re.compile(r"[?#,;&]|:?(?://|\\/\\/)")
# Where a URL written percent-encoded in a header's text outside its URLs ends (read by _encoded_in_spans).
_WORD_END: Final = re.compile(r"[\s\"<>?#,;]")


def _is_credential_parameter(name: str) -> bool:
    decoded = percent_decode(name.replace("+", " "))
    return ascii_lower(name if decoded is None else decoded) in _KEYS


_Span = tuple[int, int, str]  # (from, to, what replaces text[from:to])
_NESTING_LIMIT: Final[int] = 8
"""How many URLs (or percent-encodings) deep a query parameter's value is read: a value deeper still that would be
read further is recorded ``%5Bredacted%5D`` whole, so no chain of ``next=`` hides a token past the bound."""
_ESCAPE: Final = re.compile(r"%[0-9A-Fa-f]{2}")
_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://")
_ESCAPE_AGAIN: Final = re.compile(r"%(?:25)*[0-9A-Fa-f]{2}")  # an escape, encoded once or more
# A URL's "://" inside a path, as sent or percent-encoded (":" and "/" escaped, any case, once or more).
_PATH_URL_MARK: Final = re.compile(r"(?::|%(?:25)*3[Aa])(?://|%(?:25)*2[Ff]%(?:25)*2[Ff])")


def _query_spans(query: str, offset: int, depth: int) -> list[_Span]:
    """What the rule replaces in ``query`` (which starts at ``offset``), a URL ``depth`` values deep.

    "&" separates parameters (the vectors), and so does ";" for a server that reads it so (the W3C's old advice,
    Python's parse_qs before 3.9.2): a credential after one ("?a=1;token=T") is redacted too. A credential
    parameter's value runs to the next "&", ";" and "," included, so no reading leaves a byte of it; a ";" piece
    with no "=" carries no value and is kept as sent. A "?" inside a query starts a parameter, as in a header's
    URL: in a name (``?a?token=T``) what follows it is the name, in a value (``?a=1?token=T``) a query of the
    value's own (:func:`_value_spans`); a server reads ``a`` = ``1?token=T``, and a token leaking is worse than
    a value it reads whole recorded in part. A credential with no value is given one in the URL's own query (the
    vectors' row), never after such a "?" nor in a nested URL: it holds nothing to hide. Any other parameter's
    value is read as a URL of its own when it holds one."""
    spans: list[_Span] = []
    at = offset
    for parameter in query.split("&"):
        name, equals, value = parameter.partition("=")
        last = name.rpartition("?")[2]  # a "?" starts a parameter: "?a?token=T" names "token"
        if last and (equals or (depth == 0 and last == name)) and _is_credential_parameter(last):
            end = at + len(parameter)
            spans.append((end - len(value), end, REDACTED_ENCODED) if equals else (end, end, "=" + REDACTED_ENCODED))
        else:
            if ";" in parameter:
                spans += _piece_spans(parameter, at)
            if equals:
                spans += _value_spans(value, at + len(name) + 1, depth + 1)
        at += len(parameter) + 1
    return spans


def _piece_spans(parameter: str, offset: int) -> list[_Span]:
    """The values of the credential pieces of a ``;``-separated ``parameter`` (one with no "=" holds none)."""
    spans: list[_Span] = []
    at = offset
    for piece in parameter.split(";"):
        name, equals, value = piece.partition("=")
        name = name.rpartition("?")[2]
        if name and equals and _is_credential_parameter(name):
            spans.append((at + len(piece) - len(value), at + len(piece), REDACTED_ENCODED))
        at += len(piece) + 1
    return spans


def _holds_url(text: str) -> bool:
    """Whether a parameter's value, as a server decodes it, is read as a URL: it holds a ``://`` or opens with a
    network-path reference's ``//`` (a ``next=https://u:p@h2/cb``), or holds a ``?`` (a query of its own, a
    relative URL's ``next=/cb?token=T`` or ``a=1?token=T``)."""
    return "?" in text or "://" in text or text.startswith("//")


def _decode_once(value: str) -> str:
    """``value`` with each ``%XX`` decoded once, a byte as the Latin-1 character it is (so a decoded character is
    one escape, and every "/", "?", "&", "=", "@" stands where it stood); a ``%`` that starts no escape is kept."""
    if "%" not in value or _ESCAPE.search(value) is None:  # a "%" starting no escape is kept
        return value
    if value.isascii():  # the common case, without a call for each escape
        return unquote_to_bytes(value).decode("latin-1")
    return _ESCAPE.sub(lambda escape: chr(int(escape.group()[1:], 16)), value)


def _value_spans(value: str, offset: int, depth: int) -> list[_Span]:
    """What the rule replaces in a query parameter's ``value`` (at ``offset``) that is itself a URL, as the server
    reads it once decoded (``next=https%3A%2F%2Fh2%2Fcb%3Ftoken%3DT`` as httpx and requests send
    ``params={"next": "https://h2/cb?token=T"}``): its user info and credential parameters, each replaced in the
    value as it was sent, encoded or not, by ``%5Bredacted%5D``. A value encoded twice is decoded again, each
    decoding a level; past :data:`_NESTING_LIMIT` levels a value that would be read further is replaced whole."""
    decoded = _decode_once(value)
    is_url = _holds_url(decoded)
    if not (is_url or (decoded != value and "%" in decoded)):  # no URL, and not encoded again
        return []
    if depth > _NESTING_LIMIT:
        return [(offset, offset + len(value), REDACTED_ENCODED)]
    # Encoded again, the value is what the next server decodes: read once more, a level deeper.
    inner = _url_spans(decoded, depth) if is_url else _value_spans(decoded, 0, depth + 1)
    if not inner or decoded == value:
        return [(offset + start, offset + end, text) for start, end, text in inner]
    # A decoded character at index i was sent at i plus 2 for each escape before it.
    escapes = [escape.start() - 2 * count for count, escape in enumerate(_ESCAPE.finditer(value))]
    return [(offset + start + 2 * bisect_left(escapes, start), offset + end + 2 * bisect_left(escapes, end), text)
            for start, end, text in inner]


def _authority_span(url: str) -> tuple[list[_Span], int]:
    """The user info of ``url`` (after its scheme's ``://``, or a leading ``//``), to the last "@" before the host,
    and where the authority ends (0 when ``url`` has none: all of it before a query is a path, and a ``://`` later
    on is a nested URL's, read by :func:`_path_spans` or the query's rule)."""
    if url.startswith("//"):
        start = 2  # a network-path reference ("//user:pass@host/..."): its authority follows the "//"
    elif (scheme := _SCHEME.match(url)) is None:
        return [], 0
    else:
        start = scheme.end()
    end = len(url)
    for stop in "/?#":
        found = url.find(stop, start)
        if found != -1:
            end = min(end, found)
    at = url.rfind("@", start, end)
    return ([] if at == -1 else [(start, at, REDACTED_ENCODED)]), end


def _scheme_start(text: str, first: int, at: int) -> int:
    """Where the scheme in the run of scheme characters ``text[first:at]`` before a ``:`` at ``at`` starts: its
    first letter (as a regular expression's leftmost match reads it), or -1 when it holds none. The hex digits of a
    percent-escape the run opens with are the escape's (``%2Fhttps``: a ``/`` then ``https``, ``%2F1`` a ``/`` then a
    digit), never a scheme's first letter, and so are those of an escape encoded again (``%252F``)."""
    if first > 0 and text[first - 1] == "%" and (escape := _ESCAPE_AGAIN.match(text, first - 1)) is not None:
        first = escape.end()  # the escape ends within the run: the ":" (or "%3A") at ``at`` is no hex digit
    while first < at and text[first] not in _SCHEME_LETTERS:
        first += 1
    return first if first < at else -1


def _path_spans(url: str, start: int, end: int, depth: int) -> list[_Span]:
    """What the rule replaces in a URL written inside the path ``url[start:end]`` (an archive's or a proxy's
    ``/web/2020/https://u:p@h2/``, plain or percent-encoded once, ``/https%3A%2F%2Fu%3Ap%40h2%2F``): the path
    from that URL's scheme to the query is read as a query parameter's value that is a URL is, a level deeper.
    Only the first URL is looked for here; one inside it is read by that reading, so each character is read a
    bounded number of times."""
    position = start
    while (mark := _PATH_URL_MARK.search(url, position, end)) is not None:
        first = mark.start()
        while first > start and url[first - 1] in _SCHEME_CHARACTERS:
            first -= 1
        first = _scheme_start(url, first, mark.start())
        if first != -1:
            return _value_spans(url[first:end], first, depth + 1)
        position = mark.end()
    return []


def _url_spans(url: str, depth: int) -> list[_Span]:
    """What the rule replaces in ``url``: its user info, a URL written in its path, and its query's credential
    values (and, in a value that is a URL, that URL's)."""
    spans, path_start = _authority_span(url)
    before_fragment = url.partition("#")[0]
    question = before_fragment.find("?")
    path_end = len(before_fragment) if question == -1 else question
    if path_start < path_end:
        spans += _path_spans(url, path_start, path_end, depth)
    if question != -1:
        spans += _query_spans(before_fragment[question + 1 :], question + 1, depth)
    return spans


def _redact_query(query: str) -> str:
    return _apply(query, _query_spans(query, 0, 0))


def redact_url(url: str) -> str:
    """``url`` as recorded: credential parameters and user info redacted, every other byte as sent; a parameter's
    value that is itself a URL (plain or percent-encoded) has its own redacted likewise."""
    if not isinstance(url, str):
        raise TypeError(f"a URL is a str, not {type(url).__name__}")
    return _apply(url, _url_spans(url, 0))


def redact_query(query: str) -> str:
    """A query string alone (what the recording proxy is sent), redacted by the same rule."""
    return _redact_query(query[1:] if query.startswith("?") else query) if query else query


def redact_headers(headers: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> Any:
    """Headers as recorded: credential headers as ``[redacted]``, URL-valued ones by the URL rule.

    Takes a mapping or a list of (name, value) pairs and returns the same shape.
    """
    if isinstance(headers, Mapping):
        return {name: _header_value(name, value) for name, value in headers.items()}
    return [[name, _header_value(name, value)] for name, value in headers]


def _header_value(name: Any, value: Any) -> Any:
    # A name given as bytes is its Latin-1 text (as it went on the wire), not str()'s "b'Cookie'".
    key = ascii_lower(bytes(name).decode("latin-1") if isinstance(name, (bytes, bytearray)) else str(name))
    if key in _HEADER_KEYS:
        return REDACTED
    rule = _HEADER_RULES.get(key, _redact_url_named if _is_url_named(key) else _redact_urls_in)
    if isinstance(value, str):
        return rule(value)
    if isinstance(value, bytes):
        # Latin-1 maps each byte to one character and back, so the bytes the URL rule keeps stay as sent.
        return rule(value.decode("latin-1")).encode("latin-1")
    return value


def _redact_links(value: str) -> str:
    """A ``Link`` header's value with each ``<URL>`` and each parameter's value by the URL rule, every other
    byte as sent. A value that is no URL (``rel="next"``, a title) has no credential parameter nor user info
    for the rule to change; a quoted value is read to its closing quote, so a ``<`` or ``,`` inside it
    (``title="<b>"``) is no target and no separator."""

    def part(found: re.Match[str]) -> str:
        target, unclosed, quoted, closing, bare = found.groups()
        if target is not None:
            return f"<{redact_url(target)}>"
        if unclosed is not None:
            return f"<{redact_url(unclosed)}"
        if quoted is not None:
            return f'"{redact_url(quoted)}{closing}'
        return f"={redact_url(bare)}"

    return _LINK_PART.sub(part, value)


def _redact_refresh(value: str) -> str:
    """A ``Refresh`` header's value with its URL by the URL rule (up to its closing quote when it opens with
    one), the delay and every other byte as sent."""
    prefix = _REFRESH_PREFIX.match(value)
    start = prefix.end() if prefix is not None else 0
    quote = prefix.group(1) if prefix is not None else ""
    end = value.find(quote, start) if quote else -1
    end = len(value) if end == -1 else end
    return value[:start] + redact_url(value[start:end]) + value[end:]


def _embedded_spans(url: str, offset: int) -> list[_Span]:
    """The spans of a run of text from a URL's start in a header's value (at ``offset``), by :func:`_in_text_spans`;
    one written with JSON's escaped slashes (``https:\\/\\/u:p@h\\/x?token=T``, PHP's ``json_encode``) is read
    unescaped, each span mapped back to where it stands as sent (a character of the unescaped text stands one further
    on for each "/" before it, sent as two)."""
    if not (url.startswith("\\/\\/") or url.startswith(":\\/\\/", url.find(":"))):
        return [(start + offset, end + offset, text) for start, end, text in _in_text_spans(url)]
    plain = url.replace("\\/", "/")
    if plain.replace("/", "\\/") != url:  # slashes escaped and not: no single form to write back, read as sent
        return [(start + offset, end + offset, text) for start, end, text in _in_text_spans(url)]
    slashes = [at for at, character in enumerate(plain) if character == "/"]
    return [(offset + start + bisect_left(slashes, start), offset + end + bisect_left(slashes, end), text)
            for start, end, text in _in_text_spans(plain)]


def _url_starts_at(text: str, mark: re.Match[str], floor: int) -> int:
    """Where the URL whose ``//`` (or ``://``) ``mark`` is starts in ``text``, or -1 when it is none. A scheme
    is the run of scheme characters before ``:`` from its first letter (as a regular expression's leftmost match
    reads it), found by walking back no further than ``floor``, so each character is read a bounded number of
    times however long a run of letters is; a bare ``//`` starts a network-path reference only where a URL
    reference is expected (the text's start, a blank, ``=``, a quote, ``<``, ``(``, ``,`` or ``;``)."""
    at = mark.start()
    if text.startswith(":", at):
        first = at
        while first > floor and text[first - 1] in _SCHEME_CHARACTERS:
            first -= 1
        return _scheme_start(text, first, at)
    return at if at == 0 or text[at - 1].isspace() or text[at - 1] in _BEFORE_NETWORK_PATH else -1


def _find_url(value: str, position: int) -> tuple[int, int] | None:
    """The next URL's start in ``value[position:]`` and where its ``//`` ends, or ``None``."""
    while (mark := _URL_MARK.search(value, position)) is not None:
        start = _url_starts_at(value, mark, position)
        if start != -1:
            return start, mark.end()
        position = mark.end()
    return None


def _in_text_spans(text: str) -> list[_Span]:
    """What the URL rule replaces in ``text`` (from a URL's start to a blank, a quote or an angle bracket): each URL
    in it, where the header's grammar ends them: user info after each URL's ``//`` (a URL after a list member's
    name, ``a=https://h/x,b=https://u:p@h2/y``, or inside another's query, path or fragment, included) and the
    value of each credential parameter of a query redacted. A query's parameters are separated by ``&``, ``,``
    and ``;`` (and a ``?`` after the first), so a credential's value ends at the first of them or a ``#``, and
    ``report-uri https://r/x?token=T;default-src 'self'`` keeps its ``;default-src``; a value holding a URL
    (``?token=https://...``) is redacted whole. A URL percent-encoded in a URL's path is read by
    :func:`_text_path_spans`. A fragment's bytes are kept, but for a URL inside it. One pass from left to right:
    each character is read a bounded number of times."""
    redacted: list[_Span] = []
    query = fragment = asked = False  # asked: a "?" of the URL read last was read
    encoded = "%" in text  # only an escape can start a URL encoded in a path: with none, no path is read
    position = 0
    while (event := _EVENT.search(text, position)) is not None:
        mark, position = event.group(), event.end()
        if mark.endswith("/"):
            if _url_starts_at(text, event, 0) == -1:
                continue
            # Its user info: to the last "@" before the authority ends or the next URL's "//" begins.
            end = _AUTHORITY_END.search(text, position)
            limit = len(text) if end is None else end.start()
            following = _URL_MARK.search(text, position, limit)
            bound = limit if following is None else following.start()
            at = text.rfind("@", position, bound)
            if query and at != -1:
                at = _user_info_end_in_query(text, position, at)
            if at != -1:
                redacted.append((position, at, REDACTED_ENCODED))
            if encoded and end is not None and end.group() == "/" and following is None:
                redacted += _text_path_spans(text, position, end.start(), query)
            fragment = asked = False  # a URL in a fragment has a query of its own
            continue
        if mark == "#":
            query, fragment = False, True
            continue
        bare = mark == "&" or (mark == "?" and not asked)
        if mark == "?" and not fragment:
            query = asked = True
        elif not query:
            continue
        # A parameter starts here: a credential's value (to the next "&", ",", ";" or "#") is redacted, and a
        # credential with no value is given one after a URL's first "?" or a "&", as the vectors' rows say (after
        # a second "?", which a server reads as a value's, it holds nothing to hide and is kept as sent).
        name_end = _NAME_END.search(text, position)
        stop = len(text) if name_end is None else name_end.start()
        if not (position < stop and _is_credential_parameter(text[position:stop])):
            if name_end is not None and name_end.group() == "=":
                redacted += _encoded_value_spans(text, name_end.end())
            continue
        if name_end is not None and name_end.group() == "=":
            value_end = _VALUE_END.search(text, name_end.end())
            position = len(text) if value_end is None else value_end.start()
            redacted.append((name_end.end(), position, REDACTED_ENCODED))
        elif bare:
            redacted.append((stop, stop, "=" + REDACTED_ENCODED))
    return redacted


def _user_info_end_in_query(text: str, start: int, last: int) -> int:
    """Where the user info of a URL standing in a query ends, its authority starting at ``start`` and its last "@"
    at ``last`` (-1: it has none). The query's parameter ends at the header's next "&", "," or ";", and so does the
    URL in it, as the decoded reading of the parameter's value (:func:`_encoded_value_spans`) ends it: when an "@",
    raw or encoded (``%40``, ``%2540``), stands before that end, the user info ends at the last raw one there (or
    there is none for this reading), so ``?next=https://u:p@h%2F&x=a@b/`` keeps its ``@h%2F&x=a@b/`` - both readings
    give ``u:p``, and no byte is read by one as a password and by the other as the next parameter. With none, it
    runs to ``last``, as before: a password holding a raw "&", "," or ";" (``https://u:p&ss@h/``, written by hand;
    clients encode them) is redacted whole."""
    parameter = _PARAMETER_END.search(text, start, last)
    if parameter is not None and _AT_SIGN.search(text, start, parameter.start()) is not None:
        return text.rfind("@", start, parameter.start())
    return last


def _text_path_spans(text: str, authority: int, start: int, in_query: bool) -> list[_Span]:
    """The spans of a URL percent-encoded in the path at ``start`` of a header's URL whose authority starts at
    ``authority`` (``https://proxy/r/https%3A%2F%2Fu%3Ap%40h2%2Fx``), read by :func:`_path_spans` as :func:`redact_url`
    reads one. The path ends where the header's grammar ends it - at a "?", "#", "," or ";", at a "&" when the URL
    stands in a query, or at the next URL's start (its "//" an event of its own, which reads its own path) - so no
    span crosses another the text's reading gives, and no character is read by two paths: the pass stays linear."""
    # One search for the first of both, so the text after a path is never scanned for it (a path of 10,000
    # plain URLs, each the next one's path, is read once, not once for each). It starts a character early: the
    # "/" that ended the authority may be the next URL's own (``https://a:https://u:p@h2/``, ``\/\/``).
    ends = _PATH_ENDS_IN_QUERY if in_query else _PATH_ENDS
    end, position = len(text), max(start - 1, authority)
    while (stop := ends.search(text, position)) is not None:
        if not stop.group().endswith("/"):
            end = stop.start()
            break
        if (following := _url_starts_at(text, stop, authority)) != -1:
            end = following
            break
        position = stop.end()  # a path's bare "a//b" starts no URL
    return _path_spans(text, start, end, 0) if start < end and "%" in text[start:end] else []


def _encoded_value_spans(text: str, start: int) -> list[_Span]:
    """The spans of a percent-encoded URL in the value at ``start`` of a header's URL (``next=https%3A%2F%2Fh2%2F
    cb%3Ftoken%3DT``, to the header's next "&", ",", ";" or "#"), read as :func:`_value_spans` reads a request URL's.
    A value holding a raw "?" is read to it (``next=https%3A%2F%2Fu%3Ap%40h?x=1``: the user info before it is the
    URL's a server decodes), and what follows it is left to the plain reading (each "?" starts a parameter there),
    so no byte is read as two values' and the pass stays linear."""
    end = _ENCODED_VALUE_END.search(text, start)
    stop = len(text) if end is None else end.start()
    return _value_spans(text[start:stop], start, 1) if "%" in text[start:stop] else []


def _apply(text: str, redacted: list[_Span]) -> str:
    """``text`` with each span replaced; spans that overlap (user info holding a parameter) are redacted as one, and a
    span given twice (by two readings of one value) is applied once."""
    pieces: list[str] = []
    kept = 0
    previous = None
    for span in sorted(redacted):
        start, end, replacement = span
        if span == previous:
            continue
        previous = span
        if start < kept:  # it overlaps the one before: that one's replacement stands for both
            kept = max(kept, end)
            continue
        pieces += [text[kept:start], replacement]
        kept = end
    return "".join(pieces) + text[kept:]


def _encoded_in_spans(text: str, offset: int) -> list[_Span]:
    """The spans (at ``offset``) in ``text``, a header's value outside its absolute and network-path URLs, of each
    URL written percent-encoded in it - in a relative URL's path (``X-Original-URL: /r/https%3A%2F%2Fu%3Ap%40h2%2Fx``) or standing alone - read
    by :func:`_path_spans` as a URL in a path is, to the end of its word (a blank, a quote, an angle bracket, a "?",
    "#", "," or ";"), closing punctuation left to the text. Each word is read once: the pass stays linear."""
    if "%" not in text:  # every such URL has an escape in its "://"
        return []
    redacted: list[_Span] = []
    position = 0
    while (mark := _PATH_URL_MARK.search(text, position)) is not None:
        stop = _WORD_END.search(text, mark.end())
        end = len(text) if stop is None else stop.start()
        while end > mark.end() and text[end - 1] in _URL_TRAILER:
            end -= 1
        # From ``position``: the scheme before the mark is found by walking back, never past a word's end.
        redacted += [(start + offset, stop + offset, replacement)
                     for start, stop, replacement in _path_spans(text, position, end, 0)]
        position = max(end, mark.end())
    return redacted


def _redact_urls_in(value: str) -> str:
    """Any other header's value with each absolute or network-path URL in it by the URL rule, and each URL written
    percent-encoded outside them (:func:`_encoded_in_spans`), every other byte as sent: a value holding no ``//``
    and no ``%`` is returned as it is, untouched."""
    return _apply(value, _urls_in_spans(value))


def _urls_in_spans(value: str) -> list[_Span]:
    """What :func:`_redact_urls_in` replaces in ``value``: each URL's spans where the URL stands, and those of the
    text between."""
    if "//" not in value and "\\/\\/" not in value:
        return _encoded_in_spans(value, 0)
    redacted: list[_Span] = []
    position = 0
    while (found := _find_url(value, position)) is not None:
        start = found[0]
        stop = _URL_STOP.search(value, found[1])
        end = len(value) if stop is None else stop.start()
        url = value[start:end]
        redacted += _encoded_in_spans(value[position:start], position)
        # With no query, no user info and no escape (a URL encoded in its path) the URL rule would change nothing.
        if "?" in url or "@" in url or "%" in url:
            redacted += _embedded_spans(url[: len(url.rstrip(_URL_TRAILER))], start)
        position = end
    return redacted + _encoded_in_spans(value[position:], position)


def _is_url_named(key: str) -> bool:
    """Whether a header's lower-cased name says its value is a URL: it ends in ``-url`` or ``-uri``
    (``X-Original-URL``, ``X-Rewrite-URL``, ``X-Forwarded-Uri``, ``X-Callback-Url``) or is in
    :data:`URL_NAMED_HEADERS`."""
    return key.endswith(("-url", "-uri")) or key in URL_NAMED_HEADERS


def _redact_url_named(value: str) -> str:
    """A URL-named header's value (:func:`_is_url_named`): when it is one URL - no blank, quote, angle bracket or
    "," in it once the blanks around it are set aside - it is read both ways, as one URL by :func:`redact_url` (as a
    ``Location`` is: ``/cb?token=T`` is recorded ``/cb?token=%5Bredacted%5D``, a relative URL's query included) and
    as any other header's free text (:func:`_redact_urls_in`), each on the value as sent, so what either reading
    redacts is redacted and every other byte is kept as sent. Any other value - words, a quoted string, a list - is free text only, as any other header's: a
    credential's value in a list ends at its ",", where :func:`redact_url` would run it on to the next "&". Each
    reading is one pass: the two stay linear."""
    token = value.strip(_BLANKS)
    if not token or _NOT_ONE_URL.search(token) is not None:
        return _redact_urls_in(value)
    lead = len(value) - len(value.lstrip(_BLANKS))
    # Both readings' spans on the value as sent: where they overlap one replacement stands for both, and a
    # credential's name with no value that both give one is given it once (each list is in order: one merge).
    spans = [(start + lead, end + lead, text) for start, end, text in _url_spans(token, 0)]
    return _apply(value, spans + _urls_in_spans(value))


_HEADER_RULES: Final[dict[str, Callable[[str], str]]] = {
    **{name: redact_url for name in URL_HEADERS}, LINK_HEADER: _redact_links, REFRESH_HEADER: _redact_refresh}
