"""The file layer of a BagIt provenance bag: bagit.txt and both manifests (bundle spec §10.3, §12.2 step 1)."""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from bitexact.canon import read_within
from bitexact.evidence.verify.failure import CheckFailed

BAGIT_TXT = b"BagIt-Version: 1.0\nTag-File-Character-Encoding: UTF-8\n"
_MANIFEST_LINE = re.compile(r"([0-9a-f]{64})  (.+)")


def read(path: Path) -> bytes:
    """The file's bytes, or ``cannot read {basename}: {strerror}``.

    Never read past the largest document read (256 MiB): a bag is someone else's directory, and a link in it
    to a device (``/dev/zero``) would otherwise be read into memory without bound.
    """
    try:
        return read_within(path)  # too large: EFBIG, said as any other failure to read
    except OSError as exc:
        raise CheckFailed(f"cannot read {path.name}: {exc.strerror}") from None


def inside(base: Path, relative: str) -> Path:
    """``base / relative``, refusing a path that climbs out of ``base``."""
    target = (base / relative).resolve()
    if not target.is_relative_to(base.resolve()):
        raise ValueError(f"path {relative!r} leaves {base.name}/")
    return target


def _manifest(root: Path, name: str) -> list[tuple[str, str]]:
    if not (root / name).is_file():
        raise CheckFailed(f"missing {name}")
    text = read(root / name).decode("utf-8")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    rows = []
    for number, line in enumerate(lines, start=1):
        match = _MANIFEST_LINE.fullmatch(line)
        if match is None:
            raise CheckFailed(f"{name} line {number} is malformed - expected '<sha256>  <path>'")
        rows.append((match[1], match[2]))
    return rows


def _payload_files(root: Path) -> set[str]:
    found: set[str] = set()
    for directory, _, files in os.walk(root / "data"):
        for name in files:
            found.add((Path(directory) / name).relative_to(root).as_posix())
    return found


def check_files(root: Path) -> None:
    """§12.2 bag step 1: bagit.txt, the payload manifest, the tag manifest."""
    bagit = root / "bagit.txt"
    if not bagit.is_file() or read(bagit) != BAGIT_TXT:
        raise CheckFailed("not a BagIt bag - missing or malformed bagit.txt")
    rows = _manifest(root, "manifest-sha256.txt")
    if {path for _, path in rows} != _payload_files(root):
        raise CheckFailed("bag payload does not match manifest-sha256.txt - files were added or removed")
    for digest, path in rows:
        if hashlib.sha256(read(root / path)).hexdigest() != digest:
            raise CheckFailed(f"payload file {path} fails its sha256 checksum")
    for digest, path in _manifest(root, "tagmanifest-sha256.txt"):
        try:
            target = inside(root, path)
        except ValueError:
            raise CheckFailed(f"tag file {path} fails its sha256 checksum") from None
        if hashlib.sha256(read(target)).hexdigest() != digest:
            raise CheckFailed(f"tag file {path} fails its sha256 checksum")
