"""The product's own timestamps are never the agent's nondeterminism (perf22's ``now_iso``).

perf22 made ``now_iso`` read the clock with ``time.time_ns`` (it was ``datetime.now``). A run that captures
nondeterminism patches ``time.time_ns``; ``now_iso`` binds the real one at import, as it bound the real
``datetime`` class before, so a stamp the product writes (an entry's ``ts``, a journal record's, the
store's ``appended_at``) is never recorded as a ``time.time_ns`` read of the agent's, whichever thread or
context writes it. A first version called ``time.time_ns`` through the module: every stamp outside the
SDK's busy blocks became a ``nondet`` entry.
"""

from __future__ import annotations

import threading
import time

import bitexact
from bitexact.evidence.timefmt import now_iso
from sdk.conftest import entries


def test_stamps_the_product_writes_in_a_capturing_run_record_no_clock_read() -> None:
    @bitexact.record_tool
    def lookup(query: str) -> str:
        return query.upper()

    stamped: list[str] = []
    with bitexact.run(capture_nondeterminism=True) as r:
        stamped.append(now_iso())  # in the agent's own context, outside any SDK work
        lookup("a")
        other = threading.Thread(target=lambda: stamped.append(now_iso()))
        other.start()
        other.join()
        r.record("marker", {"note": "done"})
        seen = time.time_ns()  # the agent's own read: recorded
    nondet = [e["data"] for e in entries(r.run_id) if e["kind"] == "nondet"]
    assert nondet == [{"source": "time.time_ns", "value": str(seen)}]
    assert len(stamped) == 2 and all(stamp.endswith("+00:00") for stamp in stamped)
