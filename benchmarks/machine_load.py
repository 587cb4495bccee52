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
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

_PRESSURE = Path("/proc/pressure/cpu")
_STAT = Path("/proc/stat")


@dataclass(frozen=True)
class Load:
    """The machine's contention over one interval, as fractions (0.05 is 5 %)."""

    cpu_wait: float | None
    steal: float | None

    def describe(self) -> str:
        """``cpu wait 4.1 %, steal 0.2 %`` (``n/a`` for a counter the kernel lacks)."""
        def pct(value: float | None) -> str:
            return "n/a" if value is None else f"{value * 100:.1f} %"
        return f"cpu wait {pct(self.cpu_wait)}, steal {pct(self.steal)}"


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
    """``with LoadMeter() as meter: ...`` then ``meter.load``: the contention over the block."""

    def __init__(self) -> None:
        self.load = Load(None, None)
        self._wall = 0.0
        self._stall: int | None = None
        self._steal: tuple[int, int] | None = None

    def __enter__(self) -> LoadMeter:
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
        self.load = Load(cpu_wait, stolen)


def describe_machine() -> str:
    """CPUs and the load average now, for a benchmark's header or footer."""
    try:
        one, five, _ = os.getloadavg()
    except OSError:
        return f"{os.cpu_count()} CPUs"
    return f"{os.cpu_count()} CPUs, load average {one:.2f} (1 min) {five:.2f} (5 min)"
