"""Folding orphan journals back into their run: every entry whose call returned reaches the chain.

A journal (a ``.bxj`` file for a large entry, a slot of a ``.bxs`` file for
a small one) still present when its process is gone is an *orphan*.
:func:`fold_orphans` writes every orphan of a run into the chain in record
order and appends a ``repair`` entry naming them. A crash can fall between
an entry's write and its journal's removal (or its slot's release), so an
orphan whose entry is already in the chain is recognized and named, not
written twice.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bitexact import config
from bitexact.canon import canonicalize
from bitexact.capture import CaptureInputError, apply_policy
from bitexact.crypto import chain_hash
from bitexact.crypto.hostkey import HostKey, load_host_key
from bitexact.errors import BitExactError, CanonicalizationError, EvidenceError
from bitexact.recording.audit import record_repair
from bitexact.recording.journal import (
    JournalError,
    JournalRecord,
    journal_dir,
    orphan_journals,
    read_journal,
    remove_journal,
)
from bitexact.recording.journal_slots import has_full_slot, read_slots, slot_files
from bitexact.recording.writer import Recorder
from bitexact.store import RecordError


@dataclass(frozen=True)
class _Orphan:
    name: str
    record: JournalRecord


def _store_home(recorder: Recorder) -> Path:
    path = getattr(recorder.store, "path", None)
    return Path(path).parent if path is not None else config.home()


_Key = tuple[str, str | None, str]
"""An entry by content: kind, ctx, and the digest of its data's canonical bytes."""


class _Written:
    """The run's entries as they stood before the fold, by content, to recognize an orphan already written.

    A crash can fall between an entry's commit and its journal's removal, so
    an orphan may already be in the chain. The chain holds the entry as the
    capture policy left it, so a record is looked for both as it is and as
    the run's policy makes it. Each stored entry answers for one orphan at
    most, in record order: two identical records both journaled are two
    entries, and the entries this fold writes are never taken for an orphan's.
    One entry is read (and its data canonicalized) once per fold, not once per
    orphan.
    """

    def __init__(self, recorder: Recorder, run_id: str, start: int) -> None:
        self._recorder = recorder
        self._steps: dict[_Key, list[int]] = {}
        for entry in recorder.store.entries(run_id, start=start):
            if "data" not in entry:
                continue  # redacted whole, or a kind without data: nothing to compare
            try:
                key = self._key(str(entry["kind"]), entry.get("ctx"), entry["data"])
            except BitExactError:
                continue
            self._steps.setdefault(key, []).append(int(entry["step"]))

    def _key(self, kind: str, ctx: str | None, data: Any) -> _Key:
        return kind, ctx, chain_hash(self._recorder.alg, canonicalize(data))

    def claim(self, record: JournalRecord) -> int | None:
        """The step holding ``record``, taken so that no other orphan claims it; None when not written."""
        keys = {self._key(record.kind, record.ctx, record.data)}
        try:
            captured = apply_policy(self._recorder.policy, record.kind, record.data, hints=record.hints,
                                    alg=self._recorder.alg)
            keys.add(self._key(record.kind, record.ctx, captured.data))
        except BitExactError:
            pass
        best: tuple[int, list[int]] | None = None
        for key in keys:
            steps = self._steps.get(key, [])
            at = bisect_left(steps, record.steps_before)  # written after it was journaled, never before
            if at < len(steps) and (best is None or steps[at] < best[0]):
                best = (steps[at], steps)
        if best is None:
            return None
        step, steps = best
        steps.remove(step)
        return step


