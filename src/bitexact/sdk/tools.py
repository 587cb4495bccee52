"""Tool calls: ``@record_tool`` (observed, around the live call) and ``tool_call_data`` (asserted).

``@bitexact.record_tool`` wraps a sync or async function. Inside a run each
call is an observed ``tool_call``: its arguments, its result or its error
(recorded, then re-raised unchanged), and every entry recorded while it runs
carries ``ctx=<tool>``. Outside a run it only calls the function.

A custody that is not one is refused where the tool is wrapped, never at
call time; so is a second wrapping of one tool with another custody, since
the first wrapping would keep recording its calls without the custody the
second asked for, and with another name, which its calls would never carry.

A method's receiver (``self``, a classmethod's ``cls``) is named in the
call's ``receiver``, never recorded in ``args`` (see :class:`_Receiver`).
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import itertools
import threading
import types
import weakref
from collections.abc import Callable, Mapping
from contextlib import nullcontext
from dataclasses import dataclass
from typing import Any, Final, TypeVar, overload

import orjson

from bitexact.sdk.active import busy, current_run, current_tool, inside_tool
from bitexact.sdk.custody import check_custody
from bitexact.errors import stated
from bitexact.sdk.errors import CustodyHintError, SdkArgumentError
from bitexact.sdk.jsonable import (
    KEYS_COLLIDE,
    UnwritableValueError,
    WrittenJSON,
    dump_json,
    exception_data,
    key_collision,
    type_name,
    written_key,
)

F = TypeVar("F", bound=Callable[..., Any])
MARK: Final[str] = "__bitexact_tool__"

_NOT_RETURNED: Final[tuple[type, ...]] = (types.CoroutineType, types.GeneratorType, types.AsyncGeneratorType)
"""What ``inspect.iscoroutine``, ``isgenerator`` and ``isasyncgen`` each test ``isinstance`` of: a sync tool's result
that is an instance of none of them (nearly every one) is recorded without those three Python calls."""

_lock = threading.Lock()
_wrapped: weakref.WeakKeyDictionary[Any, dict[str, str] | None] = weakref.WeakKeyDictionary()


def error_data(error: Any) -> dict[str, str] | None:
    """An error as a tool call records it: ``{"type", "message"}``."""
    if error is None:
        return None
    if isinstance(error, BaseException):
        return exception_data(error)
    if isinstance(error, Mapping):
        out = {written_key(k): _readable(v) for k, v in error.items()}
        if len(out) < len(error):  # two keys that read the same as text: one value would vanish unsaid
            raise stated(UnwritableValueError(f"error: {key_collision(error)}"), f"error: {KEYS_COLLIDE}")
        return out
    return {"type": "error", "message": _readable(error)}


def _readable(value: Any) -> str:
    """``str(value)``, or a placeholder when its ``__str__`` raises (an error is described, never raised)."""
    try:
        return str(value)
    except Exception:  # noqa: BLE001
        return f"<{type(value).__qualname__} whose text could not be read>"


def tool_call_data(
    tool: Any, args: Any = (), kwargs: Any = None, result: Any = None, status: Any = None, error: Any = None,
) -> dict[str, Any]:
    """A ``tool_call``'s data: tool, args (list), kwargs (object), result, status, and error when one."""
    if not isinstance(tool, str) or not tool.strip():
        raise SdkArgumentError("tool must be a non-empty string naming the tool", field="tool")
    if isinstance(args, _Unwritable):
        raise args.error  # the arguments as called could not be written: the call is a declared gap
    # Arguments already serialized as the tool was called (_as_called).
    fragment_args, fragment_kwargs = isinstance(args, WrittenJSON), isinstance(kwargs, WrittenJSON)
    # A mapping would be recorded as its keys alone, bytes as their numbers: neither is the positional arguments.
    if not fragment_args and (isinstance(args, (str, bytes, bytearray, memoryview, Mapping))
                              or not hasattr(args, "__iter__")):
        raise SdkArgumentError("args must be a list or tuple of the positional arguments", field="args")
    if kwargs is not None and not fragment_kwargs and not isinstance(kwargs, Mapping):
        raise SdkArgumentError("kwargs must be a mapping of the keyword arguments", field="kwargs")
    if status is None:
        status = "error" if error is not None else "ok"
    if not isinstance(status, str) or not status:
        raise SdkArgumentError("status must be a non-empty string (ok, error, ...)", field="status")
    # Left as the agent's objects: the run serializes the whole entry once (bitexact.sdk.jsonable.dump_json).
    data: dict[str, Any] = {
        "tool": tool,
        "args": args if fragment_args else list(args),
        "kwargs": kwargs if fragment_kwargs else dict(kwargs or {}),
        "result": result,
        "status": status,
    }
    if type(args) is _ReceivedArgs:  # a method's receiver, named (see _Receiver)
        data["args"], data["receiver"] = WrittenJSON(args.fragment), args.receiver
    err = error_data(error)
    if err is not None:
        data["error"] = err
    return data


