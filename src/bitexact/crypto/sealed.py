"""The sealed envelope: ChaCha20-Poly1305 chunks under a random per-file key wrapped by the host key.

Journals and spools hold evidence before the capture policy has run on it,
so they are always sealed (capture-controls.md). Each file gets its own
random 256-bit key; the file stores that key wrapped (ChaCha20-Poly1305)
under the host key (:mod:`bitexact.crypto.hostkey`), so the file opens only
where the host key is.

Layout (all integers big-endian)::

    MAGIC                          8 bytes  b"BXSEAL\\x00\\x01"
    header length                  u32
    header                         canonical JSON: v, cipher, purpose, host_key_id,
                                   wrap_nonce (hex), wrapped_key (hex)
    chunk*                         u32 length of the ciphertext, 12-byte nonce, ciphertext

Every chunk's associated data binds the header's SHA-256, the chunk's index
and whether it is the final one, so chunks cannot be reordered, dropped,
moved between files or cut off unnoticed: a file whose last chunk is not
marked final was cut short (its writer died while writing it).
"""

from __future__ import annotations

import hashlib
import io
import os
import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO, Final

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305

from bitexact.canon import canonicalize, loads
from bitexact.crypto.hostkey import HostKey
from bitexact.errors import BitExactError, StrictJSONError

MAGIC: Final[bytes] = b"BXSEAL\x00\x01"
CIPHER: Final[str] = "chacha20-poly1305"
CHUNK_BYTES: Final[int] = 1 << 20
NONCE_BYTES: Final[int] = 12
_MAX_HEADER: Final[int] = 4096
_MAX_CHUNK: Final[int] = 64 << 20
_WRAP_AAD: Final[bytes] = b"bitexact sealed key/1"
_CHUNK_AAD: Final[bytes] = b"bitexact sealed chunk/1"


class SealedEnvelopeError(BitExactError, ValueError):
    """A sealed file is not one, is damaged, or was sealed under another host key."""


class WrongHostKeyError(SealedEnvelopeError):
    """The file was sealed under a host key other than the one given."""


@dataclass(frozen=True)
class Opened:
    """What a sealed file holds: its purpose label, its chunks, and whether it ended properly."""

    purpose: str
    host_key_id: str
    chunks: tuple[bytes, ...]
    complete: bool

    @property
    def payload(self) -> bytes:
        return b"".join(self.chunks)


def _chunk_aad(header_digest: bytes, index: int, final: bool) -> bytes:
    return _CHUNK_AAD + header_digest + struct.pack(">QB", index, 1 if final else 0)


@dataclass(frozen=True)
class FileKey:
    """One sealed file's fresh key, already wrapped under the host key: its cipher and its header.

    Made ahead of time (:func:`new_file_key`) where the file's writer is on
    a hot path, so that the key's making and wrapping stay off it. Used for
    one file only.
    """

    purpose: str
    host_key_id: str
    aead: ChaCha20Poly1305
    preamble: bytes
    """The file's first bytes: magic, header length, header."""
    digest: bytes
    """SHA-256 of the header, bound into every chunk."""


def new_file_key(host_key: HostKey, *, purpose: str) -> FileKey:
    """A random 256-bit key for one sealed file, wrapped under ``host_key`` for ``purpose``."""
    key = ChaCha20Poly1305.generate_key()
    wrap_nonce = os.urandom(NONCE_BYTES)
    wrapped = ChaCha20Poly1305(host_key.secret).encrypt(
        wrap_nonce, key, _WRAP_AAD + host_key.key_id.encode("ascii") + purpose.encode("utf-8")
    )
    header = canonicalize({
        "v": 1,
        "cipher": CIPHER,
        "purpose": purpose,
        "host_key_id": host_key.key_id,
        "wrap_nonce": wrap_nonce.hex(),
        "wrapped_key": wrapped.hex(),
    })
    return FileKey(purpose, host_key.key_id, ChaCha20Poly1305(key), MAGIC + struct.pack(">I", len(header)) + header,
                   hashlib.sha256(header).digest())


