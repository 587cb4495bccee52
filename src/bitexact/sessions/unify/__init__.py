"""The artifact merger (conformance class M): ``aw_session.jsonl`` from a runtime root.

``unify(artifact_dir, out)`` collects every catalogued source below
``artifact_dir`` (the downloaded runtime root), projects it to the essential
payloads of UAS 3.5 with provenance, redacts registered masks and known
credentials, interleaves by timestamp while keeping each source's order,
appends coverage and warnings, and writes compact JSONL atomically.
Repeated runs over the same inputs give byte-identical files.  Collection
streams: each source is serialized to disk as it is read and the merged
file is written by a k-way merge, so peak memory is a constant plus the
source being read, not the size of the output.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bitexact.gcpause import gc_paused
from bitexact.sessions.render.escape import shown
from bitexact.sessions.unify.baseline import Pricing
from bitexact.sessions.unify.files import (
    CollectionIOError,
    SymlinkRefusedError,
    UnifyError,
)
from bitexact.sessions.unify.merge import collect
from bitexact.sessions.unify.sources import existing_source_paths, is_source_path
from bitexact.sessions.unify.write import remove_stale, write_records_atomic


SHOWN_WARNINGS = 30
"""The warnings ``bitexact sessions unify`` lists; a line counts the others (the file holds them all)."""


@dataclass(frozen=True)
class UnifyReport:
    """What one ``unify`` run wrote."""

    path: Path
    records: int
    bytes: int
    coverage: dict[str, Any]
    warnings: tuple[str, ...]
    warning_data: tuple[dict[str, Any], ...] = ()
    """Each warning as its ``session.collection_warning`` payload (code, source, component, message, and path
    and line when it has them), in the order of ``warnings``."""

    def summary(self, *, shown_warnings: int | None = SHOWN_WARNINGS) -> str:
        """The text ``bitexact sessions unify`` prints (no payloads).

        The first ``shown_warnings`` warnings are listed (all with ``None``), then one line counts the
        rest: an invalid agent log gives a warning a line (127,000 lines printed for one such log), and
        every warning is in the written file as a ``session.collection_warning`` record.
        """
        cov = self.coverage
        lines = [
            f"wrote {shown(str(self.path))} ({self.records} records, {self.bytes} bytes)",
            f"source events: {cov['eventCount']} ({cov['untimedEventCount']} untimed)",
        ]
        for source in cov["sources"]:
            state = " (empty)" if source["empty"] else ""
            lines.append(  # a path holds directory names from the artifact tree: shown escaped
                f"  {source['component']}/{source['phase']} {shown(source['path'])}: "
                f"{source['events']} events{state}"
            )
        if cov["absentComponents"]:
            lines.append("absent components: " + ", ".join(cov["absentComponents"]))
        lines.append(f"warnings: {cov['warningCount']}")
        listed = self.warnings if shown_warnings is None else self.warnings[:shown_warnings]
        lines.extend(f"  {shown(w)}" for w in listed)
        if len(listed) < len(self.warnings):
            lines.append(f"  ... {len(self.warnings) - len(listed)} more warnings; all {len(self.warnings)} are in"
                         f" {shown(str(self.path))} as session.collection_warning records")
        return "\n".join(lines) + "\n"

    def to_json(self) -> dict[str, Any]:
        """What ``bitexact sessions unify --json`` prints: the file written, its counts, the number of
        warnings and each one as the object its ``session.collection_warning`` record in the file holds
        (``collection_warnings``), and the coverage."""
        return {"path": str(self.path), "records": self.records, "bytes": self.bytes,
                "warnings": len(self.warnings), "collection_warnings": list(self.warning_data),
                "coverage": self.coverage}


def source_output(artifact_dir: Path, out: Path) -> str | None:
    """The root-relative path of the source ``out`` is, when it names a file the collection of
    ``artifact_dir`` reads.

    Both are resolved first (symbolic links in their directories, ``..``),
    so another spelling of the same place is found too. An ``out`` under
    another name that is the same file as an existing source - a hard link
    to it, or a symbolic link to it, inside the root or not - is found by its
    identity (``st_dev``, ``st_ino``): the rename would take that name from the
    evidence, and a failed collection removes a previous output.
    """
    try:
        target = Path(out).parent.resolve() / Path(out).name
        relative = target.relative_to(Path(artifact_dir).resolve())
    except (ValueError, OSError):  # outside the root, or a directory that cannot be resolved
        relative = None
    if relative is not None and is_source_path(relative.as_posix()):
        return relative.as_posix()
    return _same_file_as_a_source(Path(artifact_dir), Path(out))


def _same_file_as_a_source(root: Path, out: Path) -> str | None:
    """The existing source that ``out`` (followed through a symbolic link) is the very file of, if any."""
    try:
        found = os.stat(out)
    except (OSError, ValueError):  # nothing there (or a link to nothing): no file to be the same as
        return None
    if not stat.S_ISREG(found.st_mode):
        return None
    for relative in existing_source_paths(root):
        try:
            source = os.lstat(root / relative)  # a source that is a link is not read: the link itself
        except OSError:
            continue
        if stat.S_ISREG(source.st_mode) and (source.st_dev, source.st_ino) == (found.st_dev, found.st_ino):
            return relative
    return None


def unify(
    artifact_dir: Path,
    out: Path,
    *,
    masks: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    pricing: Pricing | None = None,
) -> UnifyReport:
    """Collect ``artifact_dir`` and write the unified session to ``out``.

    On any failure the exception propagates and a previous ``out`` is
    removed, so a stale or partial file is never left for upload (T-UAS-059).
    Memory does not grow with the collected volume: sources are serialized
    into anonymous temporary files in ``out``'s directory and merged into
    the atomic temporary output as a stream (see ``merge.py``).

    An ``out`` that names a file the collection reads, or is one under
    another name (a hard or symbolic link to it: ``source_output``), is
    refused with ``UnifyError`` before anything is read or removed: the
    unified file would replace the evidence it was made from.
    """
    out = Path(out)
    source = source_output(Path(artifact_dir), out)
    if source is not None:
        raise UnifyError(f"{out} is {source} in {artifact_dir}, a file the collection reads: writing the unified "
                         "file there would replace that evidence; name another output file")
    # Source stores spill next to the output (the filesystem that must hold
    # the result anyway; the system temporary directory may be RAM-backed).
    spill_dir = out.parent if out.parent.is_dir() else None
    try:
        with gc_paused(), collect(Path(artifact_dir), masks=masks, env=env, pricing=pricing,
                                  spill_dir=spill_dir) as collection:
            records, size = write_records_atomic(out, collection.iter_records())
    except BaseException:
        remove_stale(out)
        raise
    warnings = tuple(
        f"{w.path or w.source}{f':{w.line}' if w.line else ''}: {w.code}: {w.message}"
        for w in collection.warnings
    )
    return UnifyReport(Path(out), records, size, collection.coverage, warnings,
                       tuple(w.data() for w in collection.warnings))


__all__ = ["CollectionIOError", "SymlinkRefusedError", "UnifyError", "UnifyReport", "source_output", "unify"]
