"""The bundle spec's own vectors (§1.2 table, §2.1 commitment, §2.2 key_id), pinned here as data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bitexact.canon import canonicalize, loads
from bitexact.crypto import commitment, key_id
from bitexact.errors import CanonicalizationError

VECTORS = json.loads((Path(__file__).parent.parent / "data" / "verify" / "spec_vectors.json").read_text("utf-8"))


@pytest.mark.parametrize("row", VECTORS["canonical"], ids=lambda r: r["input"][:30])
def test_canonical_table_row(row: dict[str, str]) -> None:
    assert canonicalize(loads(row["input"])) == row["canonical"].encode("utf-8", "surrogatepass")


@pytest.mark.parametrize("row", VECTORS["refused"], ids=lambda r: r["input"])
def test_canonical_table_refusal(row: dict[str, str]) -> None:
    with pytest.raises(CanonicalizationError) as caught:
        canonicalize(loads(row["input"]))
    assert str(caught.value) == row["message"]


@pytest.mark.parametrize("alg", ["blake2b-256", "sha256"])
def test_commitment_vector(alg: str) -> None:
    vector = VECTORS["commitment"]
    assert commitment(alg, bytes.fromhex(vector["salt"]), vector["value"]) == vector[alg]


def test_key_id_is_blake2b_64_of_the_raw_key() -> None:
    vector = VECTORS["key_id"]
    assert key_id(vector["public_key"]) == vector["key_id"]
