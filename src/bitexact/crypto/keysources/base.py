"""What every capture key source provides: an HMAC-SHA256 under a 256-bit key.

The capture policy (capture-controls.md, ``hash_only_key``) never sees key
material. It holds an :class:`HmacKey`, asks it for HMACs, and names the key
by its :attr:`HmacKey.key_id`. A key held in the process (a file, a
KMS-encrypted file) and a key that never leaves KMS or a PKCS#11 token look
the same from here.

The key id is the first 16 bytes of HMAC-SHA256(K, b"bitexact capture key
id/1"), as 32 lowercase hex characters. It is a keyed value, so it says
nothing about K, and any source can compute it (a token or KMS is asked for
that one HMAC), so a non-extractable key has an id too.
"""

from __future__ import annotations

import hashlib
import hmac
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Protocol, TypeVar, runtime_checkable

from bitexact.errors import BitExactError, KeyMaterialError

T = TypeVar("T")
KEY_BYTES = 32
KEY_ID_MESSAGE = b"bitexact capture key id/1"
KEY_ID_BYTES = 16
# AWS KMS GenerateMac takes 1 to 4096 bytes. Every source holds to the same
# bounds, so a policy that works with a key file works with KMS and a token.
MAX_MESSAGE_BYTES = 4096


@runtime_checkable
class HmacKey(Protocol):
    """A 256-bit capture key, wherever it is kept.

    ``key_id`` is fixed for the life of the object. ``hmac_sha256`` returns
    the 32-byte HMAC-SHA256 of ``message`` (1 to :data:`MAX_MESSAGE_BYTES`
    bytes, else :class:`MessageSizeError`) under the key, or raises
    :class:`KeyUnavailableError` when the key's source stops answering.
    """

    @property
    def key_id(self) -> str:
        """32 lowercase hex characters: HMAC-SHA256(K, KEY_ID_MESSAGE)[:16]."""
        ...

    def hmac_sha256(self, message: bytes) -> bytes:
        """The 32-byte HMAC-SHA256 of ``message`` under this key."""
        ...


class KeySourceError(KeyMaterialError):
    """A capture key spec or the key it names cannot be loaded.

    Raised at load only, never during a run. The message names the field or
    the file and what was wrong, and never includes key material.
    """


class KeyUnavailableError(BitExactError):
    """A key source that loaded stopped answering when asked for an HMAC.

    ``source`` names the source as a person would (``"AWS KMS key arn:..."``,
    ``"PKCS#11 token slot 0 key 'capture'"``); ``cause`` is the underlying
    exception (for a call refused during the cool-off after a failure, the
    failure that started it). The capture policy answers this by committing
    the field under a random salt and declaring ``capture_key_unavailable``.
    """

    def __init__(self, source: str, cause: BaseException | None, detail: str = "") -> None:
        self.source = source
        self.cause = cause
        reason = detail or (f"{type(cause).__name__}: {cause}" if cause else "unavailable")
        super().__init__(f"capture key unavailable: {source}: {reason}")


class MessageSizeError(BitExactError, ValueError):
    """A message to HMAC is empty or longer than MAX_MESSAGE_BYTES: a caller's bug."""


def check_message(message: bytes) -> bytes:
    """``message`` as bytes, refused unless it is 1 to MAX_MESSAGE_BYTES bytes long."""
    if not isinstance(message, (bytes, bytearray, memoryview)):
        raise TypeError(f"an HMAC message is bytes, not {type(message).__name__}")
    data = bytes(message)
    if not 1 <= len(data) <= MAX_MESSAGE_BYTES:
        raise MessageSizeError(
            f"an HMAC message is 1 to {MAX_MESSAGE_BYTES} bytes (the AWS KMS GenerateMac "
            f"limit, kept by every key source), got {len(data)}"
        )
    return data


def key_id_from_mac(mac: bytes) -> str:
    """The key id given HMAC-SHA256(K, KEY_ID_MESSAGE)."""
    if len(mac) != 32:
        raise ValueError(f"an HMAC-SHA256 is 32 bytes, got {len(mac)}")
    return mac[:KEY_ID_BYTES].hex()


