"""perf22's cheaper entry build writes the same bytes, and its timestamps read as ``datetime`` writes them.

* ``build_entry`` slices one hex string for its salts, hashes each path with ``hashlib.blake2b`` directly,
  writes a plain string without ``canonicalize``'s call, and hashes the chain body without copying it;
  the store's check makes the entry's bytes with ``_prepare``'s C loop over plain containers. A corpus of
  entries is built with the system's generator replaced by a fixed stream (its salts fixed), and the store's
  bytes of every entry hashed together: the digests are those the code before perf22 (0de516f) gives, so
  every commitment, salt, hash and stored byte is as it was, under both hash algorithms.
* ``now_iso`` (every entry's ``ts``, the store's ``appended_at``) formats the date and minute once a minute:
  ``iso_of_ns`` is ``datetime.isoformat`` of the same instant, microseconds floored and left out when 0.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from enum import Enum
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bitexact.crypto import commitment
from bitexact.evidence.entry import build_entry
from bitexact.evidence.timefmt import iso_of_ns, now_iso
from bitexact.store import checks


class Tag(str):
    pass


class Colour(str, Enum):
    RED = "red"


def fixed_stream() -> Callable[[int], bytes]:
    """A deterministic stand-in for ``os.urandom``: SHA-256 of a counter, as many bytes as asked."""
    counter = [0]

    def urandom(size: int) -> bytes:
        out = b""
        while len(out) < size:
            out += hashlib.sha256(counter[0].to_bytes(8, "big")).digest()
            counter[0] += 1
        return out[:size]

    return urandom


KIB = "k" * 1000
CORPUS: list[dict[str, Any]] = [
    {"tool": "tool", "args": [KIB], "kwargs": {}, "result": {"answer": KIB[:24], "echo": KIB}, "status": "ok"},
    {"a.b": {"x~y": 1, "é": [1.5, 2.0, -3, None, True]}, "": "", "z": {"nested": {"deep": [[], {}]}}},
    {"n": 2**53 - 1, "f": 1e-7, "g": 1e21, "h": 123456789.125, "t": ("a", 1), "s": Tag("x"), "c": Colour.RED},
    {"k": {"\U0001F600": 1, "\uff01": 2, "a": "\ud800"}, "u": "\u2028\x00\x1f\"\\", "astral": "\U0001F600\uffff"},
    {"m": {"list": [{"a": 1}, [1, [2, [3]]]], "od": OrderedDict([("b", 1), ("a", 2)])}, "b": False},
]
# The digests the code before perf22 (0de516f) gives for CORPUS built as below.
BEFORE = {
    "blake2b-256": "13ef760dc47ae9d0e5abfbdd0ec244dd1acc8bf22f4f24b6a31a6f7a2e805ad5",
    "sha256": "655105bfc13f7ff18b8789d4917eea018253fede9f1db81c75f7f01a657d3ebc",
}


@pytest.mark.parametrize("alg", sorted(BEFORE))
def test_the_corpus_is_stored_byte_for_byte_as_before(alg: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "urandom", fixed_stream())
    digest = hashlib.sha256()
    prev = "0" * 64
    for step, data in enumerate(CORPUS):
        for ctx, capture in ((None, None), ("outer", {"v": 1, "fields": {"args": {"mode": "scrub"}}})):
            entry = build_entry(run_id="run-golden", step=step, kind="tool_call", prov="observed", data=data,
                                prev=prev, alg=alg, ts="2026-12-01T20:00:00.000001+00:00", ctx=ctx, capture=capture)
            digest.update(checks.entry("run-golden", entry).blob)
            prev = entry["hash"]
    assert digest.hexdigest() == BEFORE[alg]


def test_salts_are_the_generators_bytes_in_path_order(monkeypatch: pytest.MonkeyPatch) -> None:
    pool = bytes(range(16 * 6))
    monkeypatch.setattr(os, "urandom", lambda size: pool[:size])
    entry = build_entry(run_id="r", step=0, kind="tool_call", prov="observed", data=CORPUS[0], prev="0" * 64,
                        alg="blake2b-256", ts="2026-12-01T20:00:00+00:00")
    assert list(entry["salts"].values()) == [pool[i : i + 16].hex() for i in range(0, 96, 16)]
    for path, salt in entry["salts"].items():
        top, _, sub = path.partition(".")
        value = CORPUS[0][top][sub] if sub else CORPUS[0][top]
        assert entry["commitments"][path] == commitment("blake2b-256", bytes.fromhex(salt), value)


def _isoformat(ns: int) -> str:
    micros = ns // 1000
    return (datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(microseconds=micros)).isoformat()


@settings(max_examples=3000, deadline=None)
@given(ns=st.integers(0, 253402300799 * 10**9 + 999_999_999), whole=st.sampled_from([1, 1000, 10**9, 60 * 10**9]))
def test_iso_of_ns_is_datetimes_isoformat(ns: int, whole: int) -> None:
    for instant in (ns, ns - ns % whole):
        assert iso_of_ns(instant) == _isoformat(instant)


def test_consecutive_instants_across_a_minute_and_a_year() -> None:
    start = int(datetime(2026, 12, 31, 23, 58, 59, tzinfo=timezone.utc).timestamp()) * 10**9
    for ns in range(start, start + 130 * 10**9, 499_999_999):
        assert iso_of_ns(ns) == _isoformat(ns)
        assert iso_of_ns(ns + 999) == _isoformat(ns + 999)  # the nanoseconds floored


def test_now_iso_is_now_in_datetimes_form() -> None:
    before = datetime.now(timezone.utc)
    stamped = now_iso()
    after = datetime.now(timezone.utc)
    assert before <= datetime.fromisoformat(stamped) <= after
    assert stamped.endswith("+00:00") and stamped == datetime.fromisoformat(stamped).isoformat()


def test_threads_never_mix_one_minutes_date_with_anothers() -> None:
    """The minute's text is swapped as one tuple: threads stamping instants of different minutes each read
    their own."""
    instants = [(minute * 60 + 7) * 10**9 + 123_000 for minute in range(29_000_000, 29_000_050)]
    wrong: list[str] = []

    def stamp() -> None:
        for _ in range(40):
            for ns in instants:
                if iso_of_ns(ns) != _isoformat(ns):
                    wrong.append(iso_of_ns(ns))

    threads = [threading.Thread(target=stamp) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert wrong == []
