"""Observed nondeterminism: the clock, random numbers, UUIDs and OS entropy an agent read.

With ``capture_nondeterminism=True``, a run patches the sources below while
it is open; every read made in the run's context (not by BitExact itself)
is an observed ``nondet`` entry ``{"source": ..., "value": ...}``, and the
agent gets the real value::

    time.time  time.time_ns  datetime.datetime.now  datetime.datetime.utcnow
    random.*   uuid.uuid4    os.urandom             os.getrandom  secrets.*

A read inside another recorded read (``secrets.token_hex`` calls
``secrets.token_bytes``) is recorded once, as the outer one. The values of
``secrets.*``, ``os.urandom`` and ``os.getrandom`` are recorded hash-only (a custody hint
``{"value": "hash-only"}``): an agent mints its keys and tokens from them. The patches are
module attributes: code that bound a source before the run opened
(``from time import time``) reads it unrecorded. ``datetime.datetime``
becomes a stand-in class whose ``isinstance`` checks still accept every
datetime and which constructs real datetimes, never instances of itself.
"""

from __future__ import annotations

import copyreg
import datetime as _datetime
import functools
import os
import random
import secrets
import sys
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any, Final, TypeAlias

from bitexact.sdk.active import bound_run, busy, current_tool, sdk_busy

RANDOM_FUNCTIONS: Final[tuple[str, ...]] = (
    "random", "uniform", "randint", "randrange", "choice", "choices", "sample", "shuffle", "getrandbits",
    "randbytes", "gauss", "normalvariate", "triangular", "betavariate", "expovariate", "gammavariate",
    "lognormvariate", "paretovariate", "vonmisesvariate", "weibullvariate", "binomialvariate",
)
SECRETS_FUNCTIONS: Final[tuple[str, ...]] = (
    "token_bytes", "token_hex", "token_urlsafe", "randbelow", "randbits", "choice",
)

SECRET_HINTS: Final[dict[str, str]] = {"value": "hash-only"}
"""The custody of a ``nondet`` entry whose value is entropy an agent may mint a credential from."""


def is_secret_source(source: str) -> bool:
    """Whether a read of ``source`` gives entropy keys and tokens are made of: ``secrets.*``, ``os.urandom`` and
    ``os.getrandom``.

    Their values are recorded hash-only (:data:`SECRET_HINTS`): ``secrets.token_urlsafe()`` is the very
    Bearer token the agent then sends, which the HTTP capture redacts. ``random.*``, ``uuid.uuid4`` and the
    clock are kept as read: they are what a replay needs, and nobody should make a secret of them.
    """
    return source.startswith("secrets.") or source in ("os.urandom", "os.getrandom")


_lock = threading.Lock()
_users = 0
_saved: list[tuple[Any, Any, Any]] = []  # (module, name, original), or (copyreg's table, type, entry)
_installed: dict[tuple[int, str], Any] = {}  # (id(module), name) -> the replacement set there


def _after_fork_in_child() -> None:
    # A thread of the parent's inside install()/uninstall() at the fork left this lock held in the child, for
    # good: the child's next capturing run hung at its start. What the lock guards is copied whole by the
    # fork (the patched sources and their count), so a fresh lock is all the child needs.
    global _lock
    _lock = threading.Lock()


os.register_at_fork(after_in_child=_after_fork_in_child)

# A type alias (not a Final variable) so that it can be the base class of RecordingDatetime.
_ORIGINAL_DATETIME: TypeAlias = _datetime.datetime


def _observe(source: str, call: Callable[[], Any], shown: Callable[[Any], Any] | None = None) -> Any:
    run = bound_run()
    # A read once the run's exit has begun (a task it left running, while the exit drains) is after the run's
    # end, as a read once it has ended is: neither is recorded, and neither is a gap ("recorded after the run
    # ended" is for a record the agent asked for).
    if run is None or not run.capture_nondeterminism or sdk_busy() or not run._takes_records():
        return call()
    with busy():
        value = call()
        run._record_nondet(source, shown(value) if shown else value, ctx=current_tool(run))
    return value


