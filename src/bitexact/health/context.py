"""What the health checks look at: the environment, the policy in force and the store.

Everything is read lazily and once, so a check that needs only the policy
never opens the store, and checks sharing a pass over the store's entries
(the capture declarations of every run) share it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from bitexact.capture import CapturePolicy, PolicyError, load_policy
from bitexact.errors import BitExactError, StoreDamagedError
from bitexact.store import RunInfo, Store


@dataclass(frozen=True)
class CollectorSent:
    """Fields a collector sent that the recorder's policy changed, under one pair of policy digests.

    ``collector_policy`` is the digest the collector's block declares (or ``off``), ``recorder_policy``
    the one the recorder declared on the fields it changed; either is ``None`` when the block holds none.
    """

    collector: str
    collector_policy: str | None
    recorder_policy: str | None
    fields: tuple[str, ...]


@dataclass(frozen=True)
class ClockBack:
    """An entry whose ``ts`` is earlier than the entry before it: the recording host's clock stepped back."""

    step: int
    ts: str
    previous_ts: str
    seconds: float
    """How far back, in seconds."""


@dataclass(frozen=True)
class RunCapture:
    """What one run's capture blocks declare that health reports on (``STEP:PATH`` tokens)."""

    run_id: str
    unopenable: tuple[str, ...]
    scrub_failed: tuple[str, ...]
    collector_sent: tuple[CollectorSent, ...]
    """Fields a collector sent that the recorder changed, per collector and pair of policy digests, in the
    order first sent: a collector or recorder whose policy changed mid-run has one item per pair."""
    unreadable: str | None = None
    """Why the run's entries could not be read (a damaged store), when they could not: nothing else is known."""
    clock_back: tuple[ClockBack, ...] = ()
    """Entries whose time is earlier than the entry before theirs, in step order (those a repair folded left out)."""


def scan_run(store: Store, run_id: str) -> RunCapture:
    """One pass over a run's entries, reading only their capture blocks, then over its checkpoints (which
    must read back as well). Raises what the store raises for a damaged run."""
    unopenable: list[str] = []
    failed: list[str] = []
    sent: dict[tuple[str, str | None, str | None], list[str]] = {}
    times = _Times()
    for entry in store.entries(run_id):
        times.see(entry)
        block = entry.get("capture")
        if not isinstance(block, dict) or not isinstance(block.get("fields"), dict):
            continue
        fields = block["fields"]
        applied_by = block.get("applied_by")
        from_collector = isinstance(applied_by, str) and applied_by != "recorder"
        collector_policy = _digest_or_none(block.get("policy"))
        for path, declaration in fields.items():
            if not isinstance(declaration, dict):
                continue
            token = f"{entry['step']}:{path}"
            mode = declaration.get("mode")
            if mode == "hash-only" and (declaration.get("unopenable") or not declaration.get("key_id")):
                unopenable.append(token)
            if mode == "withheld" and declaration.get("cause") == "scrub_failed":
                failed.append(token)
            # The recorder changed a value a collector sent: it crossed the wire and sat in the spool.
            # A field the recorder only declares unscanned removed nothing and names no one.
            if from_collector and declaration.get("applied_by") == "recorder" and mode in ("scrub", "hash-only"):
                pair = (str(applied_by), collector_policy, _digest_or_none(declaration.get("policy")))
                sent.setdefault(pair, []).append(token)
    for _ in store.iter_checkpoints(run_id):  # read back too: one missing or damaged fails verify and export
        pass
    return RunCapture(run_id, tuple(unopenable), tuple(failed),
                      tuple(CollectorSent(*pair, tuple(tokens)) for pair, tokens in sent.items()),
                      clock_back=times.backwards())


CLOCK_BACK_KEPT: Final[int] = 1000
"""How many entries going back in time one run's scan keeps: memory stays bounded whatever the run holds."""


