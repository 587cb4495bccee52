"""The ``run_meta`` entry that opens every run."""

from __future__ import annotations

import hashlib
import platform
import socket
import sys
import uuid
from typing import Any

import bitexact


_RANDOM_NODE_BIT = 1 << 40
"""The multicast bit: set in the random number ``uuid.getnode()`` falls back to (RFC 4122), never in a
network card's (unicast) address."""


def host_fingerprint() -> str:
    """A stable, non-identifying fingerprint of this host (hash of hostname and machine id)."""
    parts = [socket.gethostname(), platform.machine()]
    node = uuid.getnode()
    if not node & _RANDOM_NODE_BIT:  # with no hardware address, getnode() is a random number per process
        parts.append(str(node))
    try:
        with open("/etc/machine-id", encoding="ascii") as handle:
            parts.append(handle.read().strip())
    except OSError:
        pass
    return hashlib.blake2b("|".join(parts).encode(), digest_size=8).hexdigest()


def run_meta_data(*, name: str | None, capture_policy: str, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """Versions, platform, host fingerprint and the capture policy digest (or ``off``)."""
    data: dict[str, Any] = {
        "python": platform.python_version(),
        "implementation": sys.implementation.name,
        "platform": platform.platform(),
        "bitexact": bitexact.__version__,
        "host": host_fingerprint(),
        "capture_policy": capture_policy,
    }
    if name is not None:
        data["name"] = name
    if extra:
        data.update(extra)
    return data
