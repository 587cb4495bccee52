"""How contended the machine was while a benchmark ran: printed beside its figures.

On a shared virtual machine the same benchmark swings by 20 % and more
between quiet and busy stretches. Two kernel counters say which one a run
fell in, so a figure can be read with its conditions:

* ``cpu wait``: the share of the run's wall time during which at least one
  runnable task of this machine waited for a CPU (Linux pressure stall
  information, ``/proc/pressure/cpu``, the ``some`` line). Our own threads
  queueing for the two cores count too, so compare it between runs of the
  same benchmark, not against zero.
* ``steal``: the share of the CPUs' time the hypervisor gave to other guests
  while ours wanted to run (``/proc/stat``). Nothing in the benchmark causes
  it.

Either counter reads as ``None`` where the kernel does not offer it.

Neither sees a busy host well: this VM reports almost no steal even when the
same work runs 20 % slower. So :class:`LoadMeter` can also time a fixed
workload just before the measured block (outside it): hashing 8 MiB, and
the median ``fdatasync`` of a 4 KiB write in the directory under test. A
row that misses its goal beside a slow probe fell in a slow stretch.
"""

from __future__ import annotations

import hashlib
import os
import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

_PRESSURE = Path("/proc/pressure/cpu")
_STAT = Path("/proc/stat")


@dataclass(frozen=True)
class Probe:
    """A fixed workload timed just before a measured block: how fast the machine was then."""

    hash_ms: float
    """Milliseconds to blake2b-hash 8 MiB (CPU)."""
    fdatasync_us: float
    """Median microseconds of an ``fdatasync`` after a 4 KiB write in place (disk)."""


@dataclass(frozen=True)
class Load:
    """The machine's contention over one interval, as fractions (0.05 is 5 %), and the probe before it."""

    cpu_wait: float | None
    steal: float | None
    probe: Probe | None = None

    def describe(self) -> str:
        """``cpu wait 4.1 %, steal 0.2 %; probe: hash 8 MiB 9.1 ms, fdatasync 112 us``."""
        def pct(value: float | None) -> str:
            return "n/a" if value is None else f"{value * 100:.1f} %"
        text = f"cpu wait {pct(self.cpu_wait)}, steal {pct(self.steal)}"
        if self.probe is not None:
            text += f"; probe: hash 8 MiB {self.probe.hash_ms:.1f} ms, fdatasync {self.probe.fdatasync_us:.0f} us"
        return text


_BLOCK = bytes(range(256)) * 32  # 8 KiB


def fdatasync_times(directory: Path, rounds: int, write_bytes: int = 4096, idle_s: float = 0.0) -> list[float]:
    """Microseconds of ``rounds`` fdatasyncs, each after a ``write_bytes`` write in place, in a file made in ``directory``.

    The file is written (not sparse) and synced first, so each sync below commits data only.
    ``idle_s``: seconds slept before each write, as an agent waits on a model between tool calls.
    """
    path = directory / ".fdatasync.probe"
    places = 64 if write_bytes <= 4096 else 4  # a large write rotates over four places, not 64
    block = (_BLOCK * (write_bytes // len(_BLOCK) + 1))[:write_bytes]
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        os.write(fd, bytes(places * write_bytes))
        os.fsync(fd)
        times = []
        for i in range(rounds):
            if idle_s:
                time.sleep(idle_s)
            os.pwrite(fd, block, (i % places) * write_bytes)
            start = time.perf_counter()
            os.fdatasync(fd)
            times.append((time.perf_counter() - start) * 1e6)
    finally:
        os.close(fd)
        path.unlink()
    return times


def probe(directory: Path, syncs: int = 16) -> Probe:
    """Time the fixed workload: 1,024 blake2b hashes of 8 KiB, and ``syncs`` fdatasyncs in ``directory``."""
    start = time.perf_counter()
    for _ in range(1024):
        hashlib.blake2b(_BLOCK, digest_size=32).digest()
    hash_ms = (time.perf_counter() - start) * 1e3
    times = fdatasync_times(directory, syncs)
    return Probe(hash_ms, statistics.median(times))


def _stall_us() -> int | None:
    """Total microseconds some task waited for a CPU since boot (PSI), or None."""
    try:
        for line in _PRESSURE.read_text().splitlines():
            if line.startswith("some "):
                return int(line.rsplit("total=", 1)[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def _steal_ticks() -> tuple[int, int] | None:
    """``(steal, all)`` clock ticks of every CPU since boot, or None."""
    try:
        fields = _STAT.read_text().splitlines()[0].split()
    except (OSError, IndexError):
        return None
    if fields[0] != "cpu" or len(fields) < 9:
        return None
    ticks = [int(value) for value in fields[1:9]]  # user nice system idle iowait irq softirq steal
    return ticks[7], sum(ticks)


class LoadMeter:
    """``with LoadMeter() as meter: ...`` then ``meter.load``: the contention over the block.

    With ``probe_dir``, :func:`probe` runs on entry, before the counters start.
    """

    def __init__(self, probe_dir: Path | None = None) -> None:
        self.load = Load(None, None)
        self._probe_dir = probe_dir
        self._probe: Probe | None = None
        self._wall = 0.0
        self._stall: int | None = None
        self._steal: tuple[int, int] | None = None

    def __enter__(self) -> LoadMeter:
        self._probe = probe(self._probe_dir) if self._probe_dir is not None else None
        self._stall, self._steal = _stall_us(), _steal_ticks()
        self._wall = time.monotonic()
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None,
                 trace: TracebackType | None) -> None:
        wall_us = (time.monotonic() - self._wall) * 1e6
        stall, steal = _stall_us(), _steal_ticks()
        cpu_wait = None
        if stall is not None and self._stall is not None and wall_us > 0:
            cpu_wait = min(1.0, (stall - self._stall) / wall_us)
        stolen = None
        if steal is not None and self._steal is not None and steal[1] > self._steal[1]:
            stolen = (steal[0] - self._steal[0]) / (steal[1] - self._steal[1])
        self.load = Load(cpu_wait, stolen, self._probe)


def describe_machine() -> str:
    """CPUs and the load average now, for a benchmark's header or footer."""
    try:
        one, five, _ = os.getloadavg()
    except OSError:
        return f"{os.cpu_count()} CPUs"
    return f"{os.cpu_count()} CPUs, load average {one:.2f} (1 min) {five:.2f} (5 min)"
