"""One HTTP exchange as an observed ``http_call`` entry, whichever client carried it.

The entry's data::

    request   method, url (by the credential rule), path, query, headers, text | b64
    response  status, streamed, media_type, complete, headers, text | b64   (null when none came)
    error     type, message (when the request or the stream failed)
    retried   the attempts a retry policy made before the one recorded (urllib3's Retry under requests),
              each its method, url (by the credential rule) and status or error; every attempt, the last
              included, when the retries ran out and no response is recorded; only when there were any
    note      why no response is recorded when the run ended before it came (the request was sent)
    model     the model an OpenAI-compatible request or stream names, else null

Bodies are text when they decode (by the content type's charset, else
UTF-8; JSON and an event stream first as their specifications read them,
whatever charset the header names), and ``b64`` for bytes. A compressed body is recorded decompressed
(gzip, deflate; brotli when its module is installed), at most to
``BITEXACT_MAX_BODY_BYTES``; any other encoding (zstd included), and a body
that would decompress past that bound, is recorded as ``b64`` with
``content_encoding`` saying why (and ``body_note`` for the bound). Credential headers are ``[redacted]``. The entry is written once, when the exchange is over (or
the run is: an exchange still open then, its request sent and its response not come yet included, is
recorded as it stands). A reply HTTP gives no body (1xx, 204, 304, a reply to HEAD, ``content-length: 0``)
is complete however it was closed: there was nothing to read.
"""

from __future__ import annotations

import base64
import json
import re
import threading
import weakref
import zlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from bitexact.capture.policy import max_body_bytes
from bitexact.capture.rules import STRICTNESS, StepRules
from bitexact.capture.streamed import streamed_hint
from bitexact.capture.urls import REDACTED, redact_headers
from bitexact.sdk.active import current_tool
from bitexact.sdk.http.credentials import record_headers, record_url
from bitexact.sdk.http.sse import is_event_stream, json_document, model_of_events, parse_events
from bitexact.sdk.jsonable import type_name
from bitexact.sdk.http.streamed import BodyDigest

if TYPE_CHECKING:
    from bitexact.capture.policy import CapturePolicy
    from bitexact.sdk.run import Run

_recorded: weakref.WeakSet[Any] = weakref.WeakSet()
_recorded_lock = threading.Lock()
MAX_MODEL_SNIFF: Final[int] = 1 << 20
NO_RESPONSE_NOTE: Final[str] = "the run ended before the response came (the request was sent)"
DECODED_TOO_LARGE: Final[str] = ("decompresses to more than BITEXACT_MAX_BODY_BYTES ({limit} bytes): recorded as "
                                 "sent, compressed")
"""The ``body_note`` of a compressed body too large to record decompressed (:func:`body_fields`)."""


def claim_request(request: Any) -> bool:
    """Mark ``request`` as recorded by the layer calling this; False when another layer already records
    it (a wrapped client under ``instrument()``: the same request object passes both).

    The mark is on the request, not on the code running meanwhile: another request sent during this
    one's exchange (a token fetched by a custom transport, a body generator's own calls) is its own
    exchange and is recorded too.
    """
    with _recorded_lock:
        if request in _recorded:
            return False
        _recorded.add(request)
        return True


def release_request(request: Any) -> None:
    """The send of a claimed request is over: the same object sent again is another exchange."""
    with _recorded_lock:
        _recorded.discard(request)


class HeldFromOthers:
    """For the block: no other layer records ``request``. A client wrapped for a run that has ended records
    into no run, and an instrumented transport under it must not record the exchange into another."""

    __slots__ = ("_claimed", "_request")

    def __init__(self, request: Any) -> None:
        self._request = request
        self._claimed = False

    def __enter__(self) -> None:
        self._claimed = claim_request(self._request)

    def __exit__(self, *exc: object) -> None:
        if self._claimed:
            release_request(self._request)


def _charset(media_type: str) -> str:
    for part in media_type.split(";")[1:]:
        name, _, value = part.strip().partition("=")
        if name.strip().lower() == "charset" and value.strip():
            return value.strip().strip('"')
    return "utf-8"


class DecodedTooLarge(Exception):
    """A compressed body decompresses to more than the bound: it is recorded as sent, compressed, instead."""


