"""The extension hook of the success line: clause providers see each verified entry (verdict.py)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from bitexact.crypto import SigningKey
from bitexact.evidence.verify import Pins, verify_bundle, verify_lines

from .conftest import sample_run
from .producer import to_jsonl


class KindCounter:
    """A toy provider: counts tool calls and lists the steps it saw."""

    def __init__(self) -> None:
        self.steps: list[int] = []
        self.tools = 0

    def observe(self, step: int, entry: Mapping[str, Any]) -> None:
        self.steps.append(step)
        self.tools += entry["kind"] == "tool_call"

    def clause(self) -> str | None:
        return f"{self.tools} tool call(s)" if self.tools else None

    def scope_lines(self) -> Sequence[str]:
        return [f"scope: steps {self.steps[0]}-{self.steps[-1]}"]


def test_clause_is_appended_and_scope_lines_returned() -> None:
    seen: list[KindCounter] = []

    def factory() -> KindCounter:
        seen.append(KindCounter())
        return seen[-1]

    verdict = verify_bundle(sample_run(None).bundle(), Pins(), clauses=[factory])
    assert verdict.line == (
        "OK: run-1 - 6 steps (observed 5 / asserted 1 / synthetic 0), chain verified, sealed, unsigned, 1 tool call(s)"
    )
    assert verdict.scope_lines == ("scope: steps 0-5",)
    assert seen[0].steps == [0, 1, 2, 3, 4, 5]


def test_clause_follows_the_jsonl_suffix_and_empty_clause_adds_nothing(bundle_key: SigningKey) -> None:
    lines = to_jsonl(sample_run(None).bundle(), bundle_key).splitlines()
    verdict = verify_lines(lines, Pins(), clauses=[KindCounter])
    assert verdict.line.endswith("(jsonl, streamed), 1 tool call(s)")

    class Silent(KindCounter):
        def clause(self) -> str | None:
            return None

    assert verify_lines(lines, Pins(), clauses=[Silent]).line.endswith("(jsonl, streamed)")


def test_provider_sees_only_entries_that_passed() -> None:
    bundle = sample_run(None).bundle()
    bundle["entries"][3]["data"]["response"]["status"] = 500
    seen: list[KindCounter] = []

    def factory() -> KindCounter:
        seen.append(KindCounter())
        return seen[-1]

    assert not verify_bundle(bundle, Pins(), clauses=[factory]).ok
    assert seen[0].steps == [0, 1, 2]