class SealedWriter:
    """Writes one sealed file chunk by chunk; :meth:`finish` marks its end.

    The caller owns ``out`` (and its flushing and fsync): the writer only
    encrypts and frames. ``key`` is a key made ahead for this file (used
    once); without one the writer makes its own.
    """

    def __init__(self, out: BinaryIO, host_key: HostKey, *, purpose: str, key: FileKey | None = None) -> None:
        self._out = out
        if key is None:
            key = new_file_key(host_key, purpose=purpose)
        elif (key.purpose, key.host_key_id) != (purpose, host_key.key_id):
            raise ValueError("a file key made for another purpose or host key")
        self._aead = key.aead
        self._digest = key.digest
        self._index = 0
        self._finished = False
        out.write(key.preamble)

    def _emit(self, chunk: bytes | memoryview, final: bool) -> None:
        nonce = os.urandom(NONCE_BYTES)
        sealed = self._aead.encrypt(nonce, chunk, _chunk_aad(self._digest, self._index, final))
        # Two writes, not one concatenation: a chunk is up to 1 MiB, and copying it costs as much as sealing it.
        self._out.write(struct.pack(">I", len(sealed)) + nonce)
        self._out.write(sealed)
        self._index += 1

    def write(self, data: bytes) -> None:
        """Seal ``data`` as one or more chunks (at most :data:`CHUNK_BYTES` each)."""
        if self._finished:
            raise SealedEnvelopeError("this sealed file is finished: nothing may follow its final chunk")
        view = memoryview(data)
        for start in range(0, len(view), CHUNK_BYTES):
            self._emit(view[start:start + CHUNK_BYTES], False)

    def finish(self) -> None:
        """Write the (empty) final chunk that says the file is whole."""
        if not self._finished:
            self._emit(b"", True)
            self._finished = True


def seal(payload: bytes, host_key: HostKey, *, purpose: str) -> bytes:
    """``payload`` as one complete sealed file."""
    return b"".join(seal_pieces([payload], host_key, purpose=purpose))


class _Pieces:
    """A write target that keeps the buffers it is given, for one ``writev``."""

    def __init__(self) -> None:
        self.buffers: list[bytes] = []

    def write(self, data: bytes) -> int:
        self.buffers.append(data)
        return len(data)


def seal_pieces(pieces: list[bytes], host_key: HostKey, *, purpose: str, key: FileKey | None = None) -> list[bytes]:
    """The sealed file of the pieces' concatenation, as buffers to write in order.

    Each piece starts a chunk of its own (readers see only the joined
    plaintext), and nothing is copied: for a large journal the copies cost
    as much as the sealing. :func:`seal` joins the buffers. ``key``: a key
    made ahead for this file (:func:`new_file_key`).
    """
    out = _Pieces()
    writer = SealedWriter(out, host_key, purpose=purpose, key=key)  # type: ignore[arg-type]
    for piece in pieces:
        if piece:
            writer.write(piece)
    writer.finish()
    return out.buffers


def _read_exact(stream: BinaryIO, size: int) -> bytes | None:
    data = stream.read(size)
    return data if len(data) == size else None


def _header(stream: BinaryIO) -> tuple[dict[str, object], bytes]:
    if stream.read(len(MAGIC)) != MAGIC:
        raise SealedEnvelopeError("not a sealed file: it does not start with the sealed-envelope magic")
    raw = _read_exact(stream, 4)
    if raw is None:
        raise SealedEnvelopeError("sealed file cut short inside its header")
    (size,) = struct.unpack(">I", raw)
    if size > _MAX_HEADER:
        raise SealedEnvelopeError(f"sealed file header of {size} bytes is larger than {_MAX_HEADER}")
    header = _read_exact(stream, size)
    if header is None:
        raise SealedEnvelopeError("sealed file cut short inside its header")
    try:
        parsed = loads(header)
    except StrictJSONError as exc:
        raise SealedEnvelopeError(f"sealed file header is not valid JSON: {exc}") from None
    if not isinstance(parsed, dict) or parsed.get("v") != 1 or parsed.get("cipher") != CIPHER:
        raise SealedEnvelopeError("sealed file header is not a version 1 chacha20-poly1305 header")
    for name in ("purpose", "host_key_id", "wrap_nonce", "wrapped_key"):
        if not isinstance(parsed.get(name), str):
            raise SealedEnvelopeError(f"sealed file header: {name} is missing or not a string")
    return parsed, header


