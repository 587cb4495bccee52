"""The one write path: capture policy, entry, checkpoint, atomic append at the head.

Every door (SDK, collector, recorder, importers) and every use that writes
(redaction, repair, custody) appends through :class:`RunWriter`.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from bitexact.capture import CapturePolicy, apply_policy, load_policy
from bitexact.capture.budget import Deadline
from bitexact.crypto import GENESIS, SigningKey, default_alg
from bitexact.crypto.keystore import KeyStore, RecorderKeyError
from bitexact.errors import EvidenceError, KeyMaterialError, StaleHeadError
from bitexact.evidence.checkpoint import make_checkpoint
from bitexact.evidence.entry import encode_entry
from bitexact.evidence.kinds import AUDIT_KINDS, default_prov
from bitexact.evidence.timefmt import now_iso
from bitexact.recording.checkpoints import CheckpointPolicy
from bitexact.recording.recorder_keys import compromised_current_error
from bitexact.recording.runmeta import run_meta_data
from bitexact.store import COMPROMISED_KEY_ROLE, AppendResult, RecordError, Store

STALE_RETRIES = 64
"""How often an append rebuilds on a moved head before giving up (another process is writing)."""


def new_run_id() -> str:
    """A time-ordered, collision-resistant run id such as ``run-20261129T213000-1f3a9c2b``."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
    return f"run-{stamp}-{secrets.token_hex(4)}"


@dataclass(frozen=True, init=False)
class _Staged:
    """An entry waiting to be built onto the head: what the policy left of it."""

    kind: str
    data: dict[str, Any]
    prov: str | None
    ctx: str | None
    capture: dict[str, Any] | None
    force_checkpoint: bool
    gap: bool = False
    """A gap the policy declared: ``data`` is ``{"gap": {...}}``; its note and step are made at write time."""
    gap_of_previous: bool = False
    """For a gap: it declares the entry written just before it (else an entry withheld whole)."""
    ts: str | None = None
    """The entry's recording instant when it is not now (an entry a repair folds from its journal)."""

    def __init__(self, kind: str, data: dict[str, Any], prov: str | None, ctx: str | None,
                 capture: dict[str, Any] | None, force_checkpoint: bool, gap: bool = False,
                 gap_of_previous: bool = False, ts: str | None = None) -> None:
        # Into the instance's dict, not through the frozen dataclass's object.__setattr__ per field (about
        # 1,200 instructions each, 9 here): one is made for every entry written. Frozen as ever once made.
        fields = self.__dict__
        fields["kind"], fields["data"], fields["prov"], fields["ctx"] = kind, data, prov, ctx
        fields["capture"], fields["force_checkpoint"], fields["gap"] = capture, force_checkpoint, gap
        fields["gap_of_previous"], fields["ts"] = gap_of_previous, ts


@dataclass(frozen=True)
class WithheldResult(AppendResult):
    """What an append returns for an entry the capture policy withheld whole: its gap marker's step
    and hash. The entry itself is not in the chain; ``field`` and ``reason`` say why."""

    field: str = ""
    reason: str = ""


def _result_of(result: AppendResult, first: _Staged) -> AppendResult:
    """``result`` as an item's append returns it: a :class:`WithheldResult` when its first staged
    entry is the gap of an entry withheld whole."""
    if not first.gap or first.gap_of_previous:
        return result
    gap = first.data["gap"]
    return WithheldResult(result.step, result.hash, str(gap.get("field", "")), str(gap.get("reason", "")))


@dataclass
class _Head:
    steps: int
    hash: str
    last_checkpoint: dict[str, Any] | None
    checkpoint_at: float
    sealed: bool


def _same_length(items: Sequence[Any], own: Sequence[Any]) -> None:
    """``own`` has one slot per item: a short one would drop entries silently (zip stops early)."""
    if len(own) != len(items):
        raise RecordError(f"{len(own)} own slots for {len(items)} entries", field="own")