def _inflate(body: bytes, wbits: int, limit: int | None = None) -> bytes:
    """A zlib or gzip body whole: every gzip member (RFC 1952: the body is all of them, joined), and what
    a body cut short holds so far (a stream that ended early; ``zlib.decompress`` refuses both).

    Never more than ``limit`` bytes of output are made: past it :class:`DecodedTooLarge` is raised, so a
    small body that inflates a thousandfold (a gzip bomb the agent only streams to disk) costs the bound,
    never the agent's memory.
    """
    out: list[bytes] = []
    size = 0
    while body:
        inflater = zlib.decompressobj(wbits)
        # One byte past the room left: output shorter than that means every input byte was consumed.
        piece = inflater.decompress(body, 0 if limit is None else limit - size + 1)
        size += len(piece)
        if limit is not None and size > limit:
            raise DecodedTooLarge
        out.append(piece)
        if not inflater.eof:  # cut short: what it held up to there
            out.append(inflater.flush())
            break
        body = inflater.unused_data
        if not body.strip(b"\x00"):
            break  # zero padding after the last member
    return b"".join(out)


def _decompress(body: bytes, encoding: str, limit: int | None = None) -> bytes | None:
    encodings = [e.strip().lower() for e in encoding.split(",") if e.strip() and e.strip().lower() != "identity"]
    for name in reversed(encodings):
        if name in ("gzip", "x-gzip"):
            body = _inflate(body, 16 + zlib.MAX_WBITS, limit)
        elif name == "deflate":
            try:
                body = _inflate(body, zlib.MAX_WBITS, limit)
            except zlib.error:
                body = _inflate(body, -zlib.MAX_WBITS, limit)
        elif name == "br":
            try:
                import brotli  # type: ignore[import-not-found]
            except ImportError:
                return None
            body = brotli.decompress(body)
            if limit is not None and len(body) > limit:
                raise DecodedTooLarge
        else:
            return None
    return body


def body_fields(body: bytes, media_type: str, content_encoding: str = "", *,
                limit: int | None = None) -> dict[str, Any]:
    """``{"text": ...}`` for a body that decodes, else ``{"b64": ...}`` (see the module doc).

    A text body cut inside its last character (a stream that ended early) is its text up to there, the
    bytes of the unfinished character beside it as ``tail_b64``: text the policy reads, nothing dropped.
    A compressed body that decompresses to more than ``limit`` bytes is ``b64`` as sent, with
    ``content_encoding`` and a ``body_note`` saying why (:data:`DECODED_TOO_LARGE`).
    """
    if content_encoding and body:
        try:
            decoded = _decompress(body, content_encoding, limit)
        except DecodedTooLarge:
            return {"b64": base64.b64encode(body).decode("ascii"), "content_encoding": content_encoding,
                    "body_note": DECODED_TOO_LARGE.format(limit=limit)}
        except (zlib.error, OSError, ValueError):
            decoded = None
        if decoded is None:
            return {"b64": base64.b64encode(body).decode("ascii"), "content_encoding": content_encoding}
        body = decoded
    for charset in _charsets(media_type, body):
        read = _decoded(body, charset)
        if read is not None:
            return read
    return {"b64": base64.b64encode(body).decode("ascii")}


def _charsets(media_type: str, body: bytes) -> list[str]:
    """The charsets to read a body by, in turn: for JSON and an event stream first the one their own
    specifications fix whatever the header says (RFC 8259: UTF-8, or UTF-16/32 as JSON readers tell them
    apart; WHATWG: an event stream is always UTF-8), then the content type's (else UTF-8). A JSON body whose
    header names a charset it is not in (``charset=utf-16`` on UTF-8 bytes) is read as its readers read it,
    httpx's ``json()`` included, so the policy reads the text the agent got, never a mojibake of it."""
    declared = _charset(media_type)
    kind = media_type.split(";", 1)[0].strip().lower()
    if is_event_stream(kind):
        return ["utf-8", declared]
    if kind == "application/json" or kind.endswith("+json"):
        return [json.detect_encoding(body), declared]
    return [declared]


