"""What ``@bitexact.record_tool`` records, left open by the eighteenth SDK audit; each through a real run and store.

1. A method's ``self`` was recorded in full as ``args[0]``: a dataclass agent's whole state (its history) on every
   call, or a repr with a memory address; 300 calls of a tool on an agent whose history grows 200 B a call stored
   megabytes (quadratic). The receiver is now named (``receiver: {"self": "module.Class"}``, a classmethod's
   ``{"cls": ...}``) and ``args`` are the arguments after it, whether the method was decorated in its class or a
   bound method was wrapped later.
2. ``record_tool(name="b")`` over a tool already wrapped under another name returned the first wrapper: its calls
   were recorded under the first name without a word. Refused where it is wrapped, naming ``name``.
3. A sync function returning an async generator (an async generator function under a decorator that hides it)
   was recorded at once as an ``ok`` call whose result was the generator's repr; what it yielded was never
   recorded.
4. ``BITEXACT_CONTEXT`` stayed in a sub-agent's environment after its run read it: a grandchild it started with
   plain ``subprocess`` recorded the grandparent's event as its own cause.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import bitexact
from bitexact.sdk import SdkArgumentError
from bitexact.sdk.causal import ENV_VAR, parse_context
from sdk.conftest import entries

HERE = __name__


def _calls(run_id: str | None) -> list[dict[str, Any]]:
    return [e["data"] for e in entries(run_id) if e["kind"] == "tool_call"]


@dataclasses.dataclass
class Agent:
    history: list[str] = dataclasses.field(default_factory=list)

    @bitexact.record_tool
    def search(self, query: str, limit: int = 3) -> str:
        self.history.append("x" * 200)  # the agent's state grows with each call
        return f"{query}:{limit}"

    def plain(self, query: str) -> str:
        return query.upper()

    @classmethod
    @bitexact.record_tool
    def build(cls, size: int) -> int:
        return size * 2

    @bitexact.record_tool
    @classmethod
    def make(cls, size: int) -> int:
        return size + 1

    @staticmethod
    @bitexact.record_tool
    def helper(self: str, x: int) -> str:  # a static method whose first parameter is named self: no receiver
        return self * x

    @staticmethod
    @bitexact.record_tool
    def login(self: str, password: str) -> bool:
        return bool(self and password)


class Special(Agent):
    def search(self, query: str, limit: int = 3) -> str:  # an override calling the recorded base
        return super().search(query, limit=limit)


def test_a_method_records_its_receiver_named_not_its_state(sdk_home: Path) -> None:
    agent = Agent()
    with bitexact.run() as r:
        for i in range(300):
            agent.search(f"q{i}")
        Special().search("sub", limit=5)
        Agent.search(agent, "unbound")  # called through the class: the same receiver
    calls = _calls(r.run_id)
    assert len(calls) == 302
    assert all(c["receiver"] == {"self": f"{HERE}.Agent"} for c in calls[:300] + calls[301:])
    assert [c["args"] for c in calls[:3]] == [["q0"], ["q1"], ["q2"]]
    assert (calls[299]["args"], calls[299]["kwargs"], calls[299]["result"]) == (["q299"], {}, "q299:3")
    assert (calls[300]["receiver"], calls[300]["args"], calls[300]["kwargs"]) == (
        {"self": f"{HERE}.Special"}, ["sub"], {"limit": 5})  # the instance's own type, through super()
    assert (calls[301]["args"], calls[301]["kwargs"]) == (["unbound"], {})
    assert "x" * 200 not in str(calls)  # the agent's history is nowhere in the record


def test_a_bound_method_wrapped_later_records_as_one_decorated_in_its_class(sdk_home: Path) -> None:
    agent = Agent()
    plain = bitexact.record_tool(agent.plain)
    later = bitexact.record_tool(name="later")(Special().plain)
    with bitexact.run() as r:
        assert plain("hi") == "HI"
        assert later(query="q") == "Q"
        assert Agent.plain(agent, "direct") == "DIRECT"  # the class's own function stays unrecorded
    calls = _calls(r.run_id)
    assert [(c["tool"], c["receiver"], c["args"], c["kwargs"]) for c in calls] == [
        ("plain", {"self": f"{HERE}.Agent"}, ["hi"], {}),
        ("later", {"self": f"{HERE}.Special"}, [], {"query": "q"}),
    ]
    with pytest.raises(SdkArgumentError, match="'search'.*'other'"):  # a tool already, under its own name
        bitexact.record_tool(name="other")(agent.search)


def test_a_classmethod_names_its_class_and_a_staticmethod_keeps_its_arguments(sdk_home: Path) -> None:
    with bitexact.run() as r:
        assert Agent.build(4) == 8
        assert Special().make(1) == 2
        assert Agent.helper("ab", 2) == "abab"
        assert Agent.login("bob", "pw") is True
    calls = _calls(r.run_id)
    assert [(c["tool"], c.get("receiver"), c["args"], c["kwargs"]) for c in calls] == [
        ("build", {"cls": f"{HERE}.Agent"}, [4], {}),
        ("make", {"cls": f"{HERE}.Special"}, [1], {}),
        ("helper", None, ["ab", 2], {}),
        ("login", None, ["bob"], {"password": "pw"}),  # by name as for any tool, counted from its first argument
    ]


def test_async_and_generator_methods_name_their_receiver(sdk_home: Path) -> None:
    class Streamer:
        @bitexact.record_tool
        async def fetch(self, n: int) -> int:
            return n

        @bitexact.record_tool
        def items(self, n: int) -> Any:
            yield from range(n)

    with bitexact.run() as r:
        assert asyncio.run(Streamer().fetch(3)) == 3
        assert list(Streamer().items(2)) == [0, 1]
    calls = _calls(r.run_id)
    named = f"{HERE}.test_async_and_generator_methods_name_their_receiver.<locals>.Streamer"
    assert [(c["receiver"], c["args"]) for c in calls] == [({"self": named}, [3]), ({"self": named}, [2])]


def test_a_function_that_is_no_method_keeps_a_first_argument_named_self(sdk_home: Path) -> None:
    @bitexact.record_tool
    def local(self: int, other: int) -> int:  # defined in a function, not a class body
        return self + other

    with bitexact.run() as r:
        assert local(1, 2) == 3
    (call,) = _calls(r.run_id)
    assert call["args"] == [1, 2] and "receiver" not in call


def test_a_second_wrapping_under_another_name_is_refused_naming_it(sdk_home: Path) -> None:
    def lookup(key: str) -> str:
        return key

    first = bitexact.record_tool(name="a")(lookup)
    with pytest.raises(SdkArgumentError, match="'a'.*'b'") as raised:
        bitexact.record_tool(name="b")(first)
    assert raised.value.field == "name"
    assert bitexact.record_tool(name="a")(first) is first  # the same name: the same wrapper
    assert bitexact.record_tool(first) is first  # no name asked: nothing unsaid
    with bitexact.run() as r:
        first("k")
    assert [c["tool"] for c in _calls(r.run_id)] == ["a"]


def _hides_async_generator(fn):  # type: ignore[no-untyped-def]
    @functools.wraps(fn)
    def hidden(*args, **kwargs):  # type: ignore[no-untyped-def]
        return fn(*args, **kwargs)

    return hidden


def test_a_sync_tool_returning_an_async_generator_is_an_async_generator_tool(sdk_home: Path) -> None:
    @bitexact.record_tool
    @_hides_async_generator
    async def ticks(n: int) -> Any:
        for i in range(n):
            bitexact.current_run().marker(f"tick {i}")  # type: ignore[union-attr]
            got = yield i
            if got == "stop":
                return

    async def consume() -> list[Any]:
        gen = ticks(5)
        out = [await gen.asend(None), await gen.asend(None)]
        with pytest.raises(StopAsyncIteration):
            await gen.asend("stop")  # asend reaches the tool
        return out

    with bitexact.run() as r:
        assert asyncio.run(consume()) == [0, 1]
    stored = entries(r.run_id)
    (call,) = [e for e in stored if e["kind"] == "tool_call"]
    assert (call["data"]["args"], call["data"]["status"], call["data"]["result"]) == ([5], "ok", {"yielded": [0, 1]})
    markers = [e for e in stored if e["kind"] == "marker"]
    assert [(m["data"]["note"], m.get("ctx")) for m in markers] == [("tick 0", "ticks"), ("tick 1", "ticks")]


def test_a_sync_tool_returning_an_async_generator_that_raises_records_the_error(sdk_home: Path) -> None:
    @bitexact.record_tool
    @_hides_async_generator
    async def broken() -> Any:
        yield "first"
        raise ValueError("feed dropped")

    async def consume() -> list[Any]:
        return [item async for item in broken()]

    with bitexact.run() as r:
        with pytest.raises(ValueError, match="feed dropped"):
            asyncio.run(consume())
    (call,) = _calls(r.run_id)
    assert (call["status"], call["result"], call["error"]) == (
        "error", {"yielded": ["first"]}, {"type": "builtins.ValueError", "message": "feed dropped"})


CHILD = """
import os, subprocess, sys
import bitexact
grandchild = "import bitexact\\nwith bitexact.run(name='grandchild') as g:\\n    pass\\nprint(g.run_id)"
with bitexact.run(name="child") as r:
    done = subprocess.run([sys.executable, "-c", grandchild], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
with bitexact.run(name="child-again") as again:
    pass
print(r.run_id, again.run_id, done.stdout.strip(), "BITEXACT_CONTEXT" in os.environ)
"""


def test_a_grandchild_started_plainly_records_no_grandparent_cause(sdk_home: Path) -> None:
    with bitexact.run(name="planner") as parent:
        env = parent.child_env()
        done = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    child, again, grandchild, still_set = done.stdout.split()
    handed = parse_context(env[ENV_VAR])
    assert entries(child)[0]["data"]["causal"]["caused_by"] == [handed.id]
    assert entries(again)[0]["data"]["causal"]["caused_by"] == [handed.id]  # every run of the sub-agent
    assert "causal" not in entries(grandchild)[0]["data"]  # not the grandparent's event
    assert still_set == "False"
    assert ENV_VAR not in os.environ
