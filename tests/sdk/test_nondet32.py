"""os.getrandom under capture_nondeterminism (session 32): Linux's getrandom(2), the same OS entropy as os.urandom
read another way, was neither recorded nor named unrecorded in docs/sdk.md's limits."""

from __future__ import annotations

import os

import pytest

import bitexact
from sdk.conftest import entries

pytestmark = pytest.mark.skipif(not hasattr(os, "getrandom"), reason="os.getrandom is Linux's")


def test_os_getrandom_is_recorded_hash_only_as_os_urandom_is() -> None:
    original = os.getrandom
    with bitexact.run(capture_nondeterminism=True) as r:
        value = os.getrandom(16)
        assert len(value) == 16
    assert os.getrandom is original
    reads = [e for e in entries(r.run_id) if e["kind"] == "nondet"]
    assert [(e["data"]["source"], e["data"]["value"], e["prov"]) for e in reads] == [
        ("os.getrandom", "[hash-only]", "observed")]
    assert value.hex() not in str([e["data"] for e in entries(r.run_id)])


def test_os_getrandom_outside_a_capturing_run_is_the_original() -> None:
    original = os.getrandom
    with bitexact.run() as r:
        os.getrandom(4)
    assert os.getrandom is original
    assert [e["kind"] for e in entries(r.run_id)] == ["run_meta", "run_end"]