def async_callable(func: Any) -> bool:
    """An object whose ``__call__`` is ``async def``: calling it gives a coroutine, as a coroutine function does."""
    if inspect.isfunction(func) or inspect.ismethod(func) or isinstance(func, type):
        return False
    return inspect.iscoroutinefunction(getattr(type(func), "__call__", None))


def _generator_callable(func: Any, test: Callable[[Any], bool]) -> bool:
    """``test`` (``inspect.isgeneratorfunction`` or ``isasyncgenfunction``) of ``func``, or, for an object
    whose ``__call__`` is one, of that: calling it gives a generator, as calling the function does."""
    if test(func):
        return True
    if inspect.isfunction(func) or inspect.ismethod(func) or isinstance(func, (type, functools.partial)):
        return False
    return test(getattr(type(func), "__call__", None))


def _register(fn: Any, custody: dict[str, str] | None, tool: str, name: str | None = None) -> Any:
    """Refuse a second custody, or another ``name``, for one tool; return the wrapper already made for the
    same custody and name."""
    original = getattr(fn, MARK, None)
    if original is not None:  # wrapping a wrapper
        first = getattr(fn, "__bitexact_tool_name__", None)
        if name is not None and first is not None and name != first:
            # The wrapper returned as it is would record every call under its first name, the second unsaid.
            raise SdkArgumentError(
                f"tool {first!r} is already wrapped by record_tool under that name: wrapping it again as {name!r} "
                "would leave its calls recorded as "
                f"{first!r}; give the name where it is first wrapped, or wrap the function itself", field="name")
        existing = getattr(fn, "__bitexact_custody__", None)
        if existing != custody:
            raise CustodyHintError(
                f"tool {tool!r} is already wrapped with custody {existing!r}: a second wrapping with "
                f"{custody!r} would leave the first recording its calls without it", field="custody")
        return fn
    with _lock:
        try:
            weakref.ref(fn)
        except TypeError:  # not weak-referenceable (an object of a __slots__ class): nothing to compare against
            return None
        if fn in _wrapped and _wrapped[fn] != custody:
            raise CustodyHintError(
                f"tool {tool!r} is already wrapped with custody {_wrapped[fn]!r}: a second wrapping with "
                f"{custody!r} would leave the first recording its calls without it", field="custody")
        _wrapped[fn] = custody
    return None


@dataclass(frozen=True)
class _Unwritable:
    """Arguments no converter could write as the tool was called: the call is declared, not recorded
    from the objects the tool may since have changed."""

    error: Exception


@dataclass(frozen=True, slots=True)
class _ReceivedArgs(WrittenJSON):
    """A method tool's positional arguments after its receiver, and the receiver named:
    ``{"self": "module.Class"}`` (the instance's type) or ``{"cls": "module.Class"}``."""

    receiver: dict[str, str]


@dataclass(frozen=True)
class _Receiver:
    """How a method tool's receiver reaches it, read once where the tool is wrapped. ``param`` (``self`` or
    ``cls``): it is the first positional argument of each call, dropped from ``args`` and named instead.
    ``bound``: a bound method was wrapped, its receiver fixed and never in ``args``. ``func`` (with its
    ``__name__``): the function is taken for a method by its name and place alone, so each call checks that
    the class of its first argument holds it as one (a ``@staticmethod`` under ``@record_tool`` whose first
    parameter is named ``self`` keeps that argument); None where that is known (over ``@classmethod``).

    Recorded whole, ``self`` was the agent's whole state on every call (a history growing with each call
    made the run's size quadratic), or a repr with a memory address no replay can use; ``args`` and
    ``kwargs`` are now what ``receiver.method(*args, **kwargs)`` is called with, however the tool was wrapped."""

    param: str
    bound: dict[str, str] | None = None
    func: Any = None
    whole: _Named | None = None  # the arguments by name (_Named) when the first argument is no receiver
    name: str | None = None  # the name the class holds the method by, when not ``func.__name__``


def _receiver_of(func: Any, in_class: bool | None) -> _Receiver | None:
    """The :class:`_Receiver` of ``func``, or None for a function that takes none. ``in_class``: True for
    the function a ``@classmethod`` holds, False for a ``@staticmethod``'s, None when only ``func`` says:
    a bound method, or a function defined in a class body (its ``__qualname__`` ``Class.name``) whose first
    parameter is ``self`` or ``cls``, as ``@record_tool`` under a class's ``def`` sees it; or such a function
    held by what ``@record_tool`` wraps, a decorator's result that copies none of its attributes (a function
    over it, ``def inner(*a, **k)``, or an object holding it, ``self.fn``: :func:`_method_within`)."""
    if inspect.ismethod(func):
        owner = func.__self__
        param = "cls" if isinstance(owner, type) else "self"
        return _Receiver(param, {param: type_name(owner if isinstance(owner, type) else type(owner))})
    if in_class is False:
        return None
    first = _first_parameter(func) if inspect.isfunction(func) else None
    if in_class:
        return _Receiver("cls") if first is not None else None
    if first is not None and _defined_as_method(func, first):
        return _Receiver(first.name, func=func)
    method = _method_within(func)
    if method is None:
        return None
    # Each call checks that its first argument's class holds this wrapper by the method's own name.
    return _Receiver(method[1], func=func, name=method[0].__name__)


