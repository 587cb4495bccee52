"""Usage and session accounting (UAS section 6, T-UAS-030..035).

Parser traces write the canonical snake_case token names; readers accept the
camelCase aliases, preferring a *present* canonical key even when it is 0.
Per-turn reports accumulate field by field (a field stays absent until some
report exposes it); snapshots replace, never add.  Invalid counts never
become zeros: they are dropped from the canonical fields and kept under
``invalid_tokens`` as diagnostic metadata.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any, Iterable, Mapping

MAX_SAFE_INTEGER = 2**53 - 1

TOKEN_FIELDS: tuple[str, ...] = (
    "input_tokens",
    "output_tokens",
    "reasoning_output_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
)
"""Canonical writer fields of 6.1."""

CAMEL_ALIASES: dict[str, str] = {
    "input_tokens": "inputTokens",
    "output_tokens": "outputTokens",
    "cache_creation_input_tokens": "cacheCreationInputTokens",
    "cache_read_input_tokens": "cacheReadInputTokens",
}
"""Reader aliases of 6.1 (``reasoning_output_tokens`` has none)."""

SUMMABLE_FIELDS: tuple[str, ...] = TOKEN_FIELDS + ("total_tokens",)


def valid_count(value: Any) -> bool:
    """A finite nonnegative integer count (bools are not counts)."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return 0 <= value <= MAX_SAFE_INTEGER
    if isinstance(value, float):
        return math.isfinite(value) and value >= 0 and value.is_integer() and value <= MAX_SAFE_INTEGER
    return False


