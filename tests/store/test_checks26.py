"""sdk26: ``checks.entry`` tests step, kind, prov, ts, prev and hash inline, calling ``_count``, ``_text`` and
``_hex64`` only for a value they would refuse or convert; ``EntryFields`` and ``AppendResult`` are made without a
frozen dataclass's ``object.__setattr__`` per field.

What it takes and what it refuses must be what the checks before it gave (:func:`_oracle`, that code kept here
as it was at 730052e), value by value: the columns, or the first refusal's message and field, in the same
order when several values are wrong at once.
"""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import pytest

from bitexact.canon import canonicalize
from bitexact.evidence.entry import encode_entry
from bitexact.store import checks
from bitexact.store.base import AppendResult, RecordError
from bitexact.store.checks import EntryFields

RUN = "run-20260101T000000-00000001"


class Tag(str):
    pass


def _oracle(run: str, value: object, encoded: bytes | None = None) -> EntryFields:
    """``checks.entry`` as it was before sdk26 (its helpers are unchanged)."""
    record = value if type(value) is dict else checks._object(value, "entry")
    if record.get("run_id") != run:
        checks._same_run(record, run, "entry")
    alg = record.get("alg")
    if alg not in checks.ALGORITHMS:
        raise RecordError(f"entry.alg must be one of {', '.join(checks.ALGORITHMS)}; got {alg!r:.80}", field="alg")
    if type(record.get("commitments")) is not dict:
        checks._object(record.get("commitments"), "commitments")
    if "data" in record and type(record["data"]) is not dict:
        checks._object(record["data"], "data")
    if "salts" in record and type(record["salts"]) is not dict:
        checks._object(record["salts"], "salts")
    if "redacted" in record:
        redacted = record["redacted"]
        if not isinstance(redacted, list) or not all(isinstance(p, str) for p in redacted):
            raise RecordError("entry.redacted must be a list of path strings", field="redacted")
    step = checks._count(record, "step", "entry")
    blob = checks.canonical(record, "entry") if encoded is None else encoded
    if len(blob) > checks.MAX_ROW_BYTES:
        raise RecordError(
            f"entry {step} of run {run} is {len(blob):,} bytes as stored, over the {checks.MAX_ROW_BYTES:,} a reader"
            " of the store takes back: record less in one entry (a capture policy withholds a field past "
            "BITEXACT_MAX_BODY_BYTES; a control character in text is stored as six bytes)", field="entry")
    return EntryFields(
        step=step,
        kind=checks._text(record, "kind", "entry"),
        prov=checks._text(record, "prov", "entry"),
        ts=checks._text(record, "ts", "entry"),
        prev=checks._hex64(record, "prev", "entry"),
        hash=checks._hex64(record, "hash", "entry"),
        blob=blob,
    )


def _entry() -> dict[str, Any]:
    return encode_entry(run_id=RUN, step=3, kind="tool_call", prov="observed", data={"tool": "t", "args": [1]},
                        prev="ab" * 32, alg="blake2b-256", ts="2026-12-01T20:00:00+00:00").entry


def _outcome(check: Any, record: Any, encoded: bytes | None) -> tuple[str, Any]:
    try:
        fields = check(RUN, record, encoded)
    except RecordError as exc:
        return "refused", (str(exc), exc.field)
    return "kept", (dataclasses.astuple(fields), [type(v) for v in dataclasses.astuple(fields)])


TEXTS: list[Any] = ["tool_call", "caf\u00e9", "a\x00b", "", "\ud800", None, 3, Tag("t")]
HEXES: list[Any] = ["ab" * 32, "AB" * 32, "ab" * 31 + "a", "ab" * 33, "ab" * 31 + "a\n", None, 7, Tag("ab" * 32),
                    "\u0661" * 64]
STEPS: list[Any] = [0, 3, -1, True, 2.0, None, "3", 2**64]


@pytest.mark.parametrize(("kind", "ts", "prev", "hashed", "step"),
                         list(itertools.product(TEXTS[:5], TEXTS[::3], HEXES[::2], HEXES[1::2], STEPS[:4])))
def test_the_columns_and_refusals_are_the_checks_before(kind: Any, ts: Any, prev: Any, hashed: Any, step: Any) -> None:
    record = {**_entry(), "kind": kind, "ts": ts, "prev": prev, "hash": hashed, "step": step}
    assert _outcome(checks.entry, record, b"{}") == _outcome(_oracle, record, b"{}")


@pytest.mark.parametrize("key", ["kind", "prov", "ts", "prev", "hash", "step"])
@pytest.mark.parametrize("value", TEXTS + HEXES + STEPS)
def test_each_column_alone_is_kept_or_refused_as_before(key: str, value: Any) -> None:
    record = {**_entry(), key: value}
    for encoded in (None, b"{}", b"x" * (checks.MAX_ROW_BYTES + 1)):
        assert _outcome(checks.entry, record, encoded) == _outcome(_oracle, record, encoded)


def test_a_plain_entry_gives_its_columns_and_canonical_bytes() -> None:
    record = _entry()
    fields = checks.entry(RUN, record)
    assert fields == EntryFields(3, "tool_call", "observed", "2026-12-01T20:00:00+00:00", "ab" * 32, record["hash"],
                                 canonicalize(record))
    assert fields.prev is record["prev"] and fields.hash is record["hash"] and fields.kind is record["kind"]


@pytest.mark.parametrize("cls", [EntryFields, AppendResult])
def test_a_record_made_by_hand_is_the_frozen_dataclass_it_was(cls: type) -> None:
    names = [field.name for field in dataclasses.fields(cls)]
    reference = dataclasses.make_dataclass(cls.__name__, names, frozen=True)  # the generated __init__
    values = [f"v{index}" for index in range(len(names))]
    made, by_name = cls(*values), cls(**dict(zip(names, values)))
    assert vars(made) == vars(by_name) == vars(reference(*values)) == dict(zip(names, values))
    assert made == by_name and hash(made) == hash(by_name)
    assert repr(made) == repr(reference(*values))
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(made, names[0], "other")
    assert dataclasses.replace(made, **{names[-1]: "w"}) == cls(*values[:-1], "w")
    with pytest.raises(TypeError):
        cls(*values[:-1])  # every field is required, as before
