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

import os
import secrets
from bisect import bisect_left
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bitexact import config
from bitexact.canon import canonicalize
from bitexact.capture import CaptureInputError, apply_policy
from bitexact.crypto import chain_hash
from bitexact.crypto.hostkey import KEY_BYTES, HostKey, HostKeyError, host_key_path, load_host_key
from bitexact.errors import BitExactError, CanonicalizationError, EvidenceError
from bitexact.evidence.paths import split_path
from bitexact.private_files import fsync_directory
from bitexact.recording.audit import check_repair, record_repair
from bitexact.recording.journal import (
    FOLDED_SUFFIX,
    FOLDING,
    FOLDING_SUFFIX,
    folded_marks,
    release_live_lock,
    take_live_lock,
    JournalError,
    JournalRecord,
    journal_dir,
    journals_root_unusable,
    orphan_journals,
    read_journal,
    remove_journal,
)
from bitexact.recording.journal_slots import has_full_slot, read_slots, slot_files
from bitexact.recording.writer import Recorder
from bitexact.store import RecordError, store_home


@dataclass(frozen=True)
class _Orphan:
    name: str
    record: JournalRecord


def recorded_ts(record: JournalRecord) -> str | None:
    """The ``ts`` a folded entry gets: its journal's ``recorded_at``, the instant its call journaled it.

    Had its process lived, its writer would have built it (and stamped its ``ts``) moments after that
    instant, in the background; the fold's own time, hours or days later, is no instant of its recording.
    None (the fold's time) when the journal holds no instant a ``ts`` can be (bundle format: a string with
    ``T`` that ``datetime.fromisoformat`` parses with a UTC offset), which no SDK writes.
    """
    from datetime import datetime, timezone

    value = record.recorded_at
    try:
        parsed = datetime.fromisoformat(value)
    except (TypeError, ValueError):
        return None
    if "T" not in value or parsed.utcoffset() is None:
        return None
    # Written as every producer writes an instant (bundle format: `+00:00`, never `Z` or another offset).
    return parsed.astimezone(timezone.utc).isoformat()


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
    orphan. An entry a store redaction has since stripped is compared with
    the record stripped of the same paths: a destroyed value must never come
    back through a fold that failed to recognize its entry.
    """

    def __init__(self, recorder: Recorder, run_id: str, start: int, *, stop: int | None = None) -> None:
        self._recorder = recorder
        self._algs = {recorder.alg}
        """The hash algorithms the run's entries were written under (a repair may run under another)."""
        self._steps: dict[_Key, list[int]] = {}
        self._stripped: list[tuple[int, str, str | None, list[str], str]] = []
        """Redacted entries: step, kind, ctx, the paths removed, the digest of the data left."""
        for entry in recorder.store.entries(run_id, start=start, stop=stop):
            if isinstance(entry.get("alg"), str):
                self._algs.add(entry["alg"])
            if "data" not in entry:
                continue  # a kind without data: nothing to compare
            try:
                key = self._key(str(entry["kind"]), entry.get("ctx"), entry["data"])
            except BitExactError:
                continue
            if entry.get("redacted"):
                self._stripped.append((int(entry["step"]), key[0], key[1], list(entry["redacted"]), key[2]))
            else:
                self._steps.setdefault(key, []).append(int(entry["step"]))

    def exclude(self, step: int) -> None:
        """``step`` holds an orphan already named (a fold cut short wrote it): no other orphan claims it."""
        for steps in self._steps.values():
            if step in steps:
                steps.remove(step)
        self._stripped = [candidate for candidate in self._stripped if candidate[0] != step]

    def _key(self, kind: str, ctx: str | None, data: Any) -> _Key:
        return kind, ctx, chain_hash(self._recorder.alg, canonicalize(data))

    def claim(self, record: JournalRecord) -> int | None:
        """The step holding ``record``, taken so that no other orphan claims it; None when not written."""
        datas = [record.data]
        for alg in sorted(self._algs):  # as the policy made it under whichever algorithm wrote the entry
            try:
                datas.append(apply_policy(self._recorder.policy, record.kind, record.data, hints=record.hints,
                                          alg=alg).data)
            except BitExactError:
                pass
        keys: set[_Key] = set()
        for data in datas:
            try:
                keys.add(self._key(record.kind, record.ctx, data))
            except BitExactError:
                continue  # data no canonical JSON can hold (nested too deep) was never written as it is
        best: tuple[int, list[int]] | None = None
        for key in keys:
            steps = self._steps.get(key, [])
            at = bisect_left(steps, record.steps_before)  # written after it was journaled, never before
            if at < len(steps) and (best is None or steps[at] < best[0]):
                best = (steps[at], steps)
        stripped = self._stripped_match(record, datas, best[0] if best is not None else None)
        if stripped is not None:
            self._stripped.remove(stripped)
            return stripped[0]
        if best is None:
            return None
        step, steps = best
        steps.remove(step)
        return step

    def _stripped_match(self, record: JournalRecord, datas: list[Any],
                        before: int | None) -> tuple[int, str, str | None, list[str], str] | None:
        """The first redacted entry (earlier than ``before``) whose data is the record's, stripped alike."""
        for candidate in self._stripped:
            step, kind, ctx, paths, digest = candidate
            if (before is not None and step >= before) or step < record.steps_before:
                continue
            if (kind, ctx) != (record.kind, record.ctx):
                continue
            for data in datas:
                try:
                    if self._key(kind, ctx, _without(data, paths))[2] == digest:
                        return candidate
                except BitExactError:
                    continue
        return None


