"""A local AWS KMS for tests: the real JSON 1.1 wire protocol, SigV4 checked.

It speaks what boto3 sends to ``kms.<region>.amazonaws.com``: ``POST /``
with ``X-Amz-Target: TrentService.<Operation>``, a JSON body of type
``application/x-amz-json-1.1`` with base64 blobs, and answers in the same
shapes, with AWS's error shape (HTTP 400, ``{"__type": ..., "message": ...}``).

It serves GenerateMac, Encrypt and Decrypt. Every request must carry a
SigV4 ``Authorization`` header, which is verified against the configured
credentials (a missing one, an unknown access key and a bad signature each
get the error AWS gives). Key states and errors follow AWS's key state table:
a Disabled key gives DisabledException, one PendingDeletion gives
KMSInvalidStateException.

Keys live in a :class:`KmsState` that outlives a server, so a test can stop
the server mid-run and start another on the same port.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import re
import socket
import threading
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

ACCOUNT = "111122223333"
JSON_11 = "application/x-amz-json-1.1"
MAC_ALGORITHMS = {"HMAC_SHA_224": "sha224", "HMAC_SHA_256": "sha256",
                  "HMAC_SHA_384": "sha384", "HMAC_SHA_512": "sha512"}
HMAC_SPECS = {"HMAC_224": "HMAC_SHA_224", "HMAC_256": "HMAC_SHA_256",
              "HMAC_384": "HMAC_SHA_384", "HMAC_512": "HMAC_SHA_512"}
# Our ciphertext header. Real KMS blobs also start with a small version byte.
_BLOB_MAGIC = b"\x01\x02\x02\x00"
_AUTH = re.compile(
    r"AWS4-HMAC-SHA256 Credential=(?P<akid>[^/]+)/(?P<date>\d{8})/(?P<region>[^/]+)/"
    r"(?P<service>[^/]+)/aws4_request, ?SignedHeaders=(?P<signed>[a-z0-9;-]+), ?"
    r"Signature=(?P<sig>[0-9a-f]{64})"
)


class KmsError(Exception):
    """An AWS error response: its ``__type``, message and HTTP status."""

    def __init__(self, code: str, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.status = status


@dataclass
class Key:
    key_id: str
    spec: str  # SYMMETRIC_DEFAULT or HMAC_256 ...
    material: bytes = field(repr=False)
    state: str = "Enabled"

    @property
    def usage(self) -> str:
        return "GENERATE_VERIFY_MAC" if self.spec in HMAC_SPECS else "ENCRYPT_DECRYPT"


@dataclass
class KmsState:
    """Keys, aliases and credentials; shared by every server started on it."""

    region: str = "us-east-1"
    access_key: str = "AKIDBITEXACTTEST"
    secret_key: str = "bitexact-test-secret-key"
    keys: dict[str, Key] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)

    def arn(self, key_id: str) -> str:
        return f"arn:aws:kms:{self.region}:{ACCOUNT}:key/{key_id}"

    def create_key(self, spec: str, material: bytes | None = None, alias: str | None = None) -> Key:
        size = 32 if spec in ("SYMMETRIC_DEFAULT", "HMAC_256") else int(spec.split("_")[1]) // 8
        key = Key(str(uuid.uuid4()), spec, material if material is not None else os.urandom(size))
        self.keys[key.key_id] = key
        if alias:
            self.aliases[alias] = key.key_id
        return key

    def resolve(self, key_ref: str) -> Key:
        """A key id, key ARN, alias name or alias ARN, as KMS resolves them."""
        prefix = f"arn:aws:kms:{self.region}:{ACCOUNT}:"
        if key_ref.startswith("alias/") or key_ref.startswith(prefix + "alias/"):
            name = key_ref.removeprefix(prefix)
            if name not in self.aliases:
                raise KmsError("NotFoundException", f"Alias {prefix}{name} is not found.")
            return self.keys[self.aliases[name]]
        if key_ref.startswith(prefix + "key/"):
            key_ref = key_ref.removeprefix(prefix + "key/")
        elif key_ref.startswith("arn:"):
            raise KmsError("NotFoundException", f"Invalid arn {key_ref}")
        if not re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
                            key_ref):
            raise KmsError("NotFoundException", f"Invalid keyId '{key_ref}'")
        if key_ref not in self.keys:
            raise KmsError("NotFoundException", f"Key '{self.arn(key_ref)}' does not exist")
        return self.keys[key_ref]

    def usable(self, key: Key, usage: str, operation: str) -> None:
        if key.state == "Disabled":
            raise KmsError("DisabledException", f"{self.arn(key.key_id)} is disabled.")
        if key.state != "Enabled":
            raise KmsError("KMSInvalidStateException",
                           f"{self.arn(key.key_id)} is {_state_words(key.state)}.")
        if key.usage != usage:
            raise KmsError("InvalidKeyUsageException",
                           f"{self.arn(key.key_id)} key usage is {key.usage} which is not "
                           f"valid for {operation}.")


def _state_words(state: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r" \1", state).lower()


def _blob(body: dict[str, Any], name: str, max_len: int) -> bytes:
    value = body.get(name)
    if value is None:
        raise KmsError("ValidationException", f"1 validation error detected: Value null at "
                       f"'{name[0].lower() + name[1:]}' failed to satisfy constraint: Member "
                       "must not be null")
    try:
        data = base64.b64decode(value, validate=True)
    except (binascii.Error, TypeError, ValueError):
        raise KmsError("SerializationException", f"Invalid base64: \"{value}\"") from None
    if not 1 <= len(data) <= max_len:
        raise KmsError("ValidationException", f"1 validation error detected: Value at "
                       f"'{name[0].lower() + name[1:]}' failed to satisfy constraint: Member "
                       f"must have length between 1 and {max_len}")
    return data


def _key_ref(body: dict[str, Any]) -> str:
    value = body.get("KeyId")
    if not isinstance(value, str) or not value:
        raise KmsError("ValidationException", "1 validation error detected: Value null at "
                       "'keyId' failed to satisfy constraint: Member must not be null")
    if len(value) > 2048:
        raise KmsError("ValidationException", f"1 validation error detected: Value '{value}' at "
                       "'keyId' failed to satisfy constraint: Member must have length less than "
                       "or equal to 2048")
    return value


def _context_aad(body: dict[str, Any]) -> bytes:
    context = body.get("EncryptionContext") or {}
    return json.dumps(context, sort_keys=True, separators=(",", ":")).encode()


def generate_mac(state: KmsState, body: dict[str, Any]) -> dict[str, Any]:
    key = state.resolve(_key_ref(body))
    message = _blob(body, "Message", 4096)
    algorithm = body.get("MacAlgorithm")
    if algorithm not in MAC_ALGORITHMS:
        raise KmsError("ValidationException", f"1 validation error detected: Value '{algorithm}' "
                       "at 'macAlgorithm' failed to satisfy constraint: Member must satisfy enum "
                       f"value set: [{', '.join(MAC_ALGORITHMS)}]")
    state.usable(key, "GENERATE_VERIFY_MAC", "GenerateMac")
    if HMAC_SPECS[key.spec] != algorithm:
        raise KmsError("InvalidKeyUsageException",
                       f"Algorithm {algorithm} is incompatible with key spec {key.spec}.")
    mac = hmac.new(key.material, message, MAC_ALGORITHMS[algorithm]).digest()
    return {"Mac": base64.b64encode(mac).decode(), "MacAlgorithm": algorithm,
            "KeyId": state.arn(key.key_id)}


def encrypt(state: KmsState, body: dict[str, Any]) -> dict[str, Any]:
    key = state.resolve(_key_ref(body))
    plaintext = _blob(body, "Plaintext", 4096)
    state.usable(key, "ENCRYPT_DECRYPT", "Encrypt")
    header = _BLOB_MAGIC + key.key_id.encode()
    nonce = os.urandom(12)
    sealed = AESGCM(key.material).encrypt(nonce, plaintext, header + _context_aad(body))
    return {"CiphertextBlob": base64.b64encode(header + nonce + sealed).decode(),
            "KeyId": state.arn(key.key_id), "EncryptionAlgorithm": "SYMMETRIC_DEFAULT"}


def decrypt(state: KmsState, body: dict[str, Any]) -> dict[str, Any]:
    blob = _blob(body, "CiphertextBlob", 6144)
    if not blob.startswith(_BLOB_MAGIC) or len(blob) < 4 + 36 + 12 + 16:
        raise KmsError("InvalidCiphertextException", "")
    key_ref = blob[4:40].decode("ascii", "replace")
    if key_ref not in state.keys:
        raise KmsError("InvalidCiphertextException", "")
    key = state.keys[key_ref]
    if "KeyId" in body and state.resolve(_key_ref(body)).key_id != key.key_id:
        raise KmsError("IncorrectKeyException", "The key ID in the request does not identify a "
                       "CMK that can perform this operation.")
    state.usable(key, "ENCRYPT_DECRYPT", "Decrypt")
    try:
        plaintext = AESGCM(key.material).decrypt(blob[40:52], blob[52:],
                                                 blob[:40] + _context_aad(body))
    except InvalidTag:
        raise KmsError("InvalidCiphertextException", "") from None
    return {"Plaintext": base64.b64encode(plaintext).decode(), "KeyId": state.arn(key.key_id),
            "EncryptionAlgorithm": "SYMMETRIC_DEFAULT"}


OPERATIONS = {"GenerateMac": generate_mac, "Encrypt": encrypt, "Decrypt": decrypt}


def check_sigv4(state: KmsState, method: str, path: str, headers: dict[str, str],
                body: bytes) -> None:
    """Verify an AWS Signature Version 4 the way AWS does, or raise its error."""
    auth = headers.get("authorization")
    if not auth:
        raise KmsError("MissingAuthenticationTokenException", "Missing Authentication Token")
    found = _AUTH.fullmatch(auth.strip())
    if not found:
        raise KmsError("IncompleteSignatureException", f"Authorization header requires "
                       f"'Credential', 'Signature' and 'SignedHeaders'. Authorization={auth}")
    if found["akid"] != state.access_key:
        raise KmsError("UnrecognizedClientException",
                       "The security token included in the request is invalid.")
    if found["region"] != state.region or found["service"] != "kms":
        raise KmsError("InvalidSignatureException", "Credential should be scoped to a valid "
                       f"region and service, not '{found['region']}/{found['service']}'.")
    signed = found["signed"].split(";")
    if "host" not in signed or "x-amz-date" not in signed:
        raise KmsError("InvalidSignatureException", "'Host' and 'X-Amz-Date' must be signed.")
    amz_date = headers.get("x-amz-date", "")
    canonical_headers = "".join(
        f"{name}:{' '.join(headers.get(name, '').split())}\n" for name in signed
    )
    canonical = "\n".join([method, path or "/", "", canonical_headers, found["signed"],
                           hashlib.sha256(body).hexdigest()])
    scope = f"{found['date']}/{found['region']}/kms/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope,
                         hashlib.sha256(canonical.encode()).hexdigest()])
    signing_key = ("AWS4" + state.secret_key).encode()
    for part in (found["date"], found["region"], "kms", "aws4_request"):
        signing_key = hmac.new(signing_key, part.encode(), hashlib.sha256).digest()
    expected = hmac.new(signing_key, to_sign.encode(), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, found["sig"]):
        raise KmsError("InvalidSignatureException",
                       "The request signature we calculated does not match the signature you "
                       "provided. Check your AWS Secret Access Key and signing method. Consult "
                       "the service documentation for details.")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet
        return

    def setup(self) -> None:
        super().setup()
        # Headers and body go out in two writes; without this, Nagle and the
        # client's delayed ACK add 40 ms to every answer.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.track(self.connection)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.untrack(self.connection)

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        if self.server.hang.is_set():
            self.server.released.wait()  # accept, then never answer
            self.close_connection = True
            return
        try:
            payload = self._dispatch(body)
            self._answer(200, payload)
        except KmsError as exc:
            self._answer(exc.status, {"__type": exc.code, "message": exc.message})

    def _dispatch(self, body: bytes) -> dict[str, Any]:
        state = self.server.state
        headers = {name.lower(): value for name, value in self.headers.items()}
        check_sigv4(state, "POST", self.path, headers, body)
        target = headers.get("x-amz-target", "")
        service, _, operation = target.partition(".")
        if service != "TrentService" or operation not in OPERATIONS:
            raise KmsError("UnknownOperationException", "")
        if not headers.get("content-type", "").startswith(JSON_11):
            raise KmsError("SerializationException", "Unexpected content type")
        try:
            request = json.loads(body or b"{}")
        except ValueError:
            raise KmsError("SerializationException", "Start of structure or map found where "
                           "not expected.") from None
        if not isinstance(request, dict):
            raise KmsError("SerializationException", "Expected a JSON object")
        state.calls.append(operation)
        response = OPERATIONS[operation](state, request)
        if request.get("DryRun") is True:  # checked in full, then not done
            raise KmsError("DryRunOperationException", "The request would have succeeded, but "
                           "the DryRun option is set.", status=412)
        return response

    def _answer(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", JSON_11)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("x-amzn-RequestId", str(uuid.uuid4()))
        self.end_headers()
        self.wfile.write(data)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], state: KmsState) -> None:
        self.state = state
        self.hang = threading.Event()
        self.released = threading.Event()
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()
        super().__init__(address, _Handler)

    def track(self, conn: socket.socket) -> None:
        with self._lock:
            self._open.add(conn)

    def untrack(self, conn: socket.socket) -> None:
        with self._lock:
            self._open.discard(conn)

    def drop_connections(self) -> None:
        with self._lock:
            conns = list(self._open)
        for conn in conns:
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class KmsServer:
    """A running local KMS on 127.0.0.1; ``stop()`` makes it stop answering for good."""

    def __init__(self, state: KmsState, port: int = 0) -> None:
        self.state = state
        self._server = _Server(("127.0.0.1", port), state)
        self.port = self._server.server_address[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        daemon=True, name="test-kms")
        self._thread.start()

    def hang(self) -> None:
        """Keep accepting requests but never answer them (a KMS that stalls)."""
        self._server.hang.set()

    def stop(self) -> None:
        """Stop listening and cut every open connection, as an outage would."""
        self._server.released.set()
        self._server.shutdown()
        self._server.server_close()
        self._server.drop_connections()
        self._thread.join(timeout=5)