def key_id_of(secret: bytes) -> str:
    """The key id of a key held in the process."""
    return key_id_from_mac(hmac.new(secret, KEY_ID_MESSAGE, hashlib.sha256).digest())


class CoolOff:
    """Fails fast for a while after a remote source failed, so no call waits twice.

    A source that stopped answering would otherwise make every hash-only
    field of every step wait for a full timeout. After one failure, calls
    within ``seconds`` raise at once; the first call after that tries again.
    Thread-safe: the recorder may commit fields from several threads.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._lock = threading.Lock()
        self._failed_at: float | None = None
        self._cause: BaseException | None = None

    def check(self) -> BaseException | None:
        """``None`` when a call may go ahead, else the failure still cooling off."""
        with self._lock:
            if self._failed_at is None:
                return None
            if time.monotonic() - self._failed_at >= self.seconds:
                self._failed_at = None
                return None
            return self._cause

    def failed(self, cause: BaseException) -> None:
        with self._lock:
            self._failed_at = time.monotonic()
            self._cause = cause

    def succeeded(self) -> None:
        with self._lock:
            self._failed_at = None
            self._cause = None


class CallRunner:
    """Daemon threads that run a remote source's calls under a hard deadline.

    Client timeouts do not cover everything (a DNS lookup, a token library
    that blocks), so each call runs on one of ``threads`` daemon threads and
    the caller waits at most its deadline. A call that outlives it leaves its
    thread stuck in the library: the runner is then ``stuck``, its owner
    replaces it, and a daemon thread never holds up the process's exit.
    """

    def __init__(self, name: str, threads: int = 1) -> None:
        self.stuck = False
        self._threads = threads
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]] | None] = (
            queue.SimpleQueue())
        for index in range(threads):
            threading.Thread(target=self._loop, name=f"{name}-{index}", daemon=True).start()

    def _loop(self) -> None:
        while (item := self._jobs.get()) is not None:
            job, future = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(job())
            except BaseException as exc:  # handed to the caller, who decides
                future.set_exception(exc)

    def run(self, job: Callable[[], T], deadline: float) -> T:
        """``job()``'s result, or TimeoutError once ``deadline`` seconds have passed."""
        future: Future[T] = Future()
        self._jobs.put((job, future))
        try:
            return future.result(deadline)
        except FutureTimeout:
            if not future.cancel():
                self.stuck = True
            raise TimeoutError(f"no answer within {deadline:g} s") from None

    def retire(self) -> None:
        """Let every thread exit once it is free (a stuck one when its call returns)."""
        for _ in range(self._threads):
            self._jobs.put(None)


class GuardedCalls:
    """A remote key source's calls: a hard deadline each, and a cool-off after a failure.

    Every failure of the call (an error from the client library, a deadline
    passed, an answer that does not check out) becomes KeyUnavailableError
    naming ``source``; for ``cool_off`` seconds after one, calls raise at
    once without reaching the source.
    """

    def __init__(self, source: str, name: str, *, deadline: float, cool_off: float,
                 threads: int = 1) -> None:
        self.source = source
        self.deadline = deadline
        self._name = name
        self._threads = threads
        self._lock = threading.Lock()
        self._runner = CallRunner(name, threads)
        self._cool_off = CoolOff(cool_off)

    def _current_runner(self) -> CallRunner:
        with self._lock:
            if self._runner.stuck:  # a thread is blocked in the library: start afresh
                self._runner.retire()
                self._runner = CallRunner(self._name, self._threads)
            return self._runner

    def run(self, job: Callable[[], T]) -> T:
        """``job()`` on a worker thread, or KeyUnavailableError."""
        earlier = self._cool_off.check()
        if earlier is not None:
            raise KeyUnavailableError(self.source, earlier, "failed recently; not retried until "
                                      f"{self._cool_off.seconds:g} s after the failure")
        try:
            result = self._current_runner().run(job, self.deadline)
        except Exception as exc:  # any failure of the source is the key being unavailable
            self._cool_off.failed(exc)
            raise KeyUnavailableError(self.source, exc) from exc
        self._cool_off.succeeded()
        return result