def _first_parameter(func: Any) -> inspect.Parameter | None:
    """``func``'s first parameter when it may be given by position; else None (or when it has no signature)."""
    try:
        first = next(iter(inspect.signature(func).parameters.values()), None)
    except (TypeError, ValueError):
        return None
    if first is None or first.kind not in (inspect.Parameter.POSITIONAL_ONLY,
                                           inspect.Parameter.POSITIONAL_OR_KEYWORD):
        return None
    return first


def _defined_as_method(func: Any, first: inspect.Parameter) -> bool:
    """``func`` was defined in a class body (``__qualname__`` ``Class.name``), its first parameter ``self``
    or ``cls``."""
    scope = func.__qualname__.split(".")
    return len(scope) >= 2 and scope[-2] != "<locals>" and first.name in ("self", "cls")


def _method_within(held: Any, depth: int = 4, budget: list[int] | None = None) -> tuple[Any, str] | None:
    """A function defined as a method (:func:`_defined_as_method`) that ``held`` is made over, and its first
    parameter's name: ``held`` is a decorator's result that copies no attributes, a function whose closure
    (or ``__wrapped__``) holds it, or an object holding it (a class-based decorator's ``self.fn``), ``depth``
    decorators deep at most, 64 callables looked at at most (a tool object holding many); None when there is
    none. Read once, where the tool is wrapped."""
    budget = [64] if budget is None else budget
    for item in _inside(held) if depth else ():
        budget[0] -= 1
        if budget[0] < 0:
            return None
        first = _first_parameter(item) if inspect.isfunction(item) else None
        if first is not None and _defined_as_method(item, first):
            return item, first.name
        found = _method_within(item, depth - 1, budget)
        if found is not None:
            return found
    return None


_WRAPPER_DEPTH: Final[int] = 4
"""How many decorators deep over the tool's wrapper a class's method is looked through (:func:`_wraps_tool`)."""


def _inside(held: Any) -> list[Any]:
    """What a decorator's result holds that it may call, where it copied none of the function's attributes:
    ``__wrapped__``, and a function's closure cells (``def inner(*a, **k): return f(*a, **k)``), a partial's
    function, or an object's own attributes (a class-based decorator's ``self.fn``)."""
    try:
        found = [getattr(held, "__wrapped__", None)]
        if inspect.isfunction(held):
            for cell in held.__closure__ or ():
                try:
                    found.append(cell.cell_contents)
                except ValueError:  # a cell not yet filled
                    continue
        elif isinstance(held, functools.partial):
            found.append(held.func)
        elif not isinstance(held, type) and not inspect.ismethod(held) and not inspect.isbuiltin(held):
            found.extend(vars(held).values())
    except Exception:  # noqa: BLE001 - an object whose attributes cannot be read (no __dict__, a raising getattr)
        return []
    return [item for item in found if item is not held and callable(item)]


def _wraps_tool(held: Any, func: Any, depth: int = _WRAPPER_DEPTH) -> bool:
    """Whether ``held`` is the wrapper of ``func`` (its ``MARK``), or made over it by decorators that copy no
    attributes (no ``functools.wraps``): a function whose closure holds it (``def inner(*a, **k): return
    f(*a, **k)``), an object holding it (a class-based decorator's ``self.fn``), or one whose ``__wrapped__``
    names it, ``depth`` decorators deep at most."""
    try:
        if getattr(held, MARK, None) is func:
            return True
    except Exception:  # noqa: BLE001 - an object whose __getattr__ raises: not the tool's wrapper
        return False
    if depth == 0:
        return False
    return any(_wraps_tool(item, func, depth - 1) for item in _inside(held))


def _holds(cls: type, receiver: _Receiver) -> bool:
    """Whether a class of ``cls``'s MRO holds ``receiver.func``'s wrapper as a method taking ``receiver.param``
    (a subclass overriding it and calling ``super()`` reaches the base's), itself or under a decorator that
    copies no attributes (:func:`_wraps_tool`): a function the class holds is bound to the instance as the
    wrapper would be, and passes it on as the wrapper's first argument; an object (a class-based decorator)
    that passes the tool no receiver when called on an instance (it has no ``__get__``) gives it the
    call's own first argument, whose class then does not hold it, unless the receiver was passed by hand
    (``Cls.method(obj, ...)``), as it was."""
    name = receiver.name or receiver.func.__name__
    for klass in getattr(cls, "__mro__", ()):
        held = vars(klass).get(name)
        if held is None or isinstance(held, staticmethod):
            continue
        if isinstance(held, classmethod) is (receiver.param == "cls"):
            held = getattr(held, "__func__", held)
            if _wraps_tool(held, receiver.func):
                return True
    return False


