"""The Python SDK: record an agent run in-process, through every capture path a Python agent has.

::

    import bitexact

    with bitexact.run(name="triage") as r:
        r.identity(principal="svc:claims", on_behalf_of="user:7f3a9c", on_behalf_of_type="human")
        r.context("coverage-rules", policy_text, source="handbook/v12")
        client = bitexact.wrap(httpx.Client())          # every exchange is an http_call
        answer = lookup_policy("HX-20931")               # @bitexact.record_tool: a tool_call
        r.human_decision("adjuster:m.okafor", "approve", binds_step=...)

See docs/sdk.md. ``import bitexact`` stays cheap: it loads this package on
first use of ``bitexact.run`` and friends. The HTTP capture loads on first
use of ``wrap``/``instrument``.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bitexact.sdk.causal import CausalContext, ContextFormatError, format_context, parse_context
    from bitexact.sdk.errors import (
        CustodyHintError,
        IdentityRefusedError,
        RecordingError,
        RunClosedError,
        SdkArgumentError,
    )
    from bitexact.sdk.failures import Gap
    from bitexact.sdk.handle import RecordHandle
    from bitexact.sdk.http import wrap
    # From the defining module: bitexact.sdk.http.instrument is also a submodule name, which mypy
    # would otherwise bind first and then report as redefined by the function.
    from bitexact.sdk.http.instrument import Instrumentation, instrument
    from bitexact.sdk.stores import close_stores
    from bitexact.sdk.tools import record_tool

# Bound eagerly: the module bitexact.sdk.run would otherwise shadow the function run.
from bitexact.sdk.run import Run, RunScope, current_run, run  # noqa: E402

_NAMES: dict[str, str] = {
    "record_tool": "bitexact.sdk.tools",
    "wrap": "bitexact.sdk.http", "instrument": "bitexact.sdk.http", "Instrumentation": "bitexact.sdk.http",
    "RecordHandle": "bitexact.sdk.handle",
    "Gap": "bitexact.sdk.failures",
    "close_stores": "bitexact.sdk.stores",
    "CausalContext": "bitexact.sdk.causal", "ContextFormatError": "bitexact.sdk.causal",
    "format_context": "bitexact.sdk.causal", "parse_context": "bitexact.sdk.causal",
    "CustodyHintError": "bitexact.sdk.errors", "IdentityRefusedError": "bitexact.sdk.errors",
    "RecordingError": "bitexact.sdk.errors", "RunClosedError": "bitexact.sdk.errors",
    "SdkArgumentError": "bitexact.sdk.errors",
}

__all__ = sorted([*_NAMES, "Run", "RunScope", "current_run", "run"])


def __getattr__(name: str) -> Any:
    module = _NAMES.get(name)
    if module is None:
        raise AttributeError(f"module 'bitexact.sdk' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