class RunWriter:
    """Appends to one run. Thread-safe; safe against other processes writing the same run."""

    def __init__(self, recorder: Recorder, run_id: str) -> None:
        self.recorder = recorder
        self.run_id = run_id
        self._lock = threading.RLock()  # seal() appends while holding it
        self._head = self._load_head()
        self._last: dict[str, int] = {}  # kind -> the step of the newest entry of it this writer wrote

    def _load_head(self) -> _Head:
        store = self.recorder.store
        steps, head = store.head(self.run_id)
        checkpoints = store.checkpoints(self.run_id)
        sealed = store.run(self.run_id).sealed
        last = checkpoints[-1] if checkpoints else None
        known: _Head | None = getattr(self, "_head", None)
        # Reloaded on a head another writer moved: the time rule still counts from this writer's last
        # checkpoint while no new one was minted (restarting it on every reload would never let it fall due).
        since = known.checkpoint_at if known is not None and known.last_checkpoint == last else time.monotonic()
        return _Head(steps, head, last, since, sealed)

    @property
    def steps(self) -> int:
        return self._head.steps

    @property
    def head_hash(self) -> str:
        return self._head.hash

    @property
    def sealed(self) -> bool:
        return self._head.sealed

    def last_step(self, kind: str) -> int | None:
        """The step of the newest ``kind`` entry this writer appended (a gap marker the policy or a door
        declared is none), or None. For binding a decision to what was just recorded: the head is not it
        when the policy put a gap marker after the entry."""
        with self._lock:
            return self._last.get(kind)

    def append(
        self,
        kind: str,
        data: dict[str, Any],
        *,
        prov: str | None = None,
        ctx: str | None = None,
        hints: dict[str, Any] | None = None,
        force_checkpoint: bool = False,
        own: dict[str, Any] | None = None,
        ts: str | None = None,
        guard: Callable[[], None] | None = None,
    ) -> AppendResult:
        """Apply the capture policy, build the next entry and append it durably.

        ``hints`` are the agent's custody hints ({path: "scrub" | "hash-only" |
        "scrubbed-upstream[:TOOL]"}). ``own`` holds top-level keys the door
        itself adds (an importer's ``source`` block: a file's digest and
        name), set after the policy has run, so a detector never rewrites the
        product's own declaration (a digest's digits read as a card number).
        Gaps the policy declares are recorded as ``marker`` entries right
        after the entry; an entry the policy withholds whole (an invalid hint)
        is replaced by its gap, whose result is a :class:`WithheldResult`. Refuses a non-audit entry after the seal. On a
        head moved by another process it reloads the head and rebuilds (new
        salts, new prev). ``ts`` is the entry's recording instant (and its gap
        markers'), for an entry recorded earlier than it is written (a repair
        folding a journal); by default the instant it is built. ``guard`` is
        asked before each attempt, the head it builds on read before it: what
        it refuses (by raising) was not so at that head, and an attempt whose
        head moved meanwhile is refused by the store and asked again, so a
        check in ``guard`` holds at the entry's place in the chain.
        """
        staged = self._screened(kind, data, prov, ctx, hints, force_checkpoint, own, ts)
        return _result_of(self._write(staged, guard)[0], staged[0])

    def append_batch(
        self, items: Sequence[tuple[str, dict[str, Any], str | None]],
        own: Sequence[dict[str, Any] | None] | None = None,
    ) -> list[AppendResult]:
        """Append several ``(kind, data, prov)`` entries through the policy in ONE durable commit.

        All land or none do (with their gap markers). For a door with many
        entries ready at once (a session import, a batch of relayed events):
        one fsync instead of one per entry. ``own`` gives each entry's own
        keys, as :meth:`append` takes them. Returns one result per entry
        written, gap markers included.
        """
        owns = own if own is not None else [None] * len(items)
        _same_length(items, owns)
        staged = [part for (kind, data, prov), mine in zip(items, owns)
                  for part in self._screened(kind, data, prov, None, None, False, mine)]
        return self._write(staged)

    def append_each(
        self,
        items: Sequence[tuple[str, dict[str, Any], str | None, str | None, dict[str, Any] | None]],
        own: Sequence[bool] | None = None,
    ) -> list[AppendResult]:
        """Append ``(kind, data, prov, ctx, hints)`` entries through the policy in ONE durable commit.

        What :meth:`append` returns, one per item, in order: for each, its
        entry's result (or its first gap's, a :class:`WithheldResult`, when
        the policy withheld it whole). All land or none do. For a writer draining a queue of
        entries the agent recorded: one fsync for all of them. ``own`` marks
        the items the recorder itself observes (a gap marker queued in
        record order), written as :meth:`append_own` writes them.
        """
        staged: list[_Staged] = []
        firsts: list[int] = []
        owned = own if own is not None else [False] * len(items)
        _same_length(items, owned)
        for (kind, data, prov, ctx, hints), mine in zip(items, owned):
            firsts.append(len(staged))
            if mine:
                staged.append(_Staged(kind, data, prov, ctx, None, False))
                continue
            staged.extend(self._screened(kind, data, prov, ctx, hints, False))
        results = self._write(staged)
        return [_result_of(results[i], staged[i]) for i in firsts]

    def _screened(
        self,
        kind: str,
        data: dict[str, Any],
        prov: str | None,
        ctx: str | None,
        hints: dict[str, Any] | None,
        force_checkpoint: bool,
        own: dict[str, Any] | None = None,
        ts: str | None = None,
    ) -> list[_Staged]:
        """What the policy makes of one entry: the entry itself (unless withheld whole), then its gaps."""
        captured = apply_policy(self.recorder.policy, kind, data, hints=hints, alg=self.recorder.alg)
        staged: list[_Staged] = []
        if not captured.withheld:
            kept = {**captured.data, **own} if own else captured.data
            staged.append(_Staged(kind, kept, prov, ctx, captured.block, force_checkpoint, ts=ts))
        for gap in captured.gaps:
            # The gap's step is filled in at write time: it is the entry just before it.
            staged.append(_Staged("marker", {"gap": {**gap, "kind": kind}}, None, None, None, False,
                                  gap=True, gap_of_previous=not captured.withheld, ts=ts))
        return staged

    def append_own(
        self,
        kind: str,
        data: dict[str, Any],
        *,
        prov: str | None = None,
        ctx: str | None = None,
        capture: dict[str, Any] | None = None,
        force_checkpoint: bool = False,
    ) -> AppendResult:
        """Append an entry the recorder itself observes (run_meta, run_end, gap markers).

        The capture policy governs what an agent hands over, not these; every
        other caller uses :meth:`append`.
        """
        return self._write([_Staged(kind, data, prov, ctx, capture, force_checkpoint)])[0]

    def _write(self, staged: list[_Staged], guard: Callable[[], None] | None = None) -> list[AppendResult]:
        """Build ``staged`` onto the head, with checkpoints as due, and append them in one commit.

        On a head moved by another process it reloads the head and rebuilds
        (new salts, new prev).
        """
        with self._lock:
            for _ in range(STALE_RETRIES):
                head = self._head
                if guard is not None:
                    guard()  # after the head was read: what it checks is so at that head or later
                state = _Head(head.steps, head.hash, head.last_checkpoint, head.checkpoint_at, head.sealed)
                entries: list[dict[str, Any]] = []
                checkpoints: list[dict[str, Any] | None] = []
                encoded: list[bytes | None] = []
                for item in staged:
                    entry, blob, checkpoint = self._build(state, item)
                    entries.append(entry)
                    encoded.append(blob)
                    checkpoints.append(checkpoint)
                try:
                    # The entries' canonical bytes, made while building them: the store need not make them again.
                    results = self.recorder.store.append_many(self.run_id, entries, checkpoints, encoded=encoded)
                except StaleHeadError:
                    self._head = self._load_head()
                    continue
                self._head = state
                for item, result in zip(staged, results):
                    if not (item.gap or (item.kind == "marker" and "gap" in item.data)):  # a gap marker is ours
                        self._last[item.kind] = result.step
                return results
        raise StaleHeadError(
            f"run {self.run_id}: the head kept moving under {STALE_RETRIES} attempts to append; "
            "another writer is appending as fast as it can"
        )

    def _build(
        self, state: _Head, item: _Staged
    ) -> tuple[dict[str, Any], bytes | None, dict[str, Any] | None]:
        """The next entry, its canonical bytes when made (and its checkpoint, when due) on ``state``, which it
        advances."""
        if state.sealed and item.kind not in AUDIT_KINDS:
            raise EvidenceError(
                f"run {self.run_id} is sealed: only redaction, repair, hold and hold_release"
                f" entries may follow its run_end, not {item.kind}"
            )
        data = item.data
        if item.kind == "run_end":
            # The seal attests the chain's length at the step it lands on, which a head moved by
            # another writer (a rebuild after a stale head) can change: counted here, not by the caller.
            data = {**data, "steps": state.steps + 1}
        if item.gap:
            step = state.steps - 1 if item.gap_of_previous else None
            gap = {**data["gap"], "step": step}
            where = f"step {step}" if step is not None else f"a {gap['kind']} entry (withheld whole)"
            data = {"note": f"gap: {gap.get('cause', 'unknown')} in {where}", "gap": gap}
        built = encode_entry(
            run_id=self.run_id,
            step=state.steps,
            kind=item.kind,
            prov=item.prov or default_prov(item.kind),
            data=data,
            prev=state.hash if state.steps else GENESIS,
            alg=self.recorder.alg,
            ctx=item.ctx,
            capture=item.capture,
            ts=item.ts,
        )
        entry = built.entry
        sealing = item.kind == "run_end" or state.sealed
        now = time.monotonic()
        steps_since = state.steps + 1 - (state.last_checkpoint["steps"] if state.last_checkpoint else 0)
        checkpoint = None
        if item.force_checkpoint or self.recorder.checkpoints.due(
            steps_since=steps_since, last_at=state.checkpoint_at, sealed=sealing, now=now
        ):
            checkpoint = make_checkpoint(
                previous=state.last_checkpoint,
                run_id=self.run_id,
                steps=state.steps + 1,
                head_hash=entry["hash"],
                alg=self.recorder.alg,
                key=self.recorder.signing_key(),
            )
            state.last_checkpoint, state.checkpoint_at = checkpoint, now
        state.steps, state.hash, state.sealed = state.steps + 1, entry["hash"], sealing
        return entry, built.encoded, checkpoint

    def seal(self) -> AppendResult:
        """Append ``run_end`` (``steps`` = its index + 1) with a head-covering checkpoint."""
        with self._lock:
            return self.append_own("run_end", {}, force_checkpoint=True)  # _build counts its steps


