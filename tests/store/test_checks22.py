"""perf22's shortcuts in the store's append path refuse and count what they did before.

* ``checks.entry`` asks a plain dict's type before calling ``_object``: a record, ``commitments``, ``data`` or
  ``salts`` that is not an object is still refused naming its field, a dict subclass still taken, another
  run's entry still refused naming ``run_id``.
* ``_frames_written`` of a lone ticket is the general sum's.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pytest

from bitexact.evidence.entry import build_entry
from bitexact.store import checks
from bitexact.store.base import RecordError
from bitexact.store.groupcommit import Ticket
from bitexact.store.sqlite import _Append, _frames_written


def _entry() -> dict[str, Any]:
    return build_entry(run_id="run-1", step=0, kind="tool_call", prov="observed", data={"tool": "t", "k": "v" * 5000},
                       prev="0" * 64, alg="blake2b-256", ts="2026-12-01T20:00:00+00:00")


@pytest.mark.parametrize("key", ["commitments", "data", "salts"])
@pytest.mark.parametrize("bad", [[], "x", None, 1])
def test_a_member_that_is_not_an_object_is_refused_naming_it(key: str, bad: Any) -> None:
    entry = {**_entry(), key: bad}
    with pytest.raises(RecordError, match=f"^{key} must be a JSON object") as raised:
        checks.entry("run-1", entry)
    assert raised.value.field == key


def test_a_record_that_is_not_an_object_and_another_runs_entry_are_refused() -> None:
    with pytest.raises(RecordError, match="^entry must be a JSON object") as raised:
        checks.entry("run-1", [("a", 1)])
    assert raised.value.field == "entry"
    with pytest.raises(RecordError, match="being stored in run 'run-2'") as raised:
        checks.entry("run-2", _entry())
    assert raised.value.field == "run_id"


def test_dict_subclasses_are_taken_as_before() -> None:
    entry = _entry()
    plain = checks.entry("run-1", entry)
    wrapped = OrderedDict(entry)
    wrapped["commitments"] = OrderedDict(entry["commitments"])
    wrapped["salts"] = OrderedDict(entry["salts"])
    assert checks.entry("run-1", wrapped) == plain


def test_a_lone_tickets_frames_are_the_general_sums() -> None:
    fields = checks.entry("run-1", _entry())
    ticket: Ticket[_Append, Any] = Ticket(_Append("run-1", ((fields, None),)))
    size = ticket.item.size
    assert size > 4096
    assert _frames_written([ticket]) == size // 4096 + 3 * 1 + 1
    assert _frames_written([ticket, ticket]) == (2 * size) // 4096 + 3 * 1 + 1
