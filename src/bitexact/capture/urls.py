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
``[redacted]`` too.

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
in the value (``scheme://``, JSON's escaped ``:\\/\\/`` too) is recorded by the URL rule, closing punctuation
left to the text: a CSP's ``report-uri``, ``Report-To``, ``SourceMap``, ``Origin``, an agent's own header. All
are this project's choice where the protocol is silent (docs/capture.md, "URLs, headers, logs").
"""

from __future__ import annotations

import re
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
# An absolute URL in any other header's value (a CSP's report-uri and sources, Report-To's JSON, SourceMap,
# Origin, a URL an agent sends in a header of its own): a scheme and "://" (or JSON's escaped ":\/\/"), to a
# blank, a quote, an angle bracket, or a "," or ";" right before the next URL (a list written without blanks).
# Punctuation closing it is the text's, not the URL's (as a linkifier reads it): "...?token=T;" in a CSP keeps
# its ";", so the URL rule changes no byte but a credential's.
_URL_IN_VALUE: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:(?://|\\/\\/)"
                                  r"(?:[^\s\"<>,;]|[,;](?![A-Za-z][A-Za-z0-9+.-]*:(?://|\\/\\/)))*")
_URL_TRAILER: Final[str] = ".,;:!?')]}\\"


def _is_credential_parameter(name: str) -> bool:
    decoded = percent_decode(name.replace("+", " "))
    return ascii_lower(name if decoded is None else decoded) in _KEYS


def _redact_query(query: str) -> str:
    parts = []
    for parameter in query.split("&"):
        name, _, _ = parameter.partition("=")
        if name and _is_credential_parameter(name):
            parts.append(f"{name}={REDACTED_ENCODED}")
        else:
            parts.append(parameter)
    return "&".join(parts)


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
    url = _redact_authority(url)
    before_fragment, hash_mark, fragment = url.partition("#")
    base, question, query = before_fragment.partition("?")
    if not question:
        return url
    return base + "?" + _redact_query(query) + hash_mark + fragment


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
    """One URL found in a header's value, by the URL rule; one written with JSON's escaped slashes
    (``https:\\/\\/u:p@h\\/x?token=T``, PHP's ``json_encode``) is read unescaped and written back so."""
    if not url.startswith(":\\/\\/", url.find(":")):
        return redact_url(url)
    plain = url.replace("\\/", "/")
    if plain.replace("/", "\\/") != url:  # slashes escaped and not: no single form to write back, read as sent
        return redact_url(url)
    recorded = redact_url(plain)
    return url if recorded == plain else recorded.replace("/", "\\/")


def _redact_urls_in(value: str) -> str:
    """Any other header's value with each absolute URL in it by the URL rule, every other byte as sent: a
    value holding no ``://`` is returned as it is, untouched."""
    if "://" not in value and ":\\/\\/" not in value:
        return value

    def one(found: re.Match[str]) -> str:
        url = found.group(0)
        if "?" not in url and "@" not in url:  # no query and no user info: nothing the URL rule would change
            return url
        kept = len(url.rstrip(_URL_TRAILER))
        return _redact_embedded(url[:kept]) + url[kept:]

    return _URL_IN_VALUE.sub(one, value)


_HEADER_RULES: Final[dict[str, Callable[[str], str]]] = {
    **{name: redact_url for name in URL_HEADERS}, LINK_HEADER: _redact_links, REFRESH_HEADER: _redact_refresh}
