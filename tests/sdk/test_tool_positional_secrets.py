"""A tool's positional argument bound to a credential-named parameter is recorded by name, so the policy reads it.

`@record_tool def connect_db(host, user, password)` called as `connect_db("db", "app", "X")` was recorded as
`args: ["db", "app", "X"]`: the name `password`, which the credential rule keys on, was dropped though the
decorator had the signature, and `"X"` was stored. Now the same call is recorded as `args: ["db", "app"],
kwargs: {"password": "X"}` (from the first such parameter on, every argument that may be passed by name is), and
the shipped policy scrubs it. The agent's call itself is unchanged.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

import bitexact
from sdk.conftest import entries

T = "[CREDENTIAL]"


@pytest.fixture(autouse=True)
def _shipped_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BITEXACT_CAPTURE_POLICY", "default")


def _calls(run_id: str | None) -> list[dict[str, Any]]:
    return [e["data"] for e in entries(run_id) if e["kind"] == "tool_call"]


@bitexact.record_tool
def connect_db(host: str, user: str, password: str, port: int = 5432) -> str:
    return f"{user}@{host}:{port}/{len(password)}"


@bitexact.record_tool
def charge(card_number: str, amount: float, cvv: str) -> str:
    return "approved"


@bitexact.record_tool
def login(user: str, password: str, /) -> str:  # positional-only: no name to pass it by
    return "ok"


@bitexact.record_tool
def run_all(token: str, *commands: str) -> int:
    return len(commands)


class Vault:
    @bitexact.record_tool
    def unlock(self, passphrase: str) -> bool:
        return bool(passphrase)


def test_a_credential_named_positional_is_recorded_by_name_and_scrubbed() -> None:
    with bitexact.run() as r:
        assert connect_db("db.internal", "app", "PositionalPw1") == "app@db.internal:5432/13"
        assert connect_db("db.internal", "app", "PositionalPw2", 6432).endswith(":6432/13")
        assert charge("4111111111111111", 10.5, "737") == "approved"
        assert Vault().unlock("VaultPass3") is True
    calls = _calls(r.run_id)
    assert [(c["args"], c["kwargs"]) for c in calls] == [
        (["db.internal", "app"], {"password": T}),
        (["db.internal", "app"], {"password": T, "port": 6432}),
        (["[PAN ****1111]", 10.5], {"cvv": T}),
        ([], {"passphrase": T}),  # the receiver is named, never recorded in args (docs/sdk.md)
    ]
    assert calls[3]["receiver"] == {"self": f"{__name__}.Vault"}


def test_calls_that_pass_it_by_name_or_cannot_are_recorded_as_called() -> None:
    with bitexact.run() as r:
        connect_db("db", "app", password="ByNamePw4")
        login("bob", "PosOnlyPw5")
        run_all("RunTok6", "a", "b")
    calls = _calls(r.run_id)
    assert (calls[0]["args"], calls[0]["kwargs"]) == (["db", "app"], {"password": T})
    assert (calls[1]["args"], calls[1]["kwargs"]) == (["bob", "PosOnlyPw5"], {})  # positional-only: as called
    # The named positional before *commands is recorded by name (it was `args` in the clear before); what
    # fills *commands stays positional (tests/sdk/test_sdk_edges15.py).
    assert (calls[2]["args"], calls[2]["kwargs"]) == (["a", "b"], {"token": T})


def test_an_async_tool_and_a_generator_tool_too() -> None:
    @bitexact.record_tool
    async def fetch(url: str, api_key: str) -> str:
        return url

    @bitexact.record_tool
    def pages(url: str, token: str) -> Any:
        yield url

    with bitexact.run() as r:
        assert asyncio.run(fetch("https://h/a", "AsyncKey7")) == "https://h/a"
        assert list(pages("https://h/b", "GenTok8")) == ["https://h/b"]
    calls = _calls(r.run_id)
    assert [(c["args"], c["kwargs"]) for c in calls] == [(["https://h/a"], {"api_key": T}),
                                                        (["https://h/b"], {"token": T})]
