"""Capture keys in AWS KMS: a KMS-encrypted key file, or an HMAC key that never leaves KMS.

``{"kms_ciphertext": PATH}``: PATH holds a KMS ciphertext of the 32-byte key,
raw (what ``aws kms encrypt ... --query CiphertextBlob --output text | base64 -d``
writes) or base64 (the same without ``base64 -d``). It is decrypted with one
``Decrypt`` at load and the key is held in the process.

``{"kms_hmac": KEY}``: KEY is a key id, key ARN, alias name or alias ARN of
a KMS key of key spec HMAC_256. Every HMAC is a ``GenerateMac`` call with
MacAlgorithm HMAC_SHA_256; the first one (for the key id) resolves KEY to
the key's ARN, and every later call names that ARN, so re-pointing an alias
mid-run cannot switch keys under a fixed key id.

The endpoint is ``BITEXACT_KMS_ENDPOINT``, else ``AWS_ENDPOINT_URL_KMS``,
else AWS's own; region and credentials come from the usual AWS environment
(``AWS_REGION``, ``AWS_PROFILE``, ...).

A call never waits long: each attempt is bounded by CONNECT_TIMEOUT and
READ_TIMEOUT, with MAX_ATTEMPTS attempts in all (botocore's standard retry
mode; its backoff before the one retry is under a second), and the call runs
on a worker thread that the caller leaves after 2 x (1 + 2) + 1 = 7 seconds
whatever happens (a DNS lookup is not covered by botocore's timeouts). After
a failure, calls fail at once for COOL_OFF seconds, so a KMS outage costs one
bounded wait per COOL_OFF, not one per field.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

from bitexact.crypto.keysources.base import (
    KEY_ID_MESSAGE,
    CallRunner,
    GuardedCalls,
    KeySourceError,
    check_message,
    key_id_from_mac,
)
from bitexact.crypto.keysources.file import InProcessKey, read_private_file

T = TypeVar("T")
ENDPOINT_VARS = ("BITEXACT_KMS_ENDPOINT", "AWS_ENDPOINT_URL_KMS")
MAC_ALGORITHM = "HMAC_SHA_256"
CONNECT_TIMEOUT = 1.0
READ_TIMEOUT = 2.0
MAX_ATTEMPTS = 2
COOL_OFF = 30.0
# botocore's standard mode waits under 1 s before the first retry.
BACKOFF_BOUND = 1.0
# GenerateMac calls in flight at once, from any number of recording threads.
KMS_THREADS = 4
# KMS ciphertexts are at most 6144 bytes; base64 of that is 8192.
_MAX_CIPHERTEXT_FILE = 8192 + 64
_BASE64 = re.compile(rb"[A-Za-z0-9+/]+={0,2}")

# What to do about each refusal KMS can give at load, by its error code.
_HINTS = {
    "NotFoundException": "no such key or alias in this account and region",
    "InvalidKeyUsageException": "not an HMAC_256 key with key usage GENERATE_VERIFY_MAC",
    "DisabledException": "the key is disabled; enable it",
    "KMSInvalidStateException": "the key is not usable in its state (pending deletion or import?)",
    "AccessDeniedException": "these credentials may not use the key",
    "InvalidCiphertextException": "not a KMS ciphertext, or encrypted with an encryption context",
    "IncorrectKeyException": "encrypted under another KMS key",
}


@dataclass(frozen=True)
class KmsLimits:
    """How long one KMS call may take, and how long to fail fast after a failure."""

    connect_timeout: float = CONNECT_TIMEOUT
    read_timeout: float = READ_TIMEOUT
    max_attempts: int = MAX_ATTEMPTS
    cool_off: float = COOL_OFF

    @property
    def deadline(self) -> float:
        """The hard bound on one call: every attempt timing out, plus the retry backoff."""
        return self.max_attempts * (self.connect_timeout + self.read_timeout) + BACKOFF_BOUND


def endpoint_url() -> str | None:
    """The KMS endpoint the environment names, or ``None`` for AWS's own."""
    for name in ENDPOINT_VARS:
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


