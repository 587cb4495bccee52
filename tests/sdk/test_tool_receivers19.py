"""Session 19: ``@record_tool`` methods whose receiver was still recorded whole; each through a real run and store.

1. A method held in its class under another decorator that copies no attributes (one written without
   ``functools.wraps``) had its ``self`` recorded as ``args[0]``: a dataclass agent's whole state on every call.
2. A receiver passed by keyword (``Agent.search(self=agent, query=...)``) was recorded in ``kwargs``, whole.
Both now record ``receiver: {"self": "module.Class"}`` and the arguments after it, as a plain method's call.
"""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import bitexact
from sdk.conftest import entries

HERE = __name__


def _calls(run_id: str | None) -> list[dict[str, Any]]:
    return [e["data"] for e in entries(run_id) if e["kind"] == "tool_call"]


def plain(fn):  # type: ignore[no-untyped-def]
    """A decorator written without functools.wraps: its function carries none of the tool's attributes."""
    def inner(*args, **kwargs):  # type: ignore[no-untyped-def]
        return fn(*args, **kwargs)
    return inner


def counted(fn):  # type: ignore[no-untyped-def]
    """Another, over it: two decorators deep, its own first parameter named."""
    def inner(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        return fn(self, *args, **kwargs)
    return inner


@dataclasses.dataclass
class Agent:
    history: list[str] = dataclasses.field(default_factory=lambda: ["SECRET-STATE" * 10])

    @plain
    @bitexact.record_tool
    def search(self, query: str, limit: int = 3) -> str:
        return f"{query}:{limit}"

    @counted
    @plain
    @bitexact.record_tool
    def deep(self, query: str) -> str:
        return query

    @plain
    @bitexact.record_tool
    async def fetch(self, n: int) -> int:
        return n

    @bitexact.record_tool
    def find(self, query: str, token: str = "") -> str:
        return query

    @staticmethod
    @plain
    @bitexact.record_tool
    def helper(self: str, x: int) -> str:  # a static method whose first parameter is named self: no receiver
        return self * x


class Special(Agent):
    pass


def test_a_method_under_a_decorator_copying_no_attributes_names_its_receiver(sdk_home: Path) -> None:
    agent = Agent()
    with bitexact.run() as r:
        assert agent.search("q", limit=5) == "q:5"
        assert Special().search("sub") == "sub:3"
        assert agent.deep("d") == "d"
        assert asyncio.run(agent.fetch(7)) == 7
        assert Agent.helper("ab", 2) == "abab"
    calls = _calls(r.run_id)
    assert [(c["tool"], c.get("receiver"), c["args"], c["kwargs"]) for c in calls] == [
        ("search", {"self": f"{HERE}.Agent"}, ["q"], {"limit": 5}),
        ("search", {"self": f"{HERE}.Special"}, ["sub"], {}),
        ("deep", {"self": f"{HERE}.Agent"}, ["d"], {}),
        ("fetch", {"self": f"{HERE}.Agent"}, [7], {}),
        ("helper", None, ["ab", 2], {}),  # held as a staticmethod: its first argument is no receiver
    ]
    assert "SECRET-STATE" not in str(calls)


def test_a_receiver_passed_by_keyword_is_named(sdk_home: Path) -> None:
    agent = Agent()
    with bitexact.run() as r:
        assert Agent.find(self=agent, query="k") == "k"
        assert Agent.search(self=agent, query="s") == "s:3"  # under the decorator too
        assert agent.find("p", "t") == "p"  # a credential-named parameter, counted after the receiver
    calls = _calls(r.run_id)
    assert [(c["tool"], c.get("receiver"), c["args"], c["kwargs"]) for c in calls] == [
        ("find", {"self": f"{HERE}.Agent"}, [], {"query": "k"}),
        ("search", {"self": f"{HERE}.Agent"}, [], {"query": "s"}),
        ("find", {"self": f"{HERE}.Agent"}, ["p"], {"token": "t"}),
    ]
    assert "SECRET-STATE" not in str(calls)


def test_a_keyword_self_that_is_no_receiver_is_recorded_as_called(sdk_home: Path) -> None:
    class Other:
        @bitexact.record_tool
        def look(self, q: str) -> str:
            return q

    with bitexact.run() as r:
        assert Other.look(self="not-an-Other", q="x") == "x"  # its class holds no such method: as called
    (call,) = _calls(r.run_id)
    assert (call.get("receiver"), call["args"], call["kwargs"]) == (None, [], {"self": "not-an-Other", "q": "x"})
