"""Session 20: a method's receiver is named under the decorators session 19 left recording it whole.

Session 19 named the receiver of a method whose class holds the tool under a function decorator copying no
attributes. Still recorded whole, as ``args[0]`` (an agent's whole state on every call), were:

1. ``@record_tool`` over such a decorator: the function it wraps is ``inner(*a, **k)``, defined outside the
   class; the method it is made over (``Agent.over``, first parameter ``self``) is found through its closure.
2. A class-based decorator (an object holding the function as ``self.fn``) over ``@record_tool``, binding as a
   function does (its ``__get__``), or under it: found through the object's own attributes.

Each call still checks that its first argument's class holds this tool's wrapper by that name, so a function
that merely holds a method (a tool closing over ``Agent.search``) records its first argument as called. A
class-based decorator with no ``__get__`` is not bound by Python: called on an instance, no receiver reaches
the tool, and its first argument is recorded as called. Each through a real run and store.
"""

from __future__ import annotations

import functools
from typing import Any

import bitexact
from sdk.conftest import entries

HERE = __name__


def _calls(run_id: str | None) -> list[tuple[Any, ...]]:
    return [(e["data"].get("receiver"), e["data"]["args"], e["data"]["kwargs"])
            for e in entries(run_id) if e["kind"] == "tool_call"]


def plain(fn):  # type: ignore[no-untyped-def]
    """A decorator written without functools.wraps."""
    def inner(*args, **kwargs):  # type: ignore[no-untyped-def]
        return fn(*args, **kwargs)
    return inner


class Bound:
    """A class-based decorator that binds as a function does, copying no attributes."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    def __get__(self, obj: Any, cls: Any = None) -> Any:
        return self if obj is None else functools.partial(self, obj)


class Unbound:
    """A class-based decorator with no ``__get__``: Python passes it no receiver."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)


class Agent:
    def __init__(self) -> None:
        self.history = ["SECRET-STATE" * 10]

    @bitexact.record_tool
    @plain
    def over(self, query: str, limit: int = 3) -> str:
        return f"{query}:{limit}"

    @classmethod
    @bitexact.record_tool
    @plain
    def make(cls, n: int) -> int:
        return n

    @Bound
    @bitexact.record_tool
    def under_object(self, query: str) -> str:
        return query

    @bitexact.record_tool
    @Bound
    def over_object(self, query: str) -> str:
        return query

    @Unbound
    @bitexact.record_tool
    def unbound(self, query: str = "none") -> str:
        return f"{self}/{query}"

    @staticmethod
    @bitexact.record_tool
    @plain
    def helper(self: str, x: int) -> str:  # a static method whose first parameter is named self: no receiver
        return self * x

    def search(self, query: str) -> str:
        return query


class Special(Agent):
    pass


def test_record_tool_over_a_decorator_copying_no_attributes_names_the_receiver() -> None:
    agent = Agent()
    with bitexact.run() as r:
        assert agent.over("q", limit=5) == "q:5"
        assert Special().over("sub") == "sub:3"
        assert Agent.over(agent, "by-hand") == "by-hand:3"
        assert Agent.make(4) == 4
        assert Agent.helper("ab", 2) == "abab"
    assert _calls(r.run_id) == [
        ({"self": f"{HERE}.Agent"}, ["q"], {"limit": 5}),
        ({"self": f"{HERE}.Special"}, ["sub"], {}),
        ({"self": f"{HERE}.Agent"}, ["by-hand"], {}),
        ({"cls": f"{HERE}.Agent"}, [4], {}),
        (None, ["ab", 2], {}),  # held as a staticmethod: its first argument is no receiver
    ]


def test_a_class_based_decorator_over_or_under_record_tool_names_the_receiver() -> None:
    agent = Agent()
    with bitexact.run() as r:
        assert agent.under_object("a") == "a"
        assert agent.over_object("b") == "b"
        assert Special().under_object("c") == "c"
    assert _calls(r.run_id) == [
        ({"self": f"{HERE}.Agent"}, ["a"], {}),
        ({"self": f"{HERE}.Agent"}, ["b"], {}),
        ({"self": f"{HERE}.Special"}, ["c"], {}),
    ]
    assert "SECRET-STATE" not in str(entries(r.run_id))


def test_a_decorator_python_does_not_bind_passes_no_receiver() -> None:
    agent = Agent()
    with bitexact.run() as r:
        assert agent.unbound("x") == "x/none"  # Python passed no agent: "x" is the tool's self
        assert Agent.unbound(agent, "y").endswith("/y")  # the receiver passed by hand is named
    assert _calls(r.run_id) == [(None, ["x"], {}), ({"self": f"{HERE}.Agent"}, ["y"], {})]


def test_a_tool_holding_a_method_is_no_method() -> None:
    # A tool closing over Agent.search is found to be made over a method, but no class holds the tool:
    # its first argument, an Agent here, is recorded as called.
    method = Agent.search

    @bitexact.record_tool
    def search_with(*args: Any) -> str:
        return method(*args)  # type: ignore[no-any-return]

    with bitexact.run() as r:
        assert search_with(Special(), "q") == "q"
    [(receiver, args, _)] = _calls(r.run_id)
    assert receiver is None and len(args) == 2 and args[1] == "q"