def _decoded(body: bytes, charset: str) -> dict[str, Any] | None:
    """``{"text": ...}`` (and ``tail_b64``) for a body that reads in ``charset``, else None."""
    try:
        return {"text": body.decode(charset)}
    except LookupError:
        return None
    except UnicodeDecodeError as exc:
        cut = exc.start if exc.reason == "unexpected end of data" and exc.end == len(body) else None
    except UnicodeError:  # a codec that refuses otherwise (charset=undefined, punycode): bytes, as sent
        return None
    if cut is not None:
        try:
            return {"text": body[:cut].decode(charset), "tail_b64": base64.b64encode(body[cut:]).decode("ascii")}
        except UnicodeError:
            pass  # broken before its end too: bytes
    return None


def _model(request_text: str | None, media_type: str, response_text: str | None) -> str | None:
    for text in (request_text, response_text if not is_event_stream(media_type) else None):
        if text and text.lstrip().startswith("{") and len(text) <= MAX_MODEL_SNIFF:
            doc = json_document(text)
            if isinstance(doc, dict) and isinstance(doc.get("model"), str):
                return doc["model"]
    if response_text and is_event_stream(media_type):
        return model_of_events(parse_events(response_text))
    return None


def _error(exc: BaseException, url: str, headers: Iterable[tuple[str, str | bytes]] = ()) -> dict[str, str]:
    """An exchange's error; the URL a client's message quotes (whole, or its path and query, as urllib3's
    "Max retries exceeded with url: /v1/chat?token=...") is quoted by the URL rule, as the request is, and a
    credential header's value it quotes (h11's and http.client's "Illegal header value b'Bearer ...\\n'")
    is ``[redacted]``, as the header is."""
    message = str(exc)
    for raw in sorted(_quoted_forms(url), key=len, reverse=True):  # the longest first: it holds the others
        if raw and raw in message:
            message = message.replace(raw, record_url(raw))
    for quoted, shown in _quoted_credentials(headers):
        message = message.replace(quoted, shown)
    return {"type": type_name(type(exc)), "message": _quoted_header_lines(message)}


# A bytes literal as repr() writes it, and a header line ("name: value", a space before the colon too).
_BYTES_LITERAL: Final = re.compile(r"b'(?:[^'\\]|\\.)*'" r'|b"(?:[^"\\]|\\.)*"')
_HEADER_LINE: Final = re.compile(r"([!#$%&*+.^_`|~0-9A-Za-z-]+)([ \t]*:[ \t]*)", re.ASCII)


def _quoted_header_lines(message: str) -> str:
    """A header line a client's message quotes as bytes (h11's "illegal header line: bytearray(b'Set-Cookie :
    ...')", a reply it refused) with its value as the header rule records it: a credential's ``[redacted]``."""

    def redacted(literal: re.Match[str]) -> str:
        text = literal.group(0)
        line = _HEADER_LINE.match(text, 2)
        if line is None:
            return text
        value = text[line.end():-1]
        shown = redact_headers([(line.group(1), value)])[0][1]
        return text if shown == value else f"{text[:line.end()]}{shown}{text[-1]}"

    return _BYTES_LITERAL.sub(redacted, message)


def _quoted_credentials(headers: Iterable[tuple[str, str | bytes]]) -> list[tuple[str, str]]:
    """Each credential header's value as a client's message quotes it (its repr, as text or as the bytes it
    was encoded to), with what replaces it; the longest first."""
    pairs = list(headers)
    forms: dict[str, str] = {}
    for (_, value), (_, recorded) in zip(pairs, redact_headers(pairs), strict=True):
        if recorded != REDACTED or not value:
            continue
        if isinstance(value, (bytes, bytearray)):
            forms[repr(bytes(value))] = repr(REDACTED.encode("ascii"))
            continue
        forms[repr(str(value))] = repr(REDACTED)
        for encoding in ("latin-1", "utf-8"):
            try:
                forms[repr(str(value).encode(encoding))] = repr(REDACTED.encode("ascii"))
            except UnicodeEncodeError:
                pass
    return sorted(forms.items(), key=lambda item: len(item[0]), reverse=True)