def _wrap(source: str, original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def patched(*args: Any, **kwargs: Any) -> Any:
        return _observe(source, lambda: original(*args, **kwargs))

    return patched


def _wrap_shuffle(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def shuffle(x: Any, *args: Any, **kwargs: Any) -> None:
        _observe("random.shuffle", lambda: original(x, *args, **kwargs), lambda _: list(x))

    return shuffle


class _DatetimeMeta(type):
    # Only the stand-in itself accepts every datetime: ``isinstance(x, datetime.datetime)`` must hold for
    # the datetimes made before the run or by other code. A subclass the agent defines keeps its own checks.
    def __instancecheck__(cls, obj: object) -> bool:
        if cls is RecordingDatetime:
            return isinstance(obj, _ORIGINAL_DATETIME)
        return type.__instancecheck__(cls, obj)

    def __subclasscheck__(cls, sub: type) -> bool:
        if cls is RecordingDatetime:
            return issubclass(sub, _ORIGINAL_DATETIME)
        return type.__subclasscheck__(cls, sub)

    # The stand-in equals the real class, and hashes as it does: a table keyed by type that code imported
    # during the run built with the stand-in (``{datetime: dump_datetime}``, as xmlrpc.client builds) finds
    # ``type(d)`` of every real datetime, during the run and after it.
    def __eq__(cls, other: object) -> bool:
        if cls is RecordingDatetime:
            return other is RecordingDatetime or other is _ORIGINAL_DATETIME
        return type.__eq__(cls, other)

    def __hash__(cls) -> int:
        return hash(_ORIGINAL_DATETIME) if cls is RecordingDatetime else type.__hash__(cls)


class RecordingDatetime(_ORIGINAL_DATETIME, metaclass=_DatetimeMeta):
    """``datetime.datetime`` while a run captures nondeterminism: ``now`` and ``utcnow`` are recorded.

    It never makes an instance of itself: ``datetime.datetime(2026, 1, 1)``
    and every alternate constructor (which call the class) give a real
    ``datetime``, so what the agent builds serializes, prints and pickles as
    it would unrecorded. A subclass the agent defines in the run makes its
    own instances, and its ``now`` returns one.
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if cls is RecordingDatetime:
            return _ORIGINAL_DATETIME(*args, **kwargs)
        return super().__new__(cls, *args, **kwargs)

    @classmethod
    def now(cls, tz: _datetime.tzinfo | None = None) -> _datetime.datetime:  # type: ignore[override]
        made = cls if cls is not RecordingDatetime else _ORIGINAL_DATETIME
        return _observe("datetime.now", lambda: made.now(tz) if made is _ORIGINAL_DATETIME
                        else super(RecordingDatetime, cls).now(tz), lambda v: v.isoformat())

    @classmethod
    def utcnow(cls) -> _datetime.datetime:  # type: ignore[override]
        return _observe("datetime.utcnow", lambda: _ORIGINAL_DATETIME.utcnow() if cls is RecordingDatetime
                        else super(RecordingDatetime, cls).utcnow(), lambda v: v.isoformat())


def _reduce_datetime(value: _datetime.datetime) -> tuple[Any, tuple[Any, ...]]:
    """Pickle (and copy) a datetime while ``datetime.datetime`` is the stand-in: pickle saves a class by
    looking its name up, and ``datetime.datetime`` no longer names the real one. It is saved as the
    stand-in, which makes a real datetime again."""
    # Protocol 4's state: the plain __reduce__ (protocol 2) leaves out ``fold``, which tells the two
    # instants of a repeated wall-clock hour apart.
    reduced = value.__reduce_ex__(4)
    assert isinstance(reduced, tuple)  # a datetime reduces to (class, state), never to a name
    return RecordingDatetime, tuple(reduced[1])


def _targets() -> list[tuple[Any, str, Any]]:
    targets: list[tuple[Any, str, Any]] = [
        (time, "time", _wrap("time.time", time.time)),
        (time, "time_ns", _wrap("time.time_ns", time.time_ns)),
        (_datetime, "datetime", RecordingDatetime),
        (uuid, "uuid4", _wrap("uuid.uuid4", uuid.uuid4)),
        (os, "urandom", _wrap("os.urandom", os.urandom)),
    ]
    if hasattr(os, "getrandom"):  # Linux's getrandom(2): the same entropy as os.urandom, read another way
        targets.append((os, "getrandom", _wrap("os.getrandom", os.getrandom)))
    for name in RANDOM_FUNCTIONS:
        original = getattr(random, name, None)
        if original is not None:
            patched = _wrap_shuffle(original) if name == "shuffle" else _wrap(f"random.{name}", original)
            targets.append((random, name, patched))
    for name in SECRETS_FUNCTIONS:
        original = getattr(secrets, name, None)
        if original is not None:
            targets.append((secrets, name, _wrap(f"secrets.{name}", original)))
    return targets


def install() -> None:
    """Patch the sources (reference-counted: the last :func:`uninstall` restores them)."""
    global _users
    with _lock:
        _users += 1
        if _users > 1:
            return
        for owner, name, replacement in _targets():
            _saved.append((owner, name, getattr(owner, name)))
            _installed[(id(owner), name)] = replacement
            setattr(owner, name, replacement)
        _saved.append((copyreg.dispatch_table, _ORIGINAL_DATETIME, copyreg.dispatch_table.get(_ORIGINAL_DATETIME)))
        copyreg.pickle(_ORIGINAL_DATETIME, _reduce_datetime)


def uninstall() -> None:
    """Undo one :func:`install`; the originals come back with the last one."""
    global _users
    with _lock:
        if _users == 0:
            return
        _users -= 1
        if _users:
            return
        originals: dict[int, tuple[Any, Any]] = {}  # by the replacement's id: (the replacement, the original)
        for owner, name, original in reversed(_saved):
            if owner is copyreg.dispatch_table:
                if original is None:
                    copyreg.dispatch_table.pop(name, None)
                else:
                    copyreg.dispatch_table[name] = original
            else:
                replacement = _installed.get((id(owner), name))
                if replacement is not None:
                    originals[id(replacement)] = (replacement, original)
                # Another patcher's value (freezegun's, a test's monkeypatch) set during the run stays: putting
                # back what was there before the run left its fake clock after it had restored the real one.
                if replacement is None or getattr(owner, name, None) is replacement:
                    setattr(owner, name, original)
        _saved.clear()
        _installed.clear()
        _unbind(originals)


def _unbind(originals: dict[int, tuple[Any, Any]]) -> None:
    """Give back the originals to modules imported while the sources were patched: ``from datetime import
    datetime`` (``from time import time``) run then bound the stand-in (a wrapper), which would otherwise stay
    in that module for the life of the process, the stand-in failing its exact-type checks long after the
    run. Module globals only: a copy kept elsewhere (a default argument, a closure) keeps the stand-in."""
    for module in list(sys.modules.values()):
        namespace = getattr(module, "__dict__", None)
        if not isinstance(namespace, dict) or namespace.get("__name__") == __name__:
            continue
        for key, value in list(namespace.items()):
            pair = originals.get(id(value))
            if pair is not None and pair[0] is value and key != "RecordingDatetime" and namespace.get(key) is value:
                namespace[key] = pair[1]