def _received(receiver: _Receiver, args: tuple[Any, ...], kwargs: dict[str, Any]
              ) -> tuple[dict[str, str] | None, tuple[Any, ...], dict[str, Any]]:
    """The receiver named, and the arguments after it; None, ``args`` and ``kwargs`` when the first is no
    receiver. A receiver passed by name (``Cls.method(self=obj, q=...)``, only where the function is taken for
    a method by its first parameter's name) is named as one passed first is."""
    if receiver.bound is not None:
        return receiver.bound, args, kwargs
    if args:
        owner, rest = args[0], args[1:]
    elif receiver.func is not None and receiver.param in kwargs:
        owner, rest = kwargs[receiver.param], args
    else:  # a call Python refuses: recorded as called
        return None, args, kwargs
    cls = owner if receiver.param == "cls" and isinstance(owner, type) else type(owner)
    if receiver.func is not None and not _holds(cls, receiver):
        return None, args, kwargs
    if not args:
        kwargs = {key: value for key, value in kwargs.items() if key != receiver.param}
    return {receiver.param: type_name(cls)}, rest, kwargs


@dataclass(frozen=True)
class _Named:
    """Where a tool's positional arguments must be recorded by name: from the parameter at ``first`` (the first
    whose name names a credential, ``password`` in ``connect(host, user, password)``) on, ``names`` the
    parameters that may be passed either way. Recorded as ``args`` alone, ``connect("db", "app", "X")`` kept
    ``"X"`` with nothing saying it is a password; recorded as ``args: ["db", "app"], kwargs: {"password": "X"}``
    (the same call) the capture policy reads its name. ``varargs``: the function takes ``*args`` right after
    ``names``, which the positionals past them fill."""

    first: int
    names: tuple[str, ...]
    varargs: bool = False


def _named_positions(func: Callable[..., Any], skip: int = 0) -> _Named | None:
    """The :class:`_Named` of ``func``, read once where the tool is wrapped; None when no parameter that may
    be passed by name names a credential, or the signature cannot be read (a builtin). ``skip``: leading
    parameters never recorded in ``args`` (a method's receiver)."""
    from bitexact.capture.detectors import is_credential_name

    try:
        parameters = list(inspect.signature(func).parameters.values())[skip:]
    except (TypeError, ValueError):
        return None

    def by_name(parameter: inspect.Parameter) -> bool:
        return parameter.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD

    first = next((i for i, p in enumerate(parameters) if by_name(p) and is_credential_name(p.name)), None)
    if first is None:
        return None
    names = tuple(p.name for p in itertools.takewhile(by_name, parameters[first:]))
    after = first + len(names)
    varargs = after < len(parameters) and parameters[after].kind is inspect.Parameter.VAR_POSITIONAL
    return _Named(first, names, varargs)


def _by_name(named: _Named | None, args: tuple[Any, ...],
             kwargs: dict[str, Any]) -> tuple[tuple[Any, ...], dict[str, Any], tuple[str, ...]]:
    """``args`` and ``kwargs`` as the same call with the positional arguments from ``named.first`` on passed by
    name, and the names they moved to. The positionals past the parameters that can take them by name fill
    ``*args``, which only a position reaches: they stay positional (``call_api(api_key, *paths)`` called
    ``call_api("sk-1", "/a")`` is ``args: ["/a"], kwargs: {"api_key": "sk-1"}``). As given when no positional
    reaches ``named.first``, or more than the parameters take with no ``*args`` (a call Python refuses)."""
    if named is None or len(args) <= named.first:
        return args, kwargs, ()
    past = len(args) - named.first - len(named.names)  # positionals that fill *args
    if past > 0 and not named.varargs:
        return args, kwargs, ()
    end = named.first + len(named.names)
    moved = dict(zip(named.names, args[named.first:end]))
    return (*args[: named.first], *args[end:]), {**moved, **kwargs}, tuple(moved)


_TOOL_CALL_KEYS: Final[tuple[str, ...]] = ("tool", "args", "kwargs", "result", "status", "error", "receiver")
"""Every key a tool call's data may have (:func:`tool_call_data`)."""

_NO_SUB_KEYS: Final[dict[str, str]] = {"tool": "text", "args": "a list", "status": "text"}
"""The keys of a tool call whose value is never an object, so a hint on a sub-key of one names nothing."""


