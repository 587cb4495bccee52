"""An entry larger as stored than the store reads back is refused where it is written, a declared gap, never
a row that makes the run unreadable. A real server on loopback, a real store.

Before, a 45 MiB text/plain response of control characters (within BITEXACT_MAX_BODY_BYTES, so kept under
the shipped policy too) was stored as a 283 MB row, six bytes a character: the run read as sealed in
`bitexact runs`, and `show`, `verify` and `export` all stopped at it, calling the store damaged and
pointing at a backup.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

import bitexact
from bitexact.canon.decode import DEFAULT_MAX_BYTES
from bitexact.sdk import RecordingError
from capture_verdict.support import invoker
from sdk.conftest import entries
from sdk.servers import HandlerBase, serve_seen

BODY = b"\x01" * (DEFAULT_MAX_BYTES // 6 + (1 << 20))  # each stored as \u0001: past the bound as JSON


class _Controls(HandlerBase):
    def do_GET(self) -> None:  # noqa: N802 - http.server's naming
        self._send(200, BODY, "text/plain")


@pytest.fixture
def base() -> Iterator[str]:
    with serve_seen(_Controls) as (url, _):
        yield url


def test_an_entry_past_what_the_store_reads_back_is_a_declared_gap_and_the_run_stays_readable(
    base: str, home: Path
) -> None:
    with pytest.raises(RecordingError) as raised, bitexact.run(strict=True) as r:
        bitexact.wrap(httpx.Client()).get(base + "/")
    assert raised.value.cause == "invalid_argument"
    assert f"over the {DEFAULT_MAX_BYTES:,} a reader of the store takes back" in str(raised.value)
    kinds = [e["kind"] for e in entries(r.run_id)]  # read back: no row the store cannot read
    assert "http_call" not in kinds and kinds[0] == "run_meta" and kinds[-1] == "run_end"
    (gap,) = r.failures.gaps
    assert gap.cause == "invalid_argument" and gap.kind == "http_call"
    verdict = invoker(home)("verify", r.run_id)
    assert verdict.exit_code == 0, verdict.stdout + verdict.stderr
