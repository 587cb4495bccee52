"""Instants as the bundle spec wants them written (§0)."""

from __future__ import annotations

from time import gmtime, time_ns  # bound at import, as datetime was: a run's patched time.time_ns is the agent's

_minute: tuple[int, str] = (-1, "")
"""The last minute formatted, ``(seconds since the epoch // 60, "YYYY-MM-DDTHH:MM")``: one tuple, swapped whole,
so a thread never reads one minute's number beside another's text."""


def iso_of_ns(ns: int) -> str:
    """The instant ``ns`` nanoseconds after the epoch (UTC) as ``datetime.isoformat()`` writes an aware UTC
    ``datetime`` of it: ``2031-04-02T10:15:30.123456+00:00``, the microseconds floored, and left out when they
    are 0 (``2031-04-02T10:15:30+00:00``), as ``datetime.now(timezone.utc).isoformat()`` does.

    Every recorded entry is stamped twice (its ``ts``, the store's ``appended_at``), and ``isoformat`` cost
    more than the rest of ``datetime.now`` (about 11,000 instructions): the date and the minute are formatted
    once a minute, then each stamp adds its seconds and microseconds.
    """
    global _minute
    micros = ns // 1000
    seconds, us = divmod(micros, 1_000_000)
    minutes, second = divmod(seconds, 60)
    known = _minute
    if known[0] != minutes:
        parts = gmtime(minutes * 60)
        known = (minutes, "%04d-%02d-%02dT%02d:%02d" % (parts[0], parts[1], parts[2], parts[3], parts[4]))
        _minute = known
    if us:
        return "%s:%02d.%06d+00:00" % (known[1], second, us)
    return "%s:%02d+00:00" % (known[1], second)


def now_iso() -> str:
    """The current UTC instant, ``+00:00`` form with microseconds (what ``datetime.now(timezone.utc).isoformat()``
    gives: the same clock, floored to the microsecond, the same text)."""
    return iso_of_ns(time_ns())
