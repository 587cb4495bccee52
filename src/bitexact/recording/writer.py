"""The one write path: capture policy, entry, checkpoint, atomic append at the head.

Every door (SDK, collector, recorder, importers) and every use that writes
(redaction, repair, custody) appends through :class:`RunWriter`.
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from bitexact.capture import CapturePolicy, apply_policy, load_policy
from bitexact.crypto import GENESIS, SigningKey, default_alg
from bitexact.errors import EvidenceError, StaleHeadError
from bitexact.evidence.checkpoint import make_checkpoint
from bitexact.evidence.entry import build_entry
from bitexact.evidence.kinds import AUDIT_KINDS, default_prov
from bitexact.recording.checkpoints import CheckpointPolicy
from bitexact.recording.runmeta import run_meta_data
from bitexact.store import AppendResult, Store

STALE_RETRIES = 64
"""How often an append rebuilds on a moved head before giving up (another process is writing)."""


def new_run_id() -> str:
    """A time-ordered, collision-resistant run id such as ``run-20261129T213000-1f3a9c2b``."""
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S")
    return f"run-{stamp}-{secrets.token_hex(4)}"


@dataclass
class _Head:
    steps: int
    hash: str
    last_checkpoint: dict[str, Any] | None
    checkpoint_at: float
    sealed: bool


class RunWriter:
    """Appends to one run. Thread-safe; safe against other processes writing the same run."""

    def __init__(self, recorder: Recorder, run_id: str) -> None:
        self.recorder = recorder
        self.run_id = run_id
        self._lock = threading.RLock()  # seal() appends while holding it
        self._head = self._load_head()

    def _load_head(self) -> _Head:
        store = self.recorder.store
        steps, head = store.head(self.run_id)
        checkpoints = store.checkpoints(self.run_id)
        sealed = store.run(self.run_id).sealed
        return _Head(steps, head, checkpoints[-1] if checkpoints else None, time.monotonic(), sealed)

    @property
    def steps(self) -> int:
        return self._head.steps

    @property
    def head_hash(self) -> str:
        return self._head.hash

    @property
    def sealed(self) -> bool:
        return self._head.sealed

    def append(
        self,
        kind: str,
        data: dict[str, Any],
        *,
        prov: str | None = None,
        ctx: str | None = None,
        hints: dict[str, Any] | None = None,
        force_checkpoint: bool = False,
    ) -> AppendResult:
        """Apply the capture policy, build the next entry and append it durably.

        ``hints`` are the agent's custody hints ({path: "scrub" | "hash-only" |
        "scrubbed-upstream[:TOOL]"}). Gaps the policy declares are recorded as
        ``marker`` entries right after the entry; an entry the policy withholds
        whole (an invalid hint) is replaced by its gap. Refuses a non-audit
        entry after the seal. On a head moved by another process it reloads the
        head and rebuilds (new salts, new prev).
        """
        captured = apply_policy(self.recorder.policy, kind, data, hints=hints, alg=self.recorder.alg)
        with self._lock:
            if captured.withheld:
                return self._append_gaps(kind, captured.gaps, step=None)[0]
            result = self.append_own(kind, captured.data, prov=prov, ctx=ctx, capture=captured.block,
                                  force_checkpoint=force_checkpoint)
            if captured.gaps:
                self._append_gaps(kind, captured.gaps, step=result.step)
            return result

    def _append_gaps(self, kind: str, gaps: tuple[dict[str, Any], ...], *, step: int | None) -> list[AppendResult]:
        results = []
        for gap in gaps:
            where = f"step {step}" if step is not None else f"a {kind} entry (withheld whole)"
            note = f"gap: {gap.get('cause', 'unknown')} in {where}"
            data: dict[str, Any] = {"note": note, "gap": {**gap, "kind": kind, "step": step}}
            results.append(self.append_own("marker", data))
        return results

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
        prov = prov or default_prov(kind)
        with self._lock:
            for _ in range(STALE_RETRIES):
                head = self._head
                if head.sealed and kind not in AUDIT_KINDS:
                    raise EvidenceError(
                        f"run {self.run_id} is sealed: only redaction, repair, hold and hold_release"
                        f" entries may follow its run_end, not {kind}"
                    )
                entry = build_entry(
                    run_id=self.run_id,
                    step=head.steps,
                    kind=kind,
                    prov=prov,
                    data=data,
                    prev=head.hash if head.steps else GENESIS,
                    alg=self.recorder.alg,
                    ctx=ctx,
                    capture=capture,
                )
                sealing = kind == "run_end" or head.sealed
                checkpoint = None
                now = time.monotonic()
                steps_since = head.steps + 1 - (head.last_checkpoint["steps"] if head.last_checkpoint else 0)
                if force_checkpoint or self.recorder.checkpoints.due(
                    steps_since=steps_since, last_at=head.checkpoint_at, sealed=sealing, now=now
                ):
                    checkpoint = make_checkpoint(
                        previous=head.last_checkpoint,
                        run_id=self.run_id,
                        steps=head.steps + 1,
                        head_hash=entry["hash"],
                        alg=self.recorder.alg,
                        key=self.recorder.key,
                    )
                try:
                    result = self.recorder.store.append(self.run_id, entry, checkpoint=checkpoint)
                except StaleHeadError:
                    self._head = self._load_head()
                    continue
                self._head = _Head(
                    head.steps + 1,
                    entry["hash"],
                    checkpoint or head.last_checkpoint,
                    now if checkpoint else head.checkpoint_at,
                    sealing,
                )
                return result
        raise StaleHeadError(
            f"run {self.run_id}: the head kept moving under {STALE_RETRIES} attempts to append; "
            "another writer is appending as fast as it can"
        )

    def seal(self) -> AppendResult:
        """Append ``run_end`` (``steps`` = its index + 1) with a head-covering checkpoint."""
        with self._lock:
            return self.append_own("run_end", {"steps": self._head.steps + 1}, force_checkpoint=True)


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
    ) -> None:
        self.store = store
        self.key = key
        self.alg = alg or default_alg()
        self.checkpoints = checkpoints or CheckpointPolicy.from_env()
        self.policy = policy if policy is not None else load_policy()

    def start(
        self,
        *,
        run_id: str | None = None,
        name: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> RunWriter:
        """Create a run and append its ``run_meta``."""
        run_id = run_id or new_run_id()
        self.store.create_run(run_id, {"name": name} if name else {})
        writer = RunWriter(self, run_id)
        meta_data = run_meta_data(name=name, capture_policy=self.policy.run_meta_value, extra=meta)
        writer.append_own("run_meta", meta_data)
        return writer

    def attach(self, run_id: str) -> RunWriter:
        """A writer for an existing run (audit entries, resumed recording)."""
        return RunWriter(self, run_id)