class Recorder:
    """The write path for one store, one recorder key and one capture policy.

    ``policy`` defaults to the policy in force (``BITEXACT_CAPTURE_POLICY``, else
    the shipped default); an unusable policy raises ``PolicyError`` here, so a
    process with a broken policy records nothing.
    """

    def __init__(
        self,
        store: Store,
        key: SigningKey,
        *,
        alg: str | None = None,
        checkpoints: CheckpointPolicy | None = None,
        policy: CapturePolicy | None = None,
        keys: KeyStore | None = None,
    ) -> None:
        store.check_intact()  # before anything is written through it: the key metadata just below included
        self.store = store
        self.key = key
        self.keys = keys
        self._key_lock = threading.Lock()
        # Not yet compared: the first checkpoint (or run start) reads the key files once more, so a rotation
        # between the caller's read of ``key`` and this writer's first use is never missed.
        self._keys_seen: tuple[object, ...] = ()
        self.alg = alg or default_alg()
        self.checkpoints = checkpoints or CheckpointPolicy.from_env()
        self.policy = policy if policy is not None else load_policy()
        self._remember(key)

    def _remember(self, key: SigningKey) -> None:
        """Record ``key`` in the store's keys (every key that ever signed for it is kept there), or refuse it
        (:class:`~bitexact.crypto.keystore.CompromisedCurrentKeyError`) when the store marks it retired as
        compromised."""
        known = [row for row in self.store.keys() if row["key_id"] == key.key_id]
        if any(row["role"] == COMPROMISED_KEY_ROLE for row in known):
            # keys/ restored from a backup older than `keys rotate --compromised`: the key files no longer say the
            # key leaked, the store does. Nothing signs with it, as when the key files say so (KeyStore.current).
            raise compromised_current_error(key.key_id, self.keys.current_path if self.keys is not None else None)
        if not known:
            self.store.put_key(key.key_id, key.public_hex, "recorder", now_iso())

    def _store_marked(self, key_id: str) -> bool:
        """Whether the store records ``key_id`` as retired as compromised."""
        return any(row["key_id"] == key_id and row["role"] == COMPROMISED_KEY_ROLE for row in self.store.keys())

    def signing_key(self) -> SigningKey:
        """The key to sign a checkpoint with now.

        With ``keys`` (the data directory's key files), the current key is read again whenever its file or
        the record of compromised keys changed since it was read (one ``stat`` of each): a process that
        outlives a ``bitexact keys rotate`` in another process signs with the new key from its next
        checkpoint on, and one that outlives ``keys rotate --compromised`` never signs with the old key
        again. A key that cannot be read again, or that the store marks compromised (keys/ restored from a
        backup older than the mark), leaves the one in hand in use, unless that one is recorded as compromised
        (by the key files or the store): then :class:`RecorderKeyError` (nothing signs, the entry is not
        written).
        """
        keys = self.keys
        if keys is None:
            return self.key
        seen = keys.state()
        if seen == self._keys_seen:
            return self.key
        with self._key_lock:
            if seen == self._keys_seen:
                return self.key
            key: SigningKey | None = None
            try:
                key = keys.current()
                self._remember(key)  # refuses a key the store marks compromised
            except KeyMaterialError as exc:
                if self.key.key_id in keys.compromised_ids():  # raises, unreadable: it may be listed
                    raise RecorderKeyError(
                        f"recorder key {self.key.key_id} is recorded as compromised in {keys.compromised_path}"
                        f" and {keys.current_path} holds no usable key to sign with instead: run"
                        " `bitexact keys rotate --compromised` to finish replacing it"
                    ) from None
                if self._store_marked(self.key.key_id):  # keys/ restored from before the mark, under this process
                    raise RecorderKeyError(
                        str(exc) if key is not None and key.key_id == self.key.key_id else
                        f"recorder key {self.key.key_id} is recorded as compromised in the store, and no other key"
                        f" can sign instead: {exc}"
                    ) from None
                return self.key  # read again at the next checkpoint
            self.key, self._keys_seen = key, seen
            return key

    def start(
        self,
        *,
        run_id: str | None = None,
        name: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> RunWriter:
        """Create a run and append its ``run_meta``. Its ``name`` is text an operator or an agent wrote, and
        kept where no entry's capture block declares it (the runs table, ``run_meta``): the policy scrubs it
        as any text before either holds it."""
        run_id = run_id if run_id is not None else new_run_id()  # "" is refused by the store, naming run_id
        self.signing_key()  # a key retired as compromised since: refused before the run exists
        if name is not None:
            name = self.scrubbed(name)
        self.store.create_run(run_id, {"name": name} if name else {})
        writer = RunWriter(self, run_id)
        meta_data = run_meta_data(name=name, capture_policy=self.policy.run_meta_value, extra=meta)
        writer.append_own("run_meta", meta_data)
        return writer

    def scrubbed(self, text: str) -> str:
        """``text`` as the capture policy leaves text (a card number or a password in a run's or a file's
        name scrubbed); as given when the policy is off."""
        if self.policy.off:
            return text
        return self.policy.scanner.scrub_text(text, Deadline.unlimited())[0]

    def attach(self, run_id: str) -> RunWriter:
        """A writer for an existing run (audit entries, resumed recording)."""
        return RunWriter(self, run_id)
