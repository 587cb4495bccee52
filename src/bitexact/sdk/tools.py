"""Tool calls: ``@record_tool`` (observed, around the live call) and ``tool_call_data`` (asserted).

``@bitexact.record_tool`` wraps a sync or async function. Inside a run each
call is an observed ``tool_call``: its arguments, its result or its error
(recorded, then re-raised unchanged), and every entry recorded while it runs
carries ``ctx=<tool>``. Outside a run it only calls the function.

A custody that is not one is refused where the tool is wrapped, never at
call time; so is a second wrapping of one tool with another custody, since
the first wrapping would keep recording its calls without the custody the
second asked for.
"""

from __future__ import annotations

import functools
import inspect
import threading
import weakref
from collections.abc import Callable, Mapping
from typing import Any, Final, TypeVar, overload

from bitexact.sdk.active import current_run, current_tool, inside_tool
from bitexact.sdk.custody import check_custody
from bitexact.sdk.errors import CustodyHintError, SdkArgumentError

F = TypeVar("F", bound=Callable[..., Any])
MARK: Final[str] = "__bitexact_tool__"

_lock = threading.Lock()
_wrapped: weakref.WeakKeyDictionary[Any, dict[str, str] | None] = weakref.WeakKeyDictionary()


def error_data(error: Any) -> dict[str, str] | None:
    """An error as a tool call records it: ``{"type", "message"}``."""
    if error is None:
        return None
    if isinstance(error, BaseException):
        return {"type": f"{type(error).__module__}.{type(error).__qualname__}", "message": str(error)}
    if isinstance(error, Mapping):
        return {str(k): str(v) for k, v in error.items()}
    return {"type": "error", "message": str(error)}


def tool_call_data(
    tool: Any, args: Any = (), kwargs: Any = None, result: Any = None, status: Any = None, error: Any = None,
) -> dict[str, Any]:
    """A ``tool_call``'s data: tool, args (list), kwargs (object), result, status, and error when one."""
    if not isinstance(tool, str) or not tool.strip():
        raise SdkArgumentError("tool must be a non-empty string naming the tool", field="tool")
    if isinstance(args, (str, bytes)) or not hasattr(args, "__iter__"):
        raise SdkArgumentError("args must be a list or tuple of the positional arguments", field="args")
    if kwargs is not None and not isinstance(kwargs, Mapping):
        raise SdkArgumentError("kwargs must be a mapping of the keyword arguments", field="kwargs")
    if status is None:
        status = "error" if error is not None else "ok"
    if not isinstance(status, str) or not status:
        raise SdkArgumentError("status must be a non-empty string (ok, error, ...)", field="status")
    # Left as the agent's objects: the run serializes the whole entry once (bitexact.sdk.jsonable.dump_json).
    data: dict[str, Any] = {
        "tool": tool,
        "args": list(args),
        "kwargs": dict(kwargs or {}),
        "result": result,
        "status": status,
    }
    err = error_data(error)
    if err is not None:
        data["error"] = err
    return data


def _register(fn: Any, custody: dict[str, str] | None, tool: str) -> Any:
    """Refuse a second custody for one tool; return the wrapper already made for the same custody."""
    original = getattr(fn, MARK, None)
    if original is not None:  # wrapping a wrapper
        existing = getattr(fn, "__bitexact_custody__", None)
        if existing != custody:
            raise CustodyHintError(
                f"tool {tool!r} is already wrapped with custody {existing!r}: a second wrapping with "
                f"{custody!r} would leave the first recording its calls without it", field="custody")
        return fn
    with _lock:
        try:
            seen = fn in _wrapped
        except TypeError:  # not weak-referenceable: nothing to compare against
            return None
        if seen and _wrapped[fn] != custody:
            raise CustodyHintError(
                f"tool {tool!r} is already wrapped with custody {_wrapped[fn]!r}: a second wrapping with "
                f"{custody!r} would leave the first recording its calls without it", field="custody")
        _wrapped[fn] = custody
    return None


@overload
def record_tool(fn: F, /) -> F: ...
@overload
def record_tool(*, custody: Mapping[str, str] | None = None, name: str | None = None) -> Callable[[F], F]: ...


def record_tool(
    fn: Any = None, /, *, custody: Mapping[str, str] | None = None, name: str | None = None,
) -> Any:
    """Record each call of a sync or async function as an observed ``tool_call`` inside a run.

    ``custody`` gives hints for the call's fields (``{"result": "hash-only"}``);
    ``name`` overrides the tool's name (default: the function's ``__name__``).
    """
    checked = check_custody(custody)  # refused here, at wrapping, never in a call

    def decorate(func: F) -> F:
        if not callable(func):
            raise SdkArgumentError(f"record_tool wraps a function, not {type(func).__name__}", field="fn")
        tool = name or getattr(func, "__name__", None) or type(func).__name__
        same = _register(func, checked, tool)
        if same is not None:
            return same  # type: ignore[no-any-return]
        if inspect.iscoroutinefunction(func):
            @functools.wraps(func)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                run = current_run()
                if run is None:
                    return await func(*args, **kwargs)
                outer = current_tool()
                with inside_tool(tool):
                    try:
                        result = await func(*args, **kwargs)
                    except BaseException as exc:
                        run._record_tool(tool, args, kwargs, None, exc, checked, outer, observed=True)
                        raise
                run._record_tool(tool, args, kwargs, result, None, checked, outer, observed=True)
                return result

            wrapper: Any = async_wrapper
        else:
            @functools.wraps(func)
            def sync_wrapper(*args: Any, **kwargs: Any) -> Any:
                run = current_run()
                if run is None:
                    return func(*args, **kwargs)
                outer = current_tool()
                with inside_tool(tool):
                    try:
                        result = func(*args, **kwargs)
                    except BaseException as exc:
                        run._record_tool(tool, args, kwargs, None, exc, checked, outer, observed=True)
                        raise
                run._record_tool(tool, args, kwargs, result, None, checked, outer, observed=True)
                return result

            wrapper = sync_wrapper
        setattr(wrapper, MARK, func)
        wrapper.__bitexact_custody__ = checked
        return wrapper  # type: ignore[no-any-return]

    return decorate(fn) if fn is not None else decorate
