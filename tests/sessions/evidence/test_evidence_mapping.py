"""The event type -> entry kind mapping: total, asserted-only, and exactly as documented."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bitexact.evidence.kinds import ALLOWED_PROV
from bitexact.sessions.evidence import EXACT_KINDS, FALLBACK_KIND, NAMESPACE_KINDS, kind_for

DOC = Path(__file__).resolve().parents[3] / "docs" / "sessions-evidence.md"
_ROW = re.compile(r"^\| `?([^`|]+?)`? \| (exact|namespace|otherwise) \| `([a-z_]+)` \|", re.M)


def documented_rows() -> list[tuple[str, str, str]]:
    return _ROW.findall(DOC.read_text(encoding="utf-8"))


def test_the_documented_table_is_the_mapping_the_code_applies() -> None:
    rows = documented_rows()
    exact = {name: kind for name, how, kind in rows if how == "exact"}
    namespaces = [(name, kind) for name, how, kind in rows if how == "namespace"]
    otherwise = [kind for _, how, kind in rows if how == "otherwise"]
    assert exact == EXACT_KINDS
    assert namespaces == list(NAMESPACE_KINDS)
    assert otherwise == [FALLBACK_KIND]


@pytest.mark.parametrize("event_type, kind", [
    ("tool.execution_start", "tool_call"), ("tool.execution_complete", "tool_call"),
    ("tool.execution_update", "tool_call"), ("subagent.started", "tool_call"), ("mcp.rpc.request", "tool_call"),
    ("user.message", "context"), ("assistant.message", "context"), ("assistant.reasoning", "context"),
    ("assistant.refusal", "context"), ("assistant.message_delta", "context"), ("session.init", "context"),
    ("session.result", "model"), ("session.error", "model"), ("firewall.token_usage", "model"),
    ("usage.report", "model"), ("turn.completed", "model"), ("subagent.request", "model"),
    ("model.inventory", "model"),
    ("session.info", "marker"), ("vendor.progress", "marker"), ("session.format", "marker"),
    ("firewall.http_access", "marker"), ("workflow.info", "marker"), ("mcp.event", "marker"),
    ("toolbox.x", "marker"), ("", "marker"),
])
def test_tool_lifecycle_model_traffic_messages_and_the_rest(event_type: str, kind: str) -> None:
    assert kind_for(event_type) == kind


def test_every_kind_the_mapping_can_give_allows_asserted_and_none_is_http_call() -> None:
    kinds = {FALLBACK_KIND, *EXACT_KINDS.values(), *(kind for _, kind in NAMESPACE_KINDS)}
    assert "http_call" not in kinds
    for kind in kinds:
        assert "asserted" in ALLOWED_PROV[kind], kind
