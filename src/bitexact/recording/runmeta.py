"""The ``run_meta`` entry that opens every run."""

from __future__ import annotations

import hashlib
import platform
import socket
import sys
import uuid
from typing import Any

import bitexact


def host_fingerprint() -> str:
    """A stable, non-identifying fingerprint of this host (hash of hostname and machine id)."""
    parts = [socket.gethostname(), platform.machine(), str(uuid.getnode())]
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