def check_tool_paths(custody: dict[str, str] | None) -> None:
    """Refuse a hint whose path no tool call can have (``record_tool`` where the tool is wrapped,
    ``r.record_tool_call`` withholding the call): a key a tool call
    never has (``reslt``), or a sub-key of ``args`` (a list), ``tool`` or ``status`` (text). Taken, the first
    named nothing in any call and its field was kept as if no hint was given (a typo's ``result`` stored as
    sent), and the second withheld every call of the tool whole as an ``invalid_argument`` gap."""
    for path in custody or ():
        top, dot, _sub = path.partition(".")
        if top not in _TOOL_CALL_KEYS:
            raise CustodyHintError(
                f"custody.{path}: a tool call has no key {top!r} (its keys: {', '.join(_TOOL_CALL_KEYS)}), so the "
                "hint would name nothing and the field meant would be kept without it", field=f"custody.{path}")
        if dot and top in _NO_SUB_KEYS:
            remedy = (": hint args whole, or kwargs.NAME for an argument passed by keyword" if top == "args"
                      else "")
            raise CustodyHintError(
                f"custody.{path}: a tool call's {top} is {_NO_SUB_KEYS[top]}, never an object, so a hint on a "
                f"sub-key of it would withhold every call whole{remedy}", field=f"custody.{path}")


_STRICTNESS: Final[dict[str, int]] = {"scrub": 1, "hash-only": 2}
"""How strict a hint is (a ``scrubbed-upstream`` claim: 0); of two hints for one path the stricter is kept."""


def _stricter(one: str | None, other: str) -> str:
    """The stricter of two hints (``other`` when ``one`` is None, or when they are equally strict)."""
    if one is None:
        return other
    return one if _STRICTNESS.get(one, 0) > _STRICTNESS.get(other, 0) else other


def _carried(custody: dict[str, str] | None, moved: tuple[str, ...]) -> dict[str, str] | None:
    """``custody`` for a call whose positionals ``moved`` to ``kwargs`` by name (:func:`_by_name`): a hint on
    ``args`` covers them where they were called, so it is carried to each ``kwargs.<name>`` (the stricter
    kept where the custody names one too). ``args.N`` names nothing (``args`` is a list): nothing to carry."""
    if custody is None or not moved or "args" not in custody:
        return custody
    hint = custody["args"]
    out = dict(custody)
    for name in moved:  # a parameter's name is an identifier: no dot or ~ to escape in the path
        path = f"kwargs.{name}"
        out[path] = _stricter(out.get(path), hint)
    return out


_NO_KWARGS: Final[WrittenJSON] = WrittenJSON(orjson.Fragment(b"{}"))
"""``WrittenJSON(orjson.Fragment(dump_json({})))``, made once (both are immutable)."""


def _as_called(args: tuple[Any, ...], kwargs: dict[str, Any], named: _Named | None = None,
               custody: dict[str, str] | None = None,
               receiver: _Receiver | None = None) -> tuple[Any, Any, dict[str, str] | None]:
    """The arguments as the tool is called, before it runs: a tool that changes a list it was handed
    must not have the changed list recorded as what it was called with. Serialized here, once: the
    JSON is spliced into the entry as it is (:class:`WrittenJSON`), never parsed back and written
    again. Arguments no converter can write make the call a declared gap (:class:`_Unwritable`).
    A positional argument bound to a credential-named parameter is recorded by name (:class:`_Named`),
    and the call's ``custody`` comes back with an ``args`` hint carried to the names (:func:`_carried`).
    A method's receiver is named, never written (:class:`_Receiver`)."""
    owner = None
    if receiver is not None:
        owner, args, kwargs = _received(receiver, args, kwargs)
        if owner is None and receiver.bound is None:  # recorded as called: positions count the first one
            named = receiver.whole
    args, kwargs, moved = _by_name(named, args, kwargs)
    hints = _carried(custody, moved)
    try:
        with busy():  # the SDK's own work: never recorded as the agent's nondeterminism
            written = orjson.Fragment(dump_json(list(args)))
            # No keyword arguments (most calls): what dump_json writes of {}, without its walk and search.
            by_keyword = _NO_KWARGS if type(kwargs) is dict and not kwargs else WrittenJSON(
                orjson.Fragment(dump_json(kwargs)))
            return (WrittenJSON(written) if owner is None else _ReceivedArgs(written, owner), by_keyword, hints)
    except Exception as exc:  # noqa: BLE001 - declared when the call is recorded, never raised to the agent
        unwritable = _Unwritable(exc)
        return unwritable, unwritable, hints


def _record_raised(run: Any, exc: BaseException, tool: str, args: Any, kwargs: Any, custody: Any,
                   ctx: str | None, result: Any = None) -> None:
    """Record a tool call that raised ``exc``. In strict mode a recording failure raises
    :class:`RecordingError` in place of ``exc``, except for a control-flow exception (``CancelledError``,
    ``KeyboardInterrupt``, ``SystemExit``, ``GeneratorExit``: not an ``Exception``): that one stays the one
    raised, since asyncio and the interpreter act on it (a cancelled task must end cancelled), and the
    failure is declared already (the gap, its journal, the log line), as at a run's exit."""
    from bitexact.sdk.errors import RecordingError

    try:
        run._record_tool(tool, args, kwargs, result, exc, custody, ctx, observed=True)
    except RecordingError:
        if isinstance(exc, Exception):
            raise