def _gather(paths: list[Path], slots: list[Path], run_id: str, host_key: HostKey,
            unreadable: dict[str, str], discarded: list[str]) -> list[_Orphan]:
    """Every orphan that opens, in record order; the rest sorted into ``unreadable`` and ``discarded``."""
    found: list[_Orphan] = []
    for path in paths:
        try:
            found.append(_Orphan(path.name, read_journal(path, host_key)))
        except JournalError as exc:
            unreadable[path.name] = str(exc.__cause__ or exc)
    for path in slots:
        try:
            opened = read_slots(path, host_key)
        except (OSError, JournalError) as exc:
            unreadable[path.name] = str(exc)
            continue
        for slot in opened:
            if slot.record is None:
                discarded.append(slot.name)  # its write was cut short: that call never returned
            else:
                found.append(_Orphan(slot.name, slot.record))
    kept: list[_Orphan] = []
    for orphan in found:
        if orphan.record.run_id != run_id:
            unreadable[orphan.name] = f"holds an entry of run {orphan.record.run_id}"
        else:
            kept.append(orphan)
    return sorted(kept, key=lambda o: (o.record.seq, o.name))


def fold_orphans(
    recorder: Recorder,
    run_id: str,
    *,
    home: Path | None = None,
    host_key: HostKey | None = None,
    by: str = "bitexact repair",
) -> list[str]:
    """Write the run's orphan journals into its chain in record order; append a ``repair`` naming them.

    Returns the names of the journals folded (``<file>`` for a journal file,
    ``<file>#<slot>`` for a slot), those whose entry was already in the chain
    included. A journal file that does not open is named in the repair entry
    as unreadable and kept; a slot that does not open was being written when
    its process died (its call never returned) and is named as discarded.
    Journals are removed only after the repair entry has landed, so a fold
    cut short folds again without writing an entry twice. Raises
    :class:`JournalError` for a sealed run: nothing but audit entries may
    follow its seal.
    """
    home = Path(home) if home is not None else _store_home(recorder)
    directory = journal_dir(home, run_id)
    paths = orphan_journals(home, run_id)
    slots = slot_files(directory)
    partial = sorted(p for p in directory.glob(".*.tmp")) if directory.is_dir() else []
    if not paths and not partial and not any(has_full_slot(p) for p in slots):
        for path in slots:
            remove_journal(path)  # empty: every entry it held is in the chain
        return []
    writer = recorder.attach(run_id)
    host_key = host_key or load_host_key(home, create=False)
    unreadable: dict[str, str] = {}
    discarded = [p.name for p in partial]
    orphans = _gather(paths, slots, run_id, host_key, unreadable, discarded)
    if writer.sealed and orphans:
        raise JournalError(
            f"run {run_id} is sealed: its {len(orphans)} orphan journal(s) in {directory} cannot follow the seal"
        )
    folded: list[str] = []
    steps: dict[str, int] = {}
    already: dict[str, int] = {}
    refused: dict[str, str] = {}
    written = _Written(recorder, run_id, min((o.record.steps_before for o in orphans), default=writer.steps))
    for orphan in orphans:
        record = orphan.record
        try:
            step = None if record.unwritten else written.claim(record)
            if step is not None:
                already[orphan.name] = step
            else:
                steps[orphan.name] = writer.append(record.kind, record.data, prov=record.prov, ctx=record.ctx,
                                                   hints=record.hints).step
        except (EvidenceError, CaptureInputError, CanonicalizationError, RecordError) as exc:
            # The write path refuses this entry itself (too deep, not a JSON object...): it can never be
            # written, so it must not keep the run's other orphans from their chain. Named, with why.
            refused[orphan.name] = str(exc)
        folded.append(orphan.name)
    extra: dict[str, Any] = {"journals": folded, "steps": steps}
    if already:
        extra["already_written"] = already
    if refused:
        extra["refused"] = refused
    if unreadable:
        extra["unreadable"] = unreadable
    if discarded:
        extra["discarded_partial"] = discarded
    note = (f"folded {len(steps)} orphan journal entr{'y' if len(steps) == 1 else 'ies'} into the chain "
            "in record order; each call had returned before its process stopped")
    record_repair(writer, by=by, note=note, extra=extra)
    for path in paths:
        if path.name in folded:
            remove_journal(path)
    for path in [*slots, *partial]:
        # A slot is named <file>#<index>: a slots file holding an unreadable slot stays.
        if not any(name == path.name or name.startswith(f"{path.name}#") for name in unreadable):
            remove_journal(path)
    return folded
