"""sdk26: the write path's frozen records are made without ``object.__setattr__`` per field.

``_Staged`` (one per entry written), ``EncodedEntry`` (one per entry built), ``EntryFields`` and ``AppendResult``
(one per entry stored) keep ``@dataclass(frozen=True)`` but write their fields into the instance's dict in a
hand-written ``__init__`` (a frozen dataclass's own cost about 1,200 instructions a field). Each must still be
the record the generated ``__init__`` made: the same parameters in the same order with the same defaults, the
same fields, equality, hash and repr, and refuse assignment.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any

import pytest

from bitexact.evidence.entry import EncodedEntry
from bitexact.recording.writer import WithheldResult, _Staged
from bitexact.store.base import AppendResult
from bitexact.store.checks import EntryFields

RECORDS = [_Staged, EncodedEntry, EntryFields, AppendResult, WithheldResult]


def _reference(cls: type) -> type:
    """``cls`` as ``@dataclass(frozen=True)`` alone makes it (its generated ``__init__``)."""
    specs: list[Any] = []
    for field in dataclasses.fields(cls):
        if field.default is dataclasses.MISSING:
            specs.append((field.name, field.type))
        else:
            specs.append((field.name, field.type, dataclasses.field(default=field.default)))
    return dataclasses.make_dataclass(cls.__name__, specs, frozen=True)


@pytest.mark.parametrize("cls", RECORDS)
def test_the_parameters_are_the_generated_ones(cls: type) -> None:
    def shape(init: Any) -> list[tuple[str, Any, Any]]:
        return [(p.name, p.kind, p.default) for p in inspect.signature(init).parameters.values()]

    assert shape(cls.__init__) == shape(_reference(cls).__init__)


@pytest.mark.parametrize("cls", RECORDS)
def test_a_record_is_the_one_the_generated_init_made(cls: type) -> None:
    reference = _reference(cls)
    fields = dataclasses.fields(cls)
    required = [f.name for f in fields if f.default is dataclasses.MISSING]
    values = {f.name: f"value of {f.name}" for f in fields}
    for given in (values, {name: values[name] for name in required}):
        made, expected = cls(**given), reference(**given)
        assert vars(made) == vars(expected)
        assert [getattr(made, f.name) for f in fields] == [getattr(expected, f.name) for f in fields]
        assert repr(made) == repr(expected)
        assert made == cls(**given) and hash(made) == hash(cls(**given))
        positional = cls(*[given.get(f.name, f.default) for f in fields])
        assert positional == made
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(made, fields[0].name, "other")
        with pytest.raises(dataclasses.FrozenInstanceError):
            delattr(made, fields[-1].name)
        assert dataclasses.replace(made, **{fields[0].name: "x"}) == cls(**{**given, fields[0].name: "x"})
    with pytest.raises(TypeError):
        cls(*[values[name] for name in required[:-1]])


def test_a_withheld_result_is_still_an_append_result() -> None:
    withheld = WithheldResult(4, "ab" * 32, "args", "invalid hint")
    assert isinstance(withheld, AppendResult)
    assert (withheld.step, withheld.hash, withheld.field, withheld.reason) == (4, "ab" * 32, "args", "invalid hint")
    assert withheld != AppendResult(4, "ab" * 32)