def _checked_endpoint(where: str) -> str | None:
    """:func:`endpoint_url`, refused naming its variable when it is no http(s) URL: botocore would say
    only "Invalid endpoint" (or, for another scheme, fail at the first call), never which setting."""
    for name in ENDPOINT_VARS:
        value = os.environ.get(name, "").strip()
        if not value:
            continue
        try:
            parts = urlsplit(value)
            usable = parts.scheme.lower() in ("http", "https") and bool(parts.hostname)
            parts.port  # noqa: B018 - a port that is not a number raises here
        except ValueError:
            usable = False
        if not usable:
            raise KeySourceError(f"{where}: {name}={value!r} is not a KMS endpoint: give an http or https URL"
                                 " (https://HOST[:PORT])")
        return value
    return None


def arn_region(key: str) -> str | None:
    """The region an ARN names (``arn:aws:kms:REGION:ACCOUNT:...``), else ``None``."""
    parts = key.split(":")
    return parts[3] or None if len(parts) >= 6 and parts[0] == "arn" else None


def make_client(limits: KmsLimits, where: str, region: str | None = None) -> Any:
    """A boto3 KMS client with bounded timeouts and retries.

    ``region`` (a key ARN's) wins over the environment's: KMS answers for a
    key only in its own region.
    """
    try:
        import boto3
        from botocore.config import Config
    except ImportError:
        raise KeySourceError(f"{where}: AWS KMS key sources need boto3 (pip install boto3)"
                             ) from None
    try:
        session = boto3.session.Session()
        # botocore reads AWS_DEFAULT_REGION and the profile; AWS_REGION (what the
        # other AWS SDKs and Lambda set) is read here, first.
        region = region or os.environ.get("AWS_REGION", "").strip() or session.region_name
        if not region:
            raise KeySourceError(f"{where}: no AWS region; set AWS_REGION (or AWS_DEFAULT_REGION)")
        config = Config(
            connect_timeout=limits.connect_timeout,
            read_timeout=limits.read_timeout,
            retries={"total_max_attempts": limits.max_attempts, "mode": "standard"},
        )
        return session.client("kms", region_name=region, endpoint_url=_checked_endpoint(where), config=config)
    except KeySourceError:
        raise
    except Exception as exc:  # a missing profile, a malformed region or endpoint: botocore's own errors
        raise KeySourceError(f"{where}: cannot set up the AWS KMS client: {type(exc).__name__}: {exc}") from None


def _at_load(job: Callable[[], T], limits: KmsLimits, where: str, operation: str) -> T:
    """One KMS call at load, under the same hard deadline as every later call."""
    runner = CallRunner("bitexact-kms-load")
    try:
        return runner.run(job, limits.deadline)
    except Exception as exc:  # botocore's errors, its parameter validation, the deadline
        raise _load_failure(where, operation, exc) from None
    finally:
        runner.retire()


def _load_failure(where: str, operation: str, exc: Exception) -> KeySourceError:
    from botocore.exceptions import ClientError, NoCredentialsError, ParamValidationError

    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        code = error.get("Code", "?")
        hint = _HINTS.get(code, "refused")
        return KeySourceError(f"{where}: KMS {operation} failed: {code}: {hint} "
                              f"({error.get('Message', '')})")
    if isinstance(exc, ParamValidationError):
        return KeySourceError(f"{where}: not a request KMS accepts: {exc}")
    if isinstance(exc, NoCredentialsError):
        return KeySourceError(f"{where}: no AWS credentials (set AWS_ACCESS_KEY_ID and "
                              "AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or a role)")
    endpoint = endpoint_url() or "the AWS endpoint"
    return KeySourceError(f"{where}: cannot reach AWS KMS at {endpoint}: "
                          f"{type(exc).__name__}: {exc}")