def _as_yielded(item: Any) -> Any:
    """An item as the generator yielded it: a tool that yields one buffer again and again, changed in
    between, must not have the last state recorded for every step."""
    try:
        with busy():
            return orjson.loads(dump_json(item))
    except Exception:  # noqa: BLE001 - recorded later from the object itself, with its gap if any
        return item


_STREAMED_KEYS: Final[frozenset[str]] = frozenset({"yielded", "returned", "closed_early"})


def _streamed_custody(custody: dict[str, str] | None, tool: str) -> dict[str, str] | None:
    """``custody`` for a generator tool, whose result is recorded as ``{"yielded": [...], "returned"?}``.

    A hint on ``result.X`` (``X`` a key of what each item holds) would name nothing there, and the value
    would be stored as sent. A hint names at most ``KEY.SUBKEY``, so ``result.yielded.*.X`` cannot be said:
    the hint is given to ``result.yielded`` and ``result.returned`` instead, every item whole, stricter than
    asked and never looser. A ``scrubbed-upstream`` claim on ``result.X`` cannot be widened to the items whole
    (the agent claimed ``X`` alone), so it is refused where the tool is wrapped, naming the path.
    """
    if custody is None:
        return None
    out: dict[str, str] = {}
    widened: list[tuple[str, str]] = []
    for path, hint in custody.items():
        top, dot, sub = path.partition(".")
        if top == "result" and dot and sub not in _STREAMED_KEYS:
            if hint.startswith("scrubbed-upstream"):
                raise CustodyHintError(
                    f"tool {tool!r} is a generator: its result is recorded as {{\"yielded\": [...], \"returned\"}}, "
                    f"where a claim on {path!r} names nothing, and it cannot be widened to every item whole; "
                    "claim result.yielded or result.returned instead", field=f"custody.{path}")
            widened.append((path, hint))
            continue
        out[path] = _stricter(out.get(path), hint)
    for _path, hint in widened:
        for target in ("result.yielded", "result.returned"):
            out[target] = _stricter(out.get(target), hint)
    return out or None


def _streamed(yielded: list[Any], returned: Any = None, *, closed_early: bool = False) -> dict[str, Any]:
    """A generator tool's result: what it yielded, in order, what it returned, whether its consumer left early."""
    result: dict[str, Any] = {"yielded": yielded}
    if returned is not None:
        result["returned"] = returned
    if closed_early:
        result["closed_early"] = True
    return result


class _OpenGenerator:
    """A generator tool's call in a run, recorded once: when it is exhausted, raises or is closed, or as it
    stands (``closed_early``) when the run ends first (an async generator left by ``break`` is closed by a
    task asyncio starts later, once the run's exit has begun)."""

    __slots__ = ("_args", "_ctx", "_custody", "_done", "_kwargs", "_lock", "_run", "_tool", "yielded")

    def __init__(self, run: Any, tool: str, args: Any, kwargs: Any, custody: Any, ctx: str | None) -> None:
        self._run = run
        self._tool = tool
        self._args = args
        self._kwargs = kwargs
        self._custody = custody
        self._ctx = ctx
        self.yielded: list[Any] = []
        self._done = False
        self._lock = threading.Lock()
        run._call_opened(self)

    def end(self, result: Any, error: BaseException | None) -> None:
        with self._lock:
            if self._done:
                return
            self._done = True
        self._run._call_ended(self)
        if error is not None:
            _record_raised(self._run, error, self._tool, self._args, self._kwargs, self._custody, self._ctx, result)
            return
        self._run._record_tool(self._tool, self._args, self._kwargs, result, error, self._custody, self._ctx,
                               observed=True)

    @property
    def ended(self) -> bool:
        """Recorded already (its run ended first): what the generator yields from now on is kept nowhere."""
        return self._done

    def run_ending(self) -> None:
        self.end(_streamed(list(self.yielded), closed_early=True), None)


class _OpenAwaited(_OpenGenerator):
    """A coroutine a sync-looking tool returned (an ``async def`` under a decorator that hides it), recorded
    once it is awaited to its end; one never awaited before the run ends is recorded then as
    ``{"awaited": false}``: its result is not known, and the call's ``ok`` must not say it returned."""

    __slots__ = ()

    def run_ending(self) -> None:
        self.end({"awaited": False}, None)


async def _awaited(coroutine: Any, call: _OpenAwaited, tool: str, run: Any) -> Any:
    """Await what the tool returned inside the tool (its entries carry ``ctx``) and record what it gave."""
    with inside_tool(tool, run):
        try:
            result = await coroutine
        except BaseException as exc:
            call.end(None, exc)
            raise
    call.end(result, None)
    return result