class _Times:
    """The entries of one run whose ``ts`` goes back, seen in step order at the cost of a string compare
    per entry (``now_iso`` times of one length compare as text; others are parsed)."""

    def __init__(self) -> None:
        self._last: str | None = None
        self._back: list[ClockBack] = []

    def see(self, entry: dict[str, Any]) -> None:
        ts, step = entry.get("ts"), entry.get("step")
        if entry.get("kind") == "repair" and isinstance(step, int):
            data = entry.get("data")
            if isinstance(data, dict) and data.get("journals"):
                # A fold appends journaled entries with the instants they were recorded at, after entries
                # written since: their times go back with no clock to blame. Dropped here, not at the end,
                # so that the cap below keeps the cases after the fold.
                self._back.clear()
        if not isinstance(ts, str) or not isinstance(step, int):
            return
        last, self._last = self._last, ts
        if last is None or (len(ts) == len(last) and ts.endswith("+00:00") and last.endswith("+00:00")
                            and ts >= last):
            return
        seconds = _seconds_back(last, ts)
        if seconds > 0 and len(self._back) < CLOCK_BACK_KEPT:
            self._back.append(ClockBack(step, ts, last, seconds))

    def backwards(self) -> tuple[ClockBack, ...]:
        return tuple(self._back)


def _seconds_back(earlier: str, later: str) -> float:
    """How many seconds ``later`` (an entry's ``ts``) lies before ``earlier`` (its predecessor's); 0 when
    it does not, or when either does not read as an instant with a UTC offset."""
    from datetime import datetime

    try:
        before, after = datetime.fromisoformat(earlier), datetime.fromisoformat(later)
        return max(0.0, (before - after).total_seconds())
    except (ValueError, TypeError):  # not an instant, or one without an offset: nothing to compare
        return 0.0


def _digest_or_none(value: object) -> str | None:
    """A declared ``policy`` (a digest, or ``off``); ``None`` for a block that declares none (or not a string)."""
    return value if isinstance(value, str) and value else None


@dataclass
class HealthContext:
    """The inputs of one ``bitexact health``; ``store`` is ``None`` when there is no data directory yet.

    ``home`` is the data directory, for the checks that read files beside
    the store (a recording's journals); ``None`` skips them.
    """

    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))
    store: Store | None = None
    home: Path | None = None
    _policy: Any = None
    _runs: list[RunCapture] | None = None
    _infos: list[RunInfo] | None = None
    listing_error: str | None = None
    """Why the store's runs could not be listed (a damaged file that still opens), once :meth:`runs` was called."""

    def policy(self) -> CapturePolicy | PolicyError:
        """The policy in force, or the error that makes it unusable (loaded once)."""
        if self._policy is None:
            try:
                self._policy = load_policy(env=self.env)
            except PolicyError as exc:
                self._policy = exc
        return self._policy  # type: ignore[no-any-return]

    def runs(self) -> list[RunInfo]:
        """Every stored run, newest first (listed once, shared); none when the store does not list them,
        ``listing_error`` then saying why, so the checks that go run by run report it once, not each fail."""
        if self._infos is None:
            try:
                self._infos = [] if self.store is None else self.store.runs()
            except BitExactError as exc:
                self._infos, self.listing_error = [], _reason(exc)
        return self._infos

    def run_captures(self) -> list[RunCapture]:
        """The capture declarations of every stored run, newest run first (one pass, shared)."""
        if self._runs is None:
            self._runs = [] if self.store is None else [self._scan(self.store, r.run_id) for r in self.runs()]
        return self._runs

    @staticmethod
    def _scan(store: Store, run_id: str) -> RunCapture:
        try:
            return scan_run(store, run_id)
        except BitExactError as exc:  # one damaged run must not hide what every other run declares
            return RunCapture(run_id, (), (), (), unreadable=_reason(exc))


def _reason(exc: BitExactError) -> str:
    """What an error says went wrong, for a finding: a damaged store's ``what`` alone, since the finding
    says what to do itself (the error's own advice would say it twice)."""
    return exc.what if isinstance(exc, StoreDamagedError) else str(exc)
