"""perf22's shortcuts on a recorded call write what the general path writes.

* A tool called with no keyword arguments records ``kwargs`` as the fragment ``{}`` made once: the bytes
  ``dump_json({})`` writes, spliced the same way; keyword arguments still go through ``dump_json``.
* ``dump_json`` takes its orjson options from a constant made by ``_orjson_options`` at import.
"""

from __future__ import annotations

import orjson

import bitexact
from bitexact.sdk.jsonable import _OPTIONS, WrittenJSON, _orjson_options, dump_json
from bitexact.sdk.tools import _NO_KWARGS, _as_called
from sdk.conftest import entries


def test_no_keyword_arguments_are_the_fragment_dump_json_writes() -> None:
    args, kwargs, hints = _as_called(("a", 1), {})
    assert kwargs is _NO_KWARGS and type(kwargs) is WrittenJSON
    assert orjson.dumps(kwargs.fragment) == dump_json({}) == b"{}"
    assert isinstance(args, WrittenJSON) and orjson.dumps(args.fragment) == dump_json(["a", 1]) and hints is None


def test_keyword_arguments_still_go_through_dump_json() -> None:
    _, kwargs, _ = _as_called((), {"q": "x", "n": float("nan")})
    assert kwargs is not _NO_KWARGS
    assert orjson.dumps(kwargs.fragment) == dump_json({"q": "x", "n": float("nan")})


def test_the_options_constant_is_the_functions() -> None:
    assert _OPTIONS == _orjson_options()


def test_recorded_calls_with_and_without_keyword_arguments() -> None:
    @bitexact.record_tool
    def tool(*args: object, **kwargs: object) -> str:
        return "ok"

    with bitexact.run() as r:
        tool("a")
        tool("a", k="v")
        tool()
    calls = [e["data"] for e in entries(r.run_id) if e["kind"] == "tool_call"]
    assert [(c["args"], c["kwargs"]) for c in calls] == [(["a"], {}), (["a"], {"k": "v"}), ([], {})]