def _generator_wrapper(func: Callable[..., Any], tool: str, checked: Any, named: _Named | None,
                       receiver: _Receiver | None) -> Any:
    """A generator tool stays a generator. Each step runs inside the tool (entries carry its ``ctx``),
    never the caller's code between steps; ``send``/``throw``/``close`` reach it; the call is recorded
    once it is exhausted, raises, or is closed."""
    @functools.wraps(func)
    def generator_wrapper(*args: Any, **kwargs: Any) -> Any:
        run = current_run()
        if run is None:
            return (yield from func(*args, **kwargs))
        outer = current_tool(run)
        called_args, called_kwargs, hints = _as_called(args, kwargs, named, checked, receiver)  # as for any tool
        inner = func(*args, **kwargs)
        call = _OpenGenerator(run, tool, called_args, called_kwargs, hints, outer)
        return (yield from _drive(run, tool, inner, call))

    return generator_wrapper


def _drive(run: Any, tool: str, inner: Any, call: _OpenGenerator) -> Any:
    """Step the generator ``inner`` for its consumer, each step inside the tool, and record ``call`` once it
    is exhausted, raises, or is closed."""
    yielded = call.yielded
    step, value = inner.send, None
    while True:
        try:
            with inside_tool(tool, run):
                item = step(value)
        except StopIteration as stop:
            call.end(_streamed(yielded, stop.value), None)
            return stop.value
        except BaseException as exc:  # what it yielded before the error reached the agent: kept
            call.end(_streamed(yielded), exc)
            raise
        if not call.ended:  # once recorded (the run ended first), a copy of each item would only pile up
            yielded.append(_as_yielded(item))
        try:
            value, step = (yield item), inner.send
        except GeneratorExit:
            try:
                inner.close()
            except BaseException as exc:  # its cleanup raised: the consumer gets that, and it is the call's error
                call.end(_streamed(yielded, closed_early=True), exc)
                raise
            call.end(_streamed(yielded, closed_early=True), None)
            raise
        except BaseException as exc:  # thrown in by the consumer: the tool's own code handles it
            step, value = inner.throw, exc


def _async_generator_wrapper(func: Callable[..., Any], tool: str, checked: Any, named: _Named | None,
                             receiver: _Receiver | None) -> Any:
    """The async twin of :func:`_generator_wrapper`; outside a run ``asend``/``athrow``/``aclose`` reach
    the tool as well (an ``async for`` alone would drop them), with nothing recorded."""
    def start(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any, _OpenGenerator | None]:
        run = current_run()
        if run is None:
            return None, func(*args, **kwargs), None
        outer = current_tool(run)
        called_args, called_kwargs, hints = _as_called(args, kwargs, named, checked, receiver)
        inner = func(*args, **kwargs)
        return run, inner, _OpenGenerator(run, tool, called_args, called_kwargs, hints, outer)

    return functools.wraps(func)(_async_driver(tool, start))


def _async_driver(tool: str, start: Callable[[tuple[Any, ...], dict[str, Any]], tuple[Any, Any, Any]]) -> Any:
    """An async generator function stepping the async generator ``start`` gives (with its run and call, or
    None and None outside a run) for its consumer, each step inside the tool, recording the call once it is
    exhausted, raises, or is closed. One loop for an async generator tool and for an async generator a sync
    tool returned (there is no ``yield from`` in an async generator to share it otherwise)."""
    async def async_generator_wrapper(*args: Any, **kwargs: Any) -> Any:
        run, inner, call = start(args, kwargs)

        def record(result: Any, error: BaseException | None) -> None:
            if call is not None:
                call.end(result, error)

        yielded: list[Any] = call.yielded if call is not None else []
        step, value = inner.asend, None
        while True:
            try:
                with inside_tool(tool, run) if run is not None else nullcontext():
                    item = await step(value)
            except StopAsyncIteration:
                record(_streamed(yielded), None)
                return
            except BaseException as exc:  # what it yielded before the error reached the agent: kept
                record(_streamed(yielded), exc)
                raise
            if call is not None and not call.ended:  # once recorded, a copy would only pile up
                yielded.append(_as_yielded(item))
            try:
                value, step = (yield item), inner.asend
            except GeneratorExit:
                try:
                    await inner.aclose()
                except BaseException as exc:  # its cleanup raised: the consumer gets that, and it is the call's error
                    record(_streamed(yielded, closed_early=True), exc)
                    raise
                record(_streamed(yielded, closed_early=True), None)
                raise
            except BaseException as exc:
                step, value = inner.athrow, exc

    return async_generator_wrapper


def _unwrapped(func: Any) -> Any:
    """The function a ``functools.partial`` (of a partial...) calls; ``func`` itself otherwise."""
    while isinstance(func, functools.partial):
        func = func.func
    return func


def _tool_name(func: Any) -> str:
    """A tool's default name: its function's ``__name__`` (a partial's, the function it calls), else its type's."""
    inner = _unwrapped(func)
    return getattr(inner, "__name__", None) or type(inner).__name__


@overload
def record_tool(fn: F, /) -> F: ...
@overload
def record_tool(*, custody: Mapping[str, str] | None = None, name: str | None = None) -> Callable[[F], F]: ...


