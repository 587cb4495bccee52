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
a credential's value still runs to the next ``&``.

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
value at the first ``&``, ``,`` or ``;``; a URL after a list member's name or inside another read on its own),
closing punctuation left to the text: a CSP's ``report-uri``, ``Report-To``, ``SourceMap``, ``Origin``, an
agent's own header. All are this project's choice where the protocol is silent (docs/capture.md, "URLs,
headers, logs").
"""

from __future__ import annotations

import re
import string
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

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
# blank, "=", a quote, "<", "(", "," or ";" - so a path's "a//b" is none. A URL runs to a blank, a quote or an
# angle bracket, and ends before the next URL in its run of text (_url_end).
_URL_MARK: Final = re.compile(r":?(?://|\\/\\/)")
_SCHEME_LETTERS: Final[frozenset[str]] = frozenset(string.ascii_letters)
_SCHEME_CHARACTERS: Final[frozenset[str]] = _SCHEME_LETTERS | frozenset(string.digits + "+.-")
_BEFORE_NETWORK_PATH: Final[str] = "=\"'<(,;"  # or a blank, or the value's start
_URL_STOP: Final = re.compile(r"[\s\"<>]")
# What separates a URL's query parameters in a header's value: "&", and the header's own "," and ";".
_QUERY_IN_HEADER_SEPARATOR: Final = re.compile(r"([&,;])")
_URL_TRAILER: Final[str] = ".,;:!?')]}\\"


def _is_credential_parameter(name: str) -> bool:
    decoded = percent_decode(name.replace("+", " "))
    return ascii_lower(name if decoded is None else decoded) in _KEYS


def _redacted_parameter(parameter: str, bare: bool) -> str | None:
    """``parameter`` recorded with its value redacted when its name is a credential's, else ``None``; one
    with no value is given one only when ``bare`` (an ``&`` parameter, as the vectors' rows say)."""
    name, equals, _ = parameter.partition("=")
    if name and (equals or bare) and _is_credential_parameter(name):
        return f"{name}={REDACTED_ENCODED}"
    return None


def _redact_query(query: str) -> str:
    # "&" separates parameters (the vectors), and so does ";" for a server that reads it so (the W3C's old
    # advice, Python's parse_qs before 3.9.2): a credential after one ("?a=1;token=T") is redacted too. A
    # credential parameter's value runs to the next "&", ";" and "," included, so no reading leaves a byte of
    # it; a ";" piece with no "=" carries no value and is kept as sent.
    parts = []
    for parameter in query.split("&"):
        redacted = _redacted_parameter(parameter, bare=True)
        if redacted is None and ";" in parameter:
            redacted = ";".join(_redacted_parameter(piece, bare=False) or piece for piece in parameter.split(";"))
        parts.append(parameter if redacted is None else redacted)
    return "&".join(parts)


def _redact_query_in_header(query: str) -> str:
    # A URL inside another header's value ends where the header's grammar ends it: a "," between list
    # members, a ";" between directives or parameters. So a credential's value ends at the first "&", "," or
    # ";" (a client percent-encodes those in a value it sends: httpx and requests give "%2C" and "%3B"), the
    # bytes after it are the header's, and each piece after one is still read as a parameter.
    pieces = _QUERY_IN_HEADER_SEPARATOR.split(query)
    for index in range(0, len(pieces), 2):
        redacted = _redacted_parameter(pieces[index], bare=index == 0 or pieces[index - 1] == "&")
        pieces[index] = pieces[index] if redacted is None else redacted
    return "".join(pieces)


def _redact_authority(url: str) -> str:
    scheme_end = url.find("://")
    if url.startswith("//"):
        start = 2  # a network-path reference ("//user:pass@host/..."): its authority follows the "//"
    elif scheme_end == -1:
        return url
    else:
        start = scheme_end + 3
    end = len(url)
    for stop in "/?#":
        found = url.find(stop, start)
        if found != -1:
            end = min(end, found)
    authority = url[start:end]
    at = authority.rfind("@")
    if at == -1:
        return url
    return url[:start] + REDACTED_ENCODED + authority[at:] + url[end:]


def redact_url(url: str) -> str:
    """``url`` as recorded: credential parameters and user info redacted, every other byte as sent."""
    if not isinstance(url, str):
        raise TypeError(f"a URL is a str, not {type(url).__name__}")
    return _redact_url(url, _redact_query)


def _redact_url(url: str, query_rule: Callable[[str], str]) -> str:
    url = _redact_authority(url)
    before_fragment, hash_mark, fragment = url.partition("#")
    base, question, query = before_fragment.partition("?")
    if not question:
        return url
    return base + "?" + query_rule(query) + hash_mark + fragment


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
    rule = _HEADER_RULES.get(key, _redact_urls_in)
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


def _redact_embedded(url: str) -> str:
    """One URL found in a header's value, by the URL rule with the header's query separators; one written with
    JSON's escaped slashes (``https:\\/\\/u:p@h\\/x?token=T``, PHP's ``json_encode``) is read unescaped and
    written back so."""
    if not (url.startswith("\\/\\/") or url.startswith(":\\/\\/", url.find(":"))):
        return _redact_url(url, _redact_query_in_header)
    plain = url.replace("\\/", "/")
    if plain.replace("/", "\\/") != url:  # slashes escaped and not: no single form to write back, read as sent
        return _redact_url(url, _redact_query_in_header)
    recorded = _redact_url(plain, _redact_query_in_header)
    return url if recorded == plain else recorded.replace("/", "\\/")


def _find_url(value: str, position: int, end: int) -> tuple[int, int] | None:
    """The next URL's start in ``value[position:end]`` and where its ``//`` ends, or ``None``. A scheme is the
    longest run of scheme characters before ``:`` from its first letter (as a regular expression's leftmost
    match reads it), found by walking back from the ``://``, so each character is read a bounded number of
    times however long a run of letters is."""
    while (mark := _URL_MARK.search(value, position, end)) is not None:
        at = mark.start()
        if value.startswith(":", at):
            first = at
            while first > position and value[first - 1] in _SCHEME_CHARACTERS:
                first -= 1
            while first < at and value[first] not in _SCHEME_LETTERS:
                first += 1
            if first < at:
                return first, mark.end()
        elif at == 0 or value[at - 1].isspace() or value[at - 1] in _BEFORE_NETWORK_PATH:
            return at, mark.end()
        position = mark.end()
    return None


def _url_end(value: str, after: int, end: int) -> int:
    """Where the URL whose ``//`` ends at ``after`` ends: at ``end`` (a blank, a quote or an angle bracket), or
    before the next URL in the same run of text - at the last "," or ";" before it
    (``a=https://h/x?token=T,b=https://h/y``: a list member's name is the header's) or, with none, where it
    starts (``?next=https://h2/...``, a URL in a path or fragment), so each URL is read by the rule on its own.
    A URL that is a credential parameter's value (``?token=https://...``) stays in that parameter, whose value
    is redacted whole. Each character is read a bounded number of times."""
    scanned, separator, boundary = after, -1, -1
    while (following := _find_url(value, scanned, end)) is not None:
        here = following[0]
        separator = max(separator, value.rfind(",", scanned, here), value.rfind(";", scanned, here))
        boundary = max(boundary, separator, *(value.rfind(mark, scanned, here) for mark in "?&#"))
        member = value[max(boundary + 1, after):here]
        if not (member.endswith("=") and _is_credential_parameter(member[:-1])):
            return separator if separator != -1 else here
        scanned = following[1]
    return end


def _redact_urls_in(value: str) -> str:
    """Any other header's value with each absolute or network-path URL in it by the URL rule, every other byte
    as sent: a value holding no ``//`` is returned as it is, untouched."""
    if "//" not in value and "\\/\\/" not in value:
        return value
    recorded = []
    position = stop = 0
    while (found := _find_url(value, position, len(value))) is not None:
        start, after = found
        if stop < after:  # the run of text the URL is in ends at the next blank, quote or angle bracket
            blank = _URL_STOP.search(value, after)
            stop = len(value) if blank is None else blank.start()
        end = _url_end(value, after, stop)
        url = value[start:end]
        if "?" in url or "@" in url:  # with no query and no user info the URL rule would change nothing
            kept = len(url.rstrip(_URL_TRAILER))
            url = _redact_embedded(url[:kept]) + url[kept:]
        recorded.append(value[position:start] + url)
        position = end
    return "".join(recorded) + value[position:]


_HEADER_RULES: Final[dict[str, Callable[[str], str]]] = {
    **{name: redact_url for name in URL_HEADERS}, LINK_HEADER: _redact_links, REFRESH_HEADER: _redact_refresh}