@dataclass(frozen=True)
class KmsHmacKey:
    """A capture key that never leaves AWS KMS: every HMAC is a GenerateMac."""

    client: Any = field(repr=False)
    key_arn: str
    key_id: str
    source: str
    calls: GuardedCalls = field(repr=False, compare=False)

    def _generate_mac(self, message: bytes) -> bytes:
        response = self.client.generate_mac(KeyId=self.key_arn, Message=message,
                                            MacAlgorithm=MAC_ALGORITHM)
        mac = response.get("Mac", b"")
        if response.get("KeyId") != self.key_arn or len(mac) != 32:
            raise RuntimeError(f"GenerateMac answered for key {response.get('KeyId')!r} "
                               f"with {len(mac)} bytes")
        return bytes(mac)

    def hmac_sha256(self, message: bytes) -> bytes:
        """GenerateMac HMAC_SHA_256 of ``message``; KeyUnavailableError if KMS does not answer."""
        data = check_message(message)
        return self.calls.run(lambda: self._generate_mac(data))


def _answers_for(key: str, arn: str) -> bool:
    """Whether ``arn`` (KMS's answer) is the key the policy names: that ARN, or that bare key id.

    An alias cannot be checked this way (it resolves to whichever key it
    points at): its answer's ARN is pinned for every later call instead.
    """
    if key.startswith("arn:") and ":alias/" not in key:
        return arn == key
    if key.startswith("alias/") or ":alias/" in key:
        return True
    return arn.endswith(f":key/{key}")


def load_kms_hmac(key: str, *, limits: KmsLimits | None = None) -> KmsHmacKey:
    """Resolve a KMS HMAC_256 key by id, ARN or alias, and compute its key id there."""
    limits = limits or KmsLimits()
    where = f"capture key kms_hmac {key}"
    client = make_client(limits, where, arn_region(key))
    response = _at_load(
        lambda: client.generate_mac(KeyId=key, Message=KEY_ID_MESSAGE, MacAlgorithm=MAC_ALGORITHM),
        limits, where, "GenerateMac")
    mac = response.get("Mac", b"")
    arn = response.get("KeyId")
    if not isinstance(arn, str) or len(mac) != 32:
        raise KeySourceError(f"{where}: GenerateMac answered without a key ARN or a 32-byte MAC")
    if not _answers_for(key, arn):
        raise KeySourceError(f"{where}: GenerateMac answered for key {arn}, not the key the policy names")
    source = f"AWS KMS HMAC key {arn}"
    calls = GuardedCalls(source, "bitexact-kms", deadline=limits.deadline,
                         cool_off=limits.cool_off, threads=KMS_THREADS)
    return KmsHmacKey(client, arn, key_id_from_mac(mac), source, calls)


def _ciphertext_blob(data: bytes, where: str) -> bytes:
    text = data.strip()
    # A KMS ciphertext starts with a version byte below 0x20, so raw and
    # base64 never look alike.
    if text and len(text) % 4 == 0 and _BASE64.fullmatch(text):
        try:
            return base64.b64decode(text, validate=True)
        except binascii.Error:
            pass
    if not data:
        raise KeySourceError(f"{where}: empty file, expected a KMS ciphertext (raw or base64)")
    return data


def load_kms_ciphertext(path: Path | str, *, limits: KmsLimits | None = None) -> InProcessKey:
    """Decrypt a KMS-encrypted capture key once and hold it in the process."""
    path = Path(path)
    where = f"KMS-encrypted capture key file {path}"
    blob = _ciphertext_blob(
        read_private_file(path, where, _MAX_CIPHERTEXT_FILE, others_may_read=True), where
    )
    limits = limits or KmsLimits()
    client = make_client(limits, where)
    response = _at_load(lambda: client.decrypt(CiphertextBlob=blob), limits, where, "Decrypt")
    plaintext = bytes(response.get("Plaintext", b""))
    if len(plaintext) != 32:
        raise KeySourceError(f"{where}: decrypted to {len(plaintext)} bytes, expected a "
                             "32-byte capture key")
    return InProcessKey(plaintext, where)