def record_tool(
    fn: Any = None, /, *, custody: Mapping[str, str] | None = None, name: str | None = None,
) -> Any:
    """Record each call of a sync or async function (or generator) as an observed ``tool_call`` inside a run.

    ``custody`` gives hints for the call's fields (``{"result": "hash-only"}``);
    ``name`` overrides the tool's name (default: the function's ``__name__``).
    """
    checked = check_custody(custody)  # refused here, at wrapping, never in a call
    check_tool_paths(checked)
    if name is not None and (not isinstance(name, str) or not name.strip()):
        # Taken here, every call of the tool would be a gap instead of a tool_call.
        raise SdkArgumentError("name must be a non-empty string naming the tool", field="name")

    def decorate(func: F, in_class: bool | None = None) -> F:
        if isinstance(func, (staticmethod, classmethod)):
            # Wrapped over the decorator: the function it holds is the tool (sync, async or a generator),
            # and the wrapper is made the same kind of method again; a classmethod's `cls` is named, not dumped.
            return type(func)(decorate(func.__func__, isinstance(func, classmethod)))  # type: ignore[return-value]
        if not callable(func):
            raise SdkArgumentError(f"record_tool wraps a function, not {type(func).__name__}", field="fn")
        tool = name or _tool_name(func)
        same = _register(func, checked, tool, name)
        if same is not None:
            return same  # type: ignore[no-any-return]
        receiver = _receiver_of(func, in_class)
        named = _named_positions(func, 1 if receiver is not None and receiver.bound is None else 0)
        if receiver is not None and receiver.func is not None:
            receiver = dataclasses.replace(receiver, whole=_named_positions(func))
        if _generator_callable(func, inspect.isgeneratorfunction):
            wrapper: Any = _generator_wrapper(func, tool, _streamed_custody(checked, tool), named, receiver)
        elif _generator_callable(func, inspect.isasyncgenfunction):
            wrapper = _async_generator_wrapper(func, tool, _streamed_custody(checked, tool), named, receiver)
        elif inspect.iscoroutinefunction(func) or async_callable(func):
            @functools.wraps(func)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                run = current_run()
                if run is None:
                    return await func(*args, **kwargs)
                outer = current_tool(run)
                called_args, called_kwargs, hints = _as_called(args, kwargs, named, checked, receiver)
                with inside_tool(tool, run):
                    try:
                        result = await func(*args, **kwargs)
                    except BaseException as exc:
                        _record_raised(run, exc, tool, called_args, called_kwargs, hints, outer)
                        raise
                run._record_tool(tool, called_args, called_kwargs, result, None, hints, outer, observed=True)
                return result

            wrapper = async_wrapper
        else:
            try:  # whether a generator it returns can be recorded as a generator tool's is (see _streamed_custody)
                _streamed_custody(checked, tool)
                streamable = True
            except CustodyHintError:
                streamable = False  # a scrubbed-upstream claim on result.X: recorded as it returned, as before

            @functools.wraps(func)
            def sync_wrapper(*args: Any, **kwargs: Any) -> Any:
                run = current_run()
                if run is None:
                    return func(*args, **kwargs)
                outer = current_tool(run)
                called_args, called_kwargs, hints = _as_called(args, kwargs, named, checked, receiver)
                with inside_tool(tool, run):
                    try:
                        result = func(*args, **kwargs)
                    except BaseException as exc:
                        _record_raised(run, exc, tool, called_args, called_kwargs, hints, outer)
                        raise
                not_returned = isinstance(result, _NOT_RETURNED)  # one C call rather than three Python ones
                if not_returned and inspect.iscoroutine(result):
                    # The tool's work runs when the agent awaits it: recorded then, with its result or error,
                    # never as an "ok" call whose result is a coroutine object's repr.
                    return _awaited(result, _OpenAwaited(run, tool, called_args, called_kwargs, hints, outer),
                                    tool, run)
                if not_returned and inspect.isgenerator(result) and streamable:
                    # A generator function under a decorator that hides it: a generator tool, as if unhidden.
                    streamed_hints = _streamed_custody(hints, tool)
                    return _drive(run, tool, result, _OpenGenerator(run, tool, called_args, called_kwargs,
                                                                    streamed_hints, outer))
                if not_returned and inspect.isasyncgen(result) and streamable:
                    # An async generator function under a decorator that hides it: an async generator tool.
                    call = _OpenGenerator(run, tool, called_args, called_kwargs, _streamed_custody(hints, tool), outer)
                    return _async_driver(tool, lambda _args, _kwargs: (run, result, call))()
                run._record_tool(tool, called_args, called_kwargs, result, None, hints, outer, observed=True)
                return result

            wrapper = sync_wrapper
        setattr(wrapper, MARK, func)
        wrapper.__bitexact_custody__ = checked
        wrapper.__bitexact_tool_name__ = tool
        return wrapper  # type: ignore[no-any-return]

    return decorate(fn) if fn is not None else decorate