def _without(data: Any, paths: list[str]) -> Any:
    """``data`` with ``paths`` removed as a store redaction removes them (an emptied object kept as ``{}``)."""
    if not isinstance(data, dict):
        return data
    out = dict(data)
    for path in paths:
        top, sub = split_path(path)
        if sub is None:
            out.pop(top, None)
        elif isinstance(out.get(top), dict):
            out[top] = {k: v for k, v in out[top].items() if k != sub}
    return out


def _gather(paths: list[Path], slots: list[Path], run_id: str, host_key: HostKey,
            unreadable: dict[str, str], discarded: list[str], superseded: list[str]) -> list[_Orphan]:
    """Every orphan that opens, in record order; the rest sorted into ``unreadable``, ``discarded`` and
    ``superseded`` (an earlier journal of an entry whose write failed, journaled again as ``unwritten``:
    one record, one entry)."""
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
            if slot.record is None and slot.foreign:
                # Whole, under another host key (the recording's BITEXACT_HOST_KEY not set here): an entry
                # whose call may have returned, kept (with its file) for a repair under that key.
                unreadable[slot.name] = slot.problem or "sealed under another host key"
            elif slot.record is None:
                discarded.append(slot.name)  # its write was cut short: that call never returned
            else:
                found.append(_Orphan(slot.name, slot.record))
    kept: list[_Orphan] = []
    for orphan in found:
        if orphan.record.run_id != run_id:
            unreadable[orphan.name] = f"holds an entry of run {orphan.record.run_id}"
        else:
            kept.append(orphan)
    rewritten = {o.record.seq for o in kept if o.record.unwritten}
    for orphan in [o for o in kept if o.record.seq in rewritten and not o.record.unwritten]:
        kept.remove(orphan)
        superseded.append(orphan.name)
    return sorted(kept, key=lambda o: (o.record.seq, o.name))


def _rename(source: Path, target: Path) -> bool:
    try:
        os.rename(source, target)
        fsync_directory(source.parent)
    except OSError:
        return False
    return True


def _mark_folding(directory: Path, name: str, step: int) -> Path | None:
    """Before a journal file's entry is written: renamed ``<name>.folding-<step>`` (the step it is about to
    land at), so a fold killed between the write and :func:`_mark_folded` finds out which it was. Slots
    (``<file>#<index>``) are recognized by content instead; None for them, or when the rename fails."""
    path = directory / name
    if not path.is_file():
        return None
    intent = directory / f"{name}{FOLDING_SUFFIX}{step}"
    return intent if _rename(path, intent) else None


def _unmark(intent: Path | None, path: Path) -> None:
    if intent is not None:
        _rename(intent, path)


def _mark_folded(intent: Path | None, directory: Path, name: str, step: int) -> None:
    """A journal file whose entry just landed at ``step``: renamed ``<name>.folded-<step>``."""
    source = intent if intent is not None else directory / name
    if source.is_file():
        _rename(source, directory / f"{name}{FOLDED_SUFFIX}{step}")


