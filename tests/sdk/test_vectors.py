"""Every vector row the SDK conforms to, loaded from the copied protocol vectors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import bitexact
from bitexact.context import ContextFormatError, format_context, parse_context
from bitexact.sdk.custody import is_hint
from bitexact.sdk.errors import CustodyHintError
from bitexact.sdk.http.credentials import CREDENTIAL_KEYS, record_url
from bitexact.sdk.identity import ENUMS, FIELDS, apply_identity_rule
from bitexact.sdk.records import DECIDED, OUTCOMES
from sdk.conftest import DATA, entries

VECTORS: dict[str, Any] = json.loads(Path(DATA).read_text(encoding="utf-8"))


def _ids(rows: list[dict[str, Any]]) -> list[str]:
    return [row["name"] for row in rows]


# -- identity ---------------------------------------------------------------


def test_identity_fields_and_enums_are_the_vectors() -> None:
    assert list(FIELDS) == VECTORS["identity_fields"]["fields"]
    assert {k: list(v) for k, v in ENUMS.items()} == VECTORS["identity_fields"]["enums"]


@pytest.mark.parametrize("row", VECTORS["identity"], ids=_ids(VECTORS["identity"]))
def test_identity_rule_keeps_and_refuses_as_the_row_says(row: dict[str, Any]) -> None:
    verdict = apply_identity_rule(row["data"])
    assert verdict.kept == row["kept"]
    assert sorted(verdict.refused) == sorted(row["rejected"])


@pytest.mark.parametrize("row", VECTORS["identity"], ids=_ids(VECTORS["identity"]))
def test_identity_through_a_run_writes_only_kept_fields_and_declares_the_rest(row: dict[str, Any]) -> None:
    with bitexact.run() as r:
        r.identity(**row["data"])
    written = entries(r.run_id)[1:-1]
    identities = [e for e in written if e["kind"] == "identity"]
    gaps = [e for e in written if e["kind"] == "marker" and "gap" in e["data"]]
    if row["kept"]:
        assert [e["data"] for e in identities] == [row["kept"]]
    else:
        assert identities == [], "an identity that keeps nothing is refused whole"
    if row["rejected"] or not row["kept"]:
        assert len(gaps) == 1
        gap = gaps[0]["data"]["gap"]
        assert gap["cause"] == "invalid_argument"
        assert sorted(gap["fields"]) == sorted(row["rejected"])
        if row["rejected"]:
            refused = {k: row["data"][k] for k in row["rejected"]}
            assert gap["withheld"]["length"] == len(bitexact.canon.canonicalize(refused))
            assert gap["withheld"]["digest"] == "dropped: no capture key"
            # a refused value is never written, in the gap or anywhere in the run
            for value in refused.values():
                if isinstance(value, str) and len(value) > 3:
                    assert value not in json.dumps([e["data"] for e in written])
    else:
        assert gaps == []


# -- credentials --------------------------------------------------------------


def test_the_credential_table_is_the_vectors() -> None:
    assert CREDENTIAL_KEYS == frozenset(VECTORS["credential_keys"]["keys"])


@pytest.mark.parametrize("row", VECTORS["credential_keys"]["recorded_urls"],
                         ids=_ids(VECTORS["credential_keys"]["recorded_urls"]))
def test_recorded_url(row: dict[str, str]) -> None:
    assert record_url(row["url"]) == row["recorded"]


# -- causal contexts ------------------------------------------------------------


@pytest.mark.parametrize("row", VECTORS["contexts"], ids=_ids(VECTORS["contexts"]))
def test_context(row: dict[str, Any]) -> None:
    if row["id"] is None:
        with pytest.raises(ContextFormatError):
            parse_context(row["context"])
        return
    parsed = parse_context(row["context"])
    assert parsed.id == row["id"]
    assert list(parsed.hlc) == row["hlc"]
    assert format_context(row["id"], row["hlc"]) == row["context"]


# -- check outcomes --------------------------------------------------------------


def test_the_outcome_vocabulary_is_the_vectors() -> None:
    assert list(OUTCOMES) == VECTORS["check_outcomes"]["outcomes"]
    assert list(DECIDED) == VECTORS["check_outcomes"]["decided"]


@pytest.mark.parametrize("outcome", VECTORS["check_outcomes"]["outcomes"])
def test_each_outcome_is_recorded_as_itself(outcome: str) -> None:
    with bitexact.run() as r:
        r.policy_check("payout-limit", outcome)
    check = entries(r.run_id)[1]["data"]["policy_check"]
    assert check["outcome"] == outcome
    assert check["decided"] == (outcome in VECTORS["check_outcomes"]["decided"])
    assert "reported" not in check


@pytest.mark.parametrize("said", ["PASS", "ok", True, 1, None, {"result": "pass"}])
def test_an_outcome_outside_the_vocabulary_is_unknown_never_guessed(said: Any) -> None:
    with bitexact.run() as r:
        r.policy_check("payout-limit", said)
    check = entries(r.run_id)[1]["data"]["policy_check"]
    assert check["outcome"] == "unknown"
    assert check["decided"] is False
    assert check["reported"] == said


def test_a_check_that_raised_is_error_and_the_exception_goes_on() -> None:
    def limit(amount: int) -> str:
        raise RuntimeError("limits service down")

    with bitexact.run() as r:
        with pytest.raises(RuntimeError, match="limits service down"):
            r.check("payout-limit", limit, 9000)
        assert r.check("kyc", lambda: "held") == "held"
    first, second = (e["data"]["policy_check"] for e in entries(r.run_id)[1:3])
    assert first["outcome"] == "error" and first["error"]["message"] == "limits service down"
    assert second["outcome"] == "held" and second["decided"] is True


# -- custody hints ------------------------------------------------------------------


@pytest.mark.parametrize("row", VECTORS["custody_hints"]["examples"], ids=lambda r: repr(r["hint"]))
def test_custody_hint(row: dict[str, Any]) -> None:
    assert is_hint(row["hint"]) is row["valid"]
    if row["valid"]:
        bitexact.record_tool(custody={"result": row["hint"]})(lambda: None)
    else:
        with pytest.raises(CustodyHintError):
            bitexact.record_tool(custody={"result": row["hint"]})


def test_the_vector_tool_call_is_declared_as_its_hints_say() -> None:
    vector = VECTORS["custody_hints"]["tool_call"]

    @bitexact.record_tool(custody=vector["custody"], name=vector["tool"])
    def kyc_lookup(subject: str) -> str:
        return "match"

    with bitexact.run() as r:
        assert kyc_lookup(*vector["data"]["args"]) == "match"
    entry = entries(r.run_id)[1]
    assert {k: entry["data"][k] for k in ("tool", "args", "status")} == {
        k: vector["data"][k] for k in ("tool", "args", "status")}
    assert entry["data"]["result"] != "match", "hash-only: committed, its value not kept"
    for path, declared in vector["declared"].items():
        assert declared.items() <= entry["capture"]["fields"][path].items()