def _quoted_forms(url: str) -> set[str]:
    """How a client's message may quote ``url``: whole or from its path, each with and without its
    fragment (urllib3 drops it) and its user info (a proxied request's message leaves it out)."""
    forms: set[str] = set()
    for whole in {url, url.split("#", 1)[0]}:
        scheme_end = whole.find("://")
        if scheme_end == -1:
            forms.add(whole)
            continue
        slash = whole.find("/", scheme_end + 3)
        authority = whole[scheme_end + 3:slash if slash != -1 else len(whole)]
        if "@" in authority:
            forms.add(whole[:scheme_end + 3] + authority.rsplit("@", 1)[1] + (whole[slash:] if slash != -1 else ""))
        forms.add(whole)
        if slash != -1:
            forms.add(whole[slash:])
    return forms


@dataclass(frozen=True)
class Attempt:
    """An attempt a client's retry policy made, and gave up on, before the response it returned: the server
    may have received it (a 503 retried) or not (a connection refused)."""

    method: str | None
    url: str | None
    status: int | None
    error: BaseException | None


class Exchange:
    """Collects one exchange as it happens and records it once, when it ends."""

    def __init__(self, run: Run, method: str, url: str, headers: Iterable[tuple[str, str | bytes]]) -> None:
        self.run = run
        self.ctx = current_tool(run)
        self.method = method
        self.url = url
        self.request_headers = list(headers)
        self.request_body: bytes | None = b""
        self.request_note: str | None = None
        self._request_chunks: list[bytes] = []
        self._chunks: list[bytes] = []
        self._held = 0  # bytes of the response body in _chunks
        self._digest: BodyDigest | None = None  # the body hashed as it passes, once it may be let go of
        self._let_go = False  # the body is past the size bound: no byte of it is held, only its digest
        self._weighed = False  # whether it was decided if the body may be let go of
        self._hold_from: int | None = None  # see _hold_at_least
        self._streamed: tuple[str, bytes | None, int] | None = None  # path, SHA-256, length of what was let go
        self._head: tuple[int, list[tuple[str, str]], bool] | None = None
        self.decoded = False  # the body chunks are as the client decoded them (no content-encoding left)
        self.retried: list[Attempt] = []  # earlier attempts a retry policy made before the response recorded
        self._done = False
        self._lock = threading.Lock()

    def sending(self) -> None:
        """The request goes out. From now on the run's end records the exchange as it stands if it is not over
        by then (:meth:`run_ending`): its response may come after the run's exit began, or never."""
        self.run._call_opened(self)

    def responded(self, status: int, headers: Iterable[tuple[str, str]], streamed: bool) -> None:
        """The response's head came; its body is the agent's to read. If the run ends before the agent has
        read it to its end or closed it, the run's end records it as it stands (:meth:`run_ending`)."""
        self._head = (status, list(headers), streamed)

    def run_ending(self) -> None:
        """The run ends with the exchange still open: recorded now, incomplete, with what was read so far; with
        no response (and a note saying so) when its head has not come yet."""
        head = self._head
        if head is None:
            self.finish(status=None, complete=False, note=NO_RESPONSE_NOTE)
            return
        status, headers, streamed = head
        self.finish(status=status, headers=headers, streamed=streamed, complete=False, decoded=self.decoded)

    # -- bodies as they pass ----------------------------------------------

    def sent(self, chunk: bytes) -> None:
        """A chunk of a streamed request body, as it went out (none once the exchange is recorded)."""
        if self._done:
            return
        try:
            data = bytes(memoryview(chunk))
        except TypeError:  # not bytes (a str, an int): the client refuses it with its own error, as unwrapped
            return
        self._request_chunks.append(data)
        self.request_body = None

    def resent(self) -> None:
        """A streamed request body starts going out again (a retry): the record is the last sending."""
        self._request_chunks = []

    def received(self, chunk: bytes) -> None:
        """A chunk of the response body, as it reached the agent. Once the exchange is recorded (the run's end
        may record it first) what the agent reads on is its own: nothing is kept of it."""
        if self._done:
            return
        chunk = bytes(chunk)
        if self._digest is not None:
            self._digest.feed(chunk)
        if self._let_go:
            return
        self._chunks.append(chunk)
        self._held += len(chunk)
        if not self._weighed and self._held > self._hold_at_least():
            self._weighed = True
            self._digest = self._start_digest()
        if self._digest is not None and self._digest.past(self._limit()):
            # Certain to be withheld as too large whatever comes: only its digest is kept from now on.
            self._chunks = []
            self._let_go = True

    def _hold_at_least(self) -> int:
        """Below this many bytes a body is always held: the size bound, and what the model is read from.
        Read once an exchange (never per chunk: with the policy off the bound is read from the environment)."""
        if self._hold_from is None:
            self._hold_from = max(self._limit(), 4 * MAX_MODEL_SNIFF)  # 1 Mi characters are 4 MiB at most
        return self._hold_from

    def _start_digest(self) -> BodyDigest | None:
        """A digest of the body held so far, to hold none of it once it is past the bound; None when the record
        needs the body whole: no policy bounds it (off, or a rule that keeps or commits it, or one whose
        ``where`` reads the step), it is compressed or an event stream (read for its model), or its charset
        is one the digest does not read."""
        head = self._head
        policy = self._policy()
        if head is None or policy is None or policy.off:
            return None
        if any(rule.where and rule.kind in ("*", "http_call") for rule in policy.rules):
            return None
        rules = StepRules.select(policy.rules, "http_call", {})
        if any(rules.strictness_at(("response", name)) != STRICTNESS["scrub"] for name in ("text", "b64")):
            return None
        headers = record_headers(list(head[1]))
        media = headers.get("content-type", "")
        encoding = headers.get("content-encoding", "")
        if any(part.strip().lower() not in ("", "identity") for part in encoding.split(",")):
            return None
        if is_event_stream(media.split(";", 1)[0].strip().lower()):
            return None
        # JSON's charset is told from its first four bytes (json.detect_encoding), as body_fields tells it.
        digest = BodyDigest.start("response", _charsets(media, b"".join(self._chunks[:4])[:4]))
        if digest is not None:
            for held in self._chunks:
                digest.feed(held)
        return digest

    # -- the end ----------------------------------------------------------

    def _request_data(self) -> dict[str, Any]:
        recorded = record_url(self.url)
        head = recorded.split("#", 1)[0]
        path_part, _, query = head.partition("?")
        scheme_end = path_part.find("://")
        path = path_part[path_part.find("/", scheme_end + 3):] if scheme_end != -1 else path_part
        if scheme_end != -1 and path_part.find("/", scheme_end + 3) == -1:
            path = "/"
        request: dict[str, Any] = {"method": self.method, "url": recorded, "path": path, "query": query,
                                   "headers": record_headers(self.request_headers)}
        body = self.request_body if self.request_body is not None else b"".join(self._request_chunks)
        sent = record_headers(self.request_headers)
        # A compressed request body is recorded decompressed, as a response's is.
        request.update(body_fields(body, sent.get("content-type", ""), sent.get("content-encoding", ""),
                                   limit=self._limit()))
        if self.request_note:
            request["body_note"] = self.request_note
        return request

    def finish(
        self,
        *,
        status: int | None,
        headers: Iterable[tuple[str, str]] = (),
        streamed: bool = False,
        complete: bool = True,
        error: BaseException | None = None,
        decoded: bool = False,
        note: str | None = None,
    ) -> None:
        """Record the exchange (once; later calls do nothing), then let its bodies go: a response the agent
        keeps holds the recording's stream, which must not hold a second copy of its body."""
        with self._lock:
            if self._done:
                return
            self._done = True
        self.run._call_ended(self)
        headers = list(headers)
        # A reply with no body to read is whole however it was closed (unread, or by the run's end).
        complete = complete or (status is not None and error is None and self._bodiless(status, headers))
        try:
            self.run._record_built(
                "http_call", lambda: self._data(status, headers, streamed, complete, error, decoded, note),
                prov="observed", ctx=self.ctx, hints_for=self._hints)
        finally:
            self._release()

    def _policy(self) -> CapturePolicy | None:
        return getattr(getattr(self.run, "recorder", None), "policy", None)

    def _limit(self) -> int:
        """The most a compressed body is decompressed to: the policy's size bound, under which a field larger
        is withheld anyway (``BITEXACT_MAX_BODY_BYTES``; with the policy off, which bounds nothing, that
        variable all the same, since the bytes are made in the agent's process)."""
        policy = self._policy()
        return policy.max_body_bytes if policy is not None and not policy.off else max_body_bytes()

    def _hints(self, data: dict[str, Any]) -> dict[str, str] | None:
        """A body recorded compressed for its decompressed size is kept hash-only under a policy: the policy
        would withhold it decompressed, and its compressed bytes are no less the body."""
        policy = self._policy()
        if policy is None or policy.off:
            return None
        note = DECODED_TOO_LARGE.format(limit=self._limit())
        hints: dict[str, Any] = {f"{side}.b64": "hash-only" for side in ("request", "response")
                                 if isinstance(data.get(side), dict) and data[side].get("body_note") == note}
        if self._streamed is not None:
            path, sha, size = self._streamed
            hints[path] = streamed_hint(sha, size)
        return hints or None

    def abandon(self) -> None:
        """The exchange cannot be recorded (its gap is declared already): nothing of it is recorded, by the run's
        end either, and nothing of its bodies is kept."""
        with self._lock:
            self._done = True
        self.run._call_ended(self)
        self._release()

    def _release(self) -> None:
        self._chunks = []
        self._digest = None
        self._request_chunks = []
        self.request_body = b""

    def _may_have_body(self, status: int) -> bool:
        """False for a reply HTTP gives no body (RFC 9110 6.4.1: 1xx, 204, 304, and any reply to HEAD)."""
        return not (100 <= status < 200 or status in (204, 304) or self.method.upper() == "HEAD")

    def _bodiless(self, status: int, headers: list[tuple[str, str]]) -> bool:
        """The reply has no body: HTTP gives it none, or its ``content-length`` is 0."""
        if not self._may_have_body(status):
            return True
        lengths = [str(value).strip() for name, value in headers if str(name).lower() == "content-length"]
        return bool(lengths) and all(length == "0" for length in lengths)

    def _data(self, status: int | None, headers: Iterable[tuple[str, str]], streamed: bool, complete: bool,
              error: BaseException | None, decoded: bool, note: str | None = None) -> dict[str, Any]:
        request = self._request_data()
        data: dict[str, Any] = {"request": request, "response": None}
        response_text: str | None = None
        media = ""
        if status is not None:
            recorded_headers = record_headers(list(headers))
            media = recorded_headers.get("content-type", "")
            body = b"".join(self._chunks)
            encoding = "" if decoded else recorded_headers.get("content-encoding", "")
            # A reply with no content-length came as a stream, unless it can have no body at all.
            streamed = streamed and self._may_have_body(status)
            response: dict[str, Any] = {"status": status, "streamed": streamed or is_event_stream(media),
                                        "media_type": media.split(";", 1)[0].strip(), "complete": complete,
                                        "headers": recorded_headers}
            if self._let_go and self._digest is not None:
                # Let go of as it passed: the placeholder, and its digest for the write path (_hints).
                fields, sha, size = self._digest.result()
                response.update(fields)
                self._streamed = (f"response.{next(iter(fields))}", sha, size)
                response_text = None  # past 1 Mi characters: never read for its model (MAX_MODEL_SNIFF)
            else:
                response.update(body_fields(body, media, encoding, limit=self._limit()))
                response_text = response.get("text")
            data["response"] = response
        if error is not None:
            data["error"] = _error(error, self.url, self.request_headers)
        if note is not None:
            data["note"] = note
        if self.retried:
            data["retried"] = [self._attempt(attempt) for attempt in self.retried]
        data["model"] = _model(request.get("text"), media, response_text)
        return data

    def _attempt(self, attempt: Attempt) -> dict[str, Any]:
        """An earlier attempt as recorded: its URL by the credential rule, its error as an exchange's is."""
        recorded: dict[str, Any] = {"method": attempt.method, "url": None if attempt.url is None else
                                    record_url(attempt.url), "status": attempt.status}
        if attempt.error is not None:
            recorded["error"] = _error(attempt.error, self.url, self.request_headers)
        return recorded

    def fail(self, error: BaseException) -> None:
        """The request failed before any response came."""
        self.finish(status=None, complete=False, error=error)