def _settle_intents(recorder: Recorder, run_id: str, directory: Path, host_key: HostKey) -> dict[str, str]:
    """Journals a fold was killed while writing (``.folding-<step>``): written if its entry is at that step or
    after it (then marked ``.folded-<where>``), else an orphan again under its own name. One that does not
    open here (sealed under another host key) keeps its mark, the one record of the step it may have taken
    (an ``unwritten`` record is never found by content), and is returned by name with why.

    After it, too: the fold's append rebuilds on a head another writer moved (a redaction claim landing
    meanwhile), so the entry may have taken a later step than the one the mark names. Nothing but that
    fold wrote the run's entries past the mark's step (the recording had stopped), so the first entry
    there holding the record is its own.
    """
    kept: dict[str, str] = {}
    if not directory.is_dir():
        return kept
    for path in sorted(directory.iterdir()):
        found = FOLDING.fullmatch(path.name)
        if found is None:
            continue
        name, step = found.group(1), int(found.group(2))
        try:
            landed = _Written(recorder, run_id, step).claim(read_journal(path, host_key))
        except BitExactError as exc:
            kept[path.name] = str(exc.__cause__ or exc)
            continue
        _rename(path, directory / (f"{name}{FOLDED_SUFFIX}{landed}" if landed is not None else name))
    return kept