def _unwrap(header: dict[str, object], host_key: HostKey) -> ChaCha20Poly1305:
    if header["host_key_id"] != host_key.key_id:
        raise WrongHostKeyError(
            f"sealed under host key {header['host_key_id']}, not this host's key {host_key.key_id}: "
            "it opens only on the host that wrote it"
        )
    try:
        key = ChaCha20Poly1305(host_key.secret).decrypt(
            bytes.fromhex(str(header["wrap_nonce"])),
            bytes.fromhex(str(header["wrapped_key"])),
            _WRAP_AAD + host_key.key_id.encode("ascii") + str(header["purpose"]).encode("utf-8"),
        )
    except (InvalidTag, ValueError):
        raise SealedEnvelopeError("the sealed file's key does not unwrap under this host key: it was altered") from None
    return ChaCha20Poly1305(key)


def iter_chunks(stream: BinaryIO, host_key: HostKey) -> Iterator[tuple[bytes, bool]]:
    """Each chunk's plaintext and whether it is the final one, authenticated as read."""
    header, raw_header = _header(stream)
    aead = _unwrap(header, host_key)
    digest = hashlib.sha256(raw_header).digest()
    index = 0
    while True:
        raw = stream.read(4)
        if not raw:
            return
        if len(raw) < 4:
            raise SealedEnvelopeError(f"sealed file cut short at chunk {index}")
        (size,) = struct.unpack(">I", raw)
        if size > _MAX_CHUNK + 16:
            raise SealedEnvelopeError(f"chunk {index} claims {size} bytes, more than a chunk may hold")
        nonce = _read_exact(stream, NONCE_BYTES)
        sealed = _read_exact(stream, size)
        if nonce is None or sealed is None:
            raise SealedEnvelopeError(f"sealed file cut short at chunk {index}")
        for final in (False, True):
            try:
                plain = aead.decrypt(nonce, sealed, _chunk_aad(digest, index, final))
            except InvalidTag:
                continue
            yield plain, final
            break
        else:
            raise SealedEnvelopeError(f"chunk {index} fails authentication: the sealed file was altered")
        if final:
            if stream.read(1):
                raise SealedEnvelopeError(f"bytes follow the final chunk {index}: the sealed file was altered")
            return
        index += 1


def open_sealed(stream: BinaryIO, host_key: HostKey) -> Opened:
    """Read a whole sealed file; ``complete`` is False when its final chunk is missing."""
    start = stream.tell() if stream.seekable() else None
    header, _ = _header(stream)
    if start is not None:
        stream.seek(start)
    chunks: list[bytes] = []
    complete = False
    for plain, final in iter_chunks(stream, host_key):
        if final:
            complete = True
        else:
            chunks.append(plain)
    return Opened(str(header["purpose"]), str(header["host_key_id"]), tuple(chunks), complete)


def unseal(data: bytes, host_key: HostKey, *, purpose: str | None = None) -> bytes:
    """The payload of a complete sealed file; refuses one cut short or of another purpose."""
    opened = open_sealed(io.BytesIO(data), host_key)
    if purpose is not None and opened.purpose != purpose:
        raise SealedEnvelopeError(f"sealed file is a {opened.purpose!r}, not a {purpose!r}")
    if not opened.complete:
        raise SealedEnvelopeError("sealed file has no final chunk: its writer stopped before finishing it")
    return opened.payload