def valid_metric(value: Any) -> bool:
    """A finite nonnegative number (durations, costs)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return math.isfinite(value) and value >= 0


def _as_count(value: Any) -> int:
    return int(value)


def read_token(usage: Mapping[str, Any], field: str) -> int | None:
    """Reader rule of T-UAS-030: canonical key by presence, else camelCase alias.

    Returns ``None`` when neither is present or the present value is invalid.
    """
    if field in usage:
        value = usage[field]
    else:
        alias = CAMEL_ALIASES.get(field)
        if alias is None or alias not in usage:
            return None
        value = usage[alias]
    return _as_count(value) if valid_count(value) else None


@lru_cache(maxsize=64)
def _sources(mapping: tuple[tuple[str, str], ...]) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """Per canonical field, the source keys to try in order: canonical, alias, mapped."""
    table: dict[str, list[str]] = {}
    for field in SUMMABLE_FIELDS:
        table[field] = [field]
        alias = CAMEL_ALIASES.get(field)
        if alias:
            table[field].append(alias)
    for native, canonical in mapping:
        table.setdefault(canonical, []).append(native)
    return tuple((canonical, tuple(keys)) for canonical, keys in table.items())


def normalize_usage(
    raw: Mapping[str, Any],
    mapping: Mapping[str, str] | None = None,
    *,
    include_cache: bool | None = None,
) -> dict[str, Any]:
    """Map a source usage object to canonical names without losing native keys.

    ``mapping`` maps engine-specific source keys to canonical fields (the
    applicable source schema of section 7, e.g. Codex ``cached_input_tokens``
    -> ``cache_read_input_tokens``).  A canonical key already present in
    ``raw`` wins over both aliases and mapped keys.  Native keys that were
    mapped are kept as they were (T-UAS-030: supplied aliases are
    preserved).  Invalid values never become counts; they are kept under
    ``invalid_tokens``.  Returns a new dict; ``raw`` is not touched.
    """
    out: dict[str, Any] = {}
    invalid: dict[str, Any] = {}
    for canonical, keys in _sources(tuple(mapping.items()) if mapping else ()):
        for key in keys:
            if key in raw:
                value = raw[key]
                if valid_count(value):
                    out[canonical] = int(value)
                else:
                    invalid[key] = value
                break
    if "reasoning_output_tokens" not in out and "reasoning_output_tokens" not in invalid:
        details = raw.get("output_tokens_details")
        if isinstance(details, dict):
            for key in ("thinking_tokens", "reasoning_tokens"):
                if key in details:
                    if valid_count(details[key]):
                        out["reasoning_output_tokens"] = int(details[key])
                    else:
                        invalid[f"output_tokens_details.{key}"] = details[key]
                    break
    for key, value in raw.items():
        if key not in out and not (key in invalid and key in SUMMABLE_FIELDS):
            out[key] = value
    if invalid:
        out["invalid_tokens"] = invalid
    if include_cache is not None and "input_tokens_include_cache" not in raw:
        out["input_tokens_include_cache"] = include_cache
    return out


class UsageAccumulator:
    """Field-by-field accumulation of distinct per-turn reports (T-UAS-032/033).

    ``add`` sums a per-turn contribution once per identity; ``snapshot``
    replaces the fields it supplies (an authoritative cumulative report);
    fields no report exposed stay absent.  Aggregates past 2**53-1 become
    unavailable and are listed in ``overflowed_tokens`` so later additions
    cannot restore an incomplete subtotal; a later snapshot may replace them.
    """

    def __init__(self) -> None:
        self.totals: dict[str, int] = {}
        self.overflowed: list[str] = []
        self.extras: dict[str, Any] = {}
        self.seen: set[Any] = set()
        self.reports = 0

    def add(self, usage: Mapping[str, Any], identity: Any = None) -> bool:
        """Add one per-turn report (canonical names); False if it was a duplicate."""
        if identity is not None:
            if identity in self.seen:
                return False
            self.seen.add(identity)
        self.reports += 1
        for field in SUMMABLE_FIELDS:
            if field not in usage or field in self.overflowed:
                continue
            value = usage[field]
            if not valid_count(value):
                continue
            total = self.totals.get(field, 0) + int(value)
            if total > MAX_SAFE_INTEGER:
                self.totals.pop(field, None)
                self.overflowed.append(field)
            else:
                self.totals[field] = total
        if "input_tokens_include_cache" in usage:
            self.extras["input_tokens_include_cache"] = usage["input_tokens_include_cache"]
        return True

    def snapshot(self, usage: Mapping[str, Any]) -> None:
        """Replace the fields an authoritative cumulative snapshot supplies."""
        self.reports += 1
        for field in SUMMABLE_FIELDS:
            if field in usage and valid_count(usage[field]):
                self.totals[field] = int(usage[field])
                if field in self.overflowed:
                    self.overflowed.remove(field)
        if "input_tokens_include_cache" in usage:
            self.extras["input_tokens_include_cache"] = usage["input_tokens_include_cache"]

    @property
    def empty(self) -> bool:
        return not self.totals and not self.overflowed and not self.extras

    def usage(self) -> dict[str, Any]:
        """The accumulated usage object (new dict), canonical field order."""
        out: dict[str, Any] = {}
        for field in SUMMABLE_FIELDS:
            if field in self.totals:
                out[field] = self.totals[field]
        out.update(self.extras)
        if self.overflowed:
            out["overflowed_tokens"] = list(self.overflowed)
        return out


RESULT_METRICS: tuple[str, ...] = ("numTurns", "durationMs", "totalCostUsd", "status", "sourceType")


def select_accounting(events: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """Reader selection over ``session.result`` snapshots (T-UAS-033, 6.2).

    For each metric, the latest supplied valid value in source order wins; a
    later result omitting a field does not erase an earlier one; results are
    never summed.  Errors and denials keep their separate observations (all
    supplied entries, in order).  Returns a new dict with canonical names.
    """
    selected: dict[str, Any] = {}
    usage: dict[str, Any] = {}
    errors: list[Any] = []
    denials: list[Any] = []
    saw_errors = saw_denials = False
    for event in events:
        if event.get("type") != "session.result":
            continue
        data = event.get("data")
        if not isinstance(data, dict):
            continue
        for key in RESULT_METRICS:
            if key in data:
                selected[key] = data[key]
        raw_usage = data.get("usage")
        if isinstance(raw_usage, dict):
            for field in SUMMABLE_FIELDS:
                value = read_token(raw_usage, field) if field != "total_tokens" else (
                    raw_usage.get(field) if valid_count(raw_usage.get(field)) else None
                )
                if value is not None:
                    usage[field] = value
            if isinstance(raw_usage.get("input_tokens_include_cache"), bool):
                usage["input_tokens_include_cache"] = raw_usage["input_tokens_include_cache"]
        if isinstance(data.get("errors"), list):
            saw_errors = True
            errors.extend(data["errors"])
        if isinstance(data.get("permissionDenials"), list):
            saw_denials = True
            denials.extend(data["permissionDenials"])
    if usage:
        selected["usage"] = usage
    if saw_errors:
        selected["errors"] = errors
    if saw_denials:
        selected["permissionDenials"] = denials
    return selected


def display_total(usage: Mapping[str, Any]) -> tuple[int, str] | None:
    """A computed display total and the calculation used (T-UAS-031).

    A valid source ``total_tokens`` wins; otherwise input + output, adding
    cache contributions only when ``input_tokens_include_cache`` is False.
    """
    if valid_count(usage.get("total_tokens")):
        return int(usage["total_tokens"]), "source total_tokens"
    inp = read_token(usage, "input_tokens")
    out = read_token(usage, "output_tokens")
    if inp is None and out is None:
        return None
    total = (inp or 0) + (out or 0)
    if usage.get("input_tokens_include_cache") is False:
        cache = (read_token(usage, "cache_read_input_tokens") or 0) + (
            read_token(usage, "cache_creation_input_tokens") or 0
        )
        return total + cache, "input + output + cache (cache excluded from input)"
    return total, "input + output (cache shown separately)"