def _check_same_policy(recorder: Recorder, run_id: str) -> None:
    """Refuse to fold under another capture policy than the run's: an orphan holds its entry as the agent
    recorded it, before any policy ran, and the run's policy (named by digest in its run_meta) is what
    must decide what of it is stored: a field it keeps hash-only must never land in the clear."""
    try:
        meta = recorder.store.entry(run_id, 0)
    except BitExactError:
        return  # no run_meta to name a policy: nothing to compare
    recorded = meta.get("data", {}).get("capture_policy") if meta.get("kind") == "run_meta" else None
    in_force = recorder.policy.run_meta_value
    if isinstance(recorded, str) and recorded != in_force:
        raise JournalError(
            f"run {run_id} was recorded under capture policy {recorded}, but the policy in force is {in_force}:"
            " its orphan journals hold entries before any policy ran, so they are folded only under the"
            " run's own policy; set BITEXACT_CAPTURE_POLICY (and its capture key) as the run had it"
        )


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
    :class:`JournalError` for a sealed run holding orphans whose entries are
    not in its chain: nothing but audit entries may follow its seal.
    """
    check_repair(by, "fold")  # the operator is named before any orphan is written
    home = Path(home) if home is not None else (store_home(recorder.store) or config.home())
    try:
        directory = journal_dir(home, run_id)
    except JournalError:
        return []  # an id no journal directory can be named for (the SDK then writes in the call): no journal
    blocked = journals_root_unusable(home)
    if blocked is not None:  # accepting a live run's end mid-run would put a repair inside its history
        raise JournalError(f"cannot repair run {run_id}: {blocked}; move it away, then repair")
    if not directory.is_dir():
        return []  # no journal was ever made for the run: nothing to fold
    try:
        held = take_live_lock(directory)
    except FileNotFoundError:
        return []  # the run's recording ended meanwhile and removed its emptied directory: nothing to fold
    if held is None:
        # A process records the run: its journals are entries on their way into the chain, its slots
        # file is being written; folding (or removing) them now would write an entry twice, or lose
        # one whose call returned. The lock is held for the whole fold, so none can start meanwhile.
        raise JournalError(f"run {run_id} is still being recorded by a live process, or another repair is"
                           " folding it (either holds its live lock): repair it once that process has stopped")
    try:
        return _fold_held(recorder, run_id, home, directory, host_key, by)
    finally:
        # Removed while still held: a recording that starts now makes a new lock file, and its new
        # journals are none of the ones this fold named or removed.
        # A killed run with no journals left its lock alone there: the emptied directory goes with it.
        release_live_lock(home, run_id, held)


def _repair_key(home: Path) -> tuple[HostKey, str | None]:
    """The host key a repair opens the run's journals with, and None; with no host key file on this host (a
    store restored on another), a random key of no one's, under which no journal opens, and why: each is
    then kept and named unreadable, and the repair still records the operator's acceptance. A key file
    that is there but refused (others may read it, malformed) is refused here too."""
    try:
        return load_host_key(home, create=False), None
    except HostKeyError:
        path = host_key_path(home)
        if path.exists() or path.is_symlink():
            raise
        return HostKey(secrets.token_bytes(KEY_BYTES), path), f"not opened: no host key at {path} on this host"


def _fold_held(recorder: Recorder, run_id: str, home: Path, directory: Path, host_key: HostKey | None,
               by: str) -> list[str]:
    """:func:`fold_orphans` with the run's live lock held."""
    paths = orphan_journals(home, run_id)
    slots = slot_files(directory)
    partial = sorted(p for p in directory.glob(".*.tmp")) if directory.is_dir() else []
    intents = directory.is_dir() and any(FOLDING.fullmatch(p.name) for p in directory.iterdir())
    unsettled: dict[str, str] = {}
    missing_key: str | None = None
    if intents:
        # Settled under the run's own policy only: under another, a written entry the run's policy changed
        # would not match, and its mark (all that records an unwritten entry's step) would be lost.
        _check_same_policy(recorder, run_id)
        if host_key is None:
            host_key, missing_key = _repair_key(home)
        unsettled = _settle_intents(recorder, run_id, directory, host_key)
        paths = orphan_journals(home, run_id)
    marks = folded_marks(directory)
    if not paths and not partial and not marks and not unsettled and not any(has_full_slot(p) for p in slots):
        for path in slots:
            remove_journal(path)  # empty: every entry it held is in the chain
        return []
    writer = recorder.attach(run_id)
    if not intents:  # checked above already when it settled intents
        _check_same_policy(recorder, run_id)
    if host_key is None:
        host_key, missing_key = _repair_key(home)
    unreadable: dict[str, str] = dict(unsettled)
    discarded = [p.name for p in partial]
    superseded: list[str] = []
    orphans = _gather(paths, slots, run_id, host_key, unreadable, discarded, superseded)
    if missing_key is not None:  # no journal opened: each is named for the key missing, not another's
        unreadable = dict.fromkeys(unreadable, missing_key)
    folded: list[str] = [name for name, _, _ in marks]
    steps: dict[str, int] = {}
    already: dict[str, int] = {name: step for name, step, _ in marks}  # written by a fold cut short
    refused: dict[str, str] = {}
    recorded: dict[str, str] = {}  # journal -> its recorded_at, for the entries this fold writes
    written = _Written(recorder, run_id, min((o.record.steps_before for o in orphans), default=writer.steps))
    for marked in already.values():
        written.exclude(marked)  # each stored entry answers for one orphan at most, a marked one included
    # Recognized first (what this fold writes is never taken for an orphan's entry), so that a sealed
    # run is refused before anything is written, and only when an orphan's entry is not in its chain:
    # journals a crash left after their entries landed are named by the repair entry, an audit entry.
    claimed = {o.name: None if o.record.unwritten else written.claim(o.record) for o in orphans}
    missing = sum(1 for step in claimed.values() if step is None)
    if writer.sealed and missing:
        raise JournalError(
            f"run {run_id} is sealed: {missing} of its {len(orphans)} orphan journal(s) in {directory} hold"
            " entries not in its chain, which cannot follow the seal"
        )
    for orphan in orphans:
        record = orphan.record
        step = claimed[orphan.name]
        if step is not None:
            already[orphan.name] = step
        else:
            intent = _mark_folding(directory, orphan.name, writer.steps)
            try:
                steps[orphan.name] = writer.append(record.kind, record.data, prov=record.prov, ctx=record.ctx,
                                                   hints=record.hints, ts=recorded_ts(record)).step
                if record.recorded_at:
                    recorded[orphan.name] = record.recorded_at
            except (EvidenceError, CaptureInputError, CanonicalizationError, RecordError) as exc:
                # The write path refuses this entry itself (too deep, not a JSON object...): it can never be
                # written, so it must not keep the run's other orphans from their chain. Named, with why.
                refused[orphan.name] = str(exc)
                _unmark(intent, directory / orphan.name)
            except BaseException:
                _unmark(intent, directory / orphan.name)  # not written: an orphan again for the next fold
                raise
            else:
                _mark_folded(intent, directory, orphan.name, steps[orphan.name])
        folded.append(orphan.name)
    extra: dict[str, Any] = {"journals": folded, "steps": steps}
    if recorded:
        extra["recorded_at"] = recorded
    if already:
        extra["already_written"] = already
    if refused:
        extra["refused"] = refused
    if superseded:
        extra["superseded"] = superseded
    if unreadable:
        extra["unreadable"] = unreadable
    if discarded:
        extra["discarded_partial"] = discarded
    note = (f"folded {len(steps)} orphan journal entr{'y' if len(steps) == 1 else 'ies'} into the chain "
            "in record order; each call had returned before its process stopped")
    record_repair(writer, by=by, note=note, extra=extra)
    for path in paths:
        if path.name in folded or path.name in superseded:
            remove_journal(path)
    for _, _, path in marks:
        remove_journal(path)
    for name in steps:
        remove_journal(directory / f"{name}{FOLDED_SUFFIX}{steps[name]}")
    for path in [*slots, *partial]:
        # A slot is named <file>#<index>: a slots file holding an unreadable slot stays.
        if not any(name == path.name or name.startswith(f"{path.name}#") for name in unreadable):
            remove_journal(path)
    return folded
