"""Ordering keys from native timestamps, in each source schema's own units (T-UAS-056).

Every key is an integer number of nanoseconds since the Unix epoch, so ISO
fractional seconds and OTLP decimal-string nanoseconds compare exactly.  The
unit is chosen by the source schema, never by the magnitude of the number:

- ``iso_or_ms``: agent events - ISO 8601 strings (a timezone is required) or
  numeric Unix milliseconds;
- ``seconds``: Squid audit ``ts`` (Unix seconds, fractional allowed);
- ``ms``: token-tracker ``ts`` (Unix milliseconds);
- ``iso``: runtime JSONL records stamped with ISO strings;
- ``unix_nano``: OTLP ``*UnixNano`` values (decimal strings or integers).

A value that does not parse gives ``None``: the record stays, untimed
(T-UAS-057).  Keys are only for ordering; native values are never rewritten.
"""

from __future__ import annotations

import calendar
import re
from datetime import datetime, timedelta, timezone
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

_ISO = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d{1,9})\d*)?"
    r"(?:([Zz])|([+-])(\d{2}):?(\d{2}))$"
)
_DIGITS = re.compile(r"^\d{1,30}$")
_NS = 1_000_000_000


@lru_cache(maxsize=4096)
def _minute_epoch(year: int, month: int, day: int, hour: int, minute: int) -> int | None:
    # Logs repeat the same minute many times: the calendar arithmetic is cached.
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour <= 23 and minute <= 59):
        return None
    if day > calendar.monthrange(year, month)[1]:
        return None
    return calendar.timegm((year, month, day, hour, minute, 0, 0, 0, 0))


_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROSECOND = timedelta(microseconds=1)
_FAST_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?(?:Z|[+-]\d{2}:\d{2})$")


_UTC_ISO = re.compile(r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?Z\Z")


@lru_cache(maxsize=8192)
def _utc_second(prefix: str) -> int | None:
    # Logs stamp many records within one second: its epoch value is cached.
    try:
        return (datetime.fromisoformat(prefix + "+00:00") - _EPOCH) // timedelta(seconds=1)
    except ValueError:
        return None  # a leap second or an impossible date: the full parser decides


def iso_ns(text: str) -> int | None:
    """Nanoseconds since the epoch for an ISO timestamp carrying a timezone."""
    utc = _UTC_ISO.match(text)
    if utc is not None:
        prefix, fraction = utc.groups()  # one call for both groups: this runs once per timed record
        second = _utc_second(prefix)
        if second is not None:
            return second * _NS + (int(fraction.ljust(9, "0")) if fraction else 0)
    if _FAST_ISO.match(text):
        # Up to microsecond precision the C parser is exact and much faster.
        try:
            return ((datetime.fromisoformat(text) - _EPOCH) // _MICROSECOND) * 1000
        except ValueError:
            pass  # a leap second or an impossible date: the full parser decides
    match = _ISO.match(text)
    if not match:
        return None
    year, month, day, hour, minute, second = (int(g) for g in match.groups()[:6])
    fraction = match.group(7) or ""
    base = _minute_epoch(year, month, day, hour, minute)
    if base is None or second > 60:
        return None
    seconds = base + second
    if match.group(9):
        offset = int(match.group(10)) * 3600 + int(match.group(11)) * 60
        seconds -= offset if match.group(9) == "+" else -offset
    return seconds * _NS + int(fraction.ljust(9, "0") or 0)


def _scaled(value: Any, factor: int) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, int):
        return value * factor if value >= 0 else None
    if value != value or value in (float("inf"), float("-inf")) or value < 0:
        return None
    try:
        # repr() is the shortest decimal that round-trips: scale it exactly.
        return int(Decimal(repr(value)) * factor)
    except InvalidOperation:
        return None


def unix_nano(value: Any) -> int | None:
    """OTLP Unix nanoseconds: a decimal string or a nonnegative integer."""
    if isinstance(value, str):
        return int(value) if _DIGITS.match(value) else None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return None


def ordering_key(value: Any, unit: str) -> int | None:
    """The nanosecond ordering key of a native timestamp, or ``None`` if untimed."""
    if value is None:
        return None
    if unit == "iso_or_ms":
        return iso_ns(value) if isinstance(value, str) else _scaled(value, 1_000_000)
    if unit == "iso":
        return iso_ns(value) if isinstance(value, str) else None
    if unit == "ms":
        return _scaled(value, 1_000_000)
    if unit == "seconds":
        return _scaled(value, _NS)
    if unit == "unix_nano":
        return unix_nano(value)
    raise ValueError(f"unknown timestamp unit {unit!r}")


def to_ms(key: int) -> int:
    """The observed millisecond projection (``provenance.timestampMs``)."""
    return key // 1_000_000
