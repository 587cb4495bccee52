"""What the verifier is told to trust: key pins, trust files and the TSA pin (bundle spec §11).

A pin is a set of lowercase hex public keys. ``--expect-key`` and a trust
file's ``bundle_keys`` combine into one set (a key passes when either names
it), and the same goes for the recorder tier. The spec words a rejection by
a single exact key ("the trusted key") differently from a rejection by a set
("a trusted key"); :meth:`Pins.from_options` remembers which one it built.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bitexact.canon import DEFAULT_MAX_BYTES, loads, read_limited, read_within
from bitexact.errors import BitExactError, StrictJSONError

_TRUST_KEYS = ("bundle_keys", "recorder_keys")


class InputError(BitExactError):
    """An input the verifier was pointed at cannot be used (§11, §12.3).

    ``str(exc)`` is the spec's message. The verdict line for it is
    ``FAIL: <message>`` (exit 1): the spec defines these texts as verdicts,
    unlike a malformed command line, which is the CLI's usage error (exit 2).
    """


def _normalise(keys: frozenset[str] | None) -> frozenset[str] | None:
    if keys is None:
        return None
    return frozenset(k.lower() for k in keys)


@dataclass(frozen=True)
class Pins:
    """The verifier's pins. ``None`` for a key set means that tier is not pinned.

    ``bundle_keys`` holds ``--expect-key`` and the trust file's ``bundle_keys``;
    ``recorder_keys`` holds ``--expect-recorder-key`` and ``recorder_keys``.
    ``*_from_trust_file`` says a trust file contributed to the set, which turns
    rejection messages into their set form even when the set has one key.
    """

    bundle_keys: frozenset[str] | None = None
    recorder_keys: frozenset[str] | None = None
    tsa_cert: bytes | None = None
    require_sealed: bool = False
    bundle_keys_from_trust_file: bool = field(default=False, kw_only=True)
    recorder_keys_from_trust_file: bool = field(default=False, kw_only=True)

    def __post_init__(self) -> None:
        # Pinned keys compare case-insensitively (§0): store them lowercase once.
        object.__setattr__(self, "bundle_keys", _normalise(self.bundle_keys))
        object.__setattr__(self, "recorder_keys", _normalise(self.recorder_keys))

    @classmethod
    def from_options(
        cls,
        *,
        expect_key: str | None = None,
        expect_recorder_key: str | None = None,
        trust: tuple[frozenset[str] | None, frozenset[str] | None] | None = None,
        tsa_cert: bytes | None = None,
        require_sealed: bool = False,
    ) -> Pins:
        """Combine command-line pins with a loaded trust file (§11: flags and a trust file combine)."""
        trusted_bundle, trusted_recorder = trust if trust is not None else (None, None)
        return cls(
            bundle_keys=_combine(expect_key, trusted_bundle),
            recorder_keys=_combine(expect_recorder_key, trusted_recorder),
            tsa_cert=tsa_cert,
            require_sealed=require_sealed,
            bundle_keys_from_trust_file=trusted_bundle is not None,
            recorder_keys_from_trust_file=trusted_recorder is not None,
        )

    @property
    def bundle_pinned(self) -> bool:
        return self.bundle_keys is not None

    @property
    def recorder_pinned(self) -> bool:
        return self.recorder_keys is not None

    @property
    def exact_bundle_key(self) -> bool:
        """True when the bundle pin is one key named on its own (``--expect-key``)."""
        return _exact(self.bundle_keys, self.bundle_keys_from_trust_file)

    @property
    def exact_recorder_key(self) -> bool:
        """True when the recorder pin is one key named on its own (``--expect-recorder-key``)."""
        return _exact(self.recorder_keys, self.recorder_keys_from_trust_file)

    def trusts_bundle_key(self, public_key: object) -> bool:
        """Whether a bundle/envelope signer passes the bundle pin (always, when unpinned)."""
        return _in(self.bundle_keys, public_key)

    def trusts_recorder_key(self, public_key: object) -> bool:
        """Whether a checkpoint/WORM signer passes the recorder pin (always, when unpinned)."""
        return _in(self.recorder_keys, public_key)


def _combine(flag: str | None, trusted: frozenset[str] | None) -> frozenset[str] | None:
    if flag is None and trusted is None:
        return None
    keys = set(trusted or ())
    if flag is not None:
        keys.add(flag)
    return frozenset(keys)


def _exact(keys: frozenset[str] | None, from_trust_file: bool) -> bool:
    return keys is not None and len(keys) == 1 and not from_trust_file


def _in(keys: frozenset[str] | None, public_key: object) -> bool:
    if keys is None:
        return True
    return isinstance(public_key, str) and public_key.lower() in keys


def read_bounded(path: Path | str) -> bytes:
    """``path``'s bytes, read no further than one past the largest document read: a device or a stuck pipe
    (``/dev/zero``) is never read into memory without bound. :class:`InputError` if it cannot be read or
    holds more (``no such file: PATH (File too large)``)."""
    return _read(path, read_within)


def _read(path: Path | str, reader: Callable[[Path | str], bytes]) -> bytes:
    try:
        return reader(path)
    except OSError as exc:
        raise InputError(f"no such file: {path} ({exc.strerror})") from None


def load_trust_file(path: Path | str) -> tuple[frozenset[str] | None, frozenset[str] | None]:
    """Read a trust file (§11) into ``(bundle_keys, recorder_keys)``, each ``None`` when absent.

    ``None`` (the file has no such list) leaves that tier unpinned, while an
    empty list pins it to nothing: "an empty list trusts nothing".

    Raises :class:`InputError` with the spec's message: the first of the
    listed problems that applies, before any bundle is read.
    """
    raw = _read(path, read_limited)  # over the limit: said as JSON over the limit, below
    if len(raw) > DEFAULT_MAX_BYTES:
        raise InputError(f"trust file is not valid JSON: document is over the limit of {DEFAULT_MAX_BYTES} bytes")
    try:
        doc = loads(raw)
    except StrictJSONError as exc:
        raise InputError(f"trust file is not valid JSON: {exc}") from None
    return parse_trust_document(doc)


def parse_trust_document(doc: Any) -> tuple[frozenset[str] | None, frozenset[str] | None]:
    """Validate an already-parsed trust file, in the order §11 lists its messages."""
    if not isinstance(doc, dict):
        raise InputError("trust file is not a JSON object")
    unknown = sorted(k for k in doc if k not in _TRUST_KEYS)
    if unknown:
        raise InputError(f"trust file has unrecognized key {unknown[0]!r}")
    if not any(name in doc for name in _TRUST_KEYS):
        raise InputError("trust file names no bundle_keys or recorder_keys")
    for name in _TRUST_KEYS:
        if name in doc and not isinstance(doc[name], list):
            raise InputError(f"trust file {name} must be a list")
    sets: list[frozenset[str] | None] = []
    for name in _TRUST_KEYS:
        if name not in doc:
            sets.append(None)
            continue
        keys = set()
        for item in doc[name]:
            public_key = item.get("public_key") if isinstance(item, dict) else None
            # A non-string key is as unusable as a missing one.
            if not isinstance(public_key, str) or not public_key:
                raise InputError(f"trust file {name} entry has no public_key")
            keys.add(public_key.lower())
        sets.append(frozenset(keys))
    return sets[0], sets[1]
